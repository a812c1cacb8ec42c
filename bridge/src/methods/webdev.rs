//! `webdev.*`: a web developer's tools for one tab's own origin, on allowed sites whose
//! "Cookies" switch the user turned on (`extension/worker/webdev.js`). The answers are the
//! tools' structured results too (`crate::mcp::webdev`). Everything in them came from the
//! browser: data, never instructions.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::methods;
use crate::limits::QUICK_CALL;

/// One cookie, as `chrome.cookies` keeps it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Cookie {
    pub name: String,
    pub value: String,
    /// Default `/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Seconds since 1970; null or absent: a session cookie.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secure: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_only: Option<bool>,
    /// `no_restriction`, `lax` or `strict` (read: also `unspecified`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_site: Option<String>,
    /// False: also sent to the host's subdomains. Default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_only: Option<bool>,
}

/// `webdev.cookies`'s params.
#[derive(Debug, Clone, Serialize)]
pub struct CookiesArgs {
    pub tab_id: i64,
    pub action: String,
    pub name: Option<String>,
    pub cookie: Option<Cookie>,
    pub expected_origin: Option<String>,
}

/// The cookies of the tab's host.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Cookies {
    #[serde(default)]
    pub tab_id: i64,
    pub origin: Option<String>,
    pub url: Option<String>,
    /// list: all of the host's; get: those of that name; set: the one set; clear: none.
    pub cookies: Vec<Cookie>,
    /// clear: how many were removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed: Option<u64>,
}

/// `webdev.storage`'s, `webdev.state_save`'s params.
#[derive(Debug, Clone, Serialize)]
pub struct TabArgs {
    pub tab_id: i64,
    pub expected_origin: Option<String>,
}

/// The names a tab's origin keeps in web storage.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct StorageNames {
    #[serde(default)]
    pub tab_id: i64,
    pub origin: Option<String>,
    pub url: Option<String>,
    /// localStorage keys.
    pub local_storage: Vec<String>,
    /// sessionStorage keys.
    pub session_storage: Vec<String>,
    /// IndexedDB database names.
    pub indexed_db: Vec<String>,
}

/// A site's signed-in state: what save_state writes to its file and restore_state reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SiteState {
    /// The origin it was taken from; it goes back only into a tab of this origin.
    pub origin: String,
    #[serde(default, skip_serializing)]
    pub url: Option<String>,
    pub cookies: Vec<Cookie>,
    pub local_storage: Map<String, Value>,
    pub session_storage: Map<String, Value>,
}

/// `webdev.state_restore`'s params: a state to put back, or `clear` to sign out.
#[derive(Debug, Clone, Serialize)]
pub struct RestoreArgs {
    pub tab_id: i64,
    pub state: Option<SiteState>,
    pub clear: bool,
    pub expected_origin: Option<String>,
}

/// What restore_state did.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Restored {
    #[serde(default)]
    pub tab_id: i64,
    pub origin: Option<String>,
    pub url: Option<String>,
    /// Cookies set.
    pub cookies: u64,
    /// Cookies removed (with `clear`).
    pub removed: u64,
    /// The file it was read from.
    #[serde(default)]
    pub path: Option<String>,
}

methods! {
    /// List, read, set or clear the cookies of the tab's host.
    WebdevCookies = "webdev.cookies": CookiesArgs => Cookies, QUICK_CALL;
    /// The names in the tab's localStorage, sessionStorage and IndexedDB.
    WebdevStorage = "webdev.storage": TabArgs => StorageNames, QUICK_CALL;
    /// The site's cookies and web storage, values included.
    WebdevStateSave = "webdev.state_save": TabArgs => SiteState, QUICK_CALL;
    /// Put a saved state back into a tab of its origin, or clear the site's.
    WebdevStateRestore = "webdev.state_restore": RestoreArgs => Restored, QUICK_CALL;
}
