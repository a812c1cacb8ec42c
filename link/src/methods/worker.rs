//! The extension's worker itself: `ping` (is it there, which version) and `echo` (the first hop
//! of every round trip, which `diagnose` times).

use serde::Deserialize;
use serde_json::Value;

use super::methods;
use crate::limits::QUICK_CALL;

/// The answer to `ping`.
#[derive(Debug, Clone, Deserialize)]
pub struct Pong {
    pub pong: bool,
    #[serde(default)]
    pub extension_version: Option<String>,
    /// What carries messages between the extension and its host now: the fast link, or
    /// Native Messaging and why (the popup's "Messages go by").
    #[serde(default)]
    pub carrier: Option<String>,
}

methods! {
    /// Whether the extension answers at all (`tabwire doctor`).
    Ping = "ping": () => Pong, QUICK_CALL;
    /// The params, sent back unchanged by the worker.
    Echo = "echo": Value => Value, QUICK_CALL;
}
