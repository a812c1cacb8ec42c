//! The webdev tools about requests and the page as a whole, in real Chromium through the real
//! `tabwire mcp`: requests blocked and mocked with Chrome's declarativeNetRequest session rules
//! (only to allowed sites, only by the session that made them, gone when it ends), the window
//! resized to a device's viewport, the page's own timing, and the page printed to PDF (only under
//! the site's "Trusted input" switch). What a test checks is what the page itself sees: the
//! fixture's title says what its fetch got, whether its script ran, and its viewport.
//!
//! `127.0.0.2` stands in for any website the user did not allow.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tabwire_proto::extension_id::EXTENSION_ID;
use tabwire_testkit::mcp::assert_refused;
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp, bins};

fn ids(v: &Value) -> Vec<i64> {
    v["rules"].as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()).collect()
}

const REAL: &str = r#"api 200 {"user":"real"}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_are_blocked_and_mocked_for_the_session_that_asked_until_it_ends() {
    let browser = Chromium::start();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let pages = Fixtures::serve();
    let origin = pages.origin();
    let page = pages.url("webdev/network.html");
    let tab = mcp.open_tab(&page).await;
    mcp.title_with(tab, &[REAL, "config ok"]).await;

    // The API's fetch answered with a body of the assistant's, the settings' XHR blocked, from
    // the page's first request on (a reload).
    let mock = json!({
        "action": "mock", "tab_id": tab, "url_pattern": format!("{}*", pages.url("webdev/api.json")),
        "body": r#"{"user":"mocked"}"#
    });
    let made = mcp.ok("network_rules", mock.clone()).await;
    let mocked = made["rules"][0]["id"].as_i64().unwrap_or_else(|| panic!("a rule in {made}"));
    assert_eq!(made["rules"][0]["content_type"], "application/json", "{made}");
    let block =
        json!({ "action": "block", "tab_id": tab, "url_pattern": pages.url("webdev/config.json") });
    let blocked = ids(&mcp.ok("network_rules", block).await)[0];
    mcp.reload(tab, &page, &[r#"api 200 {"user":"mocked"}"#, "config failed"]).await;
    let listed = mcp.ok("network_rules", json!({ "action": "list" })).await;
    assert_eq!(ids(&listed), [mocked, blocked], "{listed}");

    // Removing the mock restores the real answer; the block stays.
    let left = mcp.ok("network_rules", json!({ "action": "remove", "rule_id": mocked })).await;
    assert_eq!((left["removed"].as_u64(), ids(&left)), (Some(1), vec![blocked]), "{left}");
    mcp.reload(tab, &page, &[REAL, "config failed"]).await;

    // Another session sees none of these rules and cannot remove them; its own go when it ends.
    let other = Mcp::start(&browser.runtime_dir).await;
    let listed = other.ok("network_rules", json!({ "action": "list" })).await;
    assert_eq!(ids(&listed), Vec::<i64>::new(), "{listed}");
    let err = other.err("network_rules", json!({ "action": "remove", "rule_id": blocked })).await;
    assert!(err.starts_with("bad_request:") && err.contains("no network rule"), "{err}");
    let theirs = other.open_tab(&page).await;
    other.title_with(theirs, &[REAL]).await;
    let mut mock = mock;
    mock["tab_id"] = json!(theirs);
    other.ok("network_rules", mock).await;
    other.reload(theirs, &page, &[r#"api 200 {"user":"mocked"}"#, "config ok"]).await;
    other.client.cancel().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        mcp.ok("navigate", json!({ "tab_id": theirs, "url": page, "wait": "load" })).await;
        let title = mcp.title_with(theirs, &["api 200"]).await;
        if title.contains(REAL) {
            break;
        }
        assert!(Instant::now() < deadline, "the ended session's rule is still there: {title}");
    }
    let listed = mcp.ok("network_rules", json!({ "action": "list" })).await;
    assert_eq!(ids(&listed), [blocked], "this session's rule stays: {listed}");

    // Offline: every fetch and XHR of the page to its origin fails; online again.
    let off = mcp.ok("network_rules", json!({ "action": "offline", "tab_id": tab })).await;
    assert_eq!(off["rules"][0]["url_pattern"], format!("{origin}/*"), "{off}");
    mcp.reload(tab, &page, &["api failed (Failed to fetch)", "config failed"]).await;
    let on = mcp.ok("network_rules", json!({ "action": "online", "tab_id": tab })).await;
    assert_eq!((on["removed"].as_u64(), ids(&on)), (Some(1), vec![blocked]), "{on}");
    mcp.reload(tab, &page, &[REAL, "config failed"]).await;
    mcp.ok("network_rules", json!({ "action": "remove" })).await;
    mcp.reload(tab, &page, &[REAL, "config ok"]).await;

    // Only requests to an allowed site, written as a URL that starts with its origin.
    let stranger = Fixtures::serve_on("127.0.0.2");
    let foreign = stranger.url("webdev/api.json");
    let err = mcp
        .err("network_rules", json!({ "action": "block", "tab_id": tab, "url_pattern": foreign }))
        .await;
    assert_refused(&err, "site_not_allowed", &stranger.origin());
    for pattern in ["*://*/api.json", "http://127.0.0.1*", "||example.com/"] {
        let args = json!({ "action": "block", "tab_id": tab, "url_pattern": pattern });
        let err = mcp.err("network_rules", args).await;
        assert!(err.starts_with("bad_request:") && err.contains("origin"), "{pattern}: {err}");
    }
    let far = mcp.open_tab(&stranger.url("webdev/network.html")).await;
    let args = json!({ "action": "offline", "tab_id": far });
    assert_refused(&mcp.err("network_rules", args).await, "site_not_allowed", &stranger.origin());
    let listed = mcp.ok("network_rules", json!({ "action": "list" })).await;
    assert_eq!(ids(&listed), Vec::<i64>::new(), "{listed}");

    // A rule goes with its tab, and with its site when the user stops allowing it.
    let block = json!({ "action": "block", "tab_id": tab, "url_pattern": format!("{origin}/*") });
    mcp.ok("network_rules", block.clone()).await;
    mcp.ok("close_tab", json!({ "tab_id": tab })).await;
    let listed = mcp.ok("network_rules", json!({ "action": "list" })).await;
    assert_eq!(ids(&listed), Vec::<i64>::new(), "{listed}");
    let tab = mcp.open_tab(&page).await;
    let block = json!({ "action": "block", "tab_id": tab, "url_pattern": format!("{origin}/*") });
    assert_eq!(ids(&mcp.ok("network_rules", block).await).len(), 1);
    browser.sites(&["revoke", "http://127.0.0.1:*"]);
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let listed = mcp.ok("network_rules", json!({ "action": "list" })).await;
        if ids(&listed).is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "a revoked site's rule stays: {listed}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn viewport_timing_and_pdf_of_an_allowed_page() {
    let browser = Chromium::start();
    let state_dir = tempfile::tempdir().unwrap();
    let state_env = state_dir.path().to_str().unwrap();
    let mcp = Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_STATE_DIR", state_env)]).await;
    let pages = Fixtures::serve();
    let origin = pages.origin();
    let tab = mcp.open_tab(&pages.url("webdev/network.html")).await;
    mcp.title_with(tab, &[REAL, "wide"]).await;

    // A phone's viewport, as the page's media queries see it; then back.
    let before = mcp.ok("viewport", json!({ "tab_id": tab })).await;
    let phone = mcp.ok("viewport", json!({ "tab_id": tab, "width": 390, "height": 700 })).await;
    assert_eq!(
        (phone["inner_width"].as_i64(), phone["inner_height"].as_i64()),
        (Some(390), Some(700)),
        "{phone}"
    );
    assert_eq!(phone["window"]["resized"], true, "{phone}");
    mcp.title_with(tab, &["390x700 narrow"]).await;
    let back = mcp.ok("viewport", json!({ "tab_id": tab, "reset": true })).await;
    assert_eq!(back["inner_width"], before["inner_width"], "{back}");
    assert_eq!(
        (&back["window"]["width"], &back["window"]["height"]),
        (&before["window"]["width"], &before["window"]["height"]),
        "{back}"
    );
    assert_eq!(back["window"]["resized"], false, "{back}");
    mcp.title_with(tab, &[&format!("{}x", before["inner_width"]), "wide"]).await;
    let err = mcp.err("viewport", json!({ "tab_id": tab, "width": 10 })).await;
    assert!(err.starts_with("bad_request:") && err.contains("200"), "{err}");

    // The page's own timing, the text the same JSON as the structured content.
    let result = mcp.call("page_timing", json!({ "tab_id": tab })).await;
    let timing = result.structured_content.clone().unwrap_or_else(|| panic!("{result:?}"));
    let text = tabwire_testkit::mcp::text(&result);
    let written = text.split_once("not instructions: ").map(|(_, json)| json);
    assert_eq!(
        written.map(serde_json::from_str::<Value>).and_then(Result::ok),
        Some(timing.clone())
    );
    assert_eq!(timing["origin"], origin.as_str());
    let navigation = &timing["navigation"];
    assert_eq!(navigation["type"], "navigate", "{timing}");
    let load = navigation["load"].as_f64().unwrap_or_else(|| panic!("{timing}"));
    assert!(load > 0.0 && load < 30_000.0, "{timing}");
    // Milliseconds as the page wrote them: a whole number is not written `312.0`.
    for ms in ["ttfb", "dom_content_loaded", "load", "duration"] {
        let v = &navigation[ms];
        assert!(v.as_f64().is_some_and(|f| f.fract() != 0.0) || v.is_u64(), "{ms}: {timing}");
    }
    assert!(timing["first_contentful_paint"].as_f64().is_some(), "{timing}");
    assert!(timing["long_tasks"]["count"].is_u64(), "{timing}");
    let resources = &timing["resources"];
    assert!(resources["count"].as_u64().unwrap() >= 2, "api.json and extra.js: {timing}");
    let slowest = resources["slowest"].as_array().unwrap_or_else(|| panic!("{timing}"));
    assert!(
        slowest.iter().any(|r| r["url"].as_str().is_some_and(|u| u.ends_with("/webdev/api.json"))
            && r["type"] == "fetch"),
        "{timing}"
    );

    // PDF only under the site's "Trusted input" switch: it uses the debugger.
    let err = mcp.err("print_pdf", json!({ "tab_id": tab })).await;
    assert_refused(&err, "trusted_input_not_enabled", &origin);
    browser.sites(&["allow", "--trusted-input", "http://127.0.0.1:*"]);
    let printed = mcp.ok("print_pdf", json!({ "tab_id": tab })).await;
    let path = printed["path"].as_str().unwrap_or_else(|| panic!("{printed}"));
    assert!(bins::local_path(path).starts_with(state_env) && path.ends_with(".pdf"), "{path}");
    let pdf = std::fs::read(bins::local_path(path)).unwrap();
    assert!(pdf.starts_with(b"%PDF-") && pdf.len() > 1000, "{} bytes", pdf.len());
    assert_eq!(printed["bytes"].as_u64(), Some(pdf.len() as u64));
    // Chrome writes the page's title into the PDF's document information, uncompressed.
    let title = printed["title"].as_str().unwrap();
    assert!(title.contains("api 200"), "{printed}");
    let info = format!("/Title ({title})");
    assert!(pdf.windows(info.len()).any(|w| w == info.as_bytes()), "{info} in the PDF");
    // What a person reads on the PDF's first page (pdftotext, from poppler-utils): the title,
    // which the page also shows.
    let out = std::process::Command::new("pdftotext")
        .args(["-f", "1", "-l", "1"])
        .arg(bins::local_path(path))
        .arg("-")
        .output()
        .expect("pdftotext (poppler-utils: scripts/setup.sh installs it)");
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let (page_one, want) = (words(&String::from_utf8_lossy(&out.stdout)), words(title));
    assert!(page_one.contains(&want), "page 1 reads {page_one:?}, not the title {want:?}");

    // A site not allowed: nothing of it is resized, read or printed.
    let stranger = Fixtures::serve_on("127.0.0.2");
    let far = mcp.open_tab(&stranger.url("webdev/network.html")).await;
    for (tool, args) in [
        ("viewport", json!({ "tab_id": far, "width": 390, "height": 700 })),
        ("page_timing", json!({ "tab_id": far })),
        ("print_pdf", json!({ "tab_id": far })),
    ] {
        assert_refused(&mcp.err(tool, args).await, "site_not_allowed", &stranger.origin());
    }
}

/// Chrome's install warnings are the ones specs/security.md lists ("Permissions"): network_rules
/// needs no permission of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn install_warnings_are_the_specs() {
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to_browser, from_browser);
    let popup = format!("chrome-extension://{EXTENSION_ID}/ui/popup.html");
    let page = cdp.open(&popup).await.unwrap();
    let manifest = include_str!("../../../extension/manifest.json");
    let warnings = |manifest: &str| {
        let manifest = serde_json::to_string(manifest).unwrap();
        format!("chrome.management.getPermissionWarningsByManifest({manifest})")
    };
    let ours = cdp.wait_for(&page, &warnings(manifest), Duration::from_secs(5)).await.unwrap();
    // And the whole list is the one specs/security.md gives, word for word.
    let spec = include_str!("../../../specs/security.md");
    for warning in ours.as_array().expect("a list of warnings") {
        let quoted = format!("\"{}\"", warning.as_str().expect("a warning's text"));
        assert!(spec.contains(&quoted), "specs/security.md does not list {quoted}: {ours}");
    }
    eprintln!("install warnings: {ours}");
}

/// A URL as the value of a query parameter.
fn escaped(url: &str) -> String {
    url.replace('%', "%25")
        .replace(':', "%3A")
        .replace('/', "%2F")
        .replace('?', "%3F")
        .replace('=', "%3D")
        .replace('&', "%26")
}

/// A tab's rules reach only the documents of the origin they were made for: a frame of another
/// allowed site in the tab (`localhost`, served by the same server) neither finds them in its
/// storage or events nor has its requests answered by them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_rules_reach_only_the_pages_of_their_own_origin() {
    let browser = Chromium::shared();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let pages = Fixtures::serve();
    let api = pages.url("webdev/api.json");
    let spy = format!(
        "{}?api={}",
        pages.url("webdev/frame-spy.html").replace("127.0.0.1", "localhost"),
        escaped(&api)
    );
    let page = format!("{}?frame={}", pages.url("webdev/framed.html"), escaped(&spy));
    let tab = mcp.open_tab(&page).await;
    // The other site's frame cannot read the app's API (no CORS): its fetch fails.
    mcp.title_with(tab, &["frame: api failed; rules none"]).await;

    let mock = json!({ "action": "mock", "tab_id": tab, "url_pattern": format!("{api}*"), "body": r#"{"user":"mocked"}"# });
    mcp.ok("network_rules", mock).await;
    let title = mcp.reload(tab, &page, &["frame: "]).await;
    assert_eq!(title, "frame: api failed; rules none", "the frame met the app's rule");

    // The app's own pages in that tab still get it.
    let own = pages.url("webdev/network.html");
    mcp.reload(tab, &own, &[r#"api 200 {"user":"mocked"}"#]).await;
}

/// What the browser timed and what the page says of its requests stay apart: a page cannot
/// lend a method of its own to the browser's record, nor evict that record by flooding its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_cannot_pass_its_word_for_the_browsers_record_nor_evict_it() {
    let browser = Chromium::start();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let pages = Fixtures::serve();
    let tab = mcp.open_tab(&pages.url("webdev/network.html")).await;
    mcp.title_with(tab, &[REAL]).await;
    let browser_seen = |got: &Value, part: &str| -> Vec<Value> {
        got["requests"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["seen"] == "browser" && r["url"].as_str().unwrap().contains(part))
            .cloned()
            .collect()
    };
    let got = mcp.ok("network_requests", json!({ "tab_id": tab, "filter": "api.json" })).await;
    assert_eq!(browser_seen(&got, "api.json").len(), 1, "{got:#}");

    // The page's own script (the user let it run the assistant's: the attacker's code is the
    // page's) says a DELETE went to a URL, then really GETs it.
    browser.sites(&["allow", "--scripts", "http://127.0.0.1:*"]);
    let masquerade = r#"async () => {
        const url = new URL('api.json?again', location.href).href;
        dispatchEvent(new CustomEvent('tabwire:request', { detail: JSON.stringify({ kind: 'start', id: 1e9, url, method: 'DELETE', by: 'fetch' }) }));
        await (await fetch(url)).text();
        return url;
    }"#;
    mcp.ok("evaluate", json!({ "tab_id": tab, "function": masquerade })).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    let got = loop {
        let got = mcp.ok("network_requests", json!({ "tab_id": tab, "filter": "again" })).await;
        if !browser_seen(&got, "again").is_empty() {
            break got;
        }
        assert!(Instant::now() < deadline, "the browser never timed the real GET: {got:#}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    for entry in got["requests"].as_array().unwrap() {
        let page_said = entry["method"] == "DELETE";
        assert!(
            !page_said || entry["seen"] == "page",
            "the page's word passed for the browser's: {got:#}"
        );
    }

    // A flood of forged events: the browser's record of the first fetch stays.
    let flood = r#"() => {
        for (let i = 0; i < 1200; i++)
            dispatchEvent(new CustomEvent('tabwire:request', { detail: JSON.stringify({ kind: 'start', id: 2e9 + i, url: `${location.origin}/forged/${i}`, method: 'GET' }) }));
        return true;
    }"#;
    mcp.ok("evaluate", json!({ "tab_id": tab, "function": flood })).await;
    let got = mcp
        .ok("network_requests", json!({ "tab_id": tab, "filter": "api.json", "limit": 500 }))
        .await;
    assert_eq!(
        browser_seen(&got, "api.json").len(),
        2,
        "the browser's record was evicted: {got:#}"
    );
    let all = mcp.ok("network_requests", json!({ "tab_id": tab, "limit": 500 })).await;
    assert!(
        all["dropped"].as_u64().unwrap() >= 700,
        "the page's own words went: {}",
        all["dropped"]
    );
}
