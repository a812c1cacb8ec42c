//! Trusted input (`trusted: true`, real input through Chrome's debugger) on an allowed site
//! whose page is hostile: it moves focus into a frame of another site, slides such a frame over
//! the button being clicked, or adds one after the first key. Real input must never reach a
//! site the user did not allow, and the assistant is told why nothing was done. In real
//! Chromium through the real `tabwire mcp`.
//!
//! `127.0.0.2` stands in for any website the user did not allow.

use std::time::{Duration, Instant};

use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use tabwire_tests::mcp::text;
use tabwire_tests::{Cdp, Chromium, Fixtures, Mcp};

/// A browser with a CDP pipe (to read what each frame received), `tabwire mcp` on it, and
/// trusted input turned on for the allowed loopback site, as the user would.
async fn hostile_setup() -> (Chromium, Cdp, Mcp) {
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().unwrap();
    let cdp = Cdp::new(to_browser, from_browser);
    let mcp = Mcp::start(&browser.runtime_dir).await;
    browser.sites(&["allow", "--trusted-input", "http://127.0.0.1:*"]);
    (browser, cdp, mcp)
}

async fn open(mcp: &Mcp, url: String) -> i64 {
    let opened = mcp.ok("open_tab", json!({ "url": url })).await;
    opened["tab"]["id"].as_i64().unwrap_or_else(|| panic!("a tab id in {opened}"))
}

/// A CDP session on the target of `kind` (`page`, `iframe`) whose URL contains `part`, once
/// its page script ran (`window.got` or `window.seen` exists).
async fn session(cdp: &Cdp, kind: &str, part: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    let target = loop {
        match cdp.target_id(kind, part).await {
            Ok(id) => break id,
            Err(e) => assert!(Instant::now() < deadline, "{e}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let session = cdp.attach(&target).await.unwrap();
    cdp.wait_for(&session, "!!(window.got || window.seen)", Duration::from_secs(10)).await.unwrap();
    session
}

/// What the other site's frame received: every key, text and click, with `isTrusted`.
async fn received(cdp: &Cdp, frame: &str) -> Value {
    cdp.eval(frame, "got").await.unwrap()
}

/// A tool's result: it must be `not_actionable` naming the other site's origin and what to do.
fn refused(result: &CallToolResult, other_origin: &str) {
    let said = text(result);
    assert_eq!(result.is_error, Some(true), "should have been refused, it said: {said}");
    assert!(said.starts_with("not_actionable:"), "{said}");
    assert!(said.contains(other_origin), "names the other site's origin: {said}");
    assert!(said.contains("without `trusted`"), "says what to do: {said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trusted_typing_never_reaches_a_frame_of_a_site_not_allowed() {
    let (_browser, cdp, mcp) = hostile_setup().await;
    let pages = Fixtures::serve();
    let stranger = Fixtures::serve_on("127.0.0.2");
    let other = stranger.origin();

    // The input's focus handler moves focus into the other site's frame: neither the text nor
    // a key reaches it, and the tool says why.
    let receiver = stranger.url("attack/receiver.html?thief");
    let tab = open(&mcp, pages.url(&format!("attack/focus-thief.html?frame={receiver}"))).await;
    let frame = session(&cdp, "iframe", "receiver.html?thief").await;
    let page = session(&cdp, "page", "focus-thief.html").await;
    let typed = json!({ "tab_id": tab, "selector": "#text", "text": "my secret", "trusted": true });
    let result = mcp.call("type", typed).await;
    assert_eq!(received(&cdp, &frame).await, json!([]), "{}", text(&result));
    refused(&result, &other);
    let keys = json!({ "tab_id": tab, "selector": "#text", "keys": "x Enter", "trusted": true });
    let result = mcp.call("press_key", keys).await;
    assert_eq!(received(&cdp, &frame).await, json!([]), "{}", text(&result));
    refused(&result, &other);
    assert_eq!(cdp.eval(&page, "seen").await.unwrap(), json!([]), "nothing typed anywhere");

    // No other site's frame until the first key lands; then the page adds one and moves focus
    // into it. Each key is checked again before it is sent: the rest never reach the frame.
    let receiver = stranger.url("attack/receiver.html?late");
    let tab = open(&mcp, pages.url(&format!("attack/late-frame.html?frame={receiver}"))).await;
    let page = session(&cdp, "page", "late-frame.html").await;
    let many = ["q"; 150].join(" ");
    let keys = json!({ "tab_id": tab, "selector": "#text", "keys": many, "trusted": true });
    let result = mcp.call("press_key", keys).await;
    let frame = session(&cdp, "iframe", "receiver.html?late").await;
    assert_eq!(received(&cdp, &frame).await, json!([]), "{}", text(&result));
    let said = text(&result);
    assert_eq!(result.is_error, Some(true), "press_key should have been stopped: {said}");
    assert!(said.starts_with("not_actionable:") && said.contains(&other), "{said}");
    let seen = cdp.eval(&page, "seen").await.unwrap();
    assert_eq!(
        seen[0],
        json!({ "key": "q", "trusted": true }),
        "the first key reached the page's own input"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_click_never_lands_in_a_frame_of_a_site_not_allowed() {
    let (_browser, cdp, mcp) = hostile_setup().await;
    let pages = Fixtures::serve();
    let stranger = Fixtures::serve_on("127.0.0.2");

    // Scrolling the button into view makes the page slide the other site's frame over it.
    let receiver = stranger.url("attack/receiver.html?slider");
    let tab = open(&mcp, pages.url(&format!("attack/slider.html?frame={receiver}"))).await;
    let frame = session(&cdp, "iframe", "receiver.html?slider").await;
    let page = session(&cdp, "page", "slider.html").await;
    let click = json!({ "tab_id": tab, "selector": "#go", "trusted": true });
    let result = mcp.call("click", click).await;
    assert_eq!(received(&cdp, &frame).await, json!([]), "{}", text(&result));
    refused(&result, &stranger.origin());
    assert_eq!(cdp.eval(&page, "seen").await.unwrap(), json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trusted_input_still_reaches_a_page_whose_frames_are_all_allowed() {
    let (_browser, cdp, mcp) = hostile_setup().await;
    let pages = Fixtures::serve();
    let own = pages.url("attack/receiver.html?own");
    let tab = open(&mcp, pages.url(&format!("attack/honest.html?frame={own}"))).await;
    let page = session(&cdp, "page", "honest.html").await;
    cdp.wait_for(
        &page,
        "document.getElementById('own').contentWindow.got",
        Duration::from_secs(10),
    )
    .await
    .unwrap();

    mcp.ok("click", json!({ "tab_id": tab, "selector": "#go", "trusted": true })).await;
    mcp.ok("type", json!({ "tab_id": tab, "selector": "#text", "text": "hello", "trusted": true }))
        .await;
    let seen = cdp.eval(&page, "seen").await.unwrap();
    assert_eq!(seen[0], json!({ "on": "go", "trusted": true }), "{seen}");
    assert_eq!(seen[1], json!({ "on": "input", "value": "hello", "trusted": true }), "{seen}");
    assert_eq!(
        cdp.eval(&page, "document.getElementById('own').contentWindow.got").await.unwrap(),
        json!([])
    );
}
