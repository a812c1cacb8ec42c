//! Real Chromium, real extension, real host, real `tabwire mcp`, driven by rmcp's client:
//! the tab tools do what they say.

use serde_json::{Value, json};
use tabwire_testkit::{Chromium, Fixtures, Mcp};

fn tabs(list: &Value) -> Vec<Value> {
    list["tabs"].as_array().cloned().unwrap_or_else(|| panic!("no tabs array in {list}"))
}

fn find<'a>(tabs: &'a [Value], id: &Value) -> Option<&'a Value> {
    tabs.iter().find(|t| &t["id"] == id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_navigate_activate_close() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;

    let browsers = mcp.ok("list_browsers", json!({})).await;
    let list = browsers["browsers"].as_array().expect("browsers array");
    assert_eq!(list.len(), 1, "one browser attached: {browsers}");
    assert_eq!(list[0]["browser"], "chromium", "{browsers}");

    let plain = mcp.ok("open_tab", json!({ "url": pages.url("plain.html"), "active": true })).await;
    let plain_id = plain["tab"]["id"].clone();
    assert!(plain_id.is_i64(), "open_tab returns the new tab: {plain}");
    assert_eq!(plain["tab"]["title"], "Plain page");

    let listed = tabs(&mcp.ok("list_tabs", json!({})).await);
    let tab = find(&listed, &plain_id).expect("list_tabs sees the new tab");
    assert_eq!(tab["url"], pages.url("plain.html"));
    assert_eq!(tab["active"], true);
    assert_eq!(tab["status"], "complete");

    let moved = mcp
        .ok("navigate", json!({ "tab_id": plain_id, "url": pages.url("app.html"), "wait": "load" }))
        .await;
    assert_eq!(moved["tab"]["title"], "Fixture app", "{moved}");

    let second =
        mcp.ok("open_tab", json!({ "url": pages.url("plain.html"), "active": true })).await;
    let second_id = second["tab"]["id"].clone();
    let listed = tabs(&mcp.ok("list_tabs", json!({})).await);
    assert_eq!(find(&listed, &second_id).unwrap()["active"], true);
    assert_eq!(find(&listed, &plain_id).unwrap()["active"], false);

    mcp.ok("activate_tab", json!({ "tab_id": plain_id })).await;
    let listed = tabs(&mcp.ok("list_tabs", json!({})).await);
    assert_eq!(find(&listed, &plain_id).unwrap()["active"], true);
    assert_eq!(find(&listed, &second_id).unwrap()["active"], false);

    mcp.ok("close_tab", json!({ "tab_id": second_id })).await;
    let listed = tabs(&mcp.ok("list_tabs", json!({})).await);
    assert!(find(&listed, &second_id).is_none(), "closed tab is gone: {listed:?}");

    let err = mcp.err("close_tab", json!({ "tab_id": second_id })).await;
    assert!(err.contains("no_such_tab"), "closing it again names the problem: {err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_browser_answers_at_once() {
    let dir = tabwire_testkit::bins::scratch_dir("nob");
    let mcp = Mcp::start(&dir.join("run")).await;
    let started = std::time::Instant::now();
    let err = mcp.err("list_tabs", json!({})).await;
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
    assert!(
        err.contains(
            "no browser is connected: start Chrome with the tabwire extension, then run `tabwire doctor`"
        ),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
