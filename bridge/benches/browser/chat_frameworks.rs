//! When "completed" comes on real chat frameworks from PyPI (Gradio's `ChatInterface`,
//! Streamlit's chat; tests/harness/pypi.rs): from the last word the app's fake model streamed
//! (it stamps it: tests/fixtures/apps/fake_model.py) to the operation's `response_completed`
//! milestone, with the hand-written adapter (`stable_ms` 500) and the detected one (the default,
//! 1000). Its floor is `stable_ms`, the quiet time the rule waits by design (specs/operations.md):
//! what is printed is the time beyond it. Both stamps are this machine's wall clock.

use serde_json::{Value, json};
use tabwire_tests::pypi::{ChatApp, Framework};
use tabwire_tests::{Chromium, Mcp};

const ROUNDS: usize = 5;

pub async fn run() {
    println!(
        "\nchat frameworks: the last word streamed → response_completed, beyond stable_ms \
         ({ROUNDS} answers each)"
    );
    for framework in [Framework::Gradio, Framework::Streamlit] {
        let app = match ChatApp::start(framework) {
            Ok(app) => app,
            Err(e) => {
                println!("  {framework:?} skipped: {e}");
                continue;
            }
        };
        let browser = Chromium::start();
        let mcp = Mcp::start(&browser.runtime_dir).await;
        let tab = mcp.ok("open_tab", json!({ "url": app.url })).await["tab"]["id"].clone();
        let ready = json!({ "tab_id": tab, "selector": framework.input(), "timeout_ms": 60000 });
        mcp.ok("wait_for", ready).await;
        let adapters = [
            ("hand-written adapter, stable_ms 500", Some(framework.adapter(&app.url)), 500.0),
            ("detected adapter, stable_ms 1000", None, 1000.0),
        ];
        for (label, adapter, stable_ms) in adapters {
            let mut beyond = Vec::new();
            for i in 0..ROUNDS {
                let mut args = json!({ "tab_id": tab, "text": format!("Question {i} ({label})") });
                if let Some(adapter) = &adapter {
                    args["adapter"] = adapter.clone();
                }
                let started = mcp.ok("send_message_async", args).await;
                let id = json!({ "operation_id": started["operation_id"] });
                let op = mcp.ok("wait_for_operation", id).await;
                match (completed_at(&op), app.last_words().last()) {
                    (Some(at), Some(last)) => beyond.push(at - last - stable_ms),
                    _ => println!("  {framework:?}, {label}: ended {}", op["status"]),
                }
            }
            beyond.sort_by(f64::total_cmp);
            if let (Some(min), Some(max)) = (beyond.first(), beyond.last()) {
                let p50 = beyond[beyond.len() / 2];
                println!(
                    "  {:<52} n={}  p50 {p50:>6.0} ms  min {min:>6.0} ms  max {max:>6.0} ms",
                    format!("{framework:?}, {label}"),
                    beyond.len()
                );
            }
        }
    }
}

/// When the operation ended `completed` (ms since the epoch), else None.
fn completed_at(op: &Value) -> Option<f64> {
    let end = op["milestones"].as_array()?.last()?;
    (op["status"] == "completed").then(|| end["at"].as_f64()).flatten()
}
