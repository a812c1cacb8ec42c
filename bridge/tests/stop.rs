//! The popup's Stop, pressed as a user presses it (a trusted click through CDP): a call in
//! flight ends at once with `paused_by_user`, new calls are refused the same way, and only the
//! popup's Resume lets them through again.

use std::time::{Duration, Instant};

use serde_json::json;
use tabwire_proto::extension_id::EXTENSION_ID;
use tabwire_tests::{Cdp, Chromium, Fixtures, Mcp};

const WITHIN: Duration = Duration::from_secs(5);

async fn click(cdp: &Cdp, popup: &str, selector: &str) {
    cdp.wait_for(
        popup,
        &format!("!!document.querySelector({selector:?})?.checkVisibility()"),
        WITHIN,
    )
    .await
    .unwrap_or_else(|e| panic!("the popup shows {selector}: {e}"));
    cdp.click(popup, selector).await.unwrap_or_else(|e| panic!("click {selector}: {e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_in_the_popup_ends_calls_in_flight_and_refuses_new_ones_until_resume() {
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to_browser, from_browser);
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let pages = Fixtures::serve();

    let opened = mcp.ok("open_tab", json!({ "url": pages.url("plain.html") })).await;
    let tab = opened["tab"]["id"].clone();
    mcp.ok("wait_for", json!({ "tab_id": tab, "selector": "body" })).await;
    let url = format!("chrome-extension://{EXTENSION_ID}/ui/popup.html?tab={tab}");
    let popup = cdp.open(&url).await.unwrap_or_else(|e| panic!("open the popup: {e}"));

    // A wait that would last 30 s is in flight when the user presses Stop: it ends at once.
    let waiting = mcp.call(
        "wait_for",
        json!({ "tab_id": tab, "text": "never on this page", "timeout_ms": 30_000 }),
    );
    let pressed = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        click(&cdp, &popup, "#stop").await;
        Instant::now()
    };
    let (waited, pressed_at) = tokio::join!(waiting, pressed);
    let after = pressed_at.elapsed();
    let said = tabwire_tests::mcp::text(&waited);
    assert_eq!(waited.is_error, Some(true), "wait_for should have been stopped: {said}");
    assert!(said.starts_with("paused_by_user:") && said.contains("Resume"), "{said}");
    assert!(after < Duration::from_secs(2), "ended {after:?} after Stop, not at once");
    let shown = cdp.eval(&popup, "document.body.innerText").await.unwrap();
    assert!(shown.as_str().unwrap().contains("Stopped"), "the popup says it is stopped: {shown}");

    // New page-facing calls are refused, saying why and that only the user resumes.
    for (tool, args) in [
        ("read_page", json!({ "tab_id": tab })),
        ("click", json!({ "tab_id": tab, "selector": "body" })),
        ("open_tab", json!({ "url": pages.url("plain.html") })),
    ] {
        let err = mcp.err(tool, args).await;
        assert!(err.starts_with("paused_by_user:"), "{tool}: {err}");
    }

    // Resume: calls go through again.
    click(&cdp, &popup, "#resume").await;
    let deadline = Instant::now() + WITHIN;
    loop {
        let result = mcp.call("read_page", json!({ "tab_id": tab })).await;
        if result.is_error != Some(true) {
            break;
        }
        let said = tabwire_tests::mcp::text(&result);
        assert!(Instant::now() < deadline, "read_page after Resume: {said}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        cdp.eval(&popup, "document.querySelector('#stop').checkVisibility()").await
            == Ok(json!(true))
    );
}
