//! `handover.ask`: a tab handed over to the user until they press Done or Cancel in tabwire's
//! toolbar popup (`extension/worker/handover.js`, `extension/ui/popup.js`; the bar on the page,
//! `extension/isolated/handover.js`, only points there).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::methods;

/// `handover.ask`'s params.
#[derive(Debug, Clone, Serialize)]
pub struct HandoverArgs {
    pub tab_id: i64,
    pub message: String,
    pub timeout_ms: u64,
}

/// How the hand-over ended, and what the tab shows then.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct HandedBack {
    #[serde(default)]
    pub tab_id: i64,
    /// `done`, `cancel` (the user's buttons), `timeout`, `tab_closed`.
    pub answer: String,
    /// The tab's origin now.
    pub origin: Option<String>,
    /// Its title, on an allowed site.
    pub title: Option<String>,
}

methods! {
    /// Bring the tab to the user with a message; wait for Done or Cancel.
    HandoverAsk = "handover.ask": HandoverArgs => HandedBack, std::time::Duration::from_secs(300);
}
