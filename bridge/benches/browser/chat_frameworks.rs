//! When "completed" comes on real chat frameworks: Gradio's `ChatInterface`, Streamlit's chat
//! and Chainlit from PyPI (testkit/harness/pypi.rs), Deep Chat from npm (testkit/fixtures/apps/
//! deepchat.html). From the last word the app's fake model streamed (it stamps it:
//! testkit/fixtures/apps/fake_model.py for the Python apps, `chat` in testkit/harness/fixtures.rs
//! for Deep Chat) to the operation's `response_completed` milestone, with the hand-written
//! adapter (`stable_ms` 500, Deep Chat's 300) and the detected one. Its floor is the quiet time
//! the rule waits by design (specs/operations.md): a hand-written adapter's `stable_ms`; a
//! detected adapter's 50 ms once the app's stop control showed and went, else its `stable_ms`,
//! 1000. Gradio, Chainlit and Deep Chat show theirs while they answer; Streamlit only once its
//! script has run 500 ms, so its short answers often end after the 1000 (printed as some 700 ms
//! beyond). What is printed is the time beyond that floor. Both stamps are this machine's wall
//! clock.

use std::time::Duration;

use serde_json::{Value, json};
use tabwire_testkit::pypi::{ChatApp, Framework};
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp, fixtures, npm};

const ROUNDS: usize = 5;

/// The detected adapter's floor on these apps: its quiet time once the stop control went
/// (extension/lib/chat-detect.js, `SIGN_GONE_MS`).
const DETECTED_FLOOR_MS: f64 = 50.0;

pub async fn run() {
    println!(
        "\nchat frameworks: the last word streamed → response_completed, beyond the quiet time \
         ({ROUNDS} answers each)"
    );
    for framework in [Framework::Gradio, Framework::Streamlit, Framework::Chainlit] {
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
            ("detected adapter, 50 ms after its stop", None, DETECTED_FLOOR_MS),
        ];
        let name = format!("{framework:?}");
        measure(&mcp, &tab, &name, adapters, || app.last_words().last().copied()).await;
    }
    deep_chat().await;
}

/// Deep Chat, a web component from npm, on the fixture server's fake model.
async fn deep_chat() {
    if let Err(e) = npm::install_apps() {
        println!("  Deep Chat skipped: {e}");
        return;
    }
    let pages = Fixtures::serve();
    // In front, as a person works in it; its box is in its shadow root, so whether it rendered
    // is read through the debugger protocol.
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().unwrap();
    let cdp = Cdp::new(to_browser, from_browser);
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let url = pages.url("apps/deepchat.html");
    let tab = mcp.ok("open_tab", json!({ "url": url, "active": true })).await["tab"]["id"].clone();
    let ready = async {
        let target = cdp.target_id("page", "apps/deepchat.html").await?;
        let session = cdp.attach(&target).await?;
        cdp.wait_for(&session, fixtures::DEEP_CHAT_READY, Duration::from_secs(20)).await
    };
    if let Err(e) = ready.await {
        println!("  Deep Chat skipped: it never rendered: {e}");
        return;
    }
    let adapters = [
        ("hand-written adapter, stable_ms 300", Some(fixtures::deep_chat_adapter()), 300.0),
        ("detected adapter, 50 ms after its stop", None, DETECTED_FLOOR_MS),
    ];
    measure(&mcp, &tab, "Deep Chat", adapters, || pages.last_chunks().last().copied()).await;
}

/// `ROUNDS` answers in `tab` through each adapter (None: the detected one), each timed from
/// the fake model's stamp of its last word (`last_word`, read once the answer completed) to
/// `response_completed`, beyond the adapter's floor; one line per adapter.
async fn measure(
    mcp: &Mcp,
    tab: &Value,
    app: &str,
    adapters: [(&str, Option<Value>, f64); 2],
    last_word: impl Fn() -> Option<f64>,
) {
    for (label, adapter, floor_ms) in adapters {
        let mut beyond = Vec::new();
        for i in 0..ROUNDS {
            let mut args = json!({ "tab_id": tab, "text": format!("Question {i} ({label})") });
            if let Some(adapter) = &adapter {
                args["adapter"] = adapter.clone();
            }
            let started = mcp.ok("send_message_async", args).await;
            let id = json!({ "operation_id": started["operation_id"] });
            let op = mcp.ok("wait_for_operation", id).await;
            match (completed_at(&op), last_word()) {
                (Some(at), Some(last)) => beyond.push(at - last - floor_ms),
                _ => println!("  {app}, {label}: ended {}", op["status"]),
            }
        }
        beyond.sort_by(f64::total_cmp);
        if let (Some(min), Some(max)) = (beyond.first(), beyond.last()) {
            let p50 = beyond[beyond.len() / 2];
            println!(
                "  {:<52} n={}  p50 {p50:>6.0} ms  min {min:>6.0} ms  max {max:>6.0} ms",
                format!("{app}, {label}"),
                beyond.len()
            );
        }
    }
}

/// When the operation ended `completed` (ms since the epoch), else None.
fn completed_at(op: &Value) -> Option<f64> {
    let end = op["milestones"].as_array()?.last()?;
    (op["status"] == "completed").then(|| end["at"].as_f64()).flatten()
}
