//! Milestone latency: a change in the page's DOM → the progress notification at the MCP client.
//!
//! The fixture chat stamps each change the operation observes (`performance.timeOrigin +
//! performance.now()`, right after the DOM change) and hands the stamps over when asked
//! (`get_state`, through `tabwire.provideState`: nothing else crosses while it streams); the client stamps each progress notification as it arrives (wall clock). Both clocks
//! are this machine's. The user's bubble appears 40 ms after the send (`user_ms`), so every
//! milestone happens while `wait_for_operation` is already listening.
//! Path: MutationObserver → port → service worker → native port → tabwire-host → socket →
//! `tabwire mcp` (table, then notification) → stdout → rmcp client.

use std::time::Duration;

use serde_json::{Value, json};
use tabwire_testkit::progress::{ProgressMcp, result};
use tabwire_testkit::{Chromium, Fixtures, bins};

use crate::stats::Sample;

const ROUNDS: usize = 200;
const MILESTONES: [(&str, f64, &str); 3] = [
    ("message_sent (user bubble appeared)", 1.0, "user"),
    ("response_started (answer bubble appeared)", 2.0, "started"),
    ("response_completed (done marker appeared)", 3.0, "done"),
];

pub async fn run() {
    println!(
        "milestone latency: DOM change → progress notification at the client ({ROUNDS} operations)"
    );
    let browser = Chromium::start();
    let pages = Fixtures::serve();
    let dir = bins::scratch_dir("bench-ops");
    let (state, config) = (dir.join("state"), dir.join("config"));
    let env =
        [("TABWIRE_STATE_DIR", state.as_os_str()), ("TABWIRE_CONFIG_DIR", config.as_os_str())];
    let mut mcp = ProgressMcp::start_with(&browser.runtime_dir, &env).await;
    let url = pages.url("chat.html?words=3&word_ms=5&start_ms=20&user_ms=40");
    let tab = mcp.ok("open_tab", json!({ "url": url })).await["tab"]["id"].clone();
    let adapter = json!({
        "name": "fixture", "matches": ["http://127.0.0.1:*/*chat.html*"], "input": "#prompt", "submit": "#send",
        "user_message": ".msg.user", "assistant_message": ".msg.assistant",
        "generating": ".typing", "done": ".done", "stable_ms": 300
    });

    // Arrival time of milestones 1, 2 and 3 of each round, at the client.
    let mut arrived: Vec<[f64; 3]> = Vec::with_capacity(ROUNDS);
    for round in 0..ROUNDS {
        let args =
            json!({ "tab_id": tab, "text": format!("question {round}"), "adapter": adapter });
        let id = mcp.ok("send_message_async", args).await["operation_id"].clone();
        let wait = mcp.start_call("wait_for_operation", json!({ "operation_id": id })).await;
        let token = wait.progress_token.clone();
        let done = result(wait.await_response().await.expect("wait_for_operation"));
        assert_eq!(done.structured_content.unwrap()["status"], "completed");
        let mut times = [0.0; 3];
        while times[2] == 0.0 {
            let r = mcp.next_progress(Duration::from_secs(10)).await;
            if r.param.progress_token != token {
                continue;
            }
            for (i, (_, value, _)) in MILESTONES.iter().enumerate() {
                if r.param.progress == *value {
                    times[i] = r.at_ms;
                }
            }
        }
        arrived.push(times);
    }

    let stamps = page_stamps(&mcp, &tab).await;
    let mut all = Sample::new();
    for (i, (label, _, what)) in MILESTONES.iter().enumerate() {
        let at: Vec<f64> = stamps.iter().filter(|(w, _)| w == what).map(|(_, t)| *t).collect();
        assert_eq!(at.len(), ROUNDS, "one {what} stamp per round");
        let mut sample = Sample::new();
        for (round, page_ms) in at.iter().enumerate() {
            let latency = Duration::from_secs_f64((arrived[round][i] - page_ms).max(0.0) / 1000.0);
            sample.push(latency);
            all.push(latency);
        }
        sample.print(label);
    }
    all.print("all three milestones                         target p50 ≤ 2 ms");
    println!();
    let _ = std::fs::remove_dir_all(dir);
}

/// The fixture's stamps `(what, ms since the epoch)`, once the last round's are published.
async fn page_stamps(mcp: &ProgressMcp, tab: &Value) -> Vec<(String, f64)> {
    for _ in 0..500 {
        let state = mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
        let stamps: Vec<(String, f64)> = state["state"]["stamps"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|s| (s["what"].as_str().unwrap().to_owned(), s["t"].as_f64().unwrap()))
                    .collect()
            })
            .unwrap_or_default();
        if stamps.iter().filter(|(w, _)| w == "done").count() == ROUNDS {
            return stamps;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the page never published the stamps of all {ROUNDS} rounds");
}
