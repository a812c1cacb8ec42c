//! What the extension does while the user browses, in real Chromium with a `tabwire mcp`
//! session attached: on a site not allowed, loading pages runs none of the network log's
//! listeners in the extension's worker; on an allowed one the log still records what the page
//! asked for, of its own origin and of others. The timings are
//! bridge/benches/browser/page_cost.rs's.
//!
//! `127.0.0.2` stands in for any website the user did not allow.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::json;
use tabwire_tests::{Cdp, Chromium, Fixtures, Mcp};

/// A browser with a CDP pipe (the user's side, and the worker's call counts), and
/// `tabwire mcp` on it.
async fn with_cdp() -> (Chromium, Cdp, Mcp) {
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().unwrap();
    let cdp = Cdp::new(to_browser, from_browser);
    let mcp = Mcp::start(&browser.runtime_dir).await;
    mcp.ok("list_tabs", json!({})).await;
    (browser, cdp, mcp)
}

/// Load `url` in the tab of `session` and wait until it has loaded.
async fn load(cdp: &Cdp, session: &str, url: &str) {
    cdp.call("Page.navigate", json!({ "url": url }), Some(session)).await.unwrap();
    let loaded = format!("location.href === {url:?} && document.readyState === 'complete'");
    cdp.wait_for(session, &loaded, Duration::from_secs(10)).await.unwrap();
}

/// How many times the worker ran each listener of `file` (a function written as the argument
/// of `addListener(`, or `addListener((name = `) since the last take, by its line, from V8's
/// precise coverage (call counts; a take resets them).
async fn listener_runs(cdp: &Cdp, worker: &str, file: &str) -> HashMap<usize, u64> {
    // The file as the browser loaded it.
    let fetch = format!("fetch(chrome.runtime.getURL({file:?})).then((r) => r.text())");
    let source = cdp.eval(worker, &fetch).await.unwrap();
    let source = source.as_str().unwrap();
    let utf16: Vec<u16> = source.encode_utf16().collect();
    let got = cdp.call("Profiler.takePreciseCoverage", json!({}), Some(worker)).await.unwrap();
    let mut out = HashMap::new();
    for script in got["result"].as_array().unwrap() {
        if !script["url"].as_str().unwrap_or("").ends_with(&format!("/{file}")) {
            continue;
        }
        for f in script["functions"].as_array().unwrap() {
            let range = &f["ranges"][0];
            let (start, count) =
                (range["startOffset"].as_u64().unwrap() as usize, range["count"].as_u64().unwrap());
            if count == 0 || start > utf16.len() {
                continue;
            }
            let before = String::from_utf16_lossy(&utf16[start.saturating_sub(60)..start]);
            let before = before.trim_end();
            let listener = before.ends_with("addListener(")
                || before.strip_suffix('=').is_some_and(|b| {
                    let b =
                        b.trim_end().trim_end_matches(|c: char| c.is_alphanumeric() || c == '.');
                    b.ends_with("addListener((")
                });
            if listener {
                let line = String::from_utf16_lossy(&utf16[..start]).lines().count();
                *out.entry(line).or_default() += count;
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browsing_a_site_not_allowed_wakes_no_network_listener_and_allowed_pages_are_still_logged()
{
    let (_browser, cdp, mcp) = with_cdp().await;
    let allowed = Fixtures::serve();
    let stranger = Fixtures::serve_on("127.0.0.2");
    let worker_target = cdp.target_id("service_worker", "/worker/background.js").await.unwrap();
    let worker = cdp.attach(&worker_target).await.unwrap();
    cdp.call("Profiler.enable", json!({}), Some(&worker)).await.unwrap();
    let precise = json!({ "callCount": true, "detailed": false });
    cdp.call("Profiler.startPreciseCoverage", precise, Some(&worker)).await.unwrap();

    // The user browses a site tabwire is not allowed on: page after page, each with its own
    // requests (the console fixture fetches two more). The network log's listeners run not
    // once: the worker is not woken for that site's requests.
    let tab = cdp.open("about:blank").await.unwrap();
    listener_runs(&cdp, &worker, "worker/dom/logs.js").await;
    for n in 0..5 {
        load(&cdp, &tab, &format!("{}?n={n}", stranger.url("extra/console.html"))).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ran = listener_runs(&cdp, &worker, "worker/dom/logs.js").await;
    assert!(ran.is_empty(), "the network log ran on a site not allowed: {ran:?}");

    // The same tab goes to an allowed site: its requests are logged from the document's own
    // request on, those it makes to other origins too.
    let page = allowed.url("extra/console.html");
    load(&cdp, &tab, &page).await;
    let ran = listener_runs(&cdp, &worker, "worker/dom/logs.js").await;
    assert!(!ran.is_empty(), "the network log heard nothing of an allowed page");
    let listed = mcp.ok("list_tabs", json!({})).await;
    let id = listed
        .as_array()
        .or(listed["tabs"].as_array())
        .unwrap()
        .iter()
        .find(|t| t["url"].as_str().is_some_and(|u| u.starts_with(&page)))
        .unwrap_or_else(|| panic!("the tab in {listed}"))["id"]
        .as_i64()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let got = loop {
        let got = mcp.ok("network_requests", json!({ "tab_id": id })).await;
        let done = got["requests"].as_array().unwrap().iter().filter(|r| !r["status"].is_null());
        if done.count() >= 3 {
            break got;
        }
        assert!(Instant::now() < deadline, "the requests were not all logged: {got:#}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let urls: Vec<&str> =
        got["requests"].as_array().unwrap().iter().map(|r| r["url"].as_str().unwrap()).collect();
    assert!(
        urls.iter().any(|u| u.contains("console.html"))
            && urls.iter().any(|u| u.contains("data.json"))
            && urls.iter().any(|u| u.contains("missing.json")),
        "{urls:?}"
    );
    // A request the allowed page makes to another origin is its own, and logged as such.
    let elsewhere = format!("{}?from=allowed", stranger.url("plain.html"));
    let fetch = format!("fetch({elsewhere:?}, {{ mode: 'no-cors' }}).then(() => true)");
    cdp.eval(&tab, &fetch).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let got = loop {
        let got =
            mcp.ok("network_requests", json!({ "tab_id": id, "filter": "from=allowed" })).await;
        if got["requests"].as_array().unwrap().iter().any(|r| !r["status"].is_null()) {
            break got;
        }
        assert!(Instant::now() < deadline, "the request to another origin was not logged: {got:#}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(got["requests"][0]["origin"], allowed.origin(), "{got:#}");
    // Nothing of what the tab loaded while it showed the site not allowed.
    let all = mcp.ok("network_requests", json!({ "tab_id": id, "limit": 500 })).await;
    let origins: Vec<&str> =
        all["requests"].as_array().unwrap().iter().map(|r| r["origin"].as_str().unwrap()).collect();
    assert!(origins.iter().all(|o| *o == allowed.origin()), "{all:#}");
}
