//! MCP client → `tabwire mcp` → host → extension → page → back, through real Chromium.
//! Baseline in the same run: the extension's `ping` (no page hop) via `list_tabs`-free path is
//! not an MCP tool, so the baseline is `list_tabs` (worker only, no content script).

use std::time::Instant;

use serde_json::json;
use tabwire_tests::{Chromium, Fixtures, Mcp};

use crate::stats::Sample;

const CALLS: usize = 1000;

pub async fn run() {
    println!("round trip through the browser ({CALLS} sequential calls each)");
    let browser = Chromium::start();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab =
        mcp.ok("open_tab", json!({ "url": pages.url("app.html") })).await["tab"]["id"].clone();

    let mut baseline = Sample::new();
    for _ in 0..CALLS {
        let t = Instant::now();
        mcp.ok("list_tabs", json!({})).await;
        baseline.push(t.elapsed());
    }
    baseline.print("baseline: list_tabs (worker answers, no page hop)");

    let mut page = Sample::new();
    for _ in 0..CALLS {
        let t = Instant::now();
        mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
        page.push(t.elapsed());
    }
    page.print("get_state force_refresh (page provideState)   target p50 ≤ 0.7 ms");
    println!();
}
