//! A page using `window.tabwire`, through the whole chain: MCP client → tabwire mcp → host →
//! extension → content scripts → page, and back. Large values cross the 1 MiB Native Messaging
//! limit toward the browser (chunked by the host) and come back up to 8 MiB.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tabwire_testkit::{Chromium, Fixtures, Mcp};

async fn open(mcp: &Mcp, url: String) -> Value {
    let opened = mcp.ok("open_tab", json!({ "url": url })).await;
    opened["tab"]["id"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_answers_with_its_state_and_runs_commands() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, pages.url("app.html")).await;

    let got = mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    assert_eq!(got["state"]["items"], json!(["first"]), "{got}");
    assert_eq!(got["source"], "fresh");

    let added = mcp
        .ok(
            "send_command",
            json!({ "tab_id": tab, "type": "add", "payload": { "text": "second" } }),
        )
        .await;
    assert_eq!(added["result"]["count"], 2, "{added}");

    let got = mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    assert_eq!(got["state"]["items"], json!(["first", "second"]), "{got}");

    let err = mcp.err("send_command", json!({ "tab_id": tab, "type": "nope" })).await;
    assert!(err.contains("no_handler"), "{err}");
    let err = mcp.err("send_command", json!({ "tab_id": tab, "type": "fail" })).await;
    assert!(err.contains("page_error") && err.contains("asked to fail"), "{err}");
    // The page wrote that text: it comes back labelled with the page's origin.
    assert!(err.contains(&format!("{} (tab {tab}) answered:", pages.origin())), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_mib_toward_the_page_and_eight_mib_back() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;

    let tab = open(&mcp, pages.url("app.html")).await;
    let data = format!("<{}>", "é\"\\\n".repeat(1024 * 1024 - 1));
    let sent_chars = data.chars().count();
    let measured = mcp
        .ok(
            "send_command",
            json!({ "tab_id": tab, "type": "measure", "payload": { "data": data }, "timeout_ms": 30000 }),
        )
        .await;
    assert_eq!(measured["result"]["length"], sent_chars, "the page got every character");
    assert_eq!(measured["result"]["head"], data.chars().take(8).collect::<String>());
    let tail: String = data.chars().skip(sent_chars - 8).collect();
    assert_eq!(measured["result"]["tail"], tail);

    let big = open(&mcp, pages.url("app.html?big=8")).await;
    let got = mcp
        .ok("get_state", json!({ "tab_id": big, "force_refresh": true, "timeout_ms": 30000 }))
        .await;
    let blob = got["state"]["blob"].as_str().expect("blob in state");
    assert_eq!(blob.len(), 8 * 1024 * 1024);
    assert!(blob.bytes().all(|b| b == b'x'));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_get_only_their_own_replies() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let a = Mcp::start(&browser.runtime_dir).await;
    let b = Mcp::start(&browser.runtime_dir).await;
    // The user's tab: one session does not act in another's (specs/tools.md).
    let tab = tabwire_testkit::mcp::users_tab(&browser.runtime_dir, &pages.url("app.html")).await;

    tokio::join!(measure_40(&a, "A", &tab), measure_40(&b, "B", &tab));
}

/// 40 `measure` commands whose replies must be this session's own.
async fn measure_40(mcp: &Mcp, tag: &str, tab: &Value) {
    for i in 0..40 {
        let data = format!("{tag}{i:03}{}", tag.repeat(100 + i));
        let got = mcp
            .ok(
                "send_command",
                json!({ "tab_id": tab, "type": "measure", "payload": { "data": data } }),
            )
            .await;
        assert_eq!(got["result"]["head"], data[..8], "session {tag} got another's reply");
        assert_eq!(got["result"]["length"], data.len());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_killed_mid_call_fails_fast_then_recovers() {
    let browser = Chromium::start();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, pages.url("app.html")).await;
    let host = browser.live_host().expect("a live host");

    let slow = mcp.call(
        "send_command",
        json!({ "tab_id": tab, "type": "slow", "payload": { "ms": 5000 }, "timeout_ms": 10000 }),
    );
    let killer = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        browser.kill_host(host.pid).expect("kill the host");
        Instant::now()
    };
    let (result, killed_at) = tokio::join!(slow, killer);
    let failed_after = killed_at.elapsed();
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let text = tabwire_testkit::mcp::text(&result);
    assert!(text.contains("browser_disconnected"), "{text}");
    assert!(failed_after < Duration::from_secs(1), "failed {failed_after:?} after the kill");

    // The extension reconnects (backoff from 250 ms), Chrome starts a new host, the bridge
    // attaches to it, and calls work again.
    mcp.ok_within("list_tabs", json!({}), "no browser is connected", Duration::from_secs(15)).await;
    let new_host = browser.live_host().expect("a new host");
    assert_ne!(new_host.pid, host.pid);
    let got = mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    assert_eq!(got["state"]["items"], json!(["first"]));
}
