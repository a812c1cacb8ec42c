//! MCP over streamable HTTP (`tabwire serve --http`) against MCP stdio (`tabwire mcp`), same
//! run, same browser, release binaries:
//! - `get_session` (touches nothing: the cost of the transport itself) and `get_state` from the
//!   cache, sequential, over each transport;
//! - 20 HTTP clients calling `get_session` at once: calls per second through one server, against
//!   one client alone.

use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use tabwire_testkit::serve::Serve;
use tabwire_testkit::{Chromium, Fixtures, Mcp};

use crate::stats::Sample;

const CALLS: usize = 2_000;
const CLIENTS: usize = 20;
const PER_CLIENT: usize = 200;

pub async fn run() {
    println!("\nMCP over streamable HTTP against stdio (sequential calls, then 20 clients)");
    let browser = Chromium::start();
    let pages = Fixtures::serve();
    let stdio = Mcp::start_with(&browser.runtime_dir, &[]).await;
    let serve = Arc::new(Serve::start(&browser.runtime_dir, &[]));
    let http = Mcp::http(&serve).await;
    let tab =
        stdio.ok("open_tab", json!({ "url": pages.url("app.html") })).await["tab"]["id"].clone();
    for mcp in [&stdio, &http] {
        mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    }

    let noop = async |mcp: &Mcp| drop(mcp.ok("get_session", json!({})).await);
    Sample::time(CALLS, async || noop(&stdio).await)
        .await
        .print("baseline: get_session over stdio");
    Sample::time(CALLS, async || noop(&http).await).await.print("get_session over HTTP");
    let cached = async |mcp: &Mcp| drop(mcp.ok("get_state", json!({ "tab_id": tab })).await);
    Sample::time(CALLS, async || cached(&stdio).await)
        .await
        .print("baseline: get_state cached, stdio");
    Sample::time(CALLS, async || cached(&http).await).await.print("get_state cached over HTTP");

    let alone = Instant::now();
    for _ in 0..PER_CLIENT {
        noop(&http).await;
    }
    let alone = PER_CLIENT as f64 / alone.elapsed().as_secs_f64();
    let mut clients = Vec::new();
    for _ in 0..CLIENTS {
        clients.push(Mcp::http(&serve).await);
    }
    let started = Instant::now();
    futures::future::join_all(clients.iter().map(async |mcp| {
        for _ in 0..PER_CLIENT {
            noop(mcp).await;
        }
    }))
    .await;
    let together = (CLIENTS * PER_CLIENT) as f64 / started.elapsed().as_secs_f64();
    println!("  baseline: one HTTP client alone            {alone:>8.0} calls/s");
    println!("  {CLIENTS} HTTP clients at once, one server      {together:>8.0} calls/s in all");
}
