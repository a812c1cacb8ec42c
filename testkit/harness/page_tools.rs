//! `tabwire mcp --page-tools` with a client that hears `notifications/tools/list_changed`: the
//! page tools come and go with their pages, and the tests wait for them.

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::{Chromium, bins, text};

/// Counts `notifications/tools/list_changed`, synchronously into a channel.
pub struct ListChanged(mpsc::UnboundedSender<()>);

impl ClientHandler for ListChanged {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        let _ = self.0.send(());
        std::future::ready(())
    }
}

/// `tabwire mcp --page-tools` with a client that hears list_changed.
pub struct PageToolsMcp {
    pub client: RunningService<RoleClient, ListChanged>,
    /// One message per list_changed heard.
    pub changed: mpsc::UnboundedReceiver<()>,
}

impl PageToolsMcp {
    pub async fn start(browser: &Chromium) -> PageToolsMcp {
        let mut cmd = tokio::process::Command::new(bins::bin("tabwire"));
        cmd.args(["mcp", "--page-tools"])
            .env("TABWIRE_RUNTIME_DIR", &browser.runtime_dir)
            .env_remove("TABWIRE_SESSION_ID");
        let (tx, changed) = mpsc::unbounded_channel();
        let transport = TokioChildProcess::new(cmd).expect("spawn tabwire mcp");
        let client = ListChanged(tx).serve(transport).await.expect("MCP handshake");
        PageToolsMcp { client, changed }
    }

    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        self.client.call_tool(params).await.unwrap_or_else(|e| panic!("{tool}: MCP error {e}"))
    }

    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let result = self.call(tool, args).await;
        assert_ne!(result.is_error, Some(true), "{tool} failed: {}", text(&result));
        result.structured_content.expect("structured content")
    }

    pub async fn err(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args).await;
        assert_eq!(result.is_error, Some(true), "{tool} should have failed: {result:?}");
        text(&result)
    }

    pub async fn tools(&self) -> Vec<Tool> {
        self.client.list_all_tools().await.expect("tools/list")
    }

    /// Wait for list_changed until the page tools are `want` (the names with `__`, any order).
    pub async fn page_tools_become(&mut self, want: &[&String]) -> Vec<Tool> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            let tools = self.tools().await;
            let mut names: Vec<&str> =
                tools.iter().map(|t| t.name.as_ref()).filter(|n| n.contains("__")).collect();
            let mut want: Vec<&str> = want.iter().map(|n| n.as_str()).collect();
            want.sort();
            names.sort();
            if names == want {
                return tools;
            }
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let heard = tokio::time::timeout(left, self.changed.recv()).await;
            assert!(heard.is_ok(), "no tools/list_changed brought {want:?}; the tools: {names:?}");
        }
    }
}

/// The name `--page-tools` gives `origin`'s `app__command` (`specs/tools.md`, "Page tools"):
/// `<host>_<tag>_<app>__<command>`, the tag six characters of the origin's 64-bit FNV-1a hash —
/// the same in every session, and another origin's is another.
pub fn tool_name(origin: &str, app_command: &str) -> String {
    let host = origin.split("://").nth(1).unwrap().split(':').next().unwrap().replace('.', "-");
    let hash = origin
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    let base32 = b"abcdefghijklmnopqrstuvwxyz234567";
    let tag: String = (0..6).map(|i| char::from(base32[(hash >> (i * 5)) as usize & 31])).collect();
    format!("{host}_{tag}_{app_command}")
}
