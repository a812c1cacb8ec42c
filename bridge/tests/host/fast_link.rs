//! The fast link (host/src/fast_link.rs) through real Chromium: the extension opens it by
//! itself, calls then go by it, Native Messaging carries them while it is cut and until it is
//! back (the popup and `tabwire doctor` say which carries them), and nobody but the extension that started the
//! host gets in — not a page that learned
//! its address, not a local process without the token.

use std::time::Duration;

use serde_json::{Value, json};
use tabwire_proto::extension_id::EXTENSION_ID;
use tabwire_testkit::cdp::Cdp;
use tabwire_testkit::host::Host;
use tabwire_testkit::{Chromium, Fixtures, Mcp};
use tokio_tungstenite::tungstenite::{self, Message as WsMessage, client::IntoClientRequest};

const WITHIN: Duration = Duration::from_secs(10);

/// A browser with a CDP pipe (to look into the service worker), `tabwire mcp`, a tab on a
/// fixture page, and a CDP session in the extension's service worker.
async fn browser() -> (Chromium, Cdp, Mcp, Fixtures, Value, String) {
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().unwrap();
    let cdp = Cdp::new(to_browser, from_browser);
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let pages = Fixtures::serve();
    let tab =
        mcp.ok("open_tab", json!({ "url": pages.url("app.html") })).await["tab"]["id"].clone();
    let worker = cdp.target_id("service_worker", "/worker/background.js").await.unwrap();
    let worker = cdp.attach(&worker).await.unwrap();
    (browser, cdp, mcp, pages, tab, worker)
}

/// The link's state once it is open both ways: `{ open, marked, url, sent, received }`.
async fn up(cdp: &Cdp, worker: &str) -> Value {
    let expr = "(s => s.open && s.marked && s)(tabwireDebug.fastLink.state())";
    cdp.wait_for(worker, expr, WITHIN).await.expect("the fast link comes up")
}

async fn state(cdp: &Cdp, worker: &str) -> Value {
    cdp.eval(worker, "tabwireDebug.fastLink.state()").await.unwrap()
}

/// Wait until the popup's "Messages go by" shows `what`.
async fn popup_says(cdp: &Cdp, popup: &str, what: &str) {
    let expr = format!("document.querySelector('#carrier').textContent.includes({what:?})");
    if let Err(e) = cdp.wait_for(popup, &expr, WITHIN).await {
        let shown = cdp.eval(popup, "document.body.innerText").await;
        panic!("the popup should say {what:?}: {e}\n{shown:?}");
    }
}

/// What the diagnose tool (`tabwire doctor` as a tool) found pinging the browser.
async fn ping_finding(mcp: &Mcp) -> String {
    let diagnosis = mcp.ok("diagnose", json!({})).await;
    let findings = diagnosis["findings"].as_array().unwrap();
    let ping = findings.iter().find(|f| f["check"].as_str().unwrap().starts_with("ping via host"));
    let ping = ping.unwrap_or_else(|| panic!("no ping: {diagnosis}"));
    assert_eq!(ping["ok"], true, "{ping}");
    ping["detail"].as_str().unwrap().to_owned()
}

async fn forced_read(mcp: &Mcp, tab: &Value) -> Result<Value, String> {
    let r = mcp.call("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    match r.is_error {
        Some(true) => Err(tabwire_testkit::mcp::text(&r)),
        _ => Ok(r.structured_content.unwrap()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_go_by_the_fast_link_and_by_native_messaging_while_it_is_cut() {
    let (browser, cdp, mcp, _pages, tab, worker) = browser().await;
    let popup = format!("chrome-extension://{EXTENSION_ID}/ui/popup.html?tab={tab}");
    let popup = cdp.open(&popup).await.unwrap();

    // It comes up by itself; forced reads then go by it, both ways.
    let before = up(&cdp, &worker).await;
    popup_says(&cdp, &popup, "the fast link (a loopback WebSocket").await;
    let ping = ping_finding(&mcp).await;
    assert!(ping.contains("messages go by the fast link (a loopback WebSocket"), "{ping}");
    for _ in 0..20 {
        assert_eq!(forced_read(&mcp, &tab).await.unwrap()["source"], "fresh");
    }
    let after = state(&cdp, &worker).await;
    let moved = |k: &str, a: &Value, b: &Value| b[k].as_u64().unwrap() - a[k].as_u64().unwrap();
    assert!(
        moved("received", &before, &after) >= 20,
        "requests came by the link: {before} {after}"
    );
    assert!(moved("sent", &before, &after) >= 20, "answers went by the link: {before} {after}");

    // Cut: every call is still answered — by Native Messaging — except, at most, the one in
    // flight at the cut, whose error says what happened and to call again.
    cdp.eval(&worker, "tabwireDebug.fastLink.cut(), true").await.unwrap();
    let cut = state(&cdp, &worker).await;
    assert_eq!(cut["open"], false, "{cut}");
    popup_says(&cdp, &popup, "Native Messaging: the fast link closed (cut through the debugger)")
        .await;
    // So does the ping of `tabwire doctor` and of the diagnose tool.
    let ping = ping_finding(&mcp).await;
    assert!(
        ping.contains(
            "messages go by Native Messaging: the fast link closed (cut through the debugger)"
        ),
        "{ping}"
    );
    let mut failed = vec![];
    for _ in 0..20 {
        match forced_read(&mcp, &tab).await {
            Ok(got) => assert_eq!(got["source"], "fresh"),
            Err(e) => failed.push(e),
        }
    }
    assert!(failed.len() <= 1, "{failed:?}");
    for e in &failed {
        assert!(e.contains("fast link") && e.contains("call again"), "{e}");
    }
    let still = state(&cdp, &worker).await;
    assert_eq!(still["received"], cut["received"], "nothing came by a cut link");

    // It comes back after its pause, and carries the calls again.
    let back = up(&cdp, &worker).await;
    popup_says(&cdp, &popup, "the fast link (a loopback WebSocket").await;
    assert_eq!(forced_read(&mcp, &tab).await.unwrap()["source"], "fresh");
    let last = state(&cdp, &worker).await;
    assert!(moved("received", &back, &last) >= 1, "{back} {last}");

    let log = std::fs::read_to_string(&browser.log).unwrap();
    assert!(log.contains("the extension's fast link is up"), "the host says so");
    assert!(log.contains("the fast link to the extension closed (the extension closed it)"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_extension_gets_in() {
    let (browser, cdp, mcp, pages, tab, worker) = browser().await;
    let url = up(&cdp, &worker).await["url"].as_str().unwrap().to_owned();
    let (base, token) = url.rsplit_once('/').unwrap();

    // A page that learned the address — token and all — is refused: its Origin is its own.
    let page = cdp.open(&pages.url("app.html")).await.unwrap();
    cdp.wait_for(&page, "document.readyState === 'complete'", WITHIN).await.unwrap();
    let try_from_page = |target: String| {
        format!(
            "new Promise(r => {{ const ws = new WebSocket({target:?}); \
             ws.onopen = () => r('open'); ws.onclose = e => r('closed ' + e.code); }})"
        )
    };
    let numbered = format!("{url}?n=99");
    for target in
        [numbered.clone(), format!("{base}/{}?n=99", "0".repeat(token.len())), format!("{base}/")]
    {
        let got = cdp.eval(&page, &try_from_page(target.clone())).await.unwrap();
        assert_eq!(got, "closed 1006", "{target}");
    }

    // A local process: without the token, or with it but without the extension's Origin, it
    // gets a bare 403 that names nothing (not the product, not the check that failed); only
    // the extension itself (token and Origin) hears why, e.g. a link without its number.
    let extension = format!("chrome-extension://{}", browser.host().unwrap().extension_id);
    for (target, origin, why) in [
        (format!("{base}/{}?n=99", "0".repeat(token.len())), Some(extension.as_str()), ""),
        (format!("{base}/?n=1"), None, ""),
        (numbered.clone(), None, ""),
        (numbered.clone(), Some("http://127.0.0.1"), ""),
        (url.clone(), Some(extension.as_str()), "tabwire-host: the link's number is missing"),
    ] {
        let mut request = target.as_str().into_client_request().unwrap();
        if let Some(o) = origin {
            request.headers_mut().insert("Origin", o.parse().unwrap());
        }
        let tcp = tokio::net::TcpStream::connect(base.trim_start_matches("ws://")).await.unwrap();
        match tokio_tungstenite::client_async(request, tcp).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => {
                assert_eq!(resp.status(), 403, "{target} {origin:?}");
                let body = String::from_utf8(resp.body().clone().unwrap_or_default()).unwrap();
                if why.is_empty() {
                    assert_eq!(body, "", "a stranger hears nothing: {target} {origin:?}");
                    let headers = format!("{:?}", resp.headers()).to_lowercase();
                    assert!(!headers.contains("tabwire"), "{headers}");
                } else {
                    assert!(body.starts_with(why), "{body}");
                }
            }
            other => panic!("{target} {origin:?}: {:?}", other.map(|_| "connected")),
        }
    }

    // The extension's own link was not disturbed.
    let now = state(&cdp, &worker).await;
    assert_eq!(now["open"], true, "{now}");
    assert_eq!(now["url"], url.as_str());
    assert_eq!(forced_read(&mcp, &tab).await.unwrap()["source"], "fresh");
}

/// The order rules, with the test as the extension (the real host, its stdio, a WebSocket):
/// each side takes what the link brings only after the other's mark by Native Messaging.
#[test]
fn the_switch_keeps_order_and_a_lost_link_fails_its_calls_with_what_to_do() {
    let mut host = Host::start_with_hello();
    let url = host.recv_fast_link();
    let mut bridge = host.connect();
    bridge.recv_hello();

    // The extension numbers its links; say this is its second, after a first that was lost.
    let mut request = format!("{url}?n=2").into_client_request().unwrap();
    let origin = format!("chrome-extension://{EXTENSION_ID}");
    request.headers_mut().insert("Origin", origin.parse().unwrap());
    let tcp =
        std::net::TcpStream::connect(url.trim_start_matches("ws://").split('/').next().unwrap())
            .unwrap();
    let (mut ws, _) = tungstenite::client(request, tcp).expect("the extension's handshake passes");
    // The host's mark, naming the link, comes by Native Messaging; then requests come by the
    // link only.
    let mark = host.recv();
    assert_eq!((&mark["event"], &mark["data"]), (&json!("link"), &json!({ "n": 2 })), "{mark}");
    bridge.request("1", "ping", "null");
    let asked: Value = match ws.read().unwrap() {
        WsMessage::Text(t) => serde_json::from_str(&t).unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(asked["method"], "ping");
    assert_eq!(host.try_recv(Duration::from_millis(100)), None, "not also on stdout");

    // Our answer by the link waits for our mark by Native Messaging: an answer sent before the
    // switch (here: none) could otherwise be overtaken.
    let answer = json!({ "type": "response", "id": asked["id"], "result": { "pong": 1 } });
    ws.send(WsMessage::text(answer.to_string())).unwrap();
    assert_eq!(bridge.try_recv(Duration::from_millis(200)), None, "held until the mark");
    // A mark that comes late for the first link releases nothing.
    host.send(r#"{"type":"event","event":"link","data":{"n":1}}"#);
    assert_eq!(bridge.try_recv(Duration::from_millis(200)), None, "held until its own mark");
    host.send(r#"{"type":"event","event":"link","data":{"n":2}}"#);
    assert_eq!(bridge.recv(), json!({ "type": "response", "id": "1", "result": { "pong": 1 } }));

    // The link closes with a request on it: the bridge hears why and what to do, the browser
    // gets the cancel by Native Messaging, and the next request comes that way too.
    bridge.request("2", "ping", "null");
    let on_link = ws.read().unwrap();
    assert!(on_link.is_text(), "{on_link:?}");
    ws.close(None).unwrap();
    let _ = ws.flush();
    let failed = bridge.recv();
    assert_eq!(failed["id"], "2", "{failed}");
    assert_eq!(failed["error"]["code"], "browser_disconnected", "{failed}");
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(message.contains("fast link") && message.contains("call again"), "{message}");
    assert_eq!(host.recv()["type"], "cancel");
    bridge.request("3", "ping", "null");
    let asked = host.recv();
    assert_eq!(asked["method"], "ping", "{asked}");
    host.send(&json!({ "type": "response", "id": asked["id"], "result": {} }).to_string());
    assert_eq!(bridge.recv()["id"], "3");
}
