//! The messages of a session socket (`specs/protocol.md`, "Session sockets"): small JSON
//! objects, one per frame, in the framing of every tabwire socket. Serde types only.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tabwire_proto::wire::ErrorBody;

/// The status a `worker_complete` carries; `notify_completion` and `tabwire notify` take it.
pub use tabwire_link::events::CompletionStatus;

/// What a client asks of a session.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToSession {
    /// Put an event into the session's queue: `worker_complete`, `message`, `question` or
    /// `answer`.
    Push { event: Pushed },
    /// Take the page events queued in the session, waiting up to `timeout_secs` (at most 120)
    /// for one: what `wait_for_state_change` does.
    Wait {
        #[serde(default = "thirty")]
        timeout_secs: u64,
    },
}

/// An event sent to another session.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Pushed {
    #[serde(rename = "type")]
    pub kind: String,
    pub data: Value,
}

/// A session's answer, tagged by `type` like the requests. Generic over how events are held:
/// the session writes its own event type, a client reads plain JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromSession<E> {
    /// The pushed event's id in the session's queue.
    Queued {
        id: u64,
    },
    /// The page events taken; none (and `timed_out`) when the wait ran out.
    Events {
        events: Vec<E>,
        timed_out: bool,
    },
    Error {
        error: ErrorBody,
    },
}

impl<E> FromSession<E> {
    pub fn events(events: Vec<E>) -> Self {
        let timed_out = events.is_empty();
        FromSession::Events { events, timed_out }
    }
}

fn thirty() -> u64 {
    30
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn messages_read_as_documented() {
        let push: ToSession = serde_json::from_value(json!({
            "type": "push", "event": { "type": "message", "data": { "body": "hi" } }
        }))
        .unwrap();
        assert_eq!(
            push,
            ToSession::Push {
                event: Pushed { kind: "message".into(), data: json!({ "body": "hi" }) }
            }
        );
        let wait: ToSession = serde_json::from_value(json!({ "type": "wait" })).unwrap();
        assert_eq!(wait, ToSession::Wait { timeout_secs: 30 });
        let answer = serde_json::to_value(FromSession::<Value>::events(vec![])).unwrap();
        assert_eq!(answer, json!({ "type": "events", "events": [], "timed_out": true }));
        let queued = serde_json::to_value(FromSession::<Value>::Queued { id: 17 }).unwrap();
        assert_eq!(queued, json!({ "type": "queued", "id": 17 }));
        let error = ErrorBody::new("bad_request", "no");
        let refused = serde_json::to_value(FromSession::<Value>::Error { error }).unwrap();
        assert_eq!(
            refused,
            json!({ "type": "error", "error": { "code": "bad_request", "message": "no" } })
        );
    }
}
