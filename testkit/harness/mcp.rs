//! `tabwire mcp` as a child process, driven by rmcp's client over stdio — exactly how Claude
//! Code and other MCP clients run it.

use std::path::Path;
use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

use crate::bins;
use crate::serve::Serve;

/// One MCP session with tabwire: a `tabwire mcp` child over stdio, or a session of a
/// `tabwire serve --http` child ([`crate::serve`]).
pub struct Mcp {
    pub client: RunningService<RoleClient, ()>,
    /// The HTTP server this session lives in (kept running while the session is used).
    pub serve: Option<Arc<Serve>>,
    /// The `tabwire mcp` child's process id (none for an HTTP session): the benchmarks read
    /// its CPU time.
    pub pid: Option<u32>,
}

impl Mcp {
    /// Start `tabwire mcp` against the hosts in `runtime_dir` — or, when this test run is
    /// over HTTP (`TABWIRE_TEST_MCP=http`), open a session of that runtime dir's server.
    pub async fn start(runtime_dir: &Path) -> Mcp {
        if crate::serve::http_wanted() {
            return Self::http(&Serve::shared(runtime_dir)).await;
        }
        Self::start_with(runtime_dir, &[]).await
    }

    /// A new MCP session of `serve`, over streamable HTTP.
    pub async fn http(serve: &Arc<Serve>) -> Mcp {
        Mcp { client: serve.client(()).await, serve: Some(serve.clone()), pid: None }
    }

    /// `tabwire mcp` over stdio, with extra environment (always stdio: a session's id and
    /// parent come from its environment, which an HTTP session does not have).
    pub async fn start_with(runtime_dir: &Path, env: &[(&str, &str)]) -> Mcp {
        let mut cmd = tokio::process::Command::new(bins::bin("tabwire"));
        // A test run inside a tabwire session must not join it, nor pick the user's browser.
        // Every tool set, so that each test may call any tool (bridge/tests/clients/tools.rs checks the
        // default set); a test's own `env` may narrow it.
        cmd.arg("mcp")
            .env("TABWIRE_RUNTIME_DIR", runtime_dir)
            .env("TABWIRE_TOOLS", "all")
            .env("TABWIRE_OUTPUT_SCHEMAS", "1") // and their output schemas, which the tests check
            .env_remove("TABWIRE_SESSION_ID")
            .env_remove("TABWIRE_BROWSER");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let transport = TokioChildProcess::new(cmd).expect("spawn tabwire mcp");
        let pid = transport.id();
        let client = ().serve(transport).await.expect("MCP handshake with tabwire mcp");
        Mcp { client, serve: None, pid }
    }

    /// Call a tool; the raw result (errors included).
    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        self.client.call_tool(params).await.unwrap_or_else(|e| panic!("{tool}: MCP error {e}"))
    }

    /// Call a tool that must succeed; its structured content.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let result = self.call(tool, args).await;
        assert_ne!(result.is_error, Some(true), "{tool} failed: {}", text(&result));
        content(&result)
    }

    /// Call a tool until it succeeds, for what settles on its own (a new host attached, a
    /// switch the user turned): retried every 100 ms while its error says `retried`; any other
    /// error, or that one still after `within`, fails the test. Its structured content.
    pub async fn ok_within(
        &self,
        tool: &str,
        args: Value,
        retried: &str,
        within: std::time::Duration,
    ) -> Value {
        let deadline = std::time::Instant::now() + within;
        loop {
            let result = self.call(tool, args.clone()).await;
            if result.is_error != Some(true) {
                return content(&result);
            }
            let err = text(&result);
            assert!(err.contains(retried), "{tool} failed: {err}");
            assert!(std::time::Instant::now() < deadline, "{tool} after {within:?}: {err}");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }

    /// open_tab, which must succeed: the new tab's id.
    pub async fn open_tab(&self, url: &str) -> i64 {
        let opened = self.ok("open_tab", serde_json::json!({ "url": url })).await;
        opened["tab"]["id"].as_i64().unwrap_or_else(|| panic!("a tab id in {opened}"))
    }

    /// The tab's title as list_tabs shows it, once it holds every one of `parts` (up to 5 s):
    /// what a fixture page that writes its findings into its title found.
    pub async fn title_with(&self, tab: i64, parts: &[&str]) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let tabs = self.ok("list_tabs", serde_json::json!({})).await;
            let listed = tabs["tabs"].as_array().unwrap().iter().find(|t| t["id"] == tab).cloned();
            let title = listed.map(|t| t["title"].as_str().unwrap_or_default().to_owned());
            let title = title.unwrap_or_default();
            if parts.iter().all(|p| title.contains(p)) {
                return title;
            }
            let waited = std::time::Instant::now() < deadline;
            assert!(waited, "tab {tab} never showed {parts:?}; it shows {title:?}");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }

    /// Load `url` again in `tab`, as the user reloading it; its title once it holds `parts`.
    pub async fn reload(&self, tab: i64, url: &str, parts: &[&str]) -> String {
        let args = serde_json::json!({ "tab_id": tab, "url": url, "wait": "load" });
        self.ok("navigate", args).await;
        self.title_with(tab, parts).await
    }

    /// read_page, which must succeed: its text (read_page answers with text only).
    pub async fn read_page(&self, args: Value) -> Page {
        let result = self.call("read_page", args).await;
        assert_ne!(result.is_error, Some(true), "read_page failed: {}", text(&result));
        assert!(result.structured_content.is_none(), "read_page answers with text only");
        let all = text(&result);
        let (head, lines) = all.split_once('\n').unwrap_or((all.as_str(), ""));
        Page { head: head.to_owned(), lines: lines.to_owned() }
    }

    /// This session's record (`get_session`, then its `<id>.json`): id, port, token.
    pub async fn session(&self) -> Value {
        let info = self.ok("get_session", serde_json::json!({})).await;
        let path = bins::local_path(info["record"].as_str().expect("record path"));
        let read = std::fs::read(&path);
        let read =
            read.unwrap_or_else(|e| panic!("read the session record {}: {e}", path.display()));
        serde_json::from_slice(&read).unwrap()
    }

    /// Call a tool that must fail; its error text.
    pub async fn err(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args).await;
        assert_eq!(result.is_error, Some(true), "{tool} should have failed: {result:?}");
        text(&result)
    }
}

/// Open `url` in a tab of the user's, as if they had opened it themselves, for tests where
/// several sessions use one page: a session opens it and ends, which leaves its tab group to the
/// user ("… (done)", specs/tools.md, "Sessions and their tab groups"). The tab's id, once the
/// extension counts the tab as the user's.
pub async fn users_tab(runtime_dir: &Path, url: &str) -> Value {
    let opener = Mcp::start_with(runtime_dir, &[]).await;
    let tab = opener.ok("open_tab", serde_json::json!({ "url": url })).await["tab"]["id"].clone();
    opener.client.cancel().await.expect("end the session that opened the tab");
    let probe = Mcp::start_with(runtime_dir, &[]).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let listed = probe.ok("list_tabs", serde_json::json!({})).await;
        let done =
            listed["tabs"].as_array().into_iter().flatten().any(|t| {
                t["id"] == tab && t["group"].as_str().is_some_and(|g| g.ends_with("(done)"))
            });
        if done {
            return tab;
        }
        assert!(std::time::Instant::now() < deadline, "tab {tab} is not the user's: {listed}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// What read_page said: its header line (`page "Title" at URL, snapshot s1…`) and the lines.
#[derive(Debug)]
pub struct Page {
    pub head: String,
    pub lines: String,
}

impl Page {
    /// The lines' size as the extension counts it against the budget (characters / 4).
    pub fn tokens(&self) -> usize {
        self.lines.encode_utf16().count().div_ceil(4)
    }

    /// The snapshot id the header gives, to pass back as `since`.
    pub fn snapshot_id(&self) -> &str {
        let at = self.head.find(", snapshot ").expect("a snapshot id in the header") + 11;
        self.head[at..].split([',', ';', '.']).next().unwrap()
    }
}

/// All text content of a tool result, joined.
/// A result's structured content, else its text as JSON, else as a string.
fn content(result: &CallToolResult) -> Value {
    result.structured_content.clone().unwrap_or_else(|| {
        serde_json::from_str(&text(result)).unwrap_or(Value::String(text(result)))
    })
}

pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A tool's error text that refuses with `code` and names `origin`.
pub fn assert_refused(err: &str, code: &str, origin: &str) {
    assert!(err.starts_with(&format!("{code}:")), "{err}");
    assert!(err.contains(origin), "names the origin: {err}");
}
