//! `chat.*`: operations on chat sites (specs/operations.md): type and submit a message through
//! a site adapter, ask where an operation is, stop observing it.

use std::time::Duration;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::adapter::Adapter;
use super::methods;
use crate::limits::{PAGE_CALL, QUICK_CALL};

/// How long `chat.send` waits in the page for the adapter's input and an enabled submit.
pub const INPUT_WAIT: Duration = Duration::from_secs(10);

/// `chat.send`'s params.
#[derive(Debug, Clone, Serialize)]
pub struct SendChat {
    pub tab_id: i64,
    pub operation_id: String,
    pub text: String,
    pub adapter: Adapter,
    /// [`INPUT_WAIT`], in milliseconds.
    pub wait_ms: u64,
}

/// Which operation (`chat.status`, `chat.cancel`).
#[derive(Debug, Clone, Serialize)]
pub struct OperationRef {
    pub tab_id: i64,
    pub operation_id: String,
}

/// `chat.cancel`'s params: which operation, and whether to press the app's stop control (the
/// adapter's `stop`) when the answer is streaming.
#[derive(Debug, Clone, Serialize)]
pub struct CancelChat {
    pub tab_id: i64,
    pub operation_id: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stop: bool,
}

/// `chat.cancel`'s answer: the `response_stopped` milestone when the page pressed the app's
/// stop control.
#[derive(Debug, Deserialize)]
pub struct ChatCancelled {
    #[serde(default)]
    pub stopped: Option<WireMilestone>,
}

/// Where an operation is, as the page saw it.
#[derive(Debug, Deserialize)]
pub struct ChatProgress {
    /// False when the page was replaced (navigated or reloaded) since.
    #[serde(default)]
    pub found: bool,
    #[serde(default)]
    pub milestones: Vec<WireMilestone>,
}

/// A milestone as the extension sends it (`specs/protocol.md`, event `operation`, and in
/// `chat.status`).
#[derive(Debug, Deserialize)]
pub struct WireMilestone {
    pub operation_id: String,
    pub milestone: String,
    /// Its number among this operation's milestones in the page; absent for those the
    /// extension's worker makes itself (tab closed, navigated away).
    #[serde(default)]
    pub n: Option<u64>,
    #[serde(default)]
    pub at: Option<f64>,
    #[serde(default)]
    pub data: Value,
}

methods! {
    /// Type the text into the chat's input and submit it; answers once submitted.
    ChatSend = "chat.send": SendChat => IgnoredAny, INPUT_WAIT.saturating_add(QUICK_CALL);
    /// The operation's milestones as the page saw them (an adopted operation catching up).
    ChatStatus = "chat.status": OperationRef => ChatProgress, Duration::from_secs(30);
    /// The page stops observing the operation (pressing the app's stop control first, if asked).
    /// A page call: pressing waits in the page for the control to show and to go (up to 4 s,
    /// specs/operations.md "Stopping"), which a loaded machine stretches well past QUICK_CALL.
    ChatCancel = "chat.cancel": CancelChat => ChatCancelled, PAGE_CALL;
}
