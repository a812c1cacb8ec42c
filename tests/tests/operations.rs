//! Operations through real Chromium, the real extension, host and `tabwire mcp`, driven by an
//! rmcp client that records progress notifications: a message is typed into the fixture chat
//! (tests/fixtures/chat.html), and the milestones the page produces reach the client.

use std::path::PathBuf;
use std::time::Duration;

use rmcp::model::ProgressToken;
use serde_json::{Value, json};
use tabwire_tests::mcp::text;
use tabwire_tests::progress::{ProgressMcp, Received, result};
use tabwire_tests::{Chromium, Fixtures, bins};

const LONG: Duration = Duration::from_secs(20);

/// The site adapter of the fixture chat.
fn adapter() -> Value {
    json!({
        "name": "fixture",
        "matches": ["http://127.0.0.1:*/*chat.html*"],
        "input": "#prompt:not([hidden]), #editor:not([hidden])",
        "submit": "#send",
        "user_message": ".msg.user",
        "assistant_message": ".msg.assistant",
        "generating": ".typing",
        "done": ".done",
        "stable_ms": 300
    })
}

/// What the fixture answers to the first message `asked` with `words` words.
fn answer(n: u32, asked: &str, words: u32) -> String {
    let words: Vec<String> = (1..=words).map(|i| format!("w{i}")).collect();
    format!("Answer {n} to {asked}: {}.", words.join(" "))
}

/// A browser, the fixture server, and per-test state and config directories.
struct World {
    browser: Chromium,
    pages: Fixtures,
    dir: PathBuf,
}

impl World {
    fn new(tag: &str) -> World {
        World { browser: Chromium::start(), pages: Fixtures::serve(), dir: bins::scratch_dir(tag) }
    }

    fn state_dir(&self) -> PathBuf {
        self.dir.join("state")
    }

    fn config_dir(&self) -> PathBuf {
        self.dir.join("config")
    }

    /// A `tabwire mcp` session with this world's state and config directories.
    async fn mcp(&self) -> ProgressMcp {
        let (state, config) = (self.state_dir(), self.config_dir());
        let env =
            [("TABWIRE_STATE_DIR", state.as_os_str()), ("TABWIRE_CONFIG_DIR", config.as_os_str())];
        ProgressMcp::start_with(&self.browser.runtime_dir, &env).await
    }

    async fn open_chat(&self, mcp: &ProgressMcp, query: &str) -> i64 {
        let url = self.pages.url(&format!("chat.html?{query}"));
        let tab = mcp.ok("open_tab", json!({ "url": url })).await;
        tab["tab"]["id"].as_i64().expect("tab id")
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Progress notifications for `token` until the one with progress 3 (the end), in order.
async fn progress_until_end(mcp: &mut ProgressMcp, token: &ProgressToken) -> Vec<Received> {
    let mut got = Vec::new();
    loop {
        let r = mcp.next_progress(LONG).await;
        if &r.param.progress_token != token {
            continue;
        }
        let end = r.param.progress >= 3.0;
        got.push(r);
        if end {
            return got;
        }
    }
}

fn names(op: &Value) -> Vec<String> {
    let list = op["milestones"].as_array().unwrap_or_else(|| panic!("no milestones in {op}"));
    list.iter().map(|m| m["name"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_operation_with_progress_in_order() {
    let world = World::new("op-whole");
    let mut mcp = world.mcp().await;
    let tab = world.open_chat(&mcp, "words=20&word_ms=30&start_ms=100").await;
    let asked = "What is two plus two?";

    let started = mcp
        .ok("send_message_async", json!({ "tab_id": tab, "text": asked, "adapter": adapter() }))
        .await;
    let id = started["operation_id"].as_str().expect("operation_id").to_owned();
    assert_eq!(started["tab_id"], tab);
    assert_eq!(started["adapter"], "fixture");

    let wait = mcp.start_call("wait_for_operation", json!({ "operation_id": id })).await;
    let token = wait.progress_token.clone();
    let done = result(wait.await_response().await.expect("wait_for_operation answers"));
    assert_ne!(done.is_error, Some(true), "{}", text(&done));
    let op = done.structured_content.clone().unwrap();
    assert_eq!(op["status"], "completed", "{op}");
    assert_eq!(op["response_text"], answer(1, asked, 20));
    assert!(text(&done).contains(&answer(1, asked, 20)), "the text carries the answer");
    assert_eq!(
        names(&op),
        ["message_sent", "response_started", "response_progress", "response_completed"]
    );
    assert_eq!(op["milestones"][0]["data"]["excerpt"], asked);
    assert_eq!(op["milestones"][3]["data"]["total_messages"], 2);

    // The client saw each milestone, in order, as spec progress notifications.
    let seen = progress_until_end(&mut mcp, &token).await;
    let values: Vec<f64> = seen.iter().map(|r| r.param.progress).collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "progress rises: {values:?}");
    assert!(seen.iter().all(|r| r.param.total == Some(3.0)));
    let message = |i: usize| seen[i].param.message.clone().unwrap_or_default();
    assert_eq!(values[0], 1.0);
    assert!(message(0).starts_with("message_sent: “What is two plus two?”"), "{}", message(0));
    assert_eq!(values[1], 2.0);
    assert!(message(1).starts_with("response_started"), "{}", message(1));
    let reports = &values[2..values.len() - 1];
    assert!(!reports.is_empty(), "progress reports while the answer streamed: {values:?}");
    assert!(reports.iter().all(|v| *v > 2.0 && *v < 3.0));
    // 20 words every 30 ms is ≈ 600 ms: at most 4 reports a second.
    assert!(reports.len() <= 4, "throttled to 4 a second: {} reports", reports.len());
    assert!(
        message(seen.len() - 1).starts_with("response_completed: "),
        "{}",
        message(seen.len() - 1)
    );

    // Asked again, it answers at once; get_operation and list_operations agree.
    let again =
        mcp.ok("wait_for_operation", json!({ "operation_id": id, "timeout_secs": 1 })).await;
    assert_eq!(again["response_text"], op["response_text"]);
    let got = mcp.ok("get_operation", json!({ "operation_id": id })).await;
    assert_eq!(got["status"], "completed");
    let listed = mcp.ok("list_operations", json!({ "status": "completed" })).await;
    assert_eq!(listed["operations"].as_array().unwrap().len(), 1);
    let none = mcp.ok("list_operations", json!({ "status": "streaming" })).await;
    assert_eq!(none["operations"], json!([]));

    // And on disk.
    let stored: Value =
        serde_json::from_slice(&std::fs::read(world.state_dir().join("operations.json")).unwrap())
            .unwrap();
    let stored_op = &stored["operations"][0];
    assert_eq!(stored_op["operation_id"], id.as_str());
    assert_eq!(stored_op["status"], "completed");

    let unknown = mcp.err("get_operation", json!({ "operation_id": "op_nope" })).await;
    assert!(unknown.contains("no operation has id \"op_nope\""), "{unknown}");
}
