//! A thin JSON-RPC guard in front of rmcp, on both transports: every incoming message is parsed
//! here first, and what JSON-RPC 2.0 and MCP call an error is answered here, exactly, before
//! rmcp sees it. rmcp (3.9) drops unparseable input without a word, answers an invalid request
//! without its id, takes a standard method with malformed params for an unknown one (-32601),
//! has no size limit on stdio and loses the first of two requests that share an id; a client
//! then waits for its own timeout. specs/tools.md ("JSON-RPC errors") lists each answer.
//!
//! stdio: [`Stdio`] is the rmcp transport of `tabwire mcp` (lines on stdin and stdout). HTTP:
//! `crate::serve` calls [`check`] on each POST body before handing it to rmcp.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientNotification, ClientRequest,
    InitializeRequestParams, JsonRpcMessage, RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use tabwire_proto::pipes::{Input, Output};

/// The largest stdio message: as large as one message the browser may carry (64 MiB), so
/// whatever a page can take or give fits, escapes included (a 4 Mi-character payload of quotes
/// and backslashes is 8 MiB of JSON). A longer line is answered -32600 and discarded to its end.
pub const MAX_MESSAGE_BYTES: usize = tabwire_proto::limits::MAX_FROM_BROWSER;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const INVALID_PARAMS: i64 = -32602;

/// What to do with one incoming message.
#[derive(Debug)]
pub enum Verdict {
    /// A well-formed message: hand it to rmcp.
    Pass(Box<Passed>),
    /// Answer this instead (an error response, or an array of them for a batch).
    Answer(Value),
    /// Say nothing: JSON-RPC answers no notification, even in a batch.
    Nothing,
}

/// A well-formed message, and whether it is a request of the stateless protocol (2026-07-28),
/// which carries its version in `_meta` and needs no `initialize` first.
#[derive(Debug)]
pub struct Passed {
    pub message: ClientJsonRpcMessage,
    pub stateless: bool,
}

/// A JSON-RPC error response; `id` is `null` when the request's id could not be read.
pub fn error(id: Option<&RequestId>, code: i64, message: impl Into<String>) -> Value {
    let id = id.map_or(Value::Null, |id| id.clone().into_json_value());
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message.into() } })
}

/// The methods a client may call that MCP defines: with params rmcp cannot read they are an
/// invalid-params error, not an unknown method.
const STANDARD_REQUESTS: [&str; 16] = [
    "initialize",
    "ping",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/templates/list",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
    "tasks/get",
];

/// Judge one message's bytes (a stdio line without its newline, or an HTTP body).
pub fn check(bytes: &[u8]) -> Verdict {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes); // RFC 8259 §8.1
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(e) => {
            return Verdict::Answer(error(
                None,
                PARSE_ERROR,
                format!(
                    "not JSON ({e}): send each message as one JSON-RPC 2.0 object in UTF-8 (on \
                     stdio, one per line)"
                ),
            ));
        }
    };
    match value {
        Value::Array(batch) if batch.is_empty() => Verdict::Answer(error(
            None,
            INVALID_REQUEST,
            "an empty array is not a request: send one JSON-RPC 2.0 object",
        )),
        Value::Array(batch) => {
            // MCP has had no batches since 2025-06-18: each request in one is answered by its
            // id, so that its sender does not wait for its timeout.
            let answers: Vec<Value> = batch
                .iter()
                .filter_map(|m| m.get("id")) // a notification gets no answer
                .map(|id| {
                    let message = "batches are not supported (MCP has none since 2025-06-18): \
                                   send each message on its own";
                    error(readable_id(id).as_ref(), INVALID_REQUEST, message)
                })
                .collect();
            if answers.is_empty() {
                Verdict::Nothing
            } else {
                Verdict::Answer(Value::Array(answers))
            }
        }
        Value::Object(_) => check_object(value),
        _ => Verdict::Answer(error(
            None,
            INVALID_REQUEST,
            "a JSON-RPC 2.0 message is an object: {\"jsonrpc\": \"2.0\", \"id\": …, \"method\": …}",
        )),
    }
}

/// An `id` as JSON-RPC allows it for MCP: a string or an integer (not null).
fn readable_id(id: &Value) -> Option<RequestId> {
    match id {
        Value::String(s) => Some(RequestId::String(s.as_str().into())),
        Value::Number(n) => n.as_i64().map(RequestId::Number),
        _ => None,
    }
}

fn check_object(value: Value) -> Verdict {
    let has_id = value.get("id").is_some();
    let id = value.get("id").and_then(readable_id);
    let invalid = |message: &str| Verdict::Answer(error(id.as_ref(), INVALID_REQUEST, message));
    if has_id && id.is_none() {
        // A response to an unreadable request carries `"id": null`; only requests are judged.
        if value.get("method").is_some() || value.get("id") != Some(&Value::Null) {
            return invalid("`id` must be a string or an integer");
        }
    }
    if value.get("jsonrpc") != Some(&json!("2.0")) {
        return invalid("`jsonrpc` must be \"2.0\": this server speaks JSON-RPC 2.0");
    }
    let method = match value.get("method") {
        Some(Value::String(m)) => Some(m.clone()),
        Some(_) => return invalid("`method` must be a string"),
        None => None,
    };
    match (&method, value.get("params")) {
        (Some(_), Some(Value::Object(_)) | None) | (None, _) => {}
        (Some(_), Some(_)) => {
            return invalid("`params` must be an object: MCP passes parameters by name");
        }
    }
    if method.is_none() && value.get("result").is_none() && value.get("error").is_none() {
        return invalid(
            "a message needs `method` (a request or notification) or `result` or `error` (a \
             response)",
        );
    }
    let params = value.get("params").cloned();
    let stateless = value.pointer(STATELESS_META).is_some();
    let pass = |message| Verdict::Pass(Box::new(Passed { message, stateless }));
    match serde_json::from_value::<ClientJsonRpcMessage>(value) {
        Ok(JsonRpcMessage::Request(request)) => {
            if let ClientRequest::CustomRequest(custom) = &request.request
                && STANDARD_REQUESTS.contains(&custom.method.as_str())
            {
                let why = params_problem(&custom.method, params);
                let message = format!("invalid params for {}: {why}", custom.method);
                return Verdict::Answer(error(id.as_ref(), INVALID_PARAMS, message));
            }
            pass(JsonRpcMessage::Request(request))
        }
        Ok(message) => pass(message),
        // rmcp ignores notifications it does not know (other protocols' on a shared pipe).
        Err(_) if !has_id && method.is_some() => Verdict::Nothing,
        Err(e) => {
            let code = if method.is_some() { INVALID_PARAMS } else { INVALID_REQUEST };
            Verdict::Answer(error(id.as_ref(), code, format!("not an MCP message: {e}")))
        }
    }
}

/// What serde says is wrong with the params of a standard request.
fn params_problem(method: &str, params: Option<Value>) -> String {
    let params = params.unwrap_or(Value::Null);
    let found = match method {
        "tools/call" => serde_json::from_value::<CallToolRequestParams>(params).err(),
        "initialize" => serde_json::from_value::<InitializeRequestParams>(params).err(),
        _ => None,
    };
    found.map_or_else(|| "they do not match the MCP schema".into(), |e| e.to_string())
}

/// Where a request of the stateless protocol (2026-07-28) says its version: such a request
/// needs no `initialize` first.
const STATELESS_META: &str = "/params/_meta/io.modelcontextprotocol~1protocolVersion";

/// `tabwire mcp`'s transport: newline-delimited JSON-RPC on stdin and stdout, through
/// [`check`], with what one connection adds: a request before `initialize` is told to
/// initialize, and a request whose id is still in progress is refused (its first keeps its
/// answer). Lines are written whole, one at a time.
pub struct Stdio {
    read: BufReader<Input>,
    line: Vec<u8>,
    /// Skipping the rest of a line over [`MAX_MESSAGE_BYTES`].
    discarding: bool,
    out: Arc<tokio::sync::Mutex<Output>>,
    state: Arc<Mutex<Connection>>,
}

#[derive(Default)]
struct Connection {
    initialized: bool,
    /// The ids of the client's requests not answered yet.
    in_flight: HashSet<RequestId>,
}

impl Stdio {
    pub fn new((input, output): (Input, Output)) -> Stdio {
        Stdio {
            read: BufReader::new(input),
            line: Vec::new(),
            discarding: false,
            out: Arc::new(tokio::sync::Mutex::new(output)),
            state: Arc::default(),
        }
    }

    /// Write `answer` as one line, whole even if this call is dropped (rmcp polls `receive` in
    /// a `select!`): the lock is taken here, the write done by a task of its own, before the
    /// next line is read, so answers keep the order of the lines they answer.
    fn answer(&self, answer: Value) -> impl Future<Output = ()> + Send + 'static {
        let out = self.out.clone();
        async move {
            let mut out = out.lock_owned().await;
            let mut bytes = answer.to_string().into_bytes();
            bytes.push(b'\n');
            tokio::spawn(async move {
                if let Err(e) = out.write_all(&bytes).await.and(out.flush().await) {
                    tracing::debug!(error = %e, "could not write an error answer");
                }
            });
        }
    }

    /// One line into `self.line` (without its newline): Ok(true), or Ok(false) at EOF, or
    /// Err(()) for a line over the limit (discarded to its end). Cancel-safe: a partial line
    /// stays in `self.line`.
    async fn read_line(&mut self) -> std::io::Result<Option<Result<(), ()>>> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(None);
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let mut done = None;
            if self.discarding {
                self.discarding = newline.is_none();
            } else if self.line.len() + take > MAX_MESSAGE_BYTES + 1 {
                self.line.clear();
                self.discarding = newline.is_none();
                done = Some(Err(()));
            } else {
                self.line.extend_from_slice(&available[..take]);
                done = newline.map(|_| Ok(()));
            }
            self.read.consume(take);
            if done.is_some() {
                return Ok(done);
            }
        }
    }

    /// Whether the connection lets `message` through; the answer when it does not.
    fn admit(&self, passed: &Passed) -> Option<Value> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match &passed.message {
            JsonRpcMessage::Request(request) => {
                let method = request.request.method();
                if !state.initialized && method != "initialize" && !passed.stateless {
                    return Some(error(
                        Some(&request.id),
                        INVALID_REQUEST,
                        format!(
                            "send initialize first (then notifications/initialized): {method} \
                             needs an MCP session"
                        ),
                    ));
                }
                if !state.in_flight.insert(request.id.clone()) {
                    return Some(error(
                        Some(&request.id),
                        INVALID_REQUEST,
                        format!(
                            "request id {} is still in progress: give each request an id of its \
                             own (this one was not run; the first goes on)",
                            request.id
                        ),
                    ));
                }
                state.initialized |= method == "initialize";
            }
            // rmcp sends no answer to a cancelled request: its id is free again.
            JsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(c) = &n.notification
                    && let Some(id) = &c.params.request_id
                {
                    state.in_flight.remove(id);
                }
            }
            _ => {}
        }
        None
    }
}

impl Transport<RoleServer> for Stdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answered = match &item {
            JsonRpcMessage::Response(r) => Some(r.id.clone()),
            JsonRpcMessage::Error(e) => e.id.clone(),
            _ => None,
        };
        if let Some(id) = answered {
            self.state.lock().unwrap_or_else(|e| e.into_inner()).in_flight.remove(&id);
        }
        let out = self.out.clone();
        async move {
            let mut bytes = serde_json::to_vec(&item)?;
            bytes.push(b'\n');
            let mut out = out.lock().await;
            out.write_all(&bytes).await?;
            out.flush().await
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            match self.read_line().await {
                Ok(Some(Ok(()))) => {}
                Ok(Some(Err(()))) => {
                    let message = format!(
                        "a message is at most {} MiB; this one was longer and was discarded",
                        MAX_MESSAGE_BYTES >> 20
                    );
                    self.answer(error(None, INVALID_REQUEST, message)).await;
                    continue;
                }
                Ok(None) => return None,
                Err(e) => {
                    tracing::debug!(error = %e, "stdin failed");
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            let line = line.strip_suffix(b"\n").unwrap_or(&line);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match check(line) {
                Verdict::Pass(passed) => match self.admit(&passed) {
                    None => return Some(passed.message),
                    Some(answer) => self.answer(answer).await,
                },
                Verdict::Answer(answer) => self.answer(answer).await,
                Verdict::Nothing => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.out.lock().await.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(bytes: &str) -> Value {
        match check(bytes.as_bytes()) {
            Verdict::Answer(a) => a,
            other => panic!("{bytes}: {other:?}"),
        }
    }

    #[test]
    fn each_bad_message_gets_its_code_and_its_id_when_readable() {
        for (bytes, id, code) in [
            ("{", Value::Null, PARSE_ERROR),
            ("17", Value::Null, INVALID_REQUEST),
            (
                r#"{"jsonrpc":"2.0","id":18,"method":"tools/list","params":[1]}"#,
                json!(18),
                INVALID_REQUEST,
            ),
            (r#"{"jsonrpc":"1.0","id":"a","method":"ping"}"#, json!("a"), INVALID_REQUEST),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, Value::Null, INVALID_REQUEST),
            (
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}"#,
                json!(3),
                INVALID_PARAMS,
            ),
        ] {
            let a = answer(bytes);
            assert_eq!((&a["id"], a["error"]["code"].as_i64()), (&id, Some(code)), "{bytes}: {a}");
        }
        assert!(matches!(check(br#"[{"jsonrpc":"2.0","method":"x"}]"#), Verdict::Nothing));
        assert!(matches!(
            check(br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#),
            Verdict::Pass(_)
        ));
        // A response to a request whose id was unreadable is a response, not a bad request.
        assert!(!matches!(
            check(br#"{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}"#),
            Verdict::Answer(_)
        ));
    }
}
