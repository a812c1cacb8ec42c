//! `webdev.*`: a web developer's tools for one tab's own origin, on allowed sites whose
//! "Cookies" switch the user turned on (`extension/worker/webdev.js`). The answers are the
//! tools' structured results too (`crate::mcp::webdev`). Everything in them came from the
//! browser: data, never instructions.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Number;

use super::methods;
use crate::limits::{PAGE_CALL, QUICK_CALL};

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
    /// Each localStorage key and its value: Web Storage keeps strings only.
    pub local_storage: BTreeMap<String, String>,
    /// Each sessionStorage key and its value.
    pub session_storage: BTreeMap<String, String>,
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

/// `webdev.network`'s params: a network rule made, listed or removed for `session`.
#[derive(Debug, Clone, Serialize)]
pub struct NetworkRuleArgs {
    /// The key of the MCP session the rules belong to (`crate::mcp::network`).
    pub session: String,
    pub action: String,
    pub tab_id: Option<i64>,
    pub url_pattern: Option<String>,
    pub body: Option<String>,
    pub content_type: Option<String>,
    pub rule_id: Option<i64>,
    pub expected_origin: Option<String>,
}

/// One network rule of this session.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NetworkRule {
    /// Its id, for action remove.
    pub id: i64,
    /// The tab whose requests it applies to.
    pub tab_id: i64,
    /// block, mock or offline.
    pub action: String,
    /// The URLs it matches (`*`: any characters).
    pub url_pattern: String,
    /// The origin of those URLs.
    pub origin: String,
    /// mock: the answer's Content-Type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// mock: the answer's size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

/// The session's rules after the action.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct NetworkRules {
    #[serde(default)]
    pub action: String,
    /// block, mock, offline: the tab's origin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// block, mock, offline: the rule made; list, remove, online: this session's rules left.
    pub rules: Vec<NetworkRule>,
    /// remove, online: how many rules went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed: Option<u64>,
}

/// `webdev.network_hold`'s params.
#[derive(Debug, Clone, Serialize)]
pub struct HoldArgs {
    pub session: String,
}

/// A hold that ended by itself: the bridge sends the next one.
#[derive(Debug, Deserialize)]
pub struct HoldEnded {
    #[serde(default)]
    pub rules: u64,
}

/// `webdev.viewport`'s params.
#[derive(Debug, Clone, Serialize)]
pub struct ViewportArgs {
    pub tab_id: i64,
    pub width: Option<i64>,
    pub height: Option<i64>,
    pub reset: bool,
    pub expected_origin: Option<String>,
}

/// The tab's window, as `webdev.viewport` left it.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct WindowSize {
    pub id: i64,
    pub width: i64,
    pub height: i64,
    /// Whether tabwire resized it and has its size from before (reset puts that back).
    pub resized: bool,
}

/// The page's layout viewport, as its own scripts see it.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Viewport {
    #[serde(default)]
    pub tab_id: i64,
    pub origin: Option<String>,
    pub url: Option<String>,
    /// `innerWidth`, CSS pixels.
    pub inner_width: i64,
    /// `innerHeight`, CSS pixels.
    pub inner_height: i64,
    pub device_pixel_ratio: f64,
    pub window: WindowSize,
}

/// Milliseconds from the start of the page's navigation, to a tenth, as the page wrote them: a
/// whole number stays one (`312`, where an `f64` would be written `312.0`).
pub type Ms = Number;

/// The page's own performance entries, in milliseconds from the start of its navigation.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct PageTiming {
    #[serde(default)]
    pub tab_id: i64,
    pub origin: Option<String>,
    pub url: Option<String>,
    /// The navigation that loaded the page; null before its entry exists.
    pub navigation: Option<NavigationTiming>,
    /// When the page first painted anything.
    pub first_paint: Option<Ms>,
    /// When it first painted text or an image.
    pub first_contentful_paint: Option<Ms>,
    /// The last largest-contentful-paint candidate; null if none was painted.
    pub largest_contentful_paint: Option<LargestPaint>,
    /// Layout shifts without recent input, summed.
    pub cumulative_layout_shift: f64,
    pub long_tasks: LongTasks,
    pub resources: Resources,
    /// `performance.now()` when read.
    pub now: Option<Ms>,
}

/// The page's navigation entry.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct NavigationTiming {
    /// `navigate`, `reload`, `back_forward` or `prerender`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Time to the response's first byte.
    pub ttfb: Option<Ms>,
    /// When DOMContentLoaded's handlers had run.
    pub dom_content_loaded: Option<Ms>,
    /// When the load event's handlers had run; 0 while it has not fired.
    pub load: Option<Ms>,
    pub duration: Option<Ms>,
    /// Bytes over the network, headers included; 0 from the cache.
    pub transfer_size: Option<u64>,
}

/// The largest contentful paint.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct LargestPaint {
    pub time: Option<Ms>,
    /// Its area, CSS pixels.
    pub size: u64,
    /// The element's tag and `#id`, e.g. `img#hero`; null once it left the document.
    pub element: Option<String>,
}

/// Tasks that held the page's main thread over 50 ms.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct LongTasks {
    pub count: u64,
    pub total_ms: Option<Ms>,
}

/// What the page fetched besides its document (its resource timing entries).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Resources {
    pub count: u64,
    /// Bytes over the network, summed (0 for one from the cache, or from another site that
    /// sends no `Timing-Allow-Origin`).
    pub transfer_size: u64,
    /// The slowest five.
    pub slowest: Vec<SlowResource>,
}

/// One resource the page fetched.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SlowResource {
    /// Without its query and fragment, at most 300 characters.
    pub url: String,
    /// What fetched it: `script`, `img`, `fetch`, `xmlhttprequest`, `link`, `css`, …
    #[serde(rename = "type")]
    pub kind: String,
    pub duration: Option<Ms>,
}

/// `webdev.pdf`'s params.
#[derive(Debug, Clone, Serialize)]
pub struct PdfArgs {
    pub tab_id: i64,
    pub landscape: bool,
    pub print_background: bool,
    pub expected_origin: Option<String>,
}

/// The printed page.
#[derive(Debug, Deserialize)]
pub struct Printed {
    pub origin: Option<String>,
    pub url: Option<String>,
    #[serde(default)]
    pub title: String,
    /// The PDF, base64.
    pub data: String,
}

methods! {
    /// Block or mock requests of allowed sites in a tab; list or remove the session's rules.
    WebdevNetwork = "webdev.network": NetworkRuleArgs => NetworkRules, QUICK_CALL;
    /// Held open while a session has network rules; they go when it ends unanswered.
    WebdevNetworkHold = "webdev.network_hold": HoldArgs => HoldEnded, QUICK_CALL;
    /// Resize the tab's window to a viewport size, or back; the page's viewport.
    WebdevViewport = "webdev.viewport": ViewportArgs => Viewport, QUICK_CALL;
    /// The page's performance entries.
    WebdevTiming = "webdev.timing": TabArgs => PageTiming, QUICK_CALL;
    /// The page printed to PDF through the debugger.
    WebdevPdf = "webdev.pdf": PdfArgs => Printed, PAGE_CALL;
}
