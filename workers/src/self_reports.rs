//! Which of this session's running workers reported by themselves (`notify_completion`,
//! `tabwire notify`), so that the report tabwire makes when one exits is not a second one.
//!
//! Reports arrive wherever events enter the session (its socket, its own tools), and those know
//! the core only: this is the sink the workers register with the core's inbox for
//! `worker_complete`, which hears each report before it is queued. Only workers this session
//! started are tracked, and each only until it exits: the table never holds more than the
//! running workers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use serde_json::value::RawValue;
use tabwire_link::inbox::Sink;

#[derive(Default)]
pub struct SelfReports {
    /// Running workers by id: their name, and whether they reported.
    running: Mutex<HashMap<String, Expected>>,
}

struct Expected {
    name: String,
    heard: bool,
}

impl SelfReports {
    /// Start listening for the reports of worker `worker_id`, named `name`.
    pub fn expect(&self, worker_id: &str, name: &str) {
        let expected = Expected { name: name.to_owned(), heard: false };
        self.lock().insert(worker_id.to_owned(), expected);
    }

    /// A `worker_complete` reached the session: if its `worker_id` is one of our running
    /// workers' id — or name, which is what a worker is most often told to call itself — that
    /// worker has reported.
    pub fn heard(&self, data: &Value) {
        let Some(said) = data.get("worker_id").and_then(Value::as_str) else { return };
        let mut running = self.lock();
        if let Some(expected) = running.get_mut(said) {
            expected.heard = true;
        } else if let Some(expected) = running.values_mut().find(|e| e.name == said) {
            expected.heard = true;
        }
    }

    /// Worker `worker_id` ended: stop listening; whether it had reported.
    pub fn settle(&self, worker_id: &str) -> bool {
        self.lock().remove(worker_id).is_some_and(|e| e.heard)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Expected>> {
        self.running.lock().expect("worker reports poisoned")
    }
}

/// Every `worker_complete` that reaches the session.
impl Sink for SelfReports {
    fn event(self: Arc<Self>, data: &RawValue) {
        if let Ok(data) = serde_json::from_str::<Value>(data.get()) {
            self.heard(&data);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_worker_that_reported_by_id_or_name_is_settled_once() {
        let reports = SelfReports::default();
        reports.expect("build-1a2b", "build");
        reports.expect("lint-3c4d", "lint");
        reports.heard(&json!({ "worker_id": "build" }));
        reports.heard(&json!({ "worker_id": "someone-else" }));
        reports.heard(&json!({ "status": "success" }));
        assert!(reports.settle("build-1a2b"), "reported by name");
        assert!(!reports.settle("lint-3c4d"), "never reported");
        assert!(!reports.settle("build-1a2b"), "forgotten once settled");
        reports.expect("x-0000", "x");
        reports.heard(&json!({ "worker_id": "x-0000" }));
        assert!(reports.settle("x-0000"), "reported by id");
    }
}
