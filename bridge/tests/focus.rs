//! The user's focus stays where the user put it: no tool brings a tab forward or focuses a
//! window unless the call asks for it (`open_tab {active: true}`, `activate_tab`). The assistant
//! works in background tabs while the user keeps typing in theirs.

use serde_json::{Value, json};
use tabwire_tests::{Chromium, Fixtures, Mcp};

/// The active tab of each window and which window has the focus, as list_tabs reports them.
async fn focus(mcp: &Mcp) -> Vec<(Value, Value, Value)> {
    let listed = mcp.ok("list_tabs", json!({})).await;
    let mut active: Vec<_> = listed["tabs"]
        .as_array()
        .unwrap_or_else(|| panic!("tabs in {listed}"))
        .iter()
        .filter(|t| t["active"] == true)
        .map(|t| (t["window_id"].clone(), t["id"].clone(), t["window_focused"].clone()))
        .collect();
    active.sort_by_key(|a| a.0.to_string());
    active
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_tool_takes_the_users_focus_unless_asked() {
    let browser = Chromium::start();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;

    // The user's own tab, in front.
    let mine = mcp.ok("open_tab", json!({ "url": pages.url("plain.html"), "active": true })).await;
    let mine = mine["tab"]["id"].clone();
    let before = focus(&mcp).await;
    assert!(before.iter().any(|(_, id, _)| *id == mine), "the user's tab is in front: {before:?}");

    let opened = mcp.ok("open_tab", json!({ "url": pages.url("plain.html") })).await;
    assert_eq!(opened["tab"]["active"], false, "{opened}");
    let tab = opened["tab"]["id"].clone();
    assert_eq!(focus(&mcp).await, before, "after open_tab");

    let steps: [(&str, Value); 6] = [
        ("navigate", json!({ "tab_id": tab, "url": pages.url("dom/form.html") })),
        ("read_page", json!({ "tab_id": tab })),
        (
            "fill",
            json!({ "tab_id": tab, "fields": [{ "selector": "input[name=name]", "value": "Ada" }] }),
        ),
        ("click", json!({ "tab_id": tab, "selector": "button[type=submit]" })),
        ("find", json!({ "tab_id": tab, "text": "Ada" })),
        ("wait_for", json!({ "tab_id": tab, "text": "Ada" })),
    ];
    for (tool, args) in steps {
        let result = mcp.call(tool, args).await;
        let said = tabwire_tests::mcp::text(&result);
        assert_ne!(result.is_error, Some(true), "{tool}: {said}");
        assert_eq!(focus(&mcp).await, before, "after {tool}");
    }

    // A screenshot shows what is on screen: of a background tab it says what to do instead of
    // bringing the tab forward.
    let err = mcp.err("screenshot", json!({ "tab_id": tab })).await;
    assert!(err.contains("activate_tab"), "{err}");
    assert_eq!(focus(&mcp).await, before, "after screenshot");

    // Asked, it does.
    mcp.ok("activate_tab", json!({ "tab_id": tab })).await;
    let after = focus(&mcp).await;
    assert!(after.iter().any(|(_, id, _)| *id == tab), "activate_tab brings it forward: {after:?}");
}
