//! Page state and session events over MCP stdio, release binaries, real Chromium:
//! - get_state from the bridge's cache, against `get_session` (a tool that touches nothing:
//!   the cost of MCP stdio itself);
//! - get_state forced through the page, against `list_tabs` (the extension's worker answers,
//!   no page hop);
//! - notify_completion in one session until wait_for_event returns it in another, against
//!   notify_completion alone (nobody waiting).

use std::time::{Duration, Instant};

use serde_json::json;
use tabwire_testkit::{Chromium, Fixtures, Mcp};

use crate::stats::Sample;

const CACHED: usize = 10_000;
const FORCED: usize = 2_000;
const NOTIFIES: usize = 2_000;

pub async fn run() {
    println!("page state and session events (sequential calls over MCP stdio)");
    let browser = Chromium::start();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab =
        mcp.ok("open_tab", json!({ "url": pages.url("app.html") })).await["tab"]["id"].clone();
    mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;

    let mut baseline = Sample::new();
    for _ in 0..CACHED {
        let t = Instant::now();
        mcp.ok("get_session", json!({})).await;
        baseline.push(t.elapsed());
    }
    baseline.print("baseline: get_session (MCP stdio, no browser)");
    let mut cached = Sample::new();
    for _ in 0..CACHED {
        let t = Instant::now();
        let got = mcp.ok("get_state", json!({ "tab_id": tab })).await;
        cached.push(t.elapsed());
        debug_assert_eq!(got["source"], "cache");
    }
    cached.print("get_state from the cache               target p50 ≤ 0.1 ms");

    let mut worker = Sample::new();
    for _ in 0..FORCED {
        let t = Instant::now();
        mcp.ok("list_tabs", json!({})).await;
        worker.push(t.elapsed());
    }
    worker.print("baseline: list_tabs (worker answers, no page hop)");
    let mut forced = Sample::new();
    for _ in 0..FORCED {
        let t = Instant::now();
        mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
        forced.push(t.elapsed());
    }
    forced.print("get_state force_refresh      target p50 ≤ 0.7 ms, p99 ≤ 5 ms");

    // Two sessions: the lead waits, the worker reports.
    let lead = Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_SESSION_ID", "bench-lead")]).await;
    let worker_session = Mcp::start_with(&browser.runtime_dir, &[]).await;
    let notify = json!({ "session_id": "bench-lead", "worker_id": "w", "status": "success",
                         "message": "done" });
    let mut alone = Sample::new();
    for _ in 0..NOTIFIES {
        let t = Instant::now();
        worker_session.ok("notify_completion", notify.clone()).await;
        alone.push(t.elapsed());
    }
    alone.print("baseline: notify_completion, nobody waiting");
    let drained = lead.ok("wait_for_event", json!({ "timeout_secs": 0 })).await;
    assert_ne!(drained["type"], "timeout");
    while lead.ok("wait_for_event", json!({ "timeout_secs": 0 })).await["type"] != "timeout" {}

    let mut handoff = Sample::new();
    let wait = json!({ "types": ["worker_complete"], "timeout_secs": 10 });
    for _ in 0..NOTIFIES {
        let waiting = async {
            let got = lead.ok("wait_for_event", wait.clone()).await;
            (got, Instant::now())
        };
        let report = async {
            // Let the wait reach the lead's queue first.
            tokio::time::sleep(Duration::from_micros(300)).await;
            let t = Instant::now();
            worker_session.ok("notify_completion", notify.clone()).await;
            t
        };
        let ((got, returned_at), sent_at) = tokio::join!(waiting, report);
        handoff.push(returned_at - sent_at);
        debug_assert_eq!(got["type"], "worker_complete");
    }
    handoff.print("notify_completion → the waiting wait_for_event returns");
    println!(
        "  (the last one spans two MCP round trips — the worker's call and the lead's answer — \
         and one session socket hop)"
    );
    println!();
}
