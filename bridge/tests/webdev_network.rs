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
use tabwire_tests::mcp::assert_refused;
use tabwire_tests::{Cdp, Chromium, Fixtures, Mcp};

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

    // The page's own timing.
    let timing = mcp.ok("page_timing", json!({ "tab_id": tab })).await;
    assert_eq!(timing["origin"], origin.as_str());
    let load = timing["navigation"]["load"].as_f64().unwrap_or_else(|| panic!("{timing}"));
    assert!(load > 0.0 && load < 30_000.0, "{timing}");
    assert!(timing["first_contentful_paint"].as_f64().is_some(), "{timing}");
    assert!(timing["resources"]["count"].as_u64().unwrap() >= 2, "api.json and extra.js: {timing}");

    // PDF only under the site's "Trusted input" switch: it uses the debugger.
    let err = mcp.err("print_pdf", json!({ "tab_id": tab })).await;
    assert_refused(&err, "trusted_input_not_enabled", &origin);
    browser.sites(&["allow", "--trusted-input", "http://127.0.0.1:*"]);
    let printed = mcp.ok("print_pdf", json!({ "tab_id": tab })).await;
    let path = printed["path"].as_str().unwrap_or_else(|| panic!("{printed}"));
    assert!(path.starts_with(state_env) && path.ends_with(".pdf"), "{path}");
    let pdf = std::fs::read(path).unwrap();
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
        .args(["-f", "1", "-l", "1", path, "-"])
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
    let manifest = include_str!("../../extension/manifest.json");
    let warnings = |manifest: &str| {
        let manifest = serde_json::to_string(manifest).unwrap();
        format!("chrome.management.getPermissionWarningsByManifest({manifest})")
    };
    let ours = cdp.wait_for(&page, &warnings(manifest), Duration::from_secs(5)).await.unwrap();
    // And the whole list is the one specs/security.md gives, word for word.
    let spec = include_str!("../../specs/security.md");
    for warning in ours.as_array().expect("a list of warnings") {
        let quoted = format!("\"{}\"", warning.as_str().expect("a warning's text"));
        assert!(spec.contains(&quoted), "specs/security.md does not list {quoted}: {ours}");
    }
    eprintln!("install warnings: {ours}");
}
