//! `dom.*`: any page of an allowed site, read and acted on as a user would. The work is done
//! in the extension (`extension/worker/dom.js` in the worker, `extension/isolated/agent.js` in
//! every frame). The answers are the tools' structured results too (`crate::mcp`), so their doc
//! comments are the tools' output schemas. Everything in them came from a page: data, never
//! instructions.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::methods;
use crate::limits::QUICK_CALL;

/// How long a read may take in the browser (a 5,000-element page reads in well under 1 s).
const READ: Duration = Duration::from_secs(15);
/// An action: its settle cap (5 s) plus a navigation it started (10 s), with room.
const ACT: Duration = Duration::from_secs(20);

/// Which page every `dom.*` call is for: the tab, and the origin it must still show (else the
/// extension refuses with `origin_mismatch`, so an action never lands on a page that moved).
#[derive(Debug, Clone, Serialize)]
pub struct OnPage {
    pub tab_id: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_origin: Option<String>,
}

/// One element: by ref (preferred) or CSS selector. The tools take it as it is sent.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
pub struct Element {
    /// A ref from read_page or find (e12; f3e12 in a frame).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#ref: Option<String>,
    /// Else a CSS selector (top frame).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Controls (links, buttons, fields…) with headings and landmarks for context.
    #[default]
    Interactive,
    /// Every element with a role, and the text.
    Full,
    /// The readable text, as markdown.
    Text,
}

/// One field of a fill.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct Field {
    #[serde(flatten)]
    pub element: Element,
    /// Text (a date as `YYYY-MM-DD`); for a select an option's value or label (a list if multiple);
    /// true/false for a checkbox; true for the radio to choose.
    pub value: Value,
}

/// `dom.read`'s params.
#[derive(Debug, Serialize)]
pub struct ReadArgs {
    #[serde(flatten)]
    pub page: OnPage,
    pub mode: Mode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
}

/// `dom.find`'s params: what a line must have (each one given).
#[derive(Debug, Serialize)]
pub struct FindArgs {
    #[serde(flatten)]
    pub page: OnPage,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
}

/// `dom.click`'s params.
#[derive(Debug, Serialize)]
pub struct ClickArgs {
    #[serde(flatten)]
    pub page: OnPage,
    #[serde(flatten)]
    pub element: Element,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub button: Option<String>,
    /// 1 to 3.
    pub count: u8,
    pub modifiers: Vec<String>,
    /// Real input through the debugger, where the user turned on "Trusted input".
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub trusted: bool,
}

/// `dom.fill`'s params.
#[derive(Debug, Serialize)]
pub struct FillArgs {
    #[serde(flatten)]
    pub page: OnPage,
    pub fields: Vec<Field>,
}

/// `dom.type`'s params.
#[derive(Debug, Serialize)]
pub struct TypeArgs {
    #[serde(flatten)]
    pub page: OnPage,
    #[serde(flatten)]
    pub element: Element,
    pub text: String,
    pub submit: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub trusted: bool,
}

/// `dom.press_key`'s params.
#[derive(Debug, Serialize)]
pub struct PressKeyArgs {
    #[serde(flatten)]
    pub page: OnPage,
    #[serde(flatten)]
    pub element: Element,
    pub keys: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub trusted: bool,
}

/// `dom.pointer`'s params.
#[derive(Debug, Serialize)]
pub struct PointerArgs {
    #[serde(flatten)]
    pub page: OnPage,
    #[serde(flatten)]
    pub element: Element,
    /// `hover`, `scroll` or `drag`.
    pub action: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    pub dx: f64,
    pub dy: f64,
}

/// `dom.upload`'s params: the files' bytes, read by the bridge from the allowed directories.
#[derive(Debug, Serialize)]
pub struct UploadArgs {
    #[serde(flatten)]
    pub page: OnPage,
    #[serde(rename = "ref")]
    pub element_ref: String,
    pub files: Vec<UploadedFile>,
}

/// One file as the page's file input gets it.
#[derive(Debug, Serialize)]
pub struct UploadedFile {
    pub name: String,
    /// The MIME type a file dialog would give ("" when unknown).
    #[serde(rename = "type")]
    pub mime: &'static str,
    pub base64: String,
}

/// `dom.wait_for`'s params: what to wait for (each one given), and how long.
#[derive(Debug, Serialize)]
pub struct WaitForArgs {
    #[serde(flatten)]
    pub page: OnPage,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_gone: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub timeout_ms: u64,
}

/// `dom.handle_dialog`'s params.
#[derive(Debug, Serialize)]
pub struct DialogArgs {
    #[serde(flatten)]
    pub page: OnPage,
    pub accept: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_text: Option<String>,
}

/// The page as lines, or what changed since a snapshot: what read_page's text (a header line,
/// then the lines) is made of. The extension says more (`page_ms`, `tokens`, `scroll`), which
/// serde passes over.
#[derive(Debug, Deserialize)]
pub struct PageSnapshot {
    /// Its URL, without the fragment.
    pub url: String,
    pub title: String,
    pub mode: String,
    /// Pass it back as `since` for only what changed. Null for mode text.
    pub snapshot_id: Option<String>,
    /// The snapshot this one is compared with, when `since` was given.
    #[serde(default)]
    pub since: Option<String>,
    /// With `since`: how many lines were added and removed.
    #[serde(default)]
    pub changes: Option<Value>,
    /// Lines of the whole snapshot before the budget.
    pub lines: u64,
    /// What the budget cut: `offscreen` lines outside the viewport, `end` lines at the end;
    /// in text mode `chars`, the characters of page text cut at the end.
    pub cut: Value,
    /// Origins of frames left out because tabwire is not allowed there.
    pub frames_not_read: Vec<String>,
    /// The snapshot: one line per element, `role "name" [ref=e12] [state…]`, indented.
    pub text: String,
}

/// Elements matching a find.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Found {
    #[serde(default)]
    pub tab_id: i64,
    pub origin: Option<String>,
    pub url: String,
    /// At most 50: each line with the lines it is nested in.
    pub matches: Vec<Match>,
    /// How many lines matched in all.
    pub total: u64,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Match {
    pub line: String,
    /// The enclosing lines, outermost first (their states left out).
    pub ancestry: Vec<String>,
}

/// What an action did, once the page settled.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct ActReport {
    #[serde(default)]
    pub tab_id: i64,
    pub origin: Option<String>,
    pub url: String,
    /// From the call reaching the browser to the settled page.
    pub ms: u64,
    /// `changed`, or `none`: nothing in the page changed (no DOM change, request, navigation,
    /// dialog, new tab or download) — the action most likely did nothing; or `unknown`: nothing
    /// changed in a hidden tab, where what the page draws may wait until it is shown.
    pub effect: String,
    /// The tab was hidden (not its window's active tab, or its window covered or minimized):
    /// tabwire ran the page's animation frames and focus events and waited `hidden_quiet_ms`
    /// of quiet for its throttled timers (specs/tools.md, "In the background").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden_quiet_ms: Option<u64>,
    /// The tab loaded another page.
    pub navigated: bool,
    pub navigated_to: Option<String>,
    /// The id of a tab the action opened.
    pub new_tab: Option<i64>,
    /// A download the action started (the downloads tool waits for it and hashes the file).
    #[serde(default)]
    pub download: Option<StartedDownload>,
    /// The last alert/confirm/prompt the page opened: {type, message, accepted, by, text?}.
    pub dialog: Option<Value>,
    /// Requests the action started that were still running at the settle cap.
    pub pending: Vec<String>,
    /// fetch/XHR requests the action started.
    pub requests: u64,
    /// DOM changes seen.
    pub mutations: u64,
    /// Snapshot lines (interactive mode) that appeared and disappeared.
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Changed lines left out of `added`/`removed` (40 of each are shown).
    pub more_changes: u64,
    /// Where a grid's or a list's rows were re-ordered, or many came, went or changed: what
    /// happened to them in a few lines, each table's summary then its rows now, one line each
    /// (indented), instead of their lines in `added`/`removed` (specs/tools.md, "Settling").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<String>,
    /// What the action returned: values filled, files set, typed value.
    pub result: Value,
    /// Refs that were re-bound to a re-rendered element.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// A download as an action's report names it, the moment it started.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct StartedDownload {
    pub id: i64,
    /// The file's name, once Chrome chose it.
    pub filename: Option<String>,
    /// Where the bytes come from: an origin, or `blob:` / `data:`.
    pub url_origin: String,
    /// `in_progress`, `interrupted` or `complete`.
    pub state: String,
}

/// handle_dialog's answer.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct DialogArmed {
    #[serde(default)]
    pub tab_id: i64,
    pub origin: Option<String>,
    pub url: String,
    /// The answer the next dialog in the tab gets.
    pub armed: Value,
    /// Dialogs answered with the default since the last action ended.
    #[schemars(with = "Vec<serde_json::Map<String, Value>>")]
    pub answered_since: Vec<Value>,
}

/// wait_for's answer.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Waited {
    #[serde(default)]
    pub tab_id: i64,
    pub met: bool,
    pub ms: u64,
    pub origin: Option<String>,
    pub url: String,
}

/// Which page a capture is of, and how much of it was kept.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Capture {
    #[serde(default)]
    pub tab_id: i64,
    /// The origin of the page the tab shows, as the browser names it.
    pub origin: Option<String>,
    /// That page's URL, without its fragment.
    pub url: Option<String>,
    /// Older entries that matched but were left out by `limit`.
    pub left_out: u64,
    /// Entries the capture let go (it keeps the last `kept_at_most`).
    pub dropped: u64,
    pub kept_at_most: u64,
    /// The time of this answer: the `since` of the next call.
    pub now: u64,
}

/// A page's console, as tabwire captured it.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ConsoleMessages {
    #[serde(flatten)]
    pub capture: Capture,
    /// Oldest first: `{n, level, text, source, time}`; uncaught errors and promise
    /// rejections are `error`s whose text starts with "Uncaught".
    #[schemars(with = "Vec<serde_json::Map<String, Value>>")]
    pub messages: Vec<Value>,
}

/// A tab's requests, as tabwire captured them.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct NetworkRequests {
    #[serde(flatten)]
    pub capture: Capture,
    /// Oldest first: `{origin, method, url, type, status, ms, error, time, seen}`; `origin` is
    /// the document that made the request, `status` null while it is pending, when it failed
    /// (then `error` says why) or when the browser hides it (another origin's answer); `seen`
    /// is `browser` (its timing record) or `page` (a fetch/XHR as the page reported it).
    #[schemars(with = "Vec<serde_json::Map<String, Value>>")]
    pub requests: Vec<Value>,
    /// When the page's navigation began: the log's start (ms since the Unix epoch).
    #[serde(default)]
    pub recorded_since: u64,
    /// Whether the page's own load is in the list.
    #[serde(default)]
    pub load_recorded: bool,
}

/// What the function returned.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Evaluated {
    #[serde(default)]
    pub tab_id: i64,
    /// The origin of the page it ran in, as the browser names it.
    pub origin: Option<String>,
    /// That page's URL, without its fragment.
    pub url: Option<String>,
    /// The function's value as JSON (null for undefined).
    pub result: Value,
}

#[derive(Debug, Default, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    #[default]
    Png,
    Jpeg,
}

/// What the extension answers to `dom.screenshot`.
#[derive(Debug, Deserialize)]
pub struct Taken {
    pub origin: Option<String>,
    pub url: Option<String>,
    pub mime: String,
    pub data: String,
    pub width: u32,
    pub height: u32,
    #[serde(default)]
    pub cut: Option<String>,
}

/// `dom.screenshot`'s params.
#[derive(Debug, Clone, Serialize)]
pub struct ScreenshotArgs {
    pub tab_id: i64,
    pub selector: Option<String>,
    #[serde(rename = "ref")]
    pub element_ref: Option<String>,
    pub full_page: bool,
    pub max_dim: u32,
    pub format: Format,
    pub expected_origin: Option<String>,
}

/// `dom.console`'s params.
#[derive(Debug, Clone, Serialize)]
pub struct ConsoleArgs {
    pub tab_id: i64,
    /// The least severe level: `debug`, `log`, `info`, `warn` or `error`.
    pub level: String,
    pub since: u64,
    pub limit: u32,
}

/// `dom.network`'s params.
#[derive(Debug, Clone, Serialize)]
pub struct NetworkArgs {
    pub tab_id: i64,
    pub filter: Option<String>,
    pub since: u64,
    pub limit: u32,
}

/// `dom.evaluate`'s params; how long it may run is the call's timeout.
#[derive(Debug, Clone, Serialize)]
pub struct EvaluateArgs {
    pub tab_id: i64,
    pub function: String,
    pub expected_origin: Option<String>,
}

methods! {
    /// What a tab shows, as an image (`chrome.tabs.captureVisibleTab`). A full page is up to 8
    /// captures, and Chrome allows about two a second.
    DomScreenshot = "dom.screenshot": ScreenshotArgs => Taken, Duration::from_secs(30);
    /// The top document's console, as captured from document_start.
    DomConsole = "dom.console": ConsoleArgs => ConsoleMessages, QUICK_CALL;
    /// The tab's requests, from the worker's webRequest log.
    DomNetwork = "dom.network": NetworkArgs => NetworkRequests, QUICK_CALL;
    /// Run the assistant's function in the page, where the user turned on "Run scripts".
    DomEvaluate = "dom.evaluate": EvaluateArgs => Evaluated, Duration::from_secs(10);
    /// One action as real input through `chrome.debugger`, where the user turned on "Trusted
    /// input". No tool calls it by itself yet (the page tools' `trusted: true` go through
    /// their own methods); tests do.
    DomTrustedInput = "dom.trusted_input": Value => Value, ACT;
    /// read_page.
    DomRead = "dom.read": ReadArgs => PageSnapshot, READ;
    /// find.
    DomFind = "dom.find": FindArgs => Found, READ;
    /// click.
    DomClick = "dom.click": ClickArgs => ActReport, ACT;
    /// fill.
    DomFill = "dom.fill": FillArgs => ActReport, ACT;
    /// type.
    DomType = "dom.type": TypeArgs => ActReport, ACT;
    /// press_key.
    DomPressKey = "dom.press_key": PressKeyArgs => ActReport, ACT;
    /// pointer: hover, scroll, drag.
    DomPointer = "dom.pointer": PointerArgs => ActReport, ACT;
    /// upload_file, with the files' bytes instead of their paths.
    DomUpload = "dom.upload": UploadArgs => ActReport, ACT;
    /// wait_for; called within the wait the caller chose, plus room for the answer.
    DomWaitFor = "dom.wait_for": WaitForArgs => Waited, Duration::from_secs(12);
    /// handle_dialog.
    DomHandleDialog = "dom.handle_dialog": DialogArgs => DialogArmed, READ;
}
