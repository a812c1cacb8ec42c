//! Hand-over to the user, in real Chromium through the real `tabwire mcp`: ask_user shows the
//! assistant's message in tabwire's bar (a screenshot of it goes to
//! `target/test-output/ask_user.png`), the page can neither read nor press it nor keep it
//! away, every other call to the tab is refused meanwhile, and only a real click on Done (the
//! user's, here through the test's own CDP pipe) ends it.

use std::time::Duration;

use serde_json::{Value, json};
use tabwire_tests::mcp::text;
use tabwire_tests::{Cdp, Chromium, Fixtures, Mcp, bins};

/// The node of the element with id `id` anywhere in a DOM.getDocument tree, closed shadow
/// roots included (`pierce`: what only a debugger sees).
fn node_with_id(node: &Value, id: &str) -> Option<i64> {
    let attrs = node["attributes"].as_array().map(Vec::as_slice).unwrap_or_default();
    if attrs.chunks(2).any(|kv| kv[0] == "id" && kv[1] == id) {
        return node["nodeId"].as_i64();
    }
    let kids = ["children", "shadowRoots"]
        .into_iter()
        .flat_map(|k| node[k].as_array().cloned().unwrap_or_default());
    kids.into_iter().find_map(|k| node_with_id(&k, id))
}

/// A user's click at the centre of the element with id `id`: real input, as a mouse makes it.
async fn user_clicks(cdp: &Cdp, session: &str, id: &str) {
    let doc = cdp
        .call("DOM.getDocument", json!({ "depth": -1, "pierce": true }), Some(session))
        .await
        .unwrap();
    let node = node_with_id(&doc["root"], id).unwrap_or_else(|| panic!("no #{id} on screen"));
    let model =
        cdp.call("DOM.getBoxModel", json!({ "nodeId": node }), Some(session)).await.unwrap();
    let q: Vec<f64> =
        model["model"]["content"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    let (x, y) = ((q[0] + q[4]) / 2.0, (q[1] + q[5]) / 2.0);
    for kind in ["mousePressed", "mouseReleased"] {
        let ev = json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 });
        cdp.call("Input.dispatchMouseEvent", ev, Some(session)).await.unwrap();
    }
}

/// A browser (with the test's CDP pipe, to act as the user), `tabwire mcp` on it, and a tab
/// of plain.html with a CDP session on it.
struct Plain {
    _browser: Chromium,
    cdp: Cdp,
    mcp: Mcp,
    site: Fixtures,
    tab: i64,
    session: String,
}

impl Plain {
    async fn open() -> Plain {
        let mut browser = Chromium::start_with_cdp();
        let (to_browser, from_browser) = browser.take_cdp_pipe().unwrap();
        let cdp = Cdp::new(to_browser, from_browser);
        let mcp = Mcp::start(&browser.runtime_dir).await;
        let site = Fixtures::serve();
        let opened = mcp.ok("open_tab", json!({ "url": site.url("plain.html") })).await;
        let tab = opened["tab"]["id"].as_i64().unwrap();
        let target = cdp.target_id("page", "plain.html").await.unwrap();
        let session = cdp.attach(&target).await.unwrap();
        Plain { _browser: browser, cdp, mcp, site, tab, session }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_user_alone_ends_a_hand_over_with_done() {
    let Plain { _browser, cdp, mcp, site, tab, session } = Plain::open().await;

    let ask = mcp.call(
        "ask_user",
        json!({ "tab_id": tab, "message": "Sign in, then press Done", "timeout_secs": 60 }),
    );
    let user = async {
        let bar = "document.querySelector('tabwire-handover') !== null";
        cdp.wait_for(&session, bar, Duration::from_secs(10)).await.unwrap();
        // The page cannot read the bar or reach its buttons: its root is closed…
        let root = cdp
            .eval(&session, "document.querySelector('tabwire-handover').shadowRoot")
            .await
            .unwrap();
        assert_eq!(root, Value::Null);
        assert!(
            !cdp.eval(&session, "document.body.innerText")
                .await
                .unwrap()
                .to_string()
                .contains("Sign in")
        );
        // …a script's click on it does nothing…
        cdp.eval(&session, "document.querySelector('tabwire-handover').click()").await.unwrap();
        // …and taking it away puts it back.
        cdp.eval(&session, "document.querySelector('tabwire-handover').remove()").await.unwrap();
        cdp.wait_for(&session, bar, Duration::from_secs(5)).await.unwrap();
        // The assistant can do nothing in the tab meanwhile, not even read it.
        for (tool, args) in [
            ("read_page", json!({ "tab_id": tab })),
            ("click", json!({ "tab_id": tab, "selector": "p" })),
        ] {
            let err = mcp.err(tool, args).await;
            assert!(err.starts_with("waiting_for_user:") && err.contains("Done"), "{tool}: {err}");
        }
        let out = bins::repo_root().join("target/test-output");
        std::fs::create_dir_all(&out).unwrap();
        cdp.screenshot(&session, &out.join("ask_user.png")).await.unwrap();
        user_clicks(&cdp, &session, "done").await;
    };
    let (asked, ()) = tokio::join!(ask, user);
    assert_ne!(asked.is_error, Some(true), "{}", text(&asked));
    let got = asked.structured_content.clone().unwrap();
    assert_eq!(got["answer"], "done", "{got:#}");
    assert_eq!(got["origin"], site.origin());
    assert_eq!(got["title"], "Plain page");
    // Handed back: the bar is gone and the tab answers again.
    let gone = "document.querySelector('tabwire-handover') === null";
    cdp.wait_for(&session, gone, Duration::from_secs(5)).await.unwrap();
    mcp.ok("find", json!({ "tab_id": tab, "text": "window.tabwire" })).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn nothing_but_a_real_click_answers_the_bar() {
    let Plain { _browser, cdp, mcp, site: _site, tab, session } = Plain::open().await;
    let ask = mcp.call(
        "ask_user",
        json!({ "tab_id": tab, "message": "Approve the payment", "timeout_secs": 10 }),
    );
    let page = async {
        let bar = "document.querySelector('tabwire-handover') !== null";
        cdp.wait_for(&session, bar, Duration::from_secs(10)).await.unwrap();
        // Everything a script of the page can do to the host element, as a page would try.
        let attempts = "const h = document.querySelector('tabwire-handover');
            for (const t of ['pointerdown', 'mousedown', 'mouseup', 'click']) h.dispatchEvent(new MouseEvent(t, { bubbles: true, composed: true, clientX: 5, clientY: 5 }));
            document.elementFromPoint(5, 5)?.click(); true";
        cdp.eval(&session, attempts).await.unwrap();
    };
    let (asked, ()) = tokio::join!(ask, page);
    let got = asked.structured_content.clone().unwrap_or_else(|| panic!("{}", text(&asked)));
    assert_eq!(got["answer"], "timeout", "only the user answers: {got:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_popup_shows_the_hand_over_of_its_tab_and_cancel_there_ends_it() {
    let Plain { _browser, cdp, mcp, site, tab, session } = Plain::open().await;
    let ask = mcp.call(
        "ask_user",
        json!({ "tab_id": tab, "message": "Enter the 2FA code, then press Done", "timeout_secs": 60 }),
    );
    let user = async {
        let bar = "document.querySelector('tabwire-handover') !== null";
        cdp.wait_for(&session, bar, Duration::from_secs(10)).await.unwrap();
        // The user opens tabwire's popup for that tab: the message, with Done and Cancel.
        let url = format!(
            "chrome-extension://{}/ui/popup.html?tab={tab}",
            tabwire_proto::extension_id::EXTENSION_ID
        );
        let popup = cdp.open(&url).await.unwrap();
        let shown = "!document.getElementById('handover').hidden && \
                     document.getElementById('handover-message').textContent";
        let message = cdp.wait_for(&popup, shown, Duration::from_secs(5)).await.unwrap();
        assert_eq!(message, "Enter the 2FA code, then press Done");
        cdp.click(&popup, "#handover-cancel").await.unwrap();
        // Answered: the popup no longer shows it.
        let gone = "document.getElementById('handover').hidden";
        cdp.wait_for(&popup, gone, Duration::from_secs(5)).await.unwrap();
    };
    let (asked, ()) = tokio::join!(ask, user);
    let got = asked.structured_content.clone().unwrap_or_else(|| panic!("{}", text(&asked)));
    assert_eq!(got["answer"], "cancel", "{got:#}");
    assert_eq!(got["origin"], site.origin());
    // The bar in the page is gone too, and the tab answers again.
    let gone = "document.querySelector('tabwire-handover') === null";
    cdp.wait_for(&session, gone, Duration::from_secs(5)).await.unwrap();
    mcp.ok("find", json!({ "tab_id": tab, "text": "window.tabwire" })).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_popup_of_a_tab_not_handed_over_shows_no_hand_over() {
    let Plain { _browser, cdp, mcp: _mcp, site: _site, tab, session: _session } =
        Plain::open().await;
    let url = format!(
        "chrome-extension://{}/ui/popup.html?tab={tab}",
        tabwire_proto::extension_id::EXTENSION_ID
    );
    let popup = cdp.open(&url).await.unwrap();
    let ready = "document.getElementById('site').textContent.startsWith('http')";
    cdp.wait_for(&popup, ready, Duration::from_secs(5)).await.unwrap();
    let hidden = cdp.eval(&popup, "document.getElementById('handover').hidden").await.unwrap();
    assert_eq!(hidden, true);
}
