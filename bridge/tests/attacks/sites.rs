//! Sites the user allows (`specs/security.md`), in real Chromium: a page on a site that is not
//! allowed gets nothing and reaches nothing; `tabwire sites allow` lets it in, `revoke` shuts it
//! out at once; the origin checks follow the tab, not the moment it was chosen; and a hostile
//! page on an allowed site cannot break the assistant's queue.
//!
//! `127.0.0.2` stands in for any website: it is loopback, but not among the default sites.

use std::process::Output;
use std::time::Duration;

use serde_json::{Value, json};
use tabwire_proto::extension_id::EXTENSION_ID;
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp, bins};

/// `tabwire sites …` against this browser, as the user would run it.
fn sites(browser: &Chromium, args: &[&str]) -> Output {
    std::process::Command::new(bins::bin("tabwire"))
        .arg("sites")
        .args(args)
        .env("TABWIRE_RUNTIME_DIR", &browser.runtime_dir)
        .output()
        .expect("run tabwire sites")
}

fn ok(out: Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "tabwire sites failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

async fn open(mcp: &Mcp, url: String) -> Value {
    mcp.ok("open_tab", json!({ "url": url })).await["tab"]["id"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_not_allowed_gets_nothing_and_every_call_fails() {
    let browser = Chromium::start();
    let stranger = Fixtures::serve_on("127.0.0.2");
    let origin = stranger.origin();
    let mcp = Mcp::start(&browser.runtime_dir).await;

    let listed = ok(sites(&browser, &["list"]));
    assert!(
        listed.contains("http://127.0.0.1:*") && listed.contains("http://localhost:*"),
        "{listed}"
    );
    assert!(!listed.contains("127.0.0.2"), "{listed}");

    let tab = open(&mcp, stranger.url("probe.html?name=before")).await;
    let seen = stranger.beacon("before").await;
    assert_eq!(seen, "page=before&tabwire=false&relay=false", "nothing of tabwire in the page");

    // The tab is listed, but not read: origin and path, no query, no title.
    let tabs = mcp.ok("list_tabs", json!({})).await;
    let listed = tabs["tabs"].as_array().unwrap().iter().find(|t| t["id"] == tab).unwrap().clone();
    assert_eq!(listed["allowed"], false, "{listed}");
    assert!(!listed["url"].as_str().unwrap().contains('?'), "{listed}");
    assert_eq!(listed["title"], "", "{listed}");

    for (tool, args) in [
        ("get_state", json!({ "tab_id": tab, "force_refresh": true })),
        ("get_state", json!({ "tab_id": tab })),
        ("send_command", json!({ "tab_id": tab, "type": "add", "payload": { "text": "x" } })),
    ] {
        let err = mcp.err(tool, args).await;
        assert!(err.starts_with("site_not_allowed:"), "{tool}: {err}");
        assert!(err.contains(&origin), "names the origin: {err}");
        assert!(err.contains(&format!("tabwire sites allow {origin}")), "says how: {err}");
        assert!(err.contains("popup"), "{err}");
    }
    // A chat operation with a whole adapter that fits the page, on the explicit tab: refused.
    let adapter = json!({
        "name": "anything", "matches": ["http://127.0.0.2:*/*"], "input": "textarea",
        "submit": "enter", "user_message": ".u", "assistant_message": ".a", "generating": ".g",
    });
    let err = mcp
        .err("send_message_async", json!({ "tab_id": tab, "text": "hi", "adapter": adapter }))
        .await;
    assert!(err.contains("site_not_allowed"), "{err}");

    // The user allows it: after a reload the page has the SDK and works.
    let said = ok(sites(&browser, &["allow", &origin]));
    assert!(said.contains(&format!("allowed {origin}")), "{said}");
    let listed = mcp.ok("list_browsers", json!({})).await;
    let known = listed["browsers"][0]["sites"].clone();
    assert!(known.as_array().unwrap().contains(&json!(origin)), "{known}");
    mcp.ok("navigate", json!({ "tab_id": tab, "url": stranger.url("probe.html?name=after") }))
        .await;
    assert_eq!(stranger.beacon("after").await, "page=after&tabwire=true&relay=true");
    let got = mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    assert_eq!(got["state"]["items"], json!(["first"]), "{got}");
    assert_eq!(got["origin"], origin.as_str(), "{got}");
    let ran = mcp
        .ok("send_command", json!({ "tab_id": tab, "type": "add", "payload": { "text": "x" } }))
        .await;
    assert_eq!(ran["result"]["count"], 2);
    assert_eq!(ran["origin"], origin.as_str());

    // Revoked: it stops at once, with no reload — fresh reads, cached reads and commands.
    let said = ok(sites(&browser, &["revoke", &origin]));
    assert!(said.contains(&format!("revoked {origin}")), "{said}");
    for (tool, args) in [
        ("get_state", json!({ "tab_id": tab })),
        ("get_state", json!({ "tab_id": tab, "force_refresh": true })),
        ("send_command", json!({ "tab_id": tab, "type": "add", "payload": { "text": "y" } })),
    ] {
        let err = mcp.err(tool, args).await;
        assert!(err.starts_with("site_not_allowed:"), "{tool} after revoke: {err}");
    }
    // And what the page still says is refused in the browser.
    let out = sites(&browser, &["revoke", &origin]);
    assert!(!out.status.success(), "revoking twice says it was not there");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_patterns_and_no_browser_get_clear_errors() {
    let browser = Chromium::start();
    for (bad, why) in [
        ("example.com", "has no scheme"),
        ("https://*", "subdomains"),
        ("https://example.com/app", "no path"),
    ] {
        let out = sites(&browser, &["allow", bad]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why) && err.contains("scheme://host[:port]"), "{bad}: {err}");
    }
    let out = std::process::Command::new(bins::bin("tabwire"))
        .args(["sites", "list"])
        .env("TABWIRE_RUNTIME_DIR", bins::scratch_dir("no-browser"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no browser is connected"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tab_that_navigates_to_another_site_is_refused_on_the_next_call() {
    let browser = Chromium::start();
    let home = Fixtures::serve();
    let stranger = Fixtures::serve_on("127.0.0.2");
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, home.url("probe.html?name=home")).await;
    let got = mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    assert_eq!(got["origin"], home.origin().as_str());

    mcp.ok("navigate", json!({ "tab_id": tab, "url": stranger.url("probe.html?name=away") })).await;
    stranger.beacon("away").await;
    for args in [json!({ "tab_id": tab }), json!({ "tab_id": tab, "force_refresh": true })] {
        let err = mcp.err("get_state", args).await;
        assert!(err.starts_with("site_not_allowed:"), "{err}");
        assert!(err.contains(&stranger.origin()), "{err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expected_origin_mismatch_runs_nothing() {
    let browser = Chromium::start();
    let home = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, home.url("probe.html?name=app")).await;
    let elsewhere = "http://localhost:1";

    let err = mcp
        .err(
            "send_command",
            json!({ "tab_id": tab, "type": "add", "payload": { "text": "no" }, "expected_origin": elsewhere }),
        )
        .await;
    assert!(err.starts_with("origin_changed:"), "{err}");
    assert!(err.contains(&home.origin()) && err.contains(elsewhere), "{err}");
    let err = mcp
        .err(
            "get_state",
            json!({ "tab_id": tab, "force_refresh": true, "expected_origin": elsewhere }),
        )
        .await;
    assert!(err.starts_with("origin_changed:"), "{err}");

    let got = mcp
        .ok(
            "get_state",
            json!({ "tab_id": tab, "force_refresh": true, "expected_origin": home.origin() }),
        )
        .await;
    assert_eq!(got["state"]["items"], json!(["first"]), "the handler never ran: {got}");
    // send_command needs its tab: never "whatever is focused".
    let err = mcp.err("send_command", json!({ "type": "add", "payload": { "text": "no" } })).await;
    assert!(err.contains("tab_id"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flood_deep_and_oversize_each_get_their_error_and_nothing_else_is_lost() {
    let browser = Chromium::start();
    let home = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let hostile = open(&mcp, home.url("probe.html?name=hostile")).await;
    let quiet = open(&mcp, home.url("probe.html?name=quiet")).await;
    home.beacon("hostile").await;
    home.beacon("quiet").await;
    mcp.ok("wait_for_state_change", json!({ "timeout_secs": 0 })).await; // the probes' own pings

    // A worker reports to this session while the pages act.
    let me = mcp.ok("get_session", json!({})).await["session_id"].clone();
    let done =
        json!({ "session_id": me, "worker_id": "w1", "status": "success", "message": "done" });
    mcp.ok("notify_completion", done).await;
    mcp.ok("send_command", json!({ "tab_id": quiet, "type": "say", "payload": { "text": "one" } }))
        .await;

    // Deep: refused by the SDK at once, and by the extension when the SDK is bypassed.
    let deep = mcp
        .ok(
            "send_command",
            json!({ "tab_id": hostile, "type": "deep", "payload": { "depth": 200 } }),
        )
        .await;
    assert_eq!(deep["result"]["ok"], false, "{deep}");
    assert!(deep["result"]["message"].as_str().unwrap().contains("64"), "{deep}");
    let raw = mcp
        .ok(
            "send_command",
            json!({ "tab_id": hostile, "type": "raw_deep", "payload": { "depth": 200 } }),
        )
        .await;
    assert_eq!(raw["result"]["code"], "too_deep", "{raw}");
    // Oversize: over 1 MiB for one event.
    let big = mcp
        .ok(
            "send_command",
            json!({ "tab_id": hostile, "type": "big", "payload": { "bytes": 2 * 1024 * 1024 } }),
        )
        .await;
    assert_eq!(big["result"]["ok"], false, "{big}");
    // Flood: far over the per-tab rate.
    let flood = mcp
        .ok("send_command", json!({ "tab_id": hostile, "type": "flood", "payload": { "n": 5000 } }))
        .await;
    let limited = flood["result"]["refused"]["rate_limited"].as_u64().unwrap_or(0);
    assert!(limited > 0, "the flood was rate limited: {flood}");
    mcp.ok("send_command", json!({ "tab_id": quiet, "type": "say", "payload": { "text": "two" } }))
        .await;

    // The worker's report is there, whatever the pages did.
    let worker =
        mcp.ok("wait_for_event", json!({ "types": ["worker_complete"], "timeout_secs": 5 })).await;
    assert_eq!(worker["worker_id"], "w1", "{worker}");

    // Every page event: the quiet tab's two, the hostile tab's accepted ones, and its drop marker.
    tokio::time::sleep(Duration::from_millis(1500)).await; // the extension's drop report
    let mut events = Vec::new();
    loop {
        let got = mcp.ok("wait_for_state_change", json!({ "timeout_secs": 1 })).await;
        if got["timed_out"] == true {
            break;
        }
        events.extend(got["events"].as_array().unwrap().iter().cloned());
    }
    let said: Vec<&Value> = events
        .iter()
        .filter(|e| e["tab_id"] == quiet && e["data"]["said"].is_string())
        .map(|e| &e["data"]["said"])
        .collect();
    assert_eq!(said, [&json!("one"), &json!("two")], "the quiet tab lost nothing");
    for e in events.iter().filter(|e| e["type"] == "page_event") {
        assert_eq!(e["origin"], home.origin().as_str(), "every event names its origin: {e}");
    }
    let flooded =
        events.iter().filter(|e| e["tab_id"] == hostile && e["data"]["kind"] == "flood").count();
    assert_eq!(flooded as u64 + limited, 5000, "each flood event arrived or was refused");
    let marker = events.iter().find(|e| e["type"] == "dropped" && e["tab_id"] == hostile);
    assert!(marker.is_some(), "the hostile tab's loss is told: {events:?}");
    assert!(events.iter().all(|e| e["type"] != "dropped" || e["tab_id"] == hostile));
}

/// Chrome's own "Site access" setting for tabwire, set as the user sets it on
/// `chrome://extensions/?id=…` (Details → Site access: "On specific sites" and its sites):
/// through that page's own `chrome.developerPrivate` calls, the ones its controls make. Only
/// `sites` are left to tabwire (Chrome's patterns, `http://127.0.0.1/*`: any port). As in the
/// page, Chrome first withholds every site, then grants those.
async fn chrome_site_access(cdp: &Cdp, sites: &[&str]) {
    let page = cdp
        .open(&format!("chrome://extensions/?id={EXTENSION_ID}"))
        .await
        .unwrap_or_else(|e| panic!("open chrome://extensions: {e}"));
    let ready = "typeof chrome.developerPrivate?.updateExtensionConfiguration === 'function'";
    cdp.wait_for(&page, ready, Duration::from_secs(5)).await.expect("chrome://extensions loaded");
    let set = format!(
        r#"(async () => {{
            await chrome.developerPrivate.updateExtensionConfiguration({{ extensionId: {EXTENSION_ID:?}, hostAccess: "ON_SPECIFIC_SITES" }});
            for (const site of {sites:?}) await chrome.developerPrivate.addHostPermission({EXTENSION_ID:?}, site);
            const info = await chrome.developerPrivate.getExtensionInfo({EXTENSION_ID:?});
            return info.permissions.runtimeHostPermissions.hosts.filter((h) => h.granted).map((h) => h.host);
        }})()"#
    );
    let granted = cdp.eval(&page, &set).await.unwrap_or_else(|e| panic!("set Site access: {e}"));
    assert_eq!(granted, json!(sites), "Chrome shows the sites it grants tabwire");
}

/// The sites `tabwire sites --json` lists for the one browser.
fn listed(browser: &Chromium) -> Vec<String> {
    let out: Value = serde_json::from_str(&ok(sites(browser, &["list", "--json"]))).unwrap();
    let list = out[0]["sites"].as_array().unwrap_or_else(|| panic!("no sites in {out}"));
    list.iter().map(|s| s.as_str().unwrap().to_owned()).collect()
}

async fn until_listed(browser: &Chromium, want: &[&str]) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let now = listed(browser);
        if now == want {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "tabwire sites lists {now:?}, not {want:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_the_user_takes_from_tabwire_in_chromes_settings_is_revoked_in_tabwire() {
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to_browser, from_browser);
    let home = Fixtures::serve();
    let stranger = Fixtures::serve_on("127.0.0.2");
    let origin = stranger.origin();
    let mcp = Mcp::start(&browser.runtime_dir).await;

    ok(sites(&browser, &["allow", &origin]));
    let tab = open(&mcp, stranger.url("probe.html?name=chrome")).await;
    assert_eq!(stranger.beacon("chrome").await, "page=chrome&tabwire=true&relay=true");
    let mine = open(&mcp, home.url("probe.html?name=home")).await;
    home.beacon("home").await;
    mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;

    // In Chrome's settings the user leaves tabwire only 127.0.0.1.
    chrome_site_access(&cdp, &["http://127.0.0.1/*"]).await;
    until_listed(&browser, &["http://127.0.0.1:*"]).await;
    for args in [json!({ "tab_id": tab }), json!({ "tab_id": tab, "force_refresh": true })] {
        let err = mcp.err("get_state", args).await;
        assert!(err.starts_with("site_not_allowed:") && err.contains(&origin), "{err}");
    }
    let got = mcp.ok("get_state", json!({ "tab_id": mine, "force_refresh": true })).await;
    assert_eq!(got["origin"], home.origin().as_str(), "what Chrome still grants works: {got}");

    // Chrome's grants and tabwire's list agree.
    let page = cdp.open(&format!("chrome-extension://{EXTENSION_ID}/ui/popup.html")).await.unwrap();
    let granted = cdp.wait_for(&page, "chrome.permissions.getAll()", Duration::from_secs(5)).await;
    assert_eq!(granted.unwrap()["origins"], json!(["http://127.0.0.1/*"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_chrome_does_not_grant_tabwire_cannot_be_allowed_until_it_does() {
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to_browser, from_browser);
    let stranger = Fixtures::serve_on("127.0.0.2");
    let origin = stranger.origin();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    chrome_site_access(&cdp, &["http://127.0.0.1/*"]).await;
    until_listed(&browser, &["http://127.0.0.1:*"]).await;

    let out = sites(&browser, &["allow", &origin]);
    assert!(!out.status.success(), "allowed a site Chrome withholds");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&origin) && err.contains("Site access"), "says why: {err}");
    assert!(err.contains(&format!("chrome://extensions/?id={EXTENSION_ID}")), "and where: {err}");
    assert_eq!(listed(&browser), ["http://127.0.0.1:*"]);

    // The user adds the site in Chrome too: now tabwire may be allowed there, and works.
    chrome_site_access(&cdp, &["http://127.0.0.1/*", "http://127.0.0.2/*"]).await;
    let said = ok(sites(&browser, &["allow", &origin]));
    assert!(said.contains(&format!("allowed {origin}")), "{said}");
    let tab = open(&mcp, stranger.url("probe.html?name=granted")).await;
    assert_eq!(stranger.beacon("granted").await, "page=granted&tabwire=true&relay=true");
    let got = mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    assert_eq!(got["origin"], origin.as_str(), "{got}");
}
