//! What the tools that wait on this session's queue share (wait_for_event in
//! `sessions/events.rs`, wait_for_state_change in `page/events.rs`, ask_question): the bound on
//! a wait, an event said in one line, and the error for one that cannot be encoded.

use std::time::Duration;

use tabwire_link::error::CallError;
use tabwire_link::events::SessionEvent;
use tabwire_proto::wire::code;

/// `secs` as a wait, if it is at most `max`.
pub fn seconds(secs: u64, max: u64) -> Result<Duration, CallError> {
    if secs > max {
        return Err(CallError::new(
            code::BAD_REQUEST,
            format!("timeout_secs must be at most {max}; got {secs}. Wait again to wait longer"),
        ));
    }
    Ok(Duration::from_secs(secs))
}

/// `page_event from http://localhost:5173 (tab 5): {"kind":"click"}`
pub fn describe(event: &SessionEvent) -> String {
    match (&event.from.origin, event.tab_id) {
        (Some(origin), Some(tab)) => {
            format!("{} from {origin} (tab {tab}): {}", event.kind, event.data.get())
        }
        (None, Some(tab)) => format!("{} from tab {tab}: {}", event.kind, event.data.get()),
        _ => format!("{}: {}", event.kind, event.data.get()),
    }
}

/// An event that could not be encoded; it goes back to the queue.
pub fn unencodable(e: serde_json::Error) -> CallError {
    CallError::new(
        code::INTERNAL,
        format!(
            "an event could not be encoded ({e}); it stays queued. This is a bug in tabwire: please report it"
        ),
    )
}
