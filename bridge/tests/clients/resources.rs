//! MCP resources and prompts (`specs/tools.md`, "Resources and prompts"), through the real
//! `tabwire mcp` and rmcp's client: the resources listed, read and followed — a page's state in
//! real Chromium, a chat operation in the fixture chat, a worker and its log, a workflow
//! session — the notifications a subscriber receives as they change, and the prompts.
#![allow(deprecated)] // resources/subscribe: what clients up to 2025-11-25 speak

use std::path::Path;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, ErrorCode, GetPromptRequestParams, ReadResourceRequestParams,
    ResourceContents, ResourceUpdatedNotificationParam, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tabwire_testkit::mcp::text;
use tabwire_testkit::serve::Serve;
use tabwire_testkit::{Chromium, Fixtures, bins};
use tokio::sync::mpsc;

/// What the client heard.
#[derive(Debug, PartialEq)]
enum Heard {
    Updated(String),
    ListChanged,
}

/// A client that records resource notifications, in order.
struct Listener(mpsc::UnboundedSender<Heard>);

impl ClientHandler for Listener {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(Heard::Updated(params.uri));
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send(Heard::ListChanged);
    }
}

struct Client {
    client: RunningService<RoleClient, Listener>,
    heard: mpsc::UnboundedReceiver<Heard>,
    /// Over HTTP: the server, kept running while the client is used.
    _serve: Option<Serve>,
}

impl Client {
    /// `tabwire mcp` with `env` (TABWIRE_TOOLS among it).
    async fn start(runtime_dir: &Path, env: &[(&str, &Path)]) -> Client {
        let mut cmd = tokio::process::Command::new(bins::bin("tabwire"));
        cmd.arg("mcp")
            .env("TABWIRE_RUNTIME_DIR", runtime_dir)
            .env_remove("TABWIRE_SESSION_ID")
            .env_remove("TABWIRE_BROWSER")
            .env_remove("TABWIRE_TOOLS");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let (tx, heard) = mpsc::unbounded_channel();
        let transport = TokioChildProcess::new(cmd).expect("spawn tabwire mcp");
        let client = Listener(tx).serve(transport).await.expect("MCP handshake");
        Client { client, heard, _serve: None }
    }

    /// A session of `tabwire serve --http` with `env`.
    async fn http(runtime_dir: &Path, env: &[(&str, &Path)]) -> Client {
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.to_str().unwrap())).collect();
        let serve = Serve::start_with(runtime_dir, &[], &env);
        let (tx, heard) = mpsc::unbounded_channel();
        let client = serve.client(Listener(tx)).await;
        Client { client, heard, _serve: Some(serve) }
    }

    async fn ok(&self, tool: &str, args: Value) -> Value {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        let result = self.client.call_tool(params).await.expect("tools/call");
        assert_ne!(result.is_error, Some(true), "{tool} failed: {}", text(&result));
        result.structured_content.clone().expect("structured content")
    }

    async fn uris(&self) -> Vec<String> {
        let all = self.client.list_all_resources().await.expect("resources/list");
        all.into_iter().map(|r| r.uri).collect()
    }

    /// The text of a resource and its MIME type.
    async fn read(&self, uri: &str) -> (String, String) {
        let read = self.client.read_resource(ReadResourceRequestParams::new(uri)).await;
        let read = read.unwrap_or_else(|e| panic!("resources/read {uri}: {e}"));
        assert_eq!(read.contents.len(), 1, "{read:?}");
        match &read.contents[0] {
            ResourceContents::TextResourceContents { uri: got, mime_type, text, .. } => {
                assert_eq!(got, uri);
                (text.clone(), mime_type.clone().unwrap_or_default())
            }
            other => panic!("{uri}: not text: {other:?}"),
        }
    }

    async fn json(&self, uri: &str) -> Value {
        let (text, mime) = self.read(uri).await;
        assert_eq!(mime, "application/json", "{uri}");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{uri}: {e}: {text}"))
    }

    async fn read_error(&self, uri: &str) -> (ErrorCode, String) {
        match self.client.read_resource(ReadResourceRequestParams::new(uri)).await {
            Err(ServiceError::McpError(e)) => (e.code, e.message.to_string()),
            other => panic!("{uri}: expected an error, got {other:?}"),
        }
    }

    async fn subscribe(&self, uri: &str) {
        self.client.subscribe(SubscribeRequestParams::new(uri)).await.expect("subscribe");
    }

    /// Wait until `want` is heard (what comes before it is skipped), within `within`.
    async fn hear(&mut self, want: &Heard, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.heard.recv()).await {
                Ok(Some(heard)) if &heard == want => return,
                Ok(Some(_)) => continue,
                _ => panic!("{want:?} not heard within {within:?}"),
            }
        }
    }

    /// Nothing about `uri` is heard for `quiet`.
    async fn silent_about(&mut self, uri: &str, quiet: Duration) {
        let deadline = Instant::now() + quiet;
        while let Ok(Some(heard)) = tokio::time::timeout(
            deadline.saturating_duration_since(Instant::now()),
            self.heard.recv(),
        )
        .await
        {
            assert_ne!(heard, Heard::Updated(uri.to_owned()), "told after unsubscribing");
        }
    }

    /// Wait until resources/list has a URI `matching`; that URI.
    async fn listed(&self, matching: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(uri) = self.uris().await.into_iter().find(|u| matching(u)) {
                return uri;
            }
            assert!(Instant::now() < deadline, "not listed: {:?}", self.uris().await);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

const SOON: Duration = Duration::from_secs(10);

/// The site adapter of the fixture chat.
fn adapter() -> Value {
    tabwire_testkit::fixtures::chat_adapter()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pages_state_and_a_chat_operation_are_resources_a_client_follows() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let stranger = Fixtures::serve_on("127.0.0.2");
    let dir = bins::scratch_dir("resources");
    let (state, config) = (dir.join("state"), dir.join("config"));
    let tools = Path::new("page,tabs,chat");
    let env =
        [("TABWIRE_TOOLS", tools), ("TABWIRE_STATE_DIR", &state), ("TABWIRE_CONFIG_DIR", &config)];
    let mut c = Client::start(&browser.runtime_dir, &env).await;

    let caps = c.client.peer_info().expect("server info").capabilities.clone();
    let resources = caps.resources.expect("resources offered");
    assert_eq!((resources.subscribe, resources.list_changed), (Some(true), Some(true)));
    assert!(caps.prompts.is_some(), "follow_chat is offered with chat");
    assert_eq!(caps.tools.expect("tools").list_changed, None, "no page tools: the list is fixed");
    let templates = c.client.list_all_resource_templates().await.unwrap();
    let forms: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert_eq!(
        forms,
        ["tabwire://tab/{browser}/{tab_id}/state", "tabwire://operation/{operation_id}"],
        "only the sets offered"
    );

    // A page publishes its state: it is listed (and the client told), read as get_state reads it.
    let opened = c.ok("open_tab", json!({ "url": pages.url("app.html"), "active": true })).await;
    let tab = opened["tab"]["id"].as_i64().unwrap();
    let state_uri = c.listed(|u| u.ends_with(&format!("/{tab}/state"))).await;
    assert!(state_uri.starts_with("tabwire://tab/"), "{state_uri}");
    c.hear(&Heard::ListChanged, SOON).await;
    let got = c.json(&state_uri).await;
    assert_eq!(got["state"]["items"], json!(["first"]), "{got}");
    assert_eq!(got["origin"], pages.origin().as_str());
    assert_eq!(got["tab_id"], tab);

    // Subscribed: a change of the page's state is told, and the read has it.
    c.subscribe(&state_uri).await;
    c.ok("send_command", json!({ "tab_id": tab, "type": "add", "payload": { "text": "second" } }))
        .await;
    c.hear(&Heard::Updated(state_uri.clone()), SOON).await;
    let got = c.json(&state_uri).await;
    assert_eq!(got["state"]["items"], json!(["first", "second"]), "{got}");

    // A page of a site the user did not allow is never listed.
    let away = c.ok("open_tab", json!({ "url": stranger.url("app.html"), "active": false })).await;
    let away = away["tab"]["id"].as_i64().unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let uris = c.uris().await;
    assert!(!uris.iter().any(|u| u.ends_with(&format!("/{away}/state"))), "{uris:?}");

    // Unsubscribed: nothing more about it.
    c.client.unsubscribe(UnsubscribeRequestParams::new(&state_uri)).await.unwrap();
    while c.heard.try_recv().is_ok() {} // what was told before
    c.ok("send_command", json!({ "tab_id": tab, "type": "add", "payload": { "text": "third" } }))
        .await;
    c.silent_about(&state_uri, Duration::from_secs(1)).await;

    // A chat operation: listed once sent, followed to its answer by its resource alone.
    let chat = c
        .ok("open_tab", json!({ "url": pages.url("chat.html?words=20&word_ms=30&start_ms=100"), "active": true }))
        .await;
    let chat = chat["tab"]["id"].as_i64().unwrap();
    let sent = c
        .ok("send_message_async", json!({ "tab_id": chat, "text": "hello", "adapter": adapter() }))
        .await;
    let id = sent["operation_id"].as_str().unwrap().to_owned();
    let op_uri = format!("tabwire://operation/{id}");
    assert!(c.uris().await.contains(&op_uri), "listed at once");
    c.subscribe(&op_uri).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let done = loop {
        c.hear(&Heard::Updated(op_uri.clone()), Duration::from_secs(20)).await;
        let op = c.json(&op_uri).await;
        if op["status"] == "completed" {
            break op;
        }
        assert!(Instant::now() < deadline, "not completed: {op}");
    };
    assert!(done["response_text"].as_str().unwrap().contains("w20"), "{done}");
    assert_eq!(done["operation_id"], id.as_str());

    // Wrong URIs: an unknown one is not found; one that is no tabwire URI is invalid.
    let (code, message) = c.read_error("tabwire://operation/op_nope").await;
    assert_eq!(code, ErrorCode::RESOURCE_NOT_FOUND, "{message}");
    assert!(message.contains("op_nope") && message.contains("resources/list"), "{message}");
    let (code, _) = c.read_error("file:///etc/passwd").await;
    assert_eq!(code, ErrorCode::INVALID_PARAMS);
    let (code, message) = c.read_error("tabwire://worker/w-1").await;
    assert_eq!(code, ErrorCode::RESOURCE_NOT_FOUND);
    assert!(message.contains("`workers`"), "a set not offered says so: {message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_its_log_and_a_workflow_session_are_followed() {
    workers_and_workflows(false).await;
}

/// The same over streamable HTTP: the notifications come on the session's GET stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_its_log_and_a_workflow_session_are_followed_over_http() {
    workers_and_workflows(true).await;
}

async fn workers_and_workflows(http: bool) {
    let dir = bins::scratch_dir(if http { "resources-h" } else { "resources-w" });
    let (run, state, config, project) =
        (dir.join("run"), dir.join("state"), dir.join("config"), dir.join("project"));
    std::fs::create_dir_all(&config).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let templates = json!({ "sh": ["sh", "-c", "{prompt}"] });
    std::fs::write(config.join("workers.json"), templates.to_string()).unwrap();
    let tools = Path::new("workers,workflows");
    let env =
        [("TABWIRE_TOOLS", tools), ("TABWIRE_STATE_DIR", &state), ("TABWIRE_CONFIG_DIR", &config)];
    let mut c = match http {
        true => Client::http(&run, &env).await,
        false => Client::start(&run, &env).await,
    };

    // A worker: listed with its log; its log grows and it ends, each told to a subscriber.
    let script = "echo one; sleep 1; echo two; sleep 1";
    let args = json!({ "name": "w", "command": "sh", "prompt": script, "cwd": project });
    let started = c.ok("spawn_worker", args).await;
    let id = started["worker_id"].as_str().unwrap().to_owned();
    let (worker, log) = (format!("tabwire://worker/{id}"), format!("tabwire://worker/{id}/log"));
    let uris = c.uris().await;
    assert!(uris.contains(&worker) && uris.contains(&log), "{uris:?}");
    c.subscribe(&worker).await;
    c.subscribe(&log).await;
    assert_eq!(c.json(&worker).await["state"], "running");
    c.hear(&Heard::Updated(log.clone()), SOON).await;
    let deadline = Instant::now() + SOON;
    while !c.read(&log).await.0.contains("two") {
        c.hear(&Heard::Updated(log.clone()), SOON).await;
        assert!(Instant::now() < deadline);
    }
    let (text, mime) = c.read(&log).await;
    assert_eq!(mime, "text/plain");
    assert!(text.starts_with("one\n"), "{text:?}");
    c.hear(&Heard::Updated(worker.clone()), SOON).await;
    let deadline = Instant::now() + SOON;
    loop {
        let now = c.json(&worker).await;
        if now["state"] == "success" {
            assert_eq!(now["exit_code"], 0, "{now}");
            break;
        }
        c.hear(&Heard::Updated(worker.clone()), SOON).await;
        assert!(Instant::now() < deadline, "{now}");
    }

    // A workflow session: listed once started, and each skill completed is told.
    let at = json!({ "project": project, "session": "s1" });
    let first = c.ok("start_workflow", at.clone()).await;
    let skill = first["next_skill"].as_str().expect("a first skill").to_owned();
    let flow = c.listed(|u| u.starts_with("tabwire://workflow/")).await;
    let canonical = std::fs::canonicalize(&project).unwrap();
    assert_eq!(flow, format!("tabwire://workflow{}/.collab/s1", canonical.display()));
    let read = c.json(&flow).await;
    assert_eq!(read["next_skill"], skill.as_str(), "{read}");
    c.subscribe(&flow).await;
    let mut done = at.clone();
    done["skill"] = json!(skill);
    c.ok("complete_skill", done).await;
    c.hear(&Heard::Updated(flow.clone()), SOON).await;
    let read = c.json(&flow).await;
    assert_ne!(read["next_skill"], skill.as_str(), "moved on: {read}");

    // Prompts: those of the sets offered, with their arguments.
    let prompts = c.client.list_all_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["hand_to_workers"]);
    let mut args = serde_json::Map::new();
    args.insert("task".into(), json!("split the parser tests"));
    let got = c
        .client
        .get_prompt(GetPromptRequestParams::new("hand_to_workers").with_arguments(args))
        .await
        .unwrap();
    let said = serde_json::to_string(&got.messages).unwrap();
    assert!(said.contains("split the parser tests") && said.contains("spawn_worker"), "{said}");
    let e = c.client.get_prompt(GetPromptRequestParams::new("hand_to_workers")).await;
    assert!(format!("{e:?}").contains("`task`"), "{e:?}");
    let e = c.client.get_prompt(GetPromptRequestParams::new("check_page")).await;
    assert!(format!("{e:?}").contains("hand_to_workers"), "dom is not offered: {e:?}");
}

/// The default sets: no resources (a client may pay for them in every conversation, and
/// get_state reads a page's state); check_page is the only prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_sets_offer_check_page_and_no_resources() {
    let dir = bins::scratch_dir("resources-d");
    let c = Client::start(&dir.join("run"), &[]).await;
    let caps = c.client.peer_info().unwrap().capabilities.clone();
    assert!(caps.resources.is_none(), "{caps:?}");
    assert!(caps.prompts.is_some(), "{caps:?}");
    assert!(c.client.list_all_resource_templates().await.unwrap().is_empty());
    assert!(c.uris().await.is_empty());
    let (code, message) = c.read_error("tabwire://tab/p/1/state").await;
    assert_eq!(code, ErrorCode::RESOURCE_NOT_FOUND);
    assert!(message.contains("chat, workers or workflows"), "{message}");
    let prompts = c.client.list_all_prompts().await.unwrap();
    assert_eq!(prompts.len(), 1);
    assert_eq!(prompts[0].name, "check_page");
    let arguments = prompts[0].arguments.clone().unwrap();
    assert!(arguments.iter().all(|a| a.required != Some(true)), "{arguments:?}");
    let got = c.client.get_prompt(GetPromptRequestParams::new("check_page")).await.unwrap();
    let said = serde_json::to_string(&got.messages).unwrap();
    assert!(said.contains("read_page") && said.contains("active tab"), "{said}");
}

/// What the real Claude Code CLI makes of it (its `init` message, `claude -p` with a stand-in
/// model): the prompts offered are its slash commands; it adds its three resource tools to the
/// model's only where tabwire offers resources — not with the default sets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_offers_the_prompts_as_slash_commands() {
    let default = claude_init("default").await;
    let (commands, tools) = (strings(&default["slash_commands"]), strings(&default["tools"]));
    assert!(commands.contains(&"mcp__tabwire__check_page".to_owned()), "{commands:?}");
    assert!(!commands.iter().any(|c| c.contains("hand_to_workers")), "{commands:?}");
    assert!(!tools.iter().any(|t| t.contains("McpResource")), "{tools:?}");

    let more = claude_init("default,workers").await;
    let (commands, tools) = (strings(&more["slash_commands"]), strings(&more["tools"]));
    assert!(commands.contains(&"mcp__tabwire__hand_to_workers".to_owned()), "{commands:?}");
    assert!(!commands.iter().any(|c| c.contains("follow_chat")), "chat is not offered");
    assert!(tools.contains(&"ReadMcpResourceTool".to_owned()), "{tools:?}");
}

fn strings(list: &Value) -> Vec<String> {
    list.as_array().unwrap().iter().filter_map(Value::as_str).map(str::to_owned).collect()
}

/// The `init` message of `claude -p` with `tabwire mcp --tools SETS`.
async fn claude_init(sets: &str) -> Value {
    use tabwire_testkit::claude::{claude_cli, print_mode};
    use tabwire_testkit::model::StandInModel;
    let claude = claude_cli();
    let root = bins::scratch_dir("ccp");
    let key = "sk-test";
    let model = StandInModel::start(key, Vec::new()).await;
    let config = root.join("mcp.json");
    let servers = json!({ "mcpServers": { "tabwire": {
        "type": "stdio",
        "command": bins::bin("tabwire"),
        "args": ["mcp", "--tools", sets],
        "env": { "TABWIRE_RUNTIME_DIR": root.join("run") },
    }}});
    std::fs::write(&config, servers.to_string()).unwrap();
    let mut cmd = print_mode(&claude, "hello", &config, &root, model.url(), key);
    let out = tokio::time::timeout(Duration::from_secs(120), cmd.output()).await;
    let out = out.expect("claude -p within 120 s").expect("run claude -p");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let said = || format!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let init = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["type"] == "system" && m["subtype"] == "init")
        .unwrap_or_else(|| panic!("no init message:\n{}", said()));
    assert_eq!(init["mcp_servers"][0]["status"], "connected", "{}", said());
    init
}
