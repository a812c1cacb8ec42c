//! MCP logging (`logging/setLevel`, `notifications/message`): what this session notices that
//! a client may want to show its user — a browser attached, or gone — sent once the client
//! chose a level, and only at or above it. Nothing before a client asks: the tools' own results
//! and errors already say what a call did.
//!
//! MCP's logging is deprecated from the 2026 revision on (rmcp marks it so); clients of the
//! revisions before it may still ask for it, so it is served as they expect.
#![allow(deprecated)]

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use serde_json::json;

use super::server::{LogLevel, TabwireServer};

/// How often the browsers are looked at when no event came (to notice the client has gone).
const IDLE: Duration = Duration::from_secs(5);

impl LogLevel {
    /// Choose `level`; true the first time one is chosen.
    pub fn set(&self, level: LoggingLevel) -> bool {
        self.0.lock().expect("log level poisoned").replace(level).is_none()
    }

    fn allows(&self, level: LoggingLevel) -> bool {
        let wanted = *self.0.lock().expect("log level poisoned");
        wanted.is_some_and(|wanted| rank(level) >= rank(wanted))
    }
}

/// RFC 5424's order, least severe first.
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// The attached browsers, by key, with the label a person knows them by.
fn browsers(server: &TabwireServer) -> BTreeMap<String, String> {
    server.core.browsers().iter().map(|b| (b.key(), b.label())).collect()
}

/// Tell the client of each browser attached or gone, until it goes.
pub(super) async fn follow(server: TabwireServer, peer: Peer<RoleServer>) {
    let queue = server.core.queue().clone();
    let mut known = browsers(&server);
    loop {
        // Every attach and detach is an event of the session's queue (`kind::BROWSER`).
        let arrived = queue.arrivals();
        tokio::pin!(arrived);
        arrived.as_mut().enable();
        let now = browsers(&server);
        let came = now.iter().filter(|(k, _)| !known.contains_key(*k));
        let said =
            came.map(|(_, label)| (LoggingLevel::Info, format!("browser attached: {label}")));
        let went = known.iter().filter(|(k, _)| !now.contains_key(*k)).map(|(_, label)| {
            let text = format!(
                "browser went away: {label}; tools answer browser_disconnected until it is back \
                 (`tabwire doctor` says why)"
            );
            (LoggingLevel::Warning, text)
        });
        for (level, text) in said.chain(went).collect::<Vec<_>>() {
            if !server.log_level.allows(level) {
                continue;
            }
            let message =
                LoggingMessageNotificationParam::new(level, json!(text)).with_logger("tabwire");
            if peer.notify_logging_message(message).await.is_err() {
                return; // the client is gone
            }
        }
        known = now;
        tokio::select! {
            () = &mut arrived => {}
            () = tokio::time::sleep(IDLE) => {}
        }
        if peer.is_transport_closed() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_before_a_level_is_chosen_then_that_level_and_above() {
        let level = LogLevel::default();
        assert!(!level.allows(LoggingLevel::Emergency));
        assert!(level.set(LoggingLevel::Error), "the first level chosen");
        assert!(!level.set(LoggingLevel::Warning), "a second one");
        assert!(level.allows(LoggingLevel::Warning) && level.allows(LoggingLevel::Error));
        assert!(!level.allows(LoggingLevel::Info));
    }
}
