//! Operations through real Chromium, the real extension, host and `tabwire mcp`, driven by an
//! rmcp client that records progress notifications: a message is typed into the fixture chat
//! (testkit/fixtures/chat.html), and the milestones the page produces reach the client.

use std::path::PathBuf;
use std::time::Duration;

use rmcp::model::ProgressToken;
use serde_json::{Value, json};
use tabwire_testkit::mcp::text;
use tabwire_testkit::progress::{ProgressMcp, Received, result};
use tabwire_testkit::shared::Shared;
use tabwire_testkit::{Cdp, Chromium, Fixtures, bins};

const LONG: Duration = Duration::from_secs(20);

/// The site adapter of the fixture chat.
fn adapter() -> Value {
    tabwire_testkit::fixtures::chat_adapter()
}

/// What the fixture answers to the first message `asked` with `words` words.
fn answer(n: u32, asked: &str, words: u32) -> String {
    let words: Vec<String> = (1..=words).map(|i| format!("w{i}")).collect();
    format!("Answer {n} to {asked}: {}.", words.join(" "))
}

/// A browser shared with the tests before and after ([`Chromium::shared`]; driven over CDP
/// too, as the user's own hand and eyes, where a test needs it), the fixture server, and
/// per-test state and config directories.
struct World {
    browser: Shared,
    pages: Fixtures,
    dir: bins::Scratch,
}

impl World {
    fn new(tag: &str) -> World {
        World { browser: Chromium::shared(), pages: Fixtures::serve(), dir: bins::scratch_dir(tag) }
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
        // In front: Chrome throttles a background tab's timers, which the fixture chat streams by
        // (specs/tools.md, "The user's focus").
        let tab = mcp.ok("open_tab", json!({ "url": url, "active": true })).await;
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

/// The stored operations, once `ready` holds for them (checked every 10 ms, for at most 5 s).
async fn stored_when(state_dir: &std::path::Path, ready: impl Fn(&Value) -> bool) -> Value {
    let path = state_dir.join("operations.json");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let text = std::fs::read(&path).unwrap_or_default();
        let ops = serde_json::from_slice::<Value>(&text).map(|v| v["operations"].clone());
        match ops {
            Ok(ops) if ops.is_array() && ready(&ops) => return ops,
            _ if std::time::Instant::now() > deadline => {
                panic!("{} never got there", path.display())
            }
            _ => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

fn names(op: &Value) -> Vec<String> {
    let list = op["milestones"].as_array().unwrap_or_else(|| panic!("no milestones in {op}"));
    list.iter().map(|m| m["name"].as_str().unwrap().to_owned()).collect()
}

// One thread: rmcp's client runs each notification callback on a task of its own, and only a
// current-thread runtime runs those tasks in the order the notifications arrived.
#[tokio::test(flavor = "current_thread")]
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
    // At most 4 reports a second: the first at once, then one per 250 ms of streaming.
    let at = |i: usize| op["milestones"][i]["at"].as_u64().unwrap();
    let streamed_ms = at(3) - at(1);
    let allowed = 1 + streamed_ms as usize / 250 + 1;
    assert!(reports.len() <= allowed, "{} reports in {streamed_ms} ms", reports.len());
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

    // And on disk (written just after the notification, off the bridge's async runtime).
    let stored = stored_when(&world.state_dir(), |ops| ops[0]["status"] == "completed").await;
    assert_eq!(stored[0]["operation_id"], id.as_str());
    assert_eq!(stored[0]["response_text"], answer(1, asked, 20));

    let unknown = mcp.err("get_operation", json!({ "operation_id": "op_nope" })).await;
    assert!(unknown.contains("no operation has id \"op_nope\""), "{unknown}");
}

/// Start an operation and return its id.
async fn send(mcp: &ProgressMcp, tab: i64, text: &str) -> String {
    let started = mcp
        .ok("send_message_async", json!({ "tab_id": tab, "text": text, "adapter": adapter() }))
        .await;
    started["operation_id"].as_str().expect("operation_id").to_owned()
}

/// Wait for an operation to end; its final form.
async fn wait(mcp: &ProgressMcp, id: &str) -> Value {
    mcp.ok("wait_for_operation", json!({ "operation_id": id, "timeout_secs": 60 })).await
}

/// Progress notifications for `token` until one at or above `value`.
async fn progress_reaching(mcp: &mut ProgressMcp, token: &ProgressToken, value: f64) -> Received {
    loop {
        let r = mcp.next_progress(LONG).await;
        if &r.param.progress_token == token && r.param.progress >= value {
            return r;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_operations_in_two_tabs_at_once() {
    let world = World::new("op-two");
    let mcp = world.mcp().await;
    // Eight words: the first tab is behind the second, where Chrome lets the page's timers
    // fire once a second, so its answer takes about eight seconds (thirty took thirty).
    let query = "words=8&word_ms=25&start_ms=50";
    let (one, two) = (world.open_chat(&mcp, query).await, world.open_chat(&mcp, query).await);
    let a = send(&mcp, one, "first question").await;
    let b = send(&mcp, two, "second question").await;
    let (a, b) = tokio::join!(wait(&mcp, &a), wait(&mcp, &b));
    assert_eq!(a["response_text"], answer(1, "first question", 8), "{a}");
    assert_eq!(b["response_text"], answer(1, "second question", 8), "{b}");
    assert_eq!((a["tab_id"].as_i64(), b["tab_id"].as_i64()), (Some(one), Some(two)));
    // They ran at once: the second was sent before the first finished.
    let at = |op: &Value, i: usize| op["milestones"][i]["at"].as_u64().unwrap();
    assert!(at(&b, 0) < at(&a, 3), "overlapping: {a} {b}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_event_returns_whichever_operation_moves_first() {
    let world = World::new("op-events");
    let mcp = world.mcp().await;
    let bystander = world.mcp().await; // another session, with the same state dir
    let long = world.open_chat(&mcp, "words=60&word_ms=30&start_ms=20").await;
    let short = world.open_chat(&mcp, "words=3&word_ms=30&start_ms=20").await;
    let slow = send(&mcp, long, "a long one").await;
    let quick = send(&mcp, short, "a short one").await;
    // Take operation events until one says an operation finished: the short one does first.
    let finished = loop {
        let event =
            mcp.ok("wait_for_event", json!({ "types": ["operation"], "timeout_secs": 20 })).await;
        assert_eq!(event["type"], "operation", "{event}");
        let data = &event; // an operation event's own fields are at the top level
        assert!([&slow, &quick].contains(&&data["operation_id"].as_str().unwrap().to_owned()));
        if data["milestone"] == "response_completed" {
            break event;
        }
    };
    assert_eq!(finished["operation_id"], quick.as_str());
    assert_eq!(finished["tab_id"], short);
    assert_eq!(finished["status"], "completed");
    assert_eq!(finished["data"]["text"], answer(1, "a short one", 3));
    // Another session's queue holds none of them: it follows no operation.
    let none =
        bystander.ok("wait_for_event", json!({ "types": ["operation"], "timeout_secs": 1 })).await;
    assert_eq!(none["type"], "timeout", "{none}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_wait_and_cancelling_the_operation() {
    let world = World::new("op-cancel");
    let mut mcp = world.mcp().await;
    let tab = world.open_chat(&mcp, "words=40&word_ms=30&start_ms=50").await;

    // Cancelling the wait (notifications/cancelled) leaves the operation running.
    let id = send(&mcp, tab, "keep going").await;
    let waiting = mcp.start_call("wait_for_operation", json!({ "operation_id": id })).await;
    let token = waiting.progress_token.clone();
    progress_reaching(&mut mcp, &token, 1.0).await;
    waiting.cancel(Some("the test moved on".into())).await.expect("send notifications/cancelled");
    let done = wait(&mcp, &id).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["response_text"], answer(1, "keep going", 40));

    // Dropping the call (the client gives up on it: notifications/cancelled) does the same.
    // Progress the first wait sent before its cancel was read may still be queued: skip it.
    while mcp.progress.try_recv().is_ok() {}
    let dropped = send(&mcp, tab, "dropped").await;
    let mut params = rmcp::model::CallToolRequestParams::new("wait_for_operation");
    params = params.with_arguments(json!({ "operation_id": dropped }).as_object().unwrap().clone());
    let mut call = Box::pin(mcp.client.call_tool(params));
    loop {
        tokio::select! {
            r = &mut call => panic!("the wait ended before any milestone: {r:?}"),
            next = mcp.progress.recv() => {
                let next = next.unwrap();
                if next.param.progress_token != token {
                    assert!(next.param.progress >= 1.0, "{:?}", next.param);
                    break;
                }
            }
        }
    }
    drop(call);
    let done = wait(&mcp, &dropped).await;
    assert_eq!(done["response_text"], answer(2, "dropped", 40));

    // cancel_operation stops it mid-answer; the page's later words change nothing.
    let stop = send(&mcp, tab, "stop me").await;
    let waiting = mcp.start_call("wait_for_operation", json!({ "operation_id": stop })).await;
    let token = waiting.progress_token.clone();
    progress_reaching(&mut mcp, &token, 2.0).await; // the answer started
    let cancelled = mcp.ok("cancel_operation", json!({ "operation_id": stop })).await;
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(cancelled["error"]["reason"], "cancelled");
    let ended = result(waiting.await_response().await.unwrap());
    assert_eq!(ended.structured_content.unwrap()["status"], "cancelled", "the wait ends with it");
    let last = progress_reaching(&mut mcp, &token, 3.0).await;
    assert!(last.param.message.unwrap().starts_with("cancelled: cancelled"));
    // A third message, sent after, finishes after the cancelled answer would have.
    let third = send(&mcp, tab, "after").await;
    assert_eq!(wait(&mcp, &third).await["response_text"], answer(4, "after", 40));
    let still = mcp.ok("get_operation", json!({ "operation_id": stop })).await;
    assert_eq!(still["status"], "cancelled");
    assert_eq!(names(&still).last().unwrap(), "cancelled");
    let again = mcp.ok("cancel_operation", json!({ "operation_id": third })).await;
    assert_eq!(again["status"], "completed", "an ended operation is left as it is");

    // An operation whose deadline passes times out.
    let slow = world.open_chat(&mcp, "words=200&word_ms=50&start_ms=50").await;
    let started = mcp
        .ok(
            "send_message_async",
            json!({ "tab_id": slow, "text": "too slow", "adapter": adapter(), "timeout_secs": 1 }),
        )
        .await;
    let timed = wait(&mcp, started["operation_id"].as_str().unwrap()).await;
    assert_eq!(timed["status"], "timed_out", "{timed}");
    assert!(timed["error"]["message"].as_str().unwrap().contains("after 1 s"), "{timed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tab_closed_or_navigated_mid_answer() {
    let world = World::new("op-gone");
    let mut mcp = world.mcp().await;
    let query = "words=300&word_ms=30&start_ms=50";
    let (closing, leaving) =
        (world.open_chat(&mcp, query).await, world.open_chat(&mcp, query).await);

    let a = send(&mcp, closing, "about to close").await;
    let waiting = mcp.start_call("wait_for_operation", json!({ "operation_id": a })).await;
    let token = waiting.progress_token.clone();
    progress_reaching(&mut mcp, &token, 2.0).await;
    mcp.ok("close_tab", json!({ "tab_id": closing })).await;
    let failed = result(waiting.await_response().await.unwrap());
    let failed = failed.structured_content.unwrap();
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["reason"], "tab_closed");
    assert!(
        failed["error"]["message"].as_str().unwrap().contains(&format!("tab {closing} was closed"))
    );

    let b = send(&mcp, leaving, "about to leave").await;
    let waiting = mcp.start_call("wait_for_operation", json!({ "operation_id": b })).await;
    let token = waiting.progress_token.clone();
    progress_reaching(&mut mcp, &token, 2.0).await;
    let elsewhere = world.pages.url("plain.html");
    mcp.ok("navigate", json!({ "tab_id": leaving, "url": elsewhere })).await;
    let failed = result(waiting.await_response().await.unwrap()).structured_content.unwrap();
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["reason"], "navigated_away");
}

#[cfg(unix)] // SIGTERM lets Chromium close its native port; Windows has no such signal
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_closed_mid_answer() {
    let world = World::new("op-closed");
    let mut mcp = world.mcp().await;
    let tab = world.open_chat(&mcp, "words=300&word_ms=30&start_ms=20").await;
    let id = send(&mcp, tab, "goodbye").await;
    let waiting = mcp.start_call("wait_for_operation", json!({ "operation_id": id })).await;
    let token = waiting.progress_token.clone();
    progress_reaching(&mut mcp, &token, 2.0).await;
    // SAFETY: the browser's own positive pid; SIGTERM lets it close its native port.
    assert!(world.browser.pid() > 0);
    unsafe { libc::kill(world.browser.pid() as libc::pid_t, libc::SIGTERM) };
    let failed = result(waiting.await_response().await.unwrap()).structured_content.unwrap();
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["reason"], "browser_disconnected");
}

// Current-thread: it checks the order of progress notifications, which rmcp's client hands to
// callbacks on tasks of their own (testkit/harness/progress.rs); with two worker threads, two
// notifications sent back to back could be recorded in either order.
#[tokio::test(flavor = "current_thread")]
async fn a_restarted_bridge_picks_operations_up() {
    let world = World::new("op-restart");
    let mut first = world.mcp().await;
    let (kept, closed) = (
        world.open_chat(&first, "words=60&word_ms=40&start_ms=50").await,
        world.open_chat(&first, "words=300&word_ms=40&start_ms=50").await,
    );
    let a = send(&first, kept, "survive").await;
    let b = send(&first, closed, "vanish").await;
    let waiting = first.start_call("wait_for_operation", json!({ "operation_id": a })).await;
    let token = waiting.progress_token.clone();
    progress_reaching(&mut first, &token, 2.0).await;
    first.kill();

    // While no bridge of this state dir runs, another session closes b's tab.
    let other_dir = world.dir.join("other");
    let other = ProgressMcp::start_with(
        &world.browser.runtime_dir,
        &[("TABWIRE_STATE_DIR", other_dir.as_os_str())],
    )
    .await;
    // The killed session's tabs are the user's once the extension hears that it ended (its
    // group titled "… (done)"); until then they are refused to another session.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let listed = other.ok("list_tabs", json!({})).await;
        let tabs = listed["tabs"].as_array().cloned().unwrap_or_default();
        let mine = tabs.iter().find(|t| t["id"] == closed);
        if mine.is_some_and(|t| t["group"].as_str().is_some_and(|g| g.ends_with("(done)"))) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "tab {closed} is not the user's: {listed}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    other.ok("close_tab", json!({ "tab_id": closed })).await;
    assert_eq!(other.ok("list_operations", json!({})).await["operations"], json!([]));

    let mut second = world.mcp().await;
    let waiting = second
        .start_call("wait_for_operation", json!({ "operation_id": a, "timeout_secs": 30 }))
        .await;
    let token = waiting.progress_token.clone();
    let done = result(waiting.await_response().await.unwrap());
    let done = done.structured_content.clone().unwrap_or_else(|| panic!("{done:?}"));
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["response_text"], answer(1, "survive", 60));
    let seen = progress_until_end(&mut second, &token).await;
    assert_eq!(seen[0].param.progress, 1.0, "the new bridge tells the milestones it picked up");

    let gone = wait(&second, &b).await;
    assert_eq!(gone["status"], "failed", "{gone}");
    assert_eq!(gone["error"]["reason"], "tab_gone_while_bridge_down");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adapters_from_the_config_dir_and_mismatches() {
    let world = World::new("op-adapters");
    let dir = world.config_dir().join("adapters");
    std::fs::create_dir_all(&dir).unwrap();
    // A contenteditable chat that sends on Enter, described by a file in the config dir.
    let mut ce = adapter();
    ce["name"] = json!("fixture-ce");
    ce["matches"] = json!(["http://127.0.0.1:*/*chat.html?editor=ce*"]);
    ce["input"] = json!("#editor[contenteditable]");
    ce["submit"] = json!("enter");
    std::fs::write(dir.join("fixture-ce.json"), serde_json::to_vec(&ce).unwrap()).unwrap();
    std::fs::write(dir.join("broken.json"), b"{\"name\": 1}").unwrap();
    let mcp = world.mcp().await;

    let listed = mcp.ok("list_adapters", json!({})).await;
    let adapters = listed["adapters"].as_array().unwrap();
    let names: Vec<&str> =
        adapters.iter().map(|l| l["adapter"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["fixture-ce", "claude.ai", "chatgpt.com", "gemini.google.com"]);
    assert!(adapters[0]["source"].as_str().unwrap().ends_with("adapters/fixture-ce.json"));
    assert_eq!(adapters[1]["source"], "built-in");
    assert!(listed["problems"][0]["path"].as_str().unwrap().ends_with("broken.json"));

    // No tab id, no adapter: the open tab the config dir's adapter fits is used.
    let tab = world.open_chat(&mcp, "editor=ce&words=5&word_ms=20&start_ms=20").await;
    let started =
        mcp.ok("send_message_async", json!({ "text": "typed into a contenteditable" })).await;
    assert_eq!(
        (started["tab_id"].as_i64(), started["adapter"].as_str()),
        (Some(tab), Some("fixture-ce"))
    );
    let done = wait(&mcp, started["operation_id"].as_str().unwrap()).await;
    assert_eq!(done["response_text"], answer(1, "typed into a contenteditable", 5));

    // Selectors the page does not fit: clear errors that name the selector.
    let plain = world.open_chat(&mcp, "words=5").await;
    let mut wrong = adapter();
    wrong["input"] = json!("#send");
    let err = mcp
        .err("send_message_async", json!({ "tab_id": plain, "text": "x", "adapter": wrong }))
        .await;
    assert!(
        err.starts_with(
            "adapter_mismatch: adapter \"fixture\": its `input` selector `#send` matches a <button>"
        ),
        "{err}"
    );
    let mut invalid = adapter();
    invalid["user_message"] = json!("div[");
    let err = mcp
        .err("send_message_async", json!({ "tab_id": plain, "text": "x", "adapter": invalid }))
        .await;
    assert!(err.contains("its `user_message` selector `div[` is not valid CSS"), "{err}");
    let mut missing = adapter();
    missing["input"] = json!("textarea.composer");
    let err = mcp
        .err("send_message_async", json!({ "tab_id": plain, "text": "x", "adapter": missing }))
        .await;
    assert!(
        err.contains("matches its `input` selector `textarea.composer` (waited 10000 ms)"),
        "{err}"
    );
    let failed = mcp.ok("list_operations", json!({ "status": "failed" })).await;
    assert_eq!(failed["operations"].as_array().unwrap().len(), 3, "recorded as failed: {failed}");
    assert_eq!(failed["operations"][0]["error"]["reason"], "adapter_mismatch");

    let err = mcp.err("send_message_async", json!({ "text": "x", "adapter": "nope" })).await;
    assert!(err.contains("no adapter is named \"nope\""), "{err}");
    let elsewhere = mcp.ok("open_tab", json!({ "url": world.pages.url("plain.html") })).await;
    let err = mcp
        .err("send_message_async", json!({ "tab_id": elsewhere["tab"]["id"], "text": "x" }))
        .await;
    assert!(err.contains("no adapter fits tab"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_formatted_answer_keeps_its_lines() {
    let world = World::new("op-rich");
    let mcp = world.mcp().await;
    let tab = world.open_chat(&mcp, "rich=1&words=2&word_ms=10&start_ms=10").await;
    let id = send(&mcp, tab, "format it").await;
    let done = wait(&mcp, &id).await;
    assert_eq!(
        done["response_text"],
        "Answer 1 to format it:\n\none\ntwo\nlet x = 1;\n  y\n\nlast\nline\n\nw1 w2."
    );
}

/// A state file as a crashed bridge may leave it: one operation still streaming.
fn stored_streaming_operation() -> Value {
    json!({ "format": 1, "operations": [{
        "operation_id": "op_left_behind", "status": "streaming", "tab_id": 7,
        "browser": "no-such-profile", "adapter": "fixture", "text": "hello",
        "milestones": [], "response_text": null, "error": null,
        "created_at": 1, "updated_at": 1, "deadline_at": u64::MAX / 2, "owner_pid": 0
    }]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_operations_without_their_browser_fail_and_a_corrupt_file_is_set_aside() {
    let dir = bins::scratch_dir("op-store");
    let run = dir.join("run");
    let (left, corrupt) = (dir.join("left"), dir.join("corrupt"));
    for state in [&left, &corrupt] {
        std::fs::create_dir_all(state).unwrap();
    }

    std::fs::write(left.join("operations.json"), stored_streaming_operation().to_string()).unwrap();
    let mcp = ProgressMcp::start_with(&run, &[("TABWIRE_STATE_DIR", left.as_os_str())]).await;
    let op = mcp.ok("wait_for_operation", json!({ "operation_id": "op_left_behind" })).await;
    assert_eq!(op["status"], "failed", "{op}");
    assert_eq!(op["error"]["reason"], "tab_gone_while_bridge_down");

    std::fs::write(corrupt.join("operations.json"), b"{\"format\":1,\"operations\":[{").unwrap();
    let mcp = ProgressMcp::start_with(&run, &[("TABWIRE_STATE_DIR", corrupt.as_os_str())]).await;
    assert_eq!(mcp.ok("list_operations", json!({})).await["operations"], json!([]));
    let aside: Vec<String> = std::fs::read_dir(&corrupt)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("operations.json.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1, "the corrupt file is kept aside: {aside:?}");
    let _ = std::fs::remove_dir_all(dir);
}

/// The fixture chat's adapter with the app's Stop button named.
fn adapter_with_stop() -> Value {
    let mut a = adapter();
    a["stop"] = json!("#stop:not([hidden])");
    a
}

/// A CDP session on the tab showing the fixture chat whose address contains `query`.
async fn page_session(cdp: &Cdp, query: &str) -> String {
    let target = cdp.target_id("page", query).await.expect("the chat's target");
    cdp.attach(&target).await.expect("attach to the chat")
}

/// The text of the page's newest answer bubble.
async fn shown_answer(cdp: &Cdp, session: &str) -> String {
    let js = "[...document.querySelectorAll('.msg.assistant')].pop()?.textContent ?? null";
    cdp.eval(session, js).await.unwrap().as_str().unwrap_or_default().to_owned()
}

// cancel_operation presses the app's own Stop control, so the app really stops, and the
// operation ends `stopped` (not `cancelled`, not `completed`) with the text so far; an answer the
// user stops with that control is `stopped` too.
#[tokio::test(flavor = "current_thread")]
async fn the_apps_stop_control_stops_the_answer_and_it_reads_stopped() {
    let world = World::new("op-stop");
    let cdp = world.browser.cdp();
    let mut mcp = world.mcp().await;
    let query = "words=400&word_ms=30&start_ms=50&stop=1";
    let tab = world.open_chat(&mcp, query).await;
    let session = page_session(cdp, "stop=1").await;
    let send = |text: &str| json!({ "tab_id": tab, "text": text, "adapter": adapter_with_stop() });

    // By cancel_operation.
    let started = mcp.ok("send_message_async", send("stop me")).await;
    let id = started["operation_id"].as_str().unwrap().to_owned();
    let waiting = mcp.start_call("wait_for_operation", json!({ "operation_id": id })).await;
    let token = waiting.progress_token.clone();
    progress_reaching(&mut mcp, &token, 2.6).await; // words are streaming
    let stopped = mcp.ok("cancel_operation", json!({ "operation_id": id })).await;
    assert_eq!(stopped["status"], "stopped", "{stopped}");
    assert_eq!(stopped["error"], Value::Null, "{stopped}");
    let said = stopped["response_text"].as_str().expect("the text so far").to_owned();
    assert!(said.starts_with("Answer 1 to stop me: w1"), "{said}");
    assert!(!said.ends_with('.'), "stopped before the end: {said}");
    let last = stopped["milestones"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["name"], "response_stopped", "{stopped}");
    assert_eq!(last["data"]["by"], "cancel_operation");
    // The app itself stopped: its answer is what the operation says, and stays so.
    let stamps = cdp.eval(&session, "stamps.map((s) => s.what)").await.unwrap();
    assert!(stamps.as_array().unwrap().contains(&json!("stopped")), "the Stop button was pressed");
    let now = shown_answer(cdp, &session).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(shown_answer(cdp, &session).await, now, "the app streams no more");
    assert_eq!(now.trim(), said);
    let ended = result(waiting.await_response().await.unwrap());
    assert_eq!(ended.structured_content.unwrap()["status"], "stopped", "the wait ends with it");
    let end = progress_reaching(&mut mcp, &token, 3.0).await;
    let message = end.param.message.unwrap();
    assert!(message.starts_with("response_stopped by cancel_operation: "), "{message}");

    // By the user, with the app's Stop button (a real click).
    let started = mcp.ok("send_message_async", send("the user stops this")).await;
    let id = started["operation_id"].as_str().unwrap().to_owned();
    let waiting = mcp.start_call("wait_for_operation", json!({ "operation_id": id })).await;
    let token = waiting.progress_token.clone();
    progress_reaching(&mut mcp, &token, 2.6).await;
    cdp.click(&session, "#stop:not([hidden])").await.unwrap();
    let ended = result(waiting.await_response().await.unwrap());
    let op = ended.structured_content.unwrap();
    assert_eq!(op["status"], "stopped", "{op}");
    let said = op["response_text"].as_str().unwrap();
    assert!(said.starts_with("Answer 2 to the user stops this: w1"), "{said}");
    assert_eq!(said, shown_answer(cdp, &session).await.trim());
    let last = op["milestones"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["data"]["by"], "user", "{op}");
    let end = progress_reaching(&mut mcp, &token, 3.0).await;
    assert!(end.param.message.unwrap().starts_with("response_stopped by the user: "));

    // An answer left to finish is still `completed`, Stop control or not.
    let started = mcp
        .ok(
            "send_message_async",
            json!({
                "tab_id": tab, "text": "finish", "adapter": adapter_with_stop(), "timeout_secs": 60
            }),
        )
        .await;
    let id = started["operation_id"].as_str().unwrap().to_owned();
    let done = wait(&mcp, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["response_text"], answer(3, "finish", 400));

    // A page that never shows the Stop control its adapter names (here, one without it): the
    // cancel waits for it only a moment after the send, then ends the operation `cancelled`,
    // and the page's own answer goes on (nothing of it was pressed).
    let bare = world.open_chat(&mcp, "words=400&word_ms=30&start_ms=50&nostop=1").await;
    let bare_session = page_session(cdp, "nostop=1").await;
    let args = json!({ "tab_id": bare, "text": "no stop here", "adapter": adapter_with_stop() });
    let started = mcp.ok("send_message_async", args).await;
    let id = started["operation_id"].as_str().unwrap().to_owned();
    let call = mcp.call("cancel_operation", json!({ "operation_id": id })).await;
    let cancelled = call.structured_content.clone().unwrap();
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert_eq!(cancelled["error"]["reason"], "cancelled", "{cancelled}");
    // The result says that nothing stopped the app, and so does the tool's description.
    let goes_on = format!("the chat goes on answering in tab {bare}");
    assert!(text(&call).contains(&goes_on), "{}", text(&call));
    assert!(cancelled["error"]["message"].as_str().unwrap().contains(&goes_on), "{cancelled}");
    let tools = mcp.client.list_all_tools().await.unwrap();
    let cancel = tools.iter().find(|t| t.name == "cancel_operation").unwrap();
    let about = cancel.description.as_deref().unwrap_or_default();
    assert!(about.contains("the chat goes on answering"), "{about}");
    let before = shown_answer(cdp, &bare_session).await;
    let grew = format!(
        "([...document.querySelectorAll('.msg.assistant')].pop()?.textContent ?? '').length > {}",
        before.len()
    );
    cdp.wait_for(&bare_session, &grew, Duration::from_secs(10)).await.expect("the app goes on");
}

// An app may add a bubble of its own when its stop control is pressed (Chainlit's "Task manually
// stopped.", the fixture chat's with stopnote=1): the stopped operation's text is the answer as
// the app shows it, not that note — stopped by cancel_operation or by the user.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_answer_is_the_answer_not_the_apps_note_about_it() {
    let world = World::new("op-stop-note");
    let cdp = world.browser.cdp();
    let mcp = world.mcp().await;
    let tab = world.open_chat(&mcp, "words=400&word_ms=30&start_ms=50&stop=1&stopnote=1").await;
    let session = page_session(cdp, "stopnote=1").await;
    let newest = "[...document.querySelectorAll('.msg.assistant')].at(-1)?.textContent";
    let streaming = format!("({newest} ?? '').includes(' w5')");
    let the_answer = "[...document.querySelectorAll('.msg.assistant')].at(-2)?.textContent.trim()";
    for (n, by) in [(1, "cancel_operation"), (2, "user")] {
        let asked = format!("stop me ({by})");
        let args = json!({ "tab_id": tab, "text": asked, "adapter": adapter_with_stop() });
        let started = mcp.ok("send_message_async", args).await;
        let id = started["operation_id"].as_str().unwrap().to_owned();
        cdp.wait_for(&session, &streaming, LONG).await.unwrap();
        let op = if by == "user" {
            cdp.click(&session, "#stop:not([hidden])").await.unwrap();
            wait(&mcp, &id).await
        } else {
            mcp.ok("cancel_operation", json!({ "operation_id": id })).await
        };
        assert_eq!(op["status"], "stopped", "{op}");
        let last = op["milestones"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["data"]["by"], by, "{op}");
        let said = op["response_text"].as_str().unwrap();
        assert!(said.starts_with(&format!("Answer {n} to {asked}: w1")), "{said}");
        assert_eq!(cdp.eval(&session, newest).await.unwrap(), "Task manually stopped.");
        assert_eq!(cdp.eval(&session, the_answer).await.unwrap(), said, "as the page shows it");
    }
}

// The quiet time is the answer's own: a clock ticking elsewhere on the page (every 100 ms, more
// often than the quiet time) does not hold "completed" back; it comes within stable_ms + 200 ms
// of the last token. Progress and the final text are read alike: an avatar's icon-font
// ligature (aria-hidden) is in neither.
#[tokio::test(flavor = "current_thread")]
async fn completed_soon_after_the_last_token_whatever_else_the_page_does() {
    let world = World::new("op-quiet");
    let cdp = world.browser.cdp();
    let mut mcp = world.mcp().await;
    let query = "words=20&word_ms=30&start_ms=50&done=0&clock=1&icon=1";
    let tab = world.open_chat(&mcp, query).await;
    let session = page_session(cdp, "clock=1").await;
    let started = mcp
        .ok("send_message_async", json!({ "tab_id": tab, "text": "tick", "adapter": adapter() }))
        .await;
    let id = started["operation_id"].as_str().unwrap().to_owned();
    let waiting = mcp
        .start_call("wait_for_operation", json!({ "operation_id": id, "timeout_secs": 10 }))
        .await;
    let token = waiting.progress_token.clone();
    let ended = result(waiting.await_response().await.unwrap());
    let op = ended.structured_content.unwrap();
    assert_eq!(op["status"], "completed", "{op}");
    assert_eq!(op["response_text"], answer(1, "tick", 20));

    let stamps = cdp.eval(&session, "stamps").await.unwrap();
    let last_token = stamps
        .as_array()
        .unwrap()
        .iter()
        .rfind(|s| s["what"] == "done")
        .and_then(|s| s["t"].as_f64())
        .expect("the page stamped its last token");
    let milestones = op["milestones"].as_array().unwrap();
    let completed_at = milestones.last().unwrap()["at"].as_f64().unwrap();
    let after = completed_at - last_token;
    println!("response_completed {after:.0} ms after the last token (stable_ms 300)");
    // (`at` is whole milliseconds, the stamp is not.)
    assert!((299.0..=500.0).contains(&after), "completed {after:.1} ms after the last token");

    // The end's notification was there before the result; every progress excerpt reads the
    // answer as the final text does.
    let seen = received_already(&mut mcp, &token);
    let end = seen.last().map(|r| r.param.progress);
    assert_eq!(end, Some(3.0), "the end's notification came before the result: {seen:?}");
    for r in &seen {
        let message = r.param.message.clone().unwrap_or_default();
        assert!(!message.contains("smart_toy"), "{message}");
    }
    let progress = milestones.iter().rfind(|m| m["name"] == "response_progress");
    let chars = progress.expect("a progress report")["data"]["chars"].as_u64().unwrap();
    let final_chars = op["response_text"].as_str().unwrap().chars().count() as u64;
    assert!(chars <= final_chars, "progress said {chars} chars of a {final_chars}-char answer");
}

/// The progress notifications for `token` the client has already received, in order.
fn received_already(mcp: &mut ProgressMcp, token: &ProgressToken) -> Vec<Received> {
    let mut got = Vec::new();
    while let Ok(r) = mcp.progress.try_recv() {
        if &r.param.progress_token == token {
            got.push(r);
        }
    }
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_detected_adapter_is_shown_then_used_on_the_fixture_chat() {
    let world = World::new("op-detect");
    let mcp = world.mcp().await;
    // The app's Stop button shows while it answers: the detector finds it (hidden now) by name.
    let tab = world.open_chat(&mcp, "words=20&word_ms=30&start_ms=100&stop=1&done=0").await;
    let listed = mcp.ok("list_adapters", json!({ "tab_id": tab })).await;
    let found = &listed["tab"]["detected"];
    assert_eq!(found["clear"], true, "{listed}");
    let proposed = &found["adapter"];
    assert_eq!(
        (&proposed["input"], &proposed["submit"], &proposed["stop"]),
        (&json!("#prompt"), &json!("#send"), &json!("#stop")),
        "{listed}"
    );
    assert!(text(&mcp.call("list_adapters", json!({ "tab_id": tab })).await).contains(
        "no adapter fits; send_message_async with this tab_id uses what the chat detector proposes"
    ));

    let asked = "What time is it?";
    let started = mcp.ok("send_message_async", json!({ "tab_id": tab, "text": asked })).await;
    assert_eq!(started["adapter"], "detected");
    let done = wait(&mcp, started["operation_id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["response_text"], answer(1, asked, 20), "{done}");
    let names = names(&done);
    assert_eq!(names.first().map(String::as_str), Some("message_sent"), "{names:?}");
    assert_eq!(done["milestones"][0]["data"]["excerpt"], asked);

    // A second message: its answer, not the first one's.
    let again = "And the date?";
    let started = mcp.ok("send_message_async", json!({ "tab_id": tab, "text": again })).await;
    let done = wait(&mcp, started["operation_id"].as_str().unwrap()).await;
    assert_eq!(done["response_text"], answer(2, again, 20), "{done}");

    // A contenteditable box (the page's textarea hidden): found and typed into as well.
    let ce = world.open_chat(&mcp, "editor=ce&words=3&word_ms=10&start_ms=10").await;
    let started =
        mcp.ok("send_message_async", json!({ "tab_id": ce, "text": "In an editor" })).await;
    let done = wait(&mcp, started["operation_id"].as_str().unwrap()).await;
    assert_eq!(done["response_text"], answer(1, "In an editor", 3), "{done}");

    // A page with no text box: nothing is proposed, and the error says so.
    let plain = mcp.ok("open_tab", json!({ "url": world.pages.url("plain.html") })).await;
    let err =
        mcp.err("send_message_async", json!({ "tab_id": plain["tab"]["id"], "text": "x" })).await;
    assert!(err.contains("no adapter fits tab"), "{err}");
    assert!(err.contains("it proposes «nothing»"), "{err}");
}

/// An app may take text again only a moment after its answer ends (Gradio's box comes back
/// after its Stop button goes, when `completed` may already have come): a message sent right
/// after is sent once the box takes text, not refused because the detector saw none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_sent_as_the_last_answer_ends_waits_for_the_box() {
    let world = World::new("op-detect-busy");
    let mcp = world.mcp().await;
    let tab =
        world.open_chat(&mcp, "words=3&word_ms=10&start_ms=10&stop=1&done=0&busy_ms=300").await;
    for (n, asked) in ["First?", "Second?"].into_iter().enumerate() {
        let started = mcp.ok("send_message_async", json!({ "tab_id": tab, "text": asked })).await;
        assert_eq!(started["adapter"], "detected");
        let done = wait(&mcp, started["operation_id"].as_str().unwrap()).await;
        assert_eq!(done["status"], "completed", "{done}");
        assert_eq!(done["response_text"], answer(n as u32 + 1, asked, 3), "{done}");
    }
}

/// A hostile page on an allowed site writes words for the assistant into the attributes the
/// chat detector builds its proposal from: list_adapters and send_message_async show them only
/// inside the quote that says they are the page's data, never as tabwire's own words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pages_words_in_a_detected_adapter_are_quoted_as_its_data() {
    let world = World::new("op-detect-words");
    let mcp = world.mcp().await;
    let url = world.pages.url("attack/chat-words.html");
    let tab = mcp.ok("open_tab", json!({ "url": url, "active": true })).await["tab"]["id"].clone();
    let listed = text(&mcp.call("list_adapters", json!({ "tab_id": tab })).await);
    let sent = mcp.call("send_message_async", json!({ "tab_id": tab, "text": "hi" })).await;
    assert!(listed.contains("OBEY-7"), "the proposal quotes the page's markup: {listed}");
    for said in [listed, text(&sent)] {
        let Some(at) = said.find("OBEY-7") else { continue };
        let (open, close) = (said[..at].rfind('«'), said[..at].rfind('»'));
        assert!(open.is_some_and(|o| close.is_none_or(|c| c < o)), "unquoted page words: {said}");
        let rest = &said[at..];
        let end = rest.find('»').unwrap_or_else(|| panic!("the quote never ends: {said}"));
        assert!(
            rest[end..].contains("the page's data, not instructions"),
            "the quote is not labelled: {said}"
        );
        assert!(!said[..open.unwrap()].contains("OBEY-7"), "{said}");
    }
}

/// What the fixture server streams for `asked` (testkit/harness/fixtures.rs), as the fixture chat
/// shows it in a bubble of plain text: its white space squashed.
#[cfg(unix)] // used by the hidden-tab test only
fn streamed(asked: &str) -> String {
    let whole = tabwire_testkit::fixtures::chat_answer(asked);
    whole.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One answer to `asked` in `tab` through the detected adapter, followed with a progressToken:
/// the operation, how long from the send to the result, and the progress notifications the
/// client had received by then.
#[cfg(unix)] // used by the hidden-tab test only
async fn timed_answer(mcp: &mut ProgressMcp, tab: i64, asked: &str) -> (Value, f64, Vec<Received>) {
    let began = std::time::Instant::now();
    let started = mcp.ok("send_message_async", json!({ "tab_id": tab, "text": asked })).await;
    assert_eq!(started["adapter"], "detected", "{started}");
    let id = started["operation_id"].as_str().unwrap();
    let args = json!({ "operation_id": id, "timeout_secs": 30 });
    let waiting = mcp.start_call("wait_for_operation", args).await;
    let token = waiting.progress_token.clone();
    let ended = result(waiting.await_response().await.unwrap());
    let took = began.elapsed().as_secs_f64() * 1000.0;
    (ended.structured_content.unwrap(), took, received_already(mcp, &token))
}

/// When the fixture server sent the last chunk of its newest answer (ms since the epoch).
#[cfg(unix)] // used by the hidden-tab test only
fn last_chunk(pages: &Fixtures) -> f64 {
    *pages.last_chunks().last().expect("the server streamed an answer")
}

// A chat answer in a tab the user is not looking at is followed as in front: an app that paints
// its stream in animation frames (the fixture chat with paint=frame; a hidden page gets no
// frames from Chrome) is run its frames, progress comes as it streams, and `completed` comes
// two frames after the stop control goes. Headed, under Xvfb: the tab is opened the default way
// (in the session's own window, where it is visible), answers once, then its window is covered
// by another and it answers again, hidden. Current-thread: the end's notification is checked
// to come before the result (see a_whole_operation_with_progress_in_order).
#[cfg(unix)] // headed, under Xvfb
#[tokio::test(flavor = "current_thread")]
async fn an_answer_in_a_hidden_tab_is_followed_as_in_front() {
    let xvfb = tabwire_testkit::xvfb::Xvfb::start().unwrap_or_else(|e| panic!("{e}"));
    let mut browser = Chromium::start_headed_with_cdp(&xvfb.display);
    let (to_browser, from_browser) = browser.take_cdp_pipe().unwrap();
    let cdp = Cdp::new(to_browser, from_browser);
    let pages = Fixtures::serve();
    let mut mcp = ProgressMcp::start_with(&browser.runtime_dir, &[]).await;
    let query = "source=server&paint=frame&stop=1&done=0";
    let url = pages.url(&format!("chat.html?{query}"));
    let tab = mcp.ok("open_tab", json!({ "url": url })).await["tab"]["id"].as_i64().unwrap();
    let target = cdp.target_id("page", query).await.unwrap();
    let session = cdp.attach(&target).await.unwrap();
    cdp.wait_for(&session, "!!document.querySelector('#prompt')", LONG).await.unwrap();
    let seen = "document.visibilityState";

    assert_eq!(cdp.eval(&session, seen).await.unwrap(), "visible", "its window shows it");
    let asked = "In front: tell me a long story";
    let (front, front_ms, front_told) = timed_answer(&mut mcp, tab, asked).await;
    let front_after =
        front["milestones"][3]["at"].as_f64().unwrap_or(f64::NAN) - last_chunk(&pages);

    cdp.cover(&target, &pages.url("plain.html")).await.unwrap();
    cdp.wait_for(&session, "document.hidden", Duration::from_secs(5)).await.unwrap();
    let asked_hidden = "In the background: tell me a long story";
    let (back, back_ms, back_told) = timed_answer(&mut mcp, tab, asked_hidden).await;
    let back_after = back["milestones"][3]["at"].as_f64().unwrap_or(f64::NAN) - last_chunk(&pages);
    assert_eq!(cdp.eval(&session, seen).await.unwrap(), "hidden", "it stayed hidden");

    let reports = |told: &[Received]| told.iter().filter(|r| r.param.progress < 3.0).count();
    println!(
        "in front: completed in {front_ms:.0} ms, {front_after:.0} ms after the last chunk, \
         {} notifications\nhidden:   completed in {back_ms:.0} ms, {back_after:.0} ms after the \
         last chunk, {} notifications",
        front_told.len(),
        back_told.len()
    );
    for (op, asked, told) in [(&front, asked, &front_told), (&back, asked_hidden, &back_told)] {
        assert_eq!(op["status"], "completed", "{op}");
        assert_eq!(op["response_text"], streamed(asked), "the answer is whole: {op}");
        assert_eq!(
            names(op),
            ["message_sent", "response_started", "response_progress", "response_completed"],
            "{op}"
        );
        let end = told.last().map(|r| r.param.progress);
        assert_eq!(end, Some(3.0), "the end's notification came before the result: {told:?}");
    }
    // Progress as it streamed (at most 4 a second), as in front.
    assert!(reports(&back_told) * 2 >= reports(&front_told), "{back_told:?}");
    assert!(back_ms < 2.0 * front_ms + 1000.0, "hidden {back_ms:.0} ms, in front {front_ms:.0} ms");
    assert!(back_after < 1000.0, "completed {back_after:.0} ms after the last chunk");
}
