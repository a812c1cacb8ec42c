//! What the extension does while the user browses, in real Chromium with a `tabwire mcp`
//! session attached: on a site not allowed, loading pages runs none of the extension worker's
//! code (no tab or group listener, and no permission that routes requests through the
//! extension); on an allowed one the session is still told of the tab's loads by `tab` events,
//! and the page keeps its own requests, of its own origin and of others, for the assistant to
//! read. The timings are bridge/benches/browser/page_cost.rs's.
//!
//! `127.0.0.2` stands in for any website the user did not allow.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp, bins};

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

/// The extension holds neither `webRequest` nor `declarativeNetRequest*`: with either, Chrome
/// routes every request of every page in the browser through the extension's proxy, a cost on
/// each load of any site (docs/performance.md). A page's requests are still there for the
/// assistant, from its own record: one the user loaded before any call has its whole load.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_permission_routes_the_browsers_requests_and_a_page_keeps_its_own() {
    let manifest: Value = serde_json::from_slice(
        &std::fs::read(bins::repo_root().join("extension/manifest.json")).unwrap(),
    )
    .unwrap();
    let all: Vec<&str> = ["permissions", "optional_permissions"]
        .iter()
        .flat_map(|k| manifest[k].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    assert!(
        !all.iter().any(|p| p.starts_with("webRequest") || p.starts_with("declarative")),
        "{all:?}"
    );

    let (_browser, cdp, mcp) = with_cdp().await;
    let allowed = Fixtures::serve();
    let stranger = Fixtures::serve_on("127.0.0.2");
    // The user browses a site tabwire is not allowed on, then an allowed one, in their own tab.
    let tab = cdp.open("about:blank").await.unwrap();
    for n in 0..2 {
        load(&cdp, &tab, &format!("{}?n={n}", stranger.url("extra/console.html"))).await;
    }
    let page = format!("{}?n=user", allowed.url("extra/console.html"));
    load(&cdp, &tab, &page).await;

    // The assistant asks only now: the page's load and its requests are all there.
    let listed = mcp.ok("list_tabs", json!({})).await;
    let id = listed
        .as_array()
        .or(listed["tabs"].as_array())
        .unwrap()
        .iter()
        .find(|t| t["url"].as_str().is_some_and(|u| page.starts_with(u)))
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
        assert!(Instant::now() < deadline, "the requests are not all there: {got:#}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(got["load_recorded"], true, "{got:#}");
    let status = |part: &str| {
        got["requests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["url"].as_str().unwrap().contains(part))
            .unwrap_or_else(|| panic!("{part} in {got:#}"))["status"]
            .clone()
    };
    assert_eq!(
        (status("console.html"), status("data.json"), status("missing.json")),
        (json!(200), json!(200), json!(404))
    );
    // A request the allowed page makes to another origin is its own, and listed as such once
    // it ended (its status is the other origin's to show: without CORS, the browser hides it).
    let elsewhere = format!("{}?from=allowed", stranger.url("plain.html"));
    let fetch = format!("fetch({elsewhere:?}, {{ mode: 'no-cors' }}).then(() => true)");
    cdp.eval(&tab, &fetch).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let got = loop {
        let got =
            mcp.ok("network_requests", json!({ "tab_id": id, "filter": "from=allowed" })).await;
        if got["requests"].as_array().unwrap().iter().any(|r| !r["ms"].is_null()) {
            break got;
        }
        assert!(Instant::now() < deadline, "the request to another origin is not listed: {got:#}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(got["requests"][0]["origin"], allowed.origin(), "{got:#}");
    // Nothing of what the tab loaded while it showed the site not allowed.
    let all = mcp.ok("network_requests", json!({ "tab_id": id, "limit": 500 })).await;
    let origins: Vec<&str> =
        all["requests"].as_array().unwrap().iter().map(|r| r["origin"].as_str().unwrap()).collect();
    assert!(origins.iter().all(|o| *o == allowed.origin()), "{all:#}");
}

/// Every function of the worker's own scripts that ran since the last take, as "file:line"
/// (V8's precise coverage call counts; a take resets them).
async fn worker_ran(cdp: &Cdp, worker: &str) -> Vec<String> {
    let got = cdp.call("Profiler.takePreciseCoverage", json!({}), Some(worker)).await.unwrap();
    let mut ran = Vec::new();
    for script in got["result"].as_array().unwrap() {
        let url = script["url"].as_str().unwrap_or("");
        if !url.starts_with("chrome-extension://") {
            continue;
        }
        let mut source: Option<Vec<u16>> = None;
        for f in script["functions"].as_array().unwrap() {
            let range = &f["ranges"][0];
            let (start, count) =
                (range["startOffset"].as_u64().unwrap() as usize, range["count"].as_u64().unwrap());
            // The script's top level runs once, when it loads.
            if count == 0 || f["functionName"] == "" && start == 0 {
                continue;
            }
            if source.is_none() {
                let fetch = format!("fetch({url:?}).then((r) => r.text())");
                let text = cdp.eval(worker, &fetch).await.unwrap();
                source = Some(text.as_str().unwrap().encode_utf16().collect());
            }
            let utf16 = source.as_ref().unwrap();
            let line = String::from_utf16_lossy(&utf16[..start.min(utf16.len())]).lines().count();
            let file = url.splitn(4, '/').nth(3).unwrap_or(url);
            ran.push(format!(
                "{file}:{line} {} ×{count}",
                f["functionName"].as_str().unwrap_or("")
            ));
        }
    }
    ran
}

/// The `tab` events about tab `id` the session has been told of, until one satisfies `until`
/// (or `secs` pass without a new one); all of them, in order.
async fn tab_events(mcp: &Mcp, id: i64, secs: u64, until: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let e = mcp.ok("wait_for_event", json!({ "types": ["tab"], "timeout_secs": secs })).await;
        if e["type"] == "timeout" {
            return seen;
        }
        if e["tab_id"] == id {
            let done = until(&e["data"]);
            seen.push(e["data"].clone());
            if done {
                return seen;
            }
        }
    }
}

/// The extension's id of the tab that shows `url`.
async fn tab_showing(mcp: &Mcp, url: &str) -> i64 {
    let listed = mcp.ok("list_tabs", json!({})).await;
    listed
        .as_array()
        .or(listed["tabs"].as_array())
        .unwrap()
        .iter()
        .find(|t| t["url"].as_str().is_some_and(|u| u.starts_with(url)))
        .unwrap_or_else(|| panic!("the tab of {url} in {listed}"))["id"]
        .as_i64()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browsing_a_site_not_allowed_runs_none_of_the_workers_code_and_allowed_tabs_are_still_told()
{
    let (_browser, cdp, mcp) = with_cdp().await;
    let allowed = Fixtures::serve();
    let stranger = Fixtures::serve_on("127.0.0.2");
    let worker_target = cdp.target_id("service_worker", "/worker/background.js").await.unwrap();
    let worker = cdp.attach(&worker_target).await.unwrap();
    cdp.call("Profiler.enable", json!({}), Some(&worker)).await.unwrap();
    let precise = json!({ "callCount": true, "detailed": false });
    cdp.call("Profiler.startPreciseCoverage", precise, Some(&worker)).await.unwrap();

    // The user browses a site tabwire is not allowed on, page after page (each with requests of
    // its own): not one function of the worker runs — no tab, group or network listener wakes.
    let tab = cdp.open("about:blank").await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    worker_ran(&cdp, &worker).await;
    for n in 0..5 {
        load(&cdp, &tab, &format!("{}?n={n}", stranger.url("extra/console.html"))).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ran = worker_ran(&cdp, &worker).await;
    assert!(ran.is_empty(), "the worker ran on loads of a site not allowed: {ran:#?}");

    // The same tab goes to an allowed site: the session is told, with its url and title, up to
    // its load's end.
    let page = allowed.url("app.html");
    load(&cdp, &tab, &page).await;
    let id = tab_showing(&mcp, &page).await;
    // Until the load's end (an `activated` event, also `complete`, may come in between).
    let told =
        tab_events(&mcp, id, 5, |d| d["kind"] == "updated" && d["status"] == "complete").await;
    let last = told.last().unwrap_or_else(|| panic!("no tab event about tab {id}"));
    assert_eq!(
        (&last["kind"], &last["status"], &last["url"]),
        (&json!("updated"), &json!("complete"), &json!(page)),
        "{told:#?}"
    );
    assert!(last["title"].as_str().is_some_and(|t| !t.is_empty()), "{told:#?}");
    assert!(told.iter().any(|d| d["status"] == "loading" && d["url"] == page), "{told:#?}");

    // It leaves for the site not allowed: told once, by status only (the session forgets the
    // page), and its loads there run nothing again — once the network log stopped hearing the
    // tab (it does 3 s after, for the old page's last requests: dom/logs.js `LEAVE_MS`).
    load(&cdp, &tab, &stranger.url("plain.html")).await;
    let told = tab_events(&mcp, id, 5, |d| d.get("url").is_none()).await;
    let left = told.last().unwrap_or_else(|| panic!("no tab event about tab {id} leaving"));
    assert_eq!(left, &json!({ "kind": "updated", "status": "loading" }), "{told:#?}");
    tokio::time::sleep(Duration::from_millis(3500)).await;
    worker_ran(&cdp, &worker).await;
    for n in 0..3 {
        load(&cdp, &tab, &format!("{}?m={n}", stranger.url("extra/console.html"))).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ran = worker_ran(&cdp, &worker).await;
    assert!(ran.is_empty(), "the worker ran on loads of a site not allowed: {ran:#?}");
    let told = tab_events(&mcp, id, 0, |_| false).await;
    assert!(told.is_empty(), "told of loads on a site not allowed: {told:#?}");
}
