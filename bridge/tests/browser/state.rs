//! get_state's cache through real Chromium: where a state came from and how old it is, what
//! makes the copy stale or drops it, and what a page that never answers does to a read.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tabwire_testkit::{Chromium, Fixtures, Mcp};

async fn open(mcp: &Mcp, url: String) -> Value {
    // In front: `get_state` without a tab_id reads the active tab.
    mcp.ok("open_tab", json!({ "url": url, "active": true })).await["tab"]["id"].clone()
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_fresh_stale_and_commands() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, pages.url("app.html")).await;

    // Fresh, then the same state from the cache, with its age.
    let before = now_ms();
    let fresh = mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    assert_eq!(fresh["source"], "fresh", "{fresh}");
    assert_eq!(fresh["age_ms"], 0);
    assert_eq!(fresh["tab_id"], tab);
    let fetched_at = fresh["fetched_at"].as_u64().unwrap();
    assert!(fetched_at >= before && fetched_at <= now_ms(), "{fetched_at} vs {before}");
    tokio::time::sleep(Duration::from_millis(30)).await;
    let cached = mcp.ok("get_state", json!({ "tab_id": tab })).await;
    assert_eq!(cached["source"], "cache", "{cached}");
    assert_eq!(cached["state"], fresh["state"]);
    assert_eq!(cached["fetched_at"], fresh["fetched_at"]);
    assert!(cached["age_ms"].as_u64().unwrap() >= 30, "{cached}");
    assert!(cached.get("warning").is_none());

    // A part of it, by JSON Pointer; a path that is not there says what is.
    let first = mcp.ok("get_state", json!({ "tab_id": tab, "path": "/items/0" })).await;
    assert_eq!(first["state"], "first");
    assert_eq!(first["path"], "/items/0");
    let err = mcp.err("get_state", json!({ "tab_id": tab, "path": "/nope" })).await;
    assert!(err.starts_with("bad_request") && err.contains("items"), "{err}");

    // A command: the page publishes its new state before the reply, so the cache has it.
    mcp.ok(
        "send_command",
        json!({ "tab_id": tab, "type": "add", "payload": { "text": "second" } }),
    )
    .await;
    let after = mcp.ok("get_state", json!({ "tab_id": tab })).await;
    assert_eq!(after["source"], "cache");
    assert_eq!(after["state"]["items"], json!(["first", "second"]), "{after}");

    // A change the page makes without telling: the cache is stale until a forced read.
    mcp.ok(
        "send_command",
        json!({ "tab_id": tab, "type": "change_later", "payload": { "text": "by hand", "ms": 20 } }),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let stale = mcp.ok("get_state", json!({ "tab_id": tab })).await;
    assert_eq!(stale["source"], "cache");
    assert_eq!(stale["state"]["items"], json!(["first", "second"]), "stale: {stale}");
    let forced = mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    assert_eq!(forced["source"], "fresh");
    assert_eq!(forced["state"]["items"], json!(["first", "second", "by hand"]));
    let cached = mcp.ok("get_state", json!({ "tab_id": tab })).await;
    assert_eq!(cached["state"], forced["state"], "the forced read refreshed the cache");

    // A page without provideState publishes with setState in its handler: same outcome.
    let manual = open(&mcp, pages.url("app.html?mode=manual")).await;
    mcp.ok("send_command", json!({ "tab_id": manual, "type": "add", "payload": { "text": "m" } }))
        .await;
    let got = mcp.ok("get_state", json!({ "tab_id": manual })).await;
    assert_eq!(got["source"], "cache");
    assert_eq!(got["state"]["items"], json!(["first", "m"]));

    // No tab_id: the active tab (the last one opened).
    let active = mcp.ok("get_state", json!({})).await;
    assert_eq!(active["tab_id"], manual, "{active}");

    // Another document in the tab drops the copy: that page does not use tabwire at all.
    mcp.ok("navigate", json!({ "tab_id": tab, "url": pages.url("app.html?mode=none") })).await;
    let err = mcp.err("get_state", json!({ "tab_id": tab })).await;
    assert!(err.starts_with("no_handler"), "not the old document's copy: {err}");

    // A closed tab drops it too.
    mcp.ok("close_tab", json!({ "tab_id": manual })).await;
    let err = mcp.err("get_state", json!({ "tab_id": manual })).await;
    assert!(err.starts_with("no_such_tab") && err.contains("cannot read the state"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_never_answers() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, pages.url("app.html?mode=silent")).await;

    // Nothing cached: the timeout is the answer, and it says why.
    let started = Instant::now();
    let err = mcp.err("get_state", json!({ "tab_id": tab, "timeout_ms": 300 })).await;
    assert!(err.starts_with("timeout:") && err.contains("300 ms"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());

    // A page that published once (setState) but whose provider never answers: a forced read
    // times out and falls back to the copy, with a warning.
    let tab = open(&mcp, pages.url("app.html?mode=silent&publish")).await;
    let got = mcp
        .ok("get_state", json!({ "tab_id": tab, "force_refresh": true, "timeout_ms": 300 }))
        .await;
    assert_eq!(got["source"], "cache", "{got}");
    assert_eq!(got["state"]["items"], json!(["first"]));
    let warning = got["warning"].as_str().expect("a warning");
    assert!(warning.contains("timeout") && warning.contains("cached copy"), "{warning}");

    // Bad input is refused before anything reaches the page.
    let err = mcp.err("get_state", json!({ "tab_id": tab, "timeout_ms": 0 })).await;
    assert!(err.starts_with("bad_request") && err.contains("timeout_ms"), "{err}");
}
