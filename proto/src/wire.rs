//! The messages of the tabwire protocol, shared by the extension, the host and the bridges.
//!
//! Serde types only: nothing here does I/O. Every message is a JSON object tagged by `"type"`.
//! Payloads (`params`, `result`, event `data`) are kept as raw JSON text: the host routes an
//! 8 MiB page state without building a tree of it, and the bridge parses it into whatever type
//! it needs. Parsing never panics: an unknown `type`, a missing field or bad JSON is a
//! [`WireError`].

use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;

/// Version of this protocol. A peer that speaks another major version is refused in `hello`.
pub const PROTOCOL_VERSION: u32 = 1;

/// Error codes carried by `response.error.code`. Strings, so peers can add codes without
/// breaking old readers; a reader that does not know a code shows the message.
pub mod code {
    /// The request was not answered in time.
    pub const TIMEOUT: &str = "timeout";
    /// The browser (or its host) went away while the request was in flight, or none is attached.
    pub const BROWSER_DISCONNECTED: &str = "browser_disconnected";
    /// The method is not known by whoever received it.
    pub const UNKNOWN_METHOD: &str = "unknown_method";
    /// The request's parameters are wrong.
    pub const BAD_REQUEST: &str = "bad_request";
    /// A message or frame that could not be parsed.
    pub const INVALID_MESSAGE: &str = "invalid_message";
    /// A message over a size limit.
    pub const TOO_LARGE: &str = "too_large";
    /// The request was cancelled before it finished.
    pub const CANCELLED: &str = "cancelled";
    /// No tab with that id.
    pub const NO_SUCH_TAB: &str = "no_such_tab";
    /// The page has no handler for this (no `provideState`, no `onCommand(type)`).
    pub const NO_HANDLER: &str = "no_handler";
    /// The page's own code threw or rejected.
    pub const PAGE_ERROR: &str = "page_error";
    /// The page cannot be scripted (chrome:// pages, the web store, a crashed tab).
    pub const NOT_SCRIPTABLE: &str = "not_scriptable";
    /// The tab shows a site the user has not allowed tabwire on (`tabwire sites`, the popup).
    pub const SITE_NOT_ALLOWED: &str = "site_not_allowed";
    /// The tab no longer shows the origin the caller expected (`expected_origin`).
    pub const ORIGIN_CHANGED: &str = "origin_changed";
    /// A page pushed events faster than its tab may (specs/page-sdk.md, limits).
    pub const RATE_LIMITED: &str = "rate_limited";
    /// A value from a page nests deeper than [`super::MAX_DEPTH`].
    pub const TOO_DEEP: &str = "too_deep";
    /// A chat site adapter does not fit the page (its URL, or a selector).
    pub const ADAPTER_MISMATCH: &str = "adapter_mismatch";
    /// No live session has that id.
    pub const NO_SUCH_SESSION: &str = "no_such_session";
    /// `complete_skill` named another skill than the one the workflow session waits for.
    pub const WRONG_SKILL: &str = "wrong_skill";
    /// No workflow was started in that project and session.
    pub const NO_WORKFLOW: &str = "no_workflow";
    /// A workflow session's state file could not be read; it was moved aside.
    pub const CORRUPT_STATE: &str = "corrupt_state";
    /// A local server (`GET /wait`) has as many connections open as it serves.
    pub const TOO_MANY_CONNECTIONS: &str = "too_many_connections";
    /// A command's payload does not fit the `params` schema its page declared; the page was not
    /// asked. The message names the JSON Pointer of the first bad field.
    pub const INVALID_PARAMS: &str = "invalid_params";
    /// A ref (read_page, find) no longer names an element of the page, and no single
    /// element matches its role, name and place.
    pub const STALE_REF: &str = "stale_ref";
    /// A selector matched no element.
    pub const NO_SUCH_ELEMENT: &str = "no_such_element";
    /// The element cannot take the action: covered by another, disabled, hidden, or of the
    /// wrong kind; the message names which.
    pub const NOT_ACTIONABLE: &str = "not_actionable";
    /// `evaluate` on a site where the user has not turned on running scripts.
    pub const SCRIPTS_NOT_ALLOWED: &str = "scripts_not_allowed";
    /// Trusted (debugger) input on a site where the user has not turned it on.
    pub const TRUSTED_INPUT_NOT_ENABLED: &str = "trusted_input_not_enabled";
    /// Cookies or storage of a site where the user has not turned on its "Cookies" switch.
    pub const COOKIES_NOT_ALLOWED: &str = "cookies_not_allowed";
    /// The page shows the browser's own alert/confirm/prompt, which blocks it until answered
    /// (handle_dialog, or the user); nothing was done.
    pub const DIALOG_OPEN: &str = "dialog_open";
    /// upload_file was asked for a file it never gives a page: outside the directories the
    /// user allows uploads from, hidden, in /proc, /sys or /dev, another user's, or not a
    /// regular file. Nothing was uploaded.
    pub const FILE_NOT_ALLOWED: &str = "file_not_allowed";
    /// The user, asked to confirm (MCP elicitation), said no or gave no answer; nothing was
    /// done.
    pub const DECLINED_BY_USER: &str = "declined_by_user";
    /// The user pressed Stop in the extension's popup: page-facing calls are ended and refused
    /// until they press Resume there. No tool can resume.
    pub const PAUSED_BY_USER: &str = "paused_by_user";
    /// The tab is handed over to the user (ask_user) until they press Done or Cancel; nothing
    /// was done in it.
    pub const WAITING_FOR_USER: &str = "waiting_for_user";
    /// The tab is in the tab group of another live session (or worker); the message names it.
    /// Nothing was done in it.
    pub const TAB_OWNED_BY_OTHER_SESSION: &str = "tab_owned_by_other_session";
    /// Anything else that went wrong inside a peer.
    pub const INTERNAL: &str = "internal";

    /// Every code, in the order of the table in `specs/protocol.md` ("Error codes"); a test
    /// keeps the two, and the codes the extension throws, in step.
    pub const ALL: [&str; 35] = [
        TIMEOUT,
        BROWSER_DISCONNECTED,
        UNKNOWN_METHOD,
        BAD_REQUEST,
        INVALID_MESSAGE,
        TOO_LARGE,
        CANCELLED,
        NO_SUCH_TAB,
        NO_HANDLER,
        PAGE_ERROR,
        NOT_SCRIPTABLE,
        SITE_NOT_ALLOWED,
        ORIGIN_CHANGED,
        RATE_LIMITED,
        TOO_DEEP,
        ADAPTER_MISMATCH,
        NO_SUCH_SESSION,
        WRONG_SKILL,
        NO_WORKFLOW,
        CORRUPT_STATE,
        TOO_MANY_CONNECTIONS,
        INVALID_PARAMS,
        STALE_REF,
        NO_SUCH_ELEMENT,
        NOT_ACTIONABLE,
        SCRIPTS_NOT_ALLOWED,
        TRUSTED_INPUT_NOT_ENABLED,
        COOKIES_NOT_ALLOWED,
        DIALOG_OPEN,
        FILE_NOT_ALLOWED,
        DECLINED_BY_USER,
        PAUSED_BY_USER,
        WAITING_FOR_USER,
        TAB_OWNED_BY_OTHER_SESSION,
        INTERNAL,
    ];
}

/// Why a payload is not a protocol message.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("the message is not valid JSON for the tabwire protocol: {0}")]
    Json(#[from] serde_json::Error),
    #[error(
        "unknown message type {0:?} (expected hello, request, response, event, cancel or chunk)"
    )]
    UnknownType(String),
    #[error("a {kind} message needs the field `{field}`")]
    MissingField { kind: &'static str, field: &'static str },
    #[error("a response carries either `result` or `error`, not both")]
    ResultAndError,
}

/// One protocol message.
#[derive(Debug, Clone)]
pub enum Message {
    Hello(Hello),
    Request(Request),
    Response(Response),
    Event(Event),
    Cancel(Cancel),
    Chunk(Chunk),
}

/// First message on a connection. The extension sends it to the host as soon as the port is
/// open; the host sends its own (the extension's fields plus `host_pid`) to each bridge.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Hello {
    pub protocol: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension_id: Option<String>,
    /// Which build of the extension files this is (`build.json`, written by `tabwire
    /// install`); absent for a checkout's extension/.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_id: Option<String>,
    /// The host's own version, in the hello the host sends bridges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_pid: Option<u32>,
    /// Bridge → host: `true` to receive events (and the replay of those buffered while no one
    /// was listening). A bridge that only asks questions (`tabwire status`, `tabwire doctor`)
    /// leaves it out, so it cannot take the buffered events meant for the next real session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Bridge → host: the session this bridge is, as its requests name it (`request.session`).
    /// Boxed: a hello is rare, and this keeps every message small.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<Box<SessionTag>>,
}

/// Ask the other side to do something. `id` is chosen by the asker and unique among its
/// requests in flight; the host rewrites bridge ids on the way to the browser.
#[derive(Debug, Clone, Serialize)]
pub struct Request {
    pub id: String,
    pub method: String,
    pub params: Box<RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// The bridge session the request is made for; the extension keeps each session's tabs in
    /// a tab group of its own. Absent for a bridge that is no session (`tabwire status`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionTag>,
}

/// Who a request is for: a session's id and the name its tab group shows.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SessionTag {
    pub id: String,
    pub name: String,
    /// The session that spawned this one (a worker's lead), which may give it tabs
    /// (`tabs.give`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

/// The answer to one request: exactly one of `result` and `error`.
#[derive(Debug, Clone)]
pub struct Response {
    pub id: String,
    pub result: Result<Box<RawValue>, ErrorBody>,
}

/// Why a request failed. `message` is written for the person reading it: what happened and
/// what to do.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
}

/// Something that happened. `seq` is set by the host: one counter per host, in the order the
/// host received the events; it is absent on events the host made up (`dropped`). A session
/// queues it as `tabwire_link::events::SessionEvent`, with the same `tab_id`, [`Provenance`],
/// `seq` and `data`.
#[derive(Debug, Clone)]
pub struct Event {
    pub event: String,
    /// The tab it is about, if any.
    pub tab_id: Option<i64>,
    /// The document that produced it; empty on events of no page.
    pub from: Provenance,
    pub data: Box<RawValue>,
    pub seq: Option<u64>,
    /// The session whose tab group the tab is in, set by the extension's service worker while
    /// that session is live: the bridges of other sessions drop the event (specs/tools.md,
    /// "Sessions and their tab groups"). None for the user's tabs, which every session hears of.
    pub owner: Option<String>,
}

/// The document that produced an event, a state or a command's result: its origin and its URL
/// without the fragment, as the extension's service worker takes them from the sender Chrome
/// names, never from anything the page says (`specs/security.md`, "Provenance"). Declared
/// once: the wire's [`Event`], a session's queued events (`tabwire_link::events`) and the
/// bridge's cached states and page reads (`tabwire_link::state_cache`, `tabwire_link::page`)
/// carry it; in JSON it is the two fields `origin` and `url`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Provenance {
    /// The document's origin, `https://app.example.com`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// The document's URL, without its fragment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// Stop working on request `id`; no response is expected.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cancel {
    pub id: String,
}

/// One piece of a message too large for one frame toward the browser. The `data` of pieces
/// `0..count` of one `id`, joined in order, is the JSON text of the original message.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Chunk {
    pub id: String,
    pub index: u32,
    pub count: u32,
    pub data: String,
}

impl Event {
    /// An event with no provenance (made by the host or a bridge, not by a page).
    pub fn new(event: impl Into<String>, tab_id: Option<i64>, data: Box<RawValue>) -> Self {
        Self {
            event: event.into(),
            tab_id,
            from: Provenance::default(),
            data,
            seq: None,
            owner: None,
        }
    }
}

impl ErrorBody {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self { code: code.to_owned(), message: message.into() }
    }
}

impl Response {
    pub fn ok(id: impl Into<String>, result: Box<RawValue>) -> Self {
        Self { id: id.into(), result: Ok(result) }
    }

    pub fn err(id: impl Into<String>, code: &str, message: impl Into<String>) -> Self {
        Self { id: id.into(), result: Err(ErrorBody::new(code, message)) }
    }
}

/// How deeply values from pages may nest (`[[1]]` is 2 deep). The extension refuses deeper
/// ones; serde_json's parser stops at 128, so anything past this never reaches a parse.
pub const MAX_DEPTH: usize = 64;

/// How deeply the JSON text `json` nests arrays and objects, by a scan of its bytes (no parse,
/// no allocation). Brackets inside strings do not count.
pub fn nesting_depth(json: &str) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for b in json.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// `null` as a raw value, for empty params, results and event data.
pub fn null() -> Box<RawValue> {
    RawValue::from_string("null".to_owned()).expect("null is JSON")
}

/// Any serializable value as a raw JSON value.
pub fn raw<T: Serialize + ?Sized>(value: &T) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).expect("a plain value serializes to JSON")
}

impl Message {
    /// Parse one frame's payload.
    pub fn parse(payload: &[u8]) -> Result<Message, WireError> {
        let env: Envelope = serde_json::from_slice(payload)?;
        env.into_message()
    }

    /// The JSON text of this message, as one frame's payload.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("protocol messages always serialize")
    }

    /// The `type` tag of this message.
    pub fn kind(&self) -> &'static str {
        match self {
            Message::Hello(_) => "hello",
            Message::Request(_) => "request",
            Message::Response(_) => "response",
            Message::Event(_) => "event",
            Message::Cancel(_) => "cancel",
            Message::Chunk(_) => "chunk",
        }
    }
}

/// Every field any message may carry. Parsing through one flat struct (instead of serde's
/// internally tagged enums) keeps `RawValue` payloads working and parses each frame once.
/// Unknown fields are ignored, so a newer peer may add some.
#[derive(Deserialize)]
struct Envelope {
    #[serde(rename = "type")]
    kind: Option<String>,
    id: Option<String>,
    method: Option<String>,
    params: Option<Box<RawValue>>,
    timeout_ms: Option<u64>,
    result: Option<Box<RawValue>>,
    error: Option<ErrorBody>,
    event: Option<String>,
    tab_id: Option<i64>,
    origin: Option<String>,
    url: Option<String>,
    data: Option<Box<RawValue>>,
    seq: Option<u64>,
    owner: Option<String>,
    index: Option<u32>,
    count: Option<u32>,
    protocol: Option<u32>,
    extension_version: Option<String>,
    extension_id: Option<String>,
    build_id: Option<String>,
    host_version: Option<String>,
    browser: Option<String>,
    profile: Option<String>,
    host_pid: Option<u32>,
    subscribe: Option<bool>,
    session: Option<SessionTag>,
}

fn need<T>(value: Option<T>, kind: &'static str, field: &'static str) -> Result<T, WireError> {
    value.ok_or(WireError::MissingField { kind, field })
}

impl Envelope {
    fn into_message(self) -> Result<Message, WireError> {
        let kind = self.kind.ok_or(WireError::MissingField { kind: "any", field: "type" })?;
        Ok(match kind.as_str() {
            "hello" => Message::Hello(Hello {
                protocol: need(self.protocol, "hello", "protocol")?,
                extension_version: self.extension_version,
                extension_id: self.extension_id,
                build_id: self.build_id,
                host_version: self.host_version,
                browser: self.browser,
                profile: self.profile,
                host_pid: self.host_pid,
                subscribe: self.subscribe,
                session: self.session.map(Box::new),
            }),
            "request" => Message::Request(Request {
                id: need(self.id, "request", "id")?,
                method: need(self.method, "request", "method")?,
                params: self.params.unwrap_or_else(null),
                timeout_ms: self.timeout_ms,
                session: self.session,
            }),
            "response" => {
                let id = need(self.id, "response", "id")?;
                let result = match (self.result, self.error) {
                    (Some(_), Some(_)) => return Err(WireError::ResultAndError),
                    (None, Some(error)) => Err(error),
                    // `"result": null` arrives as None: a null result is still a result.
                    (result, None) => Ok(result.unwrap_or_else(null)),
                };
                Message::Response(Response { id, result })
            }
            "event" => Message::Event(Event {
                event: need(self.event, "event", "event")?,
                tab_id: self.tab_id,
                from: Provenance { origin: self.origin, url: self.url },
                data: self.data.unwrap_or_else(null),
                seq: self.seq,
                owner: self.owner,
            }),
            "cancel" => Message::Cancel(Cancel { id: need(self.id, "cancel", "id")? }),
            "chunk" => {
                let data = need(self.data, "chunk", "data")?;
                Message::Chunk(Chunk {
                    id: need(self.id, "chunk", "id")?,
                    index: need(self.index, "chunk", "index")?,
                    count: need(self.count, "chunk", "count")?,
                    data: serde_json::from_str(data.get())?,
                })
            }
            _ => return Err(WireError::UnknownType(kind)),
        })
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Tagged<'a, T: Serialize> {
            #[serde(rename = "type")]
            kind: &'static str,
            #[serde(flatten)]
            body: &'a T,
        }
        match self {
            Message::Hello(m) => Tagged { kind: "hello", body: m }.serialize(s),
            Message::Request(m) => {
                let mut st = s.serialize_struct("request", 6)?;
                st.serialize_field("type", "request")?;
                st.serialize_field("id", &m.id)?;
                st.serialize_field("method", &m.method)?;
                st.serialize_field("params", &m.params)?;
                if let Some(t) = m.timeout_ms {
                    st.serialize_field("timeout_ms", &t)?;
                }
                if let Some(session) = &m.session {
                    st.serialize_field("session", session)?;
                }
                st.end()
            }
            Message::Response(m) => {
                let mut st = s.serialize_struct("response", 3)?;
                st.serialize_field("type", "response")?;
                st.serialize_field("id", &m.id)?;
                match &m.result {
                    Ok(result) => st.serialize_field("result", result)?,
                    Err(error) => st.serialize_field("error", error)?,
                }
                st.end()
            }
            Message::Event(m) => {
                let mut st = s.serialize_struct("event", 8)?;
                st.serialize_field("type", "event")?;
                st.serialize_field("event", &m.event)?;
                if let Some(tab) = m.tab_id {
                    st.serialize_field("tab_id", &tab)?;
                }
                if let Some(origin) = &m.from.origin {
                    st.serialize_field("origin", origin)?;
                }
                if let Some(url) = &m.from.url {
                    st.serialize_field("url", url)?;
                }
                st.serialize_field("data", &m.data)?;
                if let Some(seq) = m.seq {
                    st.serialize_field("seq", &seq)?;
                }
                if let Some(owner) = &m.owner {
                    st.serialize_field("owner", owner)?;
                }
                st.end()
            }
            Message::Cancel(m) => Tagged { kind: "cancel", body: m }.serialize(s),
            Message::Chunk(m) => Tagged { kind: "chunk", body: m }.serialize(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_depth_counts_brackets_outside_strings() {
        assert_eq!(nesting_depth("1"), 0);
        assert_eq!(nesting_depth("[]"), 1);
        assert_eq!(nesting_depth(r#"{"a":[1,{"b":[]}],"c":{}}"#), 4);
        assert_eq!(nesting_depth(r#"["[[[[", "\"[[", {"x": "]]]"}]"#), 2);
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(nesting_depth(&deep), 200);
    }

    fn round_trip(json: &str) -> String {
        let msg = Message::parse(json.as_bytes()).unwrap();
        String::from_utf8(msg.to_bytes()).unwrap()
    }

    #[test]
    fn every_message_round_trips() {
        for json in [
            r#"{"type":"hello","protocol":1,"extension_version":"0.1.0","browser":"chromium","profile":"Default"}"#,
            r#"{"type":"request","id":"7","method":"tabs.list","params":{"all":true},"timeout_ms":500}"#,
            r#"{"type":"request","id":"8","method":"ping","params":null}"#,
            r#"{"type":"response","id":"7","result":[{"id":1}]}"#,
            r#"{"type":"response","id":"7","error":{"code":"no_such_tab","message":"no tab 9"}}"#,
            r#"{"type":"event","event":"state_update","tab_id":3,"data":{"n":1},"seq":42}"#,
            r#"{"type":"event","event":"dropped","data":{"count":5}}"#,
            r#"{"type":"event","event":"page_event","tab_id":3,"origin":"http://a.test","url":"http://a.test/x?y=1","data":{},"seq":2}"#,
            r#"{"type":"event","event":"tab","tab_id":3,"data":{"kind":"created"},"seq":1,"owner":"s1"}"#,
            r#"{"type":"cancel","id":"7"}"#,
            r#"{"type":"chunk","id":"c1","index":0,"count":2,"data":"{\"ty"}"#,
        ] {
            assert_eq!(round_trip(json), json);
        }
    }

    #[test]
    fn missing_params_and_null_result_default_to_null() {
        let msg = Message::parse(br#"{"type":"request","id":"1","method":"ping"}"#).unwrap();
        let Message::Request(req) = msg else { panic!() };
        assert_eq!(req.params.get(), "null");
        let msg = Message::parse(br#"{"type":"response","id":"1","result":null}"#).unwrap();
        let Message::Response(resp) = msg else { panic!() };
        assert_eq!(resp.result.unwrap().get(), "null");
    }

    #[test]
    fn unknown_type_and_missing_fields_are_typed_errors() {
        assert!(matches!(
            Message::parse(br#"{"type":"teleport"}"#),
            Err(WireError::UnknownType(t)) if t == "teleport"
        ));
        assert!(matches!(
            Message::parse(br#"{"type":"request","id":"1"}"#),
            Err(WireError::MissingField { kind: "request", field: "method" })
        ));
        assert!(matches!(
            Message::parse(br#"{"id":"1"}"#),
            Err(WireError::MissingField { field: "type", .. })
        ));
        assert!(matches!(
            Message::parse(
                br#"{"type":"response","id":"1","result":1,"error":{"code":"x","message":"y"}}"#
            ),
            Err(WireError::ResultAndError)
        ));
        assert!(matches!(Message::parse(b"{not json"), Err(WireError::Json(_))));
        assert!(matches!(Message::parse(b"[1,2]"), Err(WireError::Json(_))));
        assert!(matches!(Message::parse(&[0xff, 0xfe]), Err(WireError::Json(_))));
    }

    #[test]
    fn unknown_fields_are_ignored() {
        let msg = Message::parse(br#"{"type":"cancel","id":"1","future":true}"#).unwrap();
        assert!(matches!(msg, Message::Cancel(Cancel { id }) if id == "1"));
    }
}
