//! A stand-in for the Anthropic Messages API on 127.0.0.1, so the real Claude Code CLI can run
//! a scripted conversation offline and a test can see exactly what Claude Code hands its model.
//!
//! Why it exists: the model is remote and cannot be reached here. Everything else in such a test
//! is real — `claude -p`, its MCP client, `tabwire mcp`, the browser — and this stands in for the
//! model only. Point Claude Code at it with `ANTHROPIC_BASE_URL` = [`StandInModel::url`] and
//! `ANTHROPIC_API_KEY` = the key given to [`StandInModel::start`].
//!
//! What of the API it implements:
//! - `POST /v1/messages` (any query, e.g. `?beta=true`), streamed as server-sent events
//!   (`message_start`, `content_block_start`, `content_block_delta` with `input_json_delta` or
//!   `text_delta`, `content_block_stop`, `message_delta` with the stop reason, `message_stop`)
//!   or, when the request is not `stream`, as one JSON message.
//! - `POST /v1/messages/count_tokens`: a fixed small count.
//! - Any other request (Claude Code's `HEAD /` reachability probe): `200 {}`, nothing more.
//!
//! Only the main conversation — the request whose `tools` list holds the script's first tool —
//! is driven: its `n`th turn (after `n` tool results) asks for the script's `n`th tool call, and
//! once the script is spent it answers the text "done". Claude Code's side requests (a small
//! model naming the session, …) get the text "done". Every `tool_result` the main conversation
//! carries is recorded exactly as sent ([`StandInModel::tool_results`]).
//!
//! Limits: a request body over 32 MiB is refused with 413; a `POST /v1/…` without the right
//! `x-api-key` gets the API's own 401 `authentication_error`, so no other local process's
//! request is taken for the client's.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The largest request body read; Claude Code's requests (system prompt and every tool's
/// schema) are a few hundred KB.
const MAX_BODY: usize = 32 << 20;

/// Makes a step's input from the tool results received so far (the last is the previous call's).
type Input = Box<dyn Fn(&[ToolResult]) -> Value + Send + Sync>;

/// One scripted tool call: the tool's name as the model calls it (`mcp__<server>__<tool>`) and
/// how its input is made.
pub struct Step {
    pub tool: String,
    input: Input,
}

impl Step {
    pub fn new(tool: &str, input: impl Fn(&[ToolResult]) -> Value + Send + Sync + 'static) -> Step {
        Step { tool: tool.to_owned(), input: Box::new(input) }
    }
}

/// A tool result as the model received it.
#[derive(Clone, Debug)]
pub struct ToolResult {
    /// The scripted tool it answers.
    pub tool: String,
    /// `content` exactly as sent: a string, or a list of content blocks.
    pub content: Value,
    pub is_error: bool,
}

impl ToolResult {
    /// The number of characters the model received: the string's, or every text block's.
    pub fn chars(&self) -> usize {
        match &self.content {
            Value::String(s) => s.chars().count(),
            Value::Array(blocks) => {
                blocks.iter().filter_map(|b| b["text"].as_str()).map(|t| t.chars().count()).sum()
            }
            _ => 0,
        }
    }
}

#[derive(Default)]
struct Seen {
    /// The longest list of tool results a main-conversation request carried.
    results: Vec<ToolResult>,
    /// `METHOD path -> status` of every request, in order, and why a step could not be played.
    requests: Vec<String>,
}

struct Shared {
    key: String,
    script: Vec<Step>,
    seen: Mutex<Seen>,
}

/// The stand-in API server; stops when dropped.
pub struct StandInModel {
    url: String,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl StandInModel {
    /// Listen on 127.0.0.1 (a free port) and play `script` for the client that sends `key`.
    pub async fn start(key: &str, script: Vec<Step>) -> StandInModel {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let shared = Arc::new(Shared { key: key.to_owned(), script, seen: Mutex::default() });
        let serving = shared.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let shared = serving.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| answer(shared.clone(), req));
                    let _ =
                        http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        });
        StandInModel { url, shared, task }
    }

    /// The base URL for `ANTHROPIC_BASE_URL`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The tool results the main conversation sent back, in the order of the script.
    pub fn tool_results(&self) -> Vec<ToolResult> {
        self.shared.seen.lock().unwrap().results.clone()
    }

    /// `METHOD path -> status` of every request received, for a failing test to print.
    pub fn requests(&self) -> Vec<String> {
        self.shared.seen.lock().unwrap().requests.clone()
    }
}

impl Drop for StandInModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(
    shared: Arc<Shared>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let line = format!("{} {}", req.method(), req.uri());
    let (status, body, content_type) = respond(&shared, req).await;
    shared.seen.lock().unwrap().requests.push(format!("{line} -> {}", status.as_u16()));
    Ok(Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(body)))
        .unwrap())
}

async fn respond(shared: &Shared, req: Request<Incoming>) -> (StatusCode, String, &'static str) {
    const JSON: &str = "application/json";
    let path = req.uri().path().to_owned();
    // Claude Code's reachability probe (`HEAD /`) carries no key and takes nothing.
    if !path.starts_with("/v1/") || req.method() != hyper::Method::POST {
        return (StatusCode::OK, "{}".into(), JSON);
    }
    let key = req.headers().get("x-api-key").and_then(|v| v.to_str().ok());
    if key != Some(shared.key.as_str()) {
        let error = api_error("authentication_error", "invalid x-api-key");
        return (StatusCode::UNAUTHORIZED, error, JSON);
    }
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) => {
            let error = api_error("request_too_large", &format!("body over {MAX_BODY}: {e}"));
            return (StatusCode::PAYLOAD_TOO_LARGE, error, JSON);
        }
    };
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        let error = api_error("invalid_request_error", "the body is not JSON");
        return (StatusCode::BAD_REQUEST, error, JSON);
    };
    if path.ends_with("/count_tokens") {
        return (StatusCode::OK, json!({ "input_tokens": 10 }).to_string(), JSON);
    }
    if !path.ends_with("/messages") {
        return (StatusCode::OK, "{}".into(), JSON);
    }
    let block = turn(shared, &request);
    let stop = if block["type"] == "tool_use" { "tool_use" } else { "end_turn" };
    let model = request["model"].as_str().unwrap_or("stand-in");
    if request["stream"] == true {
        (StatusCode::OK, events(model, &block, stop), "text/event-stream")
    } else {
        let message = json!({
            "id": "msg_stand_in", "type": "message", "role": "assistant", "model": model,
            "content": [block], "stop_reason": stop, "stop_sequence": null,
            "usage": { "input_tokens": 1, "output_tokens": 1 },
        });
        (StatusCode::OK, message.to_string(), JSON)
    }
}

/// The one content block this turn answers with: the next scripted tool call on the main
/// conversation, else the text "done".
fn turn(shared: &Shared, request: &Value) -> Value {
    let done = json!({ "type": "text", "text": "done" });
    let Some(first) = shared.script.first() else { return done };
    let tools = request["tools"].as_array().map(Vec::as_slice).unwrap_or_default();
    if !tools.iter().any(|t| t["name"] == first.tool.as_str()) {
        return done; // a side request
    }
    let results: Vec<ToolResult> = request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|block| block["type"] == "tool_result")
        .enumerate()
        .map(|(i, block)| ToolResult {
            tool: shared.script.get(i).map_or_else(|| "?".into(), |s| s.tool.clone()),
            content: block["content"].clone(),
            is_error: block["is_error"] == true,
        })
        .collect();
    {
        let mut seen = shared.seen.lock().unwrap();
        if results.len() >= seen.results.len() {
            seen.results = results.clone();
        }
    }
    let Some(step) = shared.script.get(results.len()) else { return done };
    // A step that panics (the result lacked what it needed) ends the conversation at once,
    // rather than leaving the client to retry a broken connection until the test times out.
    let input = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (step.input)(&results)));
    match input {
        Ok(input) => json!({
            "type": "tool_use",
            "id": format!("toolu_stand_in_{}", results.len()),
            "name": step.tool,
            "input": input,
        }),
        Err(panic) => {
            let why = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            let said = format!("the script's step {} ({}) failed: {why}", results.len(), step.tool);
            shared.seen.lock().unwrap().requests.push(said.clone());
            json!({ "type": "text", "text": said })
        }
    }
}

/// The server-sent events of a streamed answer holding `block`.
fn events(model: &str, block: &Value, stop: &str) -> String {
    let (start, delta) = if block["type"] == "tool_use" {
        let mut start = block.clone();
        start["input"] = json!({});
        let json = block["input"].to_string();
        (start, json!({ "type": "input_json_delta", "partial_json": json }))
    } else {
        (
            json!({ "type": "text", "text": "" }),
            json!({ "type": "text_delta", "text": block["text"] }),
        )
    };
    [
        json!({ "type": "message_start", "message": {
            "id": "msg_stand_in", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": { "input_tokens": 1, "output_tokens": 1 },
        }}),
        json!({ "type": "content_block_start", "index": 0, "content_block": start }),
        json!({ "type": "content_block_delta", "index": 0, "delta": delta }),
        json!({ "type": "content_block_stop", "index": 0 }),
        json!({ "type": "message_delta", "delta": { "stop_reason": stop, "stop_sequence": null },
                "usage": { "output_tokens": 1 } }),
        json!({ "type": "message_stop" }),
    ]
    .iter()
    .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
    .collect()
}

/// An error body in the API's shape.
fn api_error(kind: &str, message: &str) -> String {
    json!({ "type": "error", "error": { "type": kind, "message": message } }).to_string()
}
