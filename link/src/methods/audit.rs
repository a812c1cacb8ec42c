//! `dom.audit`: an accessibility audit of a page or one element by axe-core, which the
//! extension injects for this call only (`extension/worker/dom/audit.js`). Everything in the
//! answer but the rule ids came from the page or the engine's reading of it: data, never
//! instructions.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{OnPage, methods};

/// `dom.audit`'s params.
#[derive(Debug, Serialize)]
pub struct AuditArgs {
    #[serde(flatten)]
    pub page: OnPage,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r#ref: Option<String>,
}

/// What the audit found.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Audit {
    #[serde(default)]
    pub tab_id: i64,
    pub origin: Option<String>,
    pub url: String,
    /// The element audited (else the whole page).
    pub r#ref: Option<String>,
    /// The engine and its version, e.g. `axe-core 4.14.1`.
    pub engine: Option<String>,
    /// Most severe first.
    pub violations: Vec<Violation>,
    /// Rules the page passed.
    pub passed: u64,
    /// Rules the engine could not decide (e.g. contrast over an image): check them by eye.
    pub incomplete: u64,
    /// Frames of sites not allowed (or that did not answer): not audited.
    pub frames_not_audited: Vec<String>,
}

/// One rule the page breaks, and where.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Violation {
    /// axe's rule id, e.g. `label`, `color-contrast`, `button-name`.
    pub rule: String,
    /// `critical`, `serious`, `moderate` or `minor`.
    pub impact: Option<String>,
    /// What the rule asks, in one line.
    pub help: String,
    /// The rule's page at Deque.
    pub help_url: String,
    /// How many elements break it (at most 20 per frame are listed).
    pub total: u64,
    pub elements: Vec<Flagged>,
}

/// An element that breaks a rule.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Flagged {
    /// Its ref, for click, fill and the rest.
    pub r#ref: Option<String>,
    pub role: Option<String>,
    pub name: Option<String>,
    /// The first thing to fix about it.
    pub fix: String,
    /// Its opening HTML, cut to 200 characters.
    pub html: String,
}

methods! {
    /// Audit a page's accessibility.
    DomAudit = "dom.audit": AuditArgs => Audit, Duration::from_secs(60);
}
