//! A page that rewrites the built-ins of its own JavaScript world — the ones a reader of the
//! page would call — changes nothing of what tabwire reports: tabwire reads in the extension's
//! isolated world, where the page's rewrites do not reach.

use serde_json::json;
use tabwire_testkit::{Chromium, Fixtures, Mcp};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_rewrites_the_performance_api_cannot_break_or_forge_page_timing() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let opened = mcp.ok("open_tab", json!({ "url": pages.url("attack/timing.html") })).await;
    let tab = opened["tab"]["id"].clone();
    let ready = json!({ "tab_id": tab, "text": "ready", "timeout_ms": 10_000 });
    assert_eq!(mcp.ok("wait_for", ready).await["met"], true);

    // The page's world answers junk of every type now; the timing is still the browser's own.
    let timing = mcp.ok("page_timing", json!({ "tab_id": tab })).await;
    assert_eq!(timing["origin"], pages.origin().as_str(), "{timing}");
    let navigation = &timing["navigation"];
    assert_eq!(navigation["type"], "navigate", "{timing}");
    for ms in ["ttfb", "dom_content_loaded", "load", "duration"] {
        let v = navigation[ms].as_f64().unwrap_or_else(|| panic!("{ms}: {timing}"));
        assert!((0.0..60_000.0).contains(&v), "{ms}: {timing}");
    }
    let now = timing["now"].as_f64().unwrap_or_else(|| panic!("{timing}"));
    assert!(now >= navigation["load"].as_f64().unwrap(), "{timing}");
    assert!(timing["cumulative_layout_shift"].as_f64().is_some_and(f64::is_finite), "{timing}");
    // The request the page made, by the name the browser gave it (beside its favicon's).
    let resources = &timing["resources"];
    assert!(resources["count"].as_u64().is_some_and(|n| n >= 1), "{timing}");
    let slowest = resources["slowest"].as_array().unwrap_or_else(|| panic!("{timing}"));
    assert!(
        slowest.iter().any(|r| r["url"].as_str().is_some_and(|u| u.ends_with("/plain.html"))
            && r["type"] == "fetch"),
        "{timing}"
    );
}
