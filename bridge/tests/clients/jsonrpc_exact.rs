//! Exact JSON-RPC answers to bad input, over stdio (`tabwire mcp`) and streamable HTTP
//! (`tabwire serve --http`), with the bytes a broken or hostile client sends: unparseable
//! input gets -32700 with `"id": null`, an invalid request -32600 with its id when it can be
//! read, malformed params -32602, a reused id an error while the first request is kept, and a
//! request before `initialize` is told to initialize. specs/tools.md ("JSON-RPC errors") says
//! what and why.

use std::process::Stdio as Pipe;
use std::time::Duration;

use serde_json::{Value, json};
use tabwire_testkit::serve::Serve;
use tabwire_testkit::{bins, http};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// `tabwire mcp` with every tool, spoken to in raw lines.
struct Stdio {
    _child: Child,
    stdin: ChildStdin,
    lines: mpsc::UnboundedReceiver<String>,
    _dir: bins::Scratch,
}

impl Stdio {
    async fn start() -> Stdio {
        let dir = bins::scratch_dir("exact");
        let mut child = Command::new(bins::bin("tabwire"))
            .arg("mcp")
            .env("TABWIRE_RUNTIME_DIR", &*dir)
            .env("TABWIRE_TOOLS", "all")
            .env("TABWIRE_OUTPUT_SCHEMAS", "1")
            .env_remove("TABWIRE_SESSION_ID")
            .env_remove("TABWIRE_BROWSER")
            .stdin(Pipe::piped())
            .stdout(Pipe::piped())
            .stderr(Pipe::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn tabwire mcp");
        let stdin = child.stdin.take().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
        let (tx, lines) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok(Some(line)) = out.next_line().await {
                let _ = tx.send(line);
            }
        });
        Stdio { _child: child, stdin, lines, _dir: dir }
    }

    /// Started and past the handshake.
    async fn ready() -> Stdio {
        let mut s = Stdio::start().await;
        s.send(INIT.as_bytes()).await;
        assert_eq!(s.next().await["id"], 1);
        s.send(INITIALIZED.as_bytes()).await;
        s
    }

    async fn send(&mut self, line: &[u8]) {
        self.stdin.write_all(line).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The next message the server writes, within 10 s.
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.recv())
            .await
            .expect("an answer within 10 s")
            .expect("the server is still running");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Send `line` and return the one answer.
    async fn ask(&mut self, line: &[u8]) -> Value {
        self.send(line).await;
        self.next().await
    }

    /// The server still answers a ping (it dropped nothing that came after the bad line).
    async fn still_answers(&mut self) {
        let pong = self.ask(br#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#).await;
        assert_eq!(pong, json!({ "jsonrpc": "2.0", "id": "p", "result": {} }));
    }
}

/// An error answer with exactly this id (`null` included: the member must be there) and code.
#[track_caller]
fn assert_error(answer: &Value, id: Value, code: i64) {
    let object = answer.as_object().unwrap_or_else(|| panic!("not an object: {answer}"));
    assert_eq!(object.get("id"), Some(&id), "{answer}");
    assert_eq!(answer["error"]["code"], code, "{answer}");
    assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.len() > 20, "the message says what happened: {answer}");
}

#[tokio::test]
async fn stdio_unparseable_input_gets_parse_error_with_a_null_id() {
    let mut s = Stdio::ready().await;
    let deep = "[".repeat(100_000);
    for bad in [
        br#"{"jsonrpc":"2.0","id":8,"method":"ping""#.to_vec(),
        b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\xff\xfe\"}".to_vec(),
        deep.into_bytes(),
    ] {
        let answer = s.ask(&bad).await;
        assert_error(&answer, Value::Null, -32700);
        s.still_answers().await;
    }
}

#[tokio::test]
async fn stdio_an_invalid_request_gets_invalid_request_with_its_id_when_readable() {
    let mut s = Stdio::ready().await;
    for (bad, id) in [
        (r#"{"jsonrpc":"2.0","id":18,"method":"tools/list","params":[1,2]}"#, json!(18)),
        (r#"{"jsonrpc":"1.0","id":4,"method":"tools/list"}"#, json!(4)),
        (r#"{"id":"x","method":"tools/list"}"#, json!("x")),
        (r#"{"jsonrpc":"2.0","id":5,"method":7}"#, json!(5)),
        (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, Value::Null),
        (r#"{"foo":1}"#, Value::Null),
        ("17", Value::Null),
        ("[]", Value::Null),
    ] {
        let answer = s.ask(bad.as_bytes()).await;
        assert_error(&answer, id, -32600);
    }
    // A batch: MCP has none; each request in it is answered, by its id, in one array.
    let batch = s
        .ask(br#"[{"jsonrpc":"2.0","id":6,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"ping"}]"#)
        .await;
    let answers = batch.as_array().unwrap_or_else(|| panic!("an array: {batch}"));
    assert_eq!(answers.len(), 2, "{batch}");
    assert_error(&answers[0], json!(6), -32600);
    assert_error(&answers[1], json!(7), -32600);
    s.still_answers().await;
}

#[tokio::test]
async fn stdio_malformed_tool_call_params_get_invalid_params() {
    let mut s = Stdio::ready().await;
    let answer =
        s.ask(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}"#).await;
    assert_error(&answer, json!(3), -32602);
    assert!(answer["error"]["message"].as_str().unwrap().contains("name"), "{answer}");
    let answer = s.ask(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call"}"#).await;
    assert_error(&answer, json!(4), -32602);
    // An unknown method is still -32601.
    let answer = s.ask(br#"{"jsonrpc":"2.0","id":5,"method":"no/such"}"#).await;
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
}

#[tokio::test]
async fn stdio_a_call_before_initialize_is_told_to_initialize() {
    let mut s = Stdio::start().await;
    let answer = s
        .ask(br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"list_tabs","arguments":{}}}"#)
        .await;
    assert_error(&answer, json!(5), -32600);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("initialize"), "{answer}");
    // The handshake still works afterwards.
    assert_eq!(s.ask(INIT.as_bytes()).await["id"], 1);
    s.send(INITIALIZED.as_bytes()).await;
    s.still_answers().await;
}

#[tokio::test]
async fn stdio_a_reused_id_is_refused_and_the_first_request_keeps_its_answer() {
    let mut s = Stdio::ready().await;
    let wait = r#"{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"wait_for_event","arguments":{"timeout_secs":2}}}"#;
    s.send(wait.as_bytes()).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let duplicate = s.ask(br#"{"jsonrpc":"2.0","id":40,"method":"tools/list"}"#).await;
    assert_error(&duplicate, json!(40), -32600);
    assert!(duplicate["error"]["message"].as_str().unwrap().contains("in progress"), "{duplicate}");
    let first = s.next().await;
    assert_eq!(first["id"], 40, "{first}");
    assert_eq!(first["result"]["structuredContent"]["type"], "timeout", "{first}");
    // Once answered, the id is free again.
    let again = s.ask(br#"{"jsonrpc":"2.0","id":40,"method":"ping"}"#).await;
    assert_eq!(again["result"], json!({}), "{again}");
}

#[tokio::test]
async fn stdio_a_message_over_64_mib_is_refused_and_discarded() {
    let mut s = Stdio::ready().await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{{"name":"navigate","arguments":{{"tab_id":1,"url":"{}"}}}}}}"#,
        "a".repeat(65 << 20)
    );
    let answer = s.ask(big.as_bytes()).await;
    assert_error(&answer, Value::Null, -32600);
    assert!(answer["error"]["message"].as_str().unwrap().contains("64 MiB"), "{answer}");
    s.still_answers().await;
}

/// Output schemas are plain JSON Schema a strict client (MCP Inspector `--strict`) takes: no
/// boolean schema where an object is expected (`"items": true`).
#[tokio::test]
async fn no_output_schema_uses_a_boolean_schema() {
    let mut s = Stdio::ready().await;
    let list = s.ask(br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).await;
    fn walk(v: &Value, at: &str, found: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (k, sub) in map {
                    let here = format!("{at}/{k}");
                    // `additionalProperties: false` is a schema too, and a portable one.
                    let schema_slot =
                        matches!(k.as_str(), "items" | "not" | "contains" | "propertyNames");
                    if schema_slot && sub.is_boolean() {
                        found.push(here.clone());
                    }
                    walk(sub, &here, found);
                }
            }
            Value::Array(items) => {
                items.iter().enumerate().for_each(|(i, v)| walk(v, &format!("{at}/{i}"), found))
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    for tool in list["result"]["tools"].as_array().unwrap() {
        walk(&tool["outputSchema"], tool["name"].as_str().unwrap(), &mut found);
        walk(&tool["inputSchema"], tool["name"].as_str().unwrap(), &mut found);
    }
    assert_eq!(found, Vec::<String>::new());
}

// ---- HTTP ----

fn port(serve: &Serve) -> u16 {
    serve.authority().rsplit(':').next().unwrap().parse().unwrap()
}

/// POST `body` to the server, in session `session` when given.
async fn post(serve: &Serve, session: Option<&str>, body: &str) -> http::Answer {
    let bearer = format!("Bearer {}", serve.token);
    let mut headers = vec![
        ("Authorization", bearer.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    if let Some(id) = session {
        headers.push(("Mcp-Session-Id", id));
    }
    http::request(port(serve), "POST", "/mcp", &headers, body).await
}

/// The JSON-RPC message of an answer: its body, or the `data:` line of its event stream.
fn message(answer: &http::Answer) -> Value {
    let found = answer.body.lines().find_map(|line| {
        let line = line.strip_prefix("data: ").unwrap_or(line).trim();
        line.starts_with('{').then(|| serde_json::from_str(line).ok()).flatten()
    });
    found.unwrap_or_else(|| panic!("no JSON-RPC message in {answer:?}"))
}

/// A new session, past the handshake; its id.
async fn session(serve: &Serve) -> String {
    let answer = post(serve, None, INIT).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let id = answer.header("mcp-session-id").expect("a session id").to_owned();
    let done = post(serve, Some(&id), INITIALIZED).await;
    assert_eq!(done.status, 202, "{done:?}");
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_bad_json_and_bad_requests_get_400_with_a_json_rpc_error() {
    let dir = bins::scratch_dir("exact-http");
    let serve = Serve::start_with(&dir, &[], &[("TABWIRE_TOOLS", "all")]);
    let id = session(&serve).await;
    for (body, want_id, code) in [
        (r#"{"jsonrpc":"2.0","id":8,"method":"ping""#, Value::Null, -32700),
        (r#"{"jsonrpc":"1.0","id":4,"method":"tools/list"}"#, json!(4), -32600),
        (r#"{"jsonrpc":"2.0","id":18,"method":"tools/list","params":[1,2]}"#, json!(18), -32600),
        (r#"{"foo":1}"#, Value::Null, -32600),
    ] {
        let answer = post(&serve, Some(&id), body).await;
        assert_eq!(answer.status, 400, "{body}: {answer:?}");
        assert!(
            answer.header("content-type").is_some_and(|t| t.starts_with("application/json")),
            "{answer:?}"
        );
        assert_error(&message(&answer), want_id, code);
    }
    // Malformed tools/call params: -32602, not "method not found".
    let answer = post(
        &serve,
        Some(&id),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}"#,
    )
    .await;
    assert_error(&message(&answer), json!(3), -32602);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_a_call_without_a_session_is_told_to_initialize_and_delete_answers_204() {
    let dir = bins::scratch_dir("exact-http");
    let serve = Serve::start_with(&dir, &[], &[("TABWIRE_TOOLS", "all")]);
    let call = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"list_tabs","arguments":{}}}"#;
    let answer = post(&serve, None, call).await;
    assert_eq!(answer.status, 400, "{answer:?}");
    let said = message(&answer);
    assert_error(&said, json!(5), -32600);
    assert!(said["error"]["message"].as_str().unwrap().contains("initialize"), "{said}");

    let id = session(&serve).await;
    let bearer = format!("Bearer {}", serve.token);
    let headers = [("Authorization", bearer.as_str()), ("Mcp-Session-Id", id.as_str())];
    let ended = http::request(port(&serve), "DELETE", "/mcp", &headers, "").await;
    assert!([200, 204].contains(&ended.status), "{ended:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_a_reused_id_is_refused_and_the_first_request_keeps_its_answer() {
    let dir = bins::scratch_dir("exact-http");
    let serve = std::sync::Arc::new(Serve::start_with(&dir, &[], &[("TABWIRE_TOOLS", "all")]));
    let id = session(&serve).await;
    let wait = r#"{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"wait_for_event","arguments":{"timeout_secs":2}}}"#;
    let first = {
        let (serve, id) = (serve.clone(), id.clone());
        tokio::spawn(async move { post(&serve, Some(&id), wait).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let duplicate =
        post(&serve, Some(&id), r#"{"jsonrpc":"2.0","id":40,"method":"tools/list"}"#).await;
    let said = message(&duplicate);
    assert_error(&said, json!(40), -32600);
    assert!(said["error"]["message"].as_str().unwrap().contains("in progress"), "{said}");
    let first = tokio::time::timeout(Duration::from_secs(10), first)
        .await
        .expect("the first request's connection gets its answer")
        .unwrap();
    let answer = message(&first);
    assert_eq!(answer["id"], 40, "{answer}");
    assert_eq!(answer["result"]["structuredContent"]["type"], "timeout", "{answer}");
}
