//! `bench_echo`: the floors of the path a page read takes, for the side-by-side benchmark
//! (`bridge/benches/browser/floors.rs`). Served only when `TABWIRE_BENCH=1` is set on `tabwire mcp`
//! (never in normal use, and not in specs/tools.md): each floor answers `null` from one hop
//! further along the path, so the bench can tell where a forced `get_state` spends its time.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::reply::{Reply, ToolError};
use super::server::TabwireServer;
use tabwire_link::methods::{self, PageEcho, PageEchoParams};

/// The variable that makes `tabwire mcp` serve `bench_echo`.
pub const BENCH_ENV: &str = "TABWIRE_BENCH";

/// Whether this process serves the bench tools.
pub fn enabled() -> bool {
    std::env::var_os(BENCH_ENV).is_some_and(|v| v == "1")
}

/// With `TABWIRE_BENCH=1`, `TABWIRE_BENCH_STDIO=blocking` serves MCP through tokio's own
/// stdin/stdout (a blocking thread for every read and write) instead of reactor pipes, so the
/// benchmark can show what that costs in the same run.
pub fn stdio() -> std::io::Result<(tabwire_proto::pipes::Input, tabwire_proto::pipes::Output)> {
    if enabled() && std::env::var_os("TABWIRE_BENCH_STDIO").is_some_and(|v| v == "blocking") {
        return Ok((Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout())));
    }
    tabwire_proto::pipes::stdio()
}

/// Where the echo is answered.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Floor {
    /// F0: this process, without leaving it.
    Bridge,
    /// F1: the extension's service worker (`echo`).
    Worker,
    /// F2: the tab's content script, in its isolated world (`page.echo`).
    Content,
    /// F3: the page's own world, window.tabwire, running no page code (`page.echo`).
    Page,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct BenchEchoParams {
    /// Which hop answers.
    pub floor: Floor,
    /// The tab, for `content` and `page`.
    #[serde(default)]
    pub tab_id: Option<i64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Echo {
    pub floor: Floor,
    /// What came back: null.
    pub echo: Value,
}

#[tool_router(router = bench_tools, vis = "pub(super)")]
impl TabwireServer {
    /// Benchmark only: an echo answered by the bridge, the extension's worker, the tab's
    /// content script or the page's world. Never needed to work with a browser.
    #[tool]
    async fn bench_echo(
        &self,
        Parameters(p): Parameters<BenchEchoParams>,
    ) -> Result<Reply<Echo>, ToolError> {
        let echo = match p.floor {
            Floor::Bridge => Value::Null,
            Floor::Worker => self.core.invoke::<methods::Echo>(None, &Value::Null).await?,
            Floor::Content | Floor::Page => {
                let world = if matches!(p.floor, Floor::Content) { "content" } else { "page" };
                let params = PageEchoParams { tab_id: p.tab_id, world };
                self.core.invoke::<PageEcho>(None, &params).await?.echo
            }
        };
        Ok(Reply::new("echo", Echo { floor: p.floor, echo }))
    }
}
