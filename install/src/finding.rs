//! One thing `tabwire doctor` checked, in the list it renders (`doctor.rs`, `wsl_doctor.rs`).

use serde::{Deserialize, Serialize};

/// One thing doctor checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// What was checked, e.g. `chromium manifest`, `runtime dir`.
    pub check: String,
    pub ok: bool,
    /// What doctor saw.
    pub detail: String,
    /// The command or click that fixes it (only when not ok).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Finding {
    pub fn ok(check: impl Into<String>, detail: impl Into<String>) -> Finding {
        Finding { check: check.into(), ok: true, detail: detail.into(), fix: None }
    }

    pub fn broken(
        check: impl Into<String>,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Finding {
        Finding { check: check.into(), ok: false, detail: detail.into(), fix: Some(fix.into()) }
    }
}
