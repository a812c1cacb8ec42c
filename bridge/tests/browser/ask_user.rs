//! Hand-over to the user, in real Chromium through the real `tabwire mcp`: ask_user shows the
//! assistant's message in a bar on the page (a screenshot of it goes to
//! `target/test-output/ask_user.png`), which the page can neither read nor keep away and which
//! has no button; every other call to the tab is refused meanwhile, and only the user's real
//! click on Done or Cancel in tabwire's toolbar popup (here the test's own CDP pipe, in the popup
//! page opened for the tab) ends it. A page that hides the bar and draws its own, with Cancel
//! where a Done could be, gets nothing from the user's click
//! (`target/test-output/ask_user_attack.png`).

use std::time::Duration;

use serde_json::{Value, json};
use tabwire_testkit::mcp::text;
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp, bins};

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

/// Every node under the element with local name `name`, closed shadow roots included, as a
/// debugger sees them: (node name, text of a text node).
fn nodes_under(node: &Value, name: &str, inside: bool, out: &mut Vec<(String, String)>) {
    let here = node["localName"] == name;
    if inside {
        let text = node["nodeValue"].as_str().unwrap_or_default().to_owned();
        out.push((node["nodeName"].as_str().unwrap_or_default().to_owned(), text));
    }
    for k in ["children", "shadowRoots"] {
        for kid in node[k].as_array().cloned().unwrap_or_default() {
            nodes_under(&kid, name, inside || here, out);
        }
    }
}

/// The centre of a node's box on screen.
async fn centre(cdp: &Cdp, session: &str, node: i64) -> (f64, f64) {
    let model =
        cdp.call("DOM.getBoxModel", json!({ "nodeId": node }), Some(session)).await.unwrap();
    let q: Vec<f64> =
        model["model"]["content"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    ((q[0] + q[4]) / 2.0, (q[1] + q[5]) / 2.0)
}

/// A user's click at (x, y) of the viewport: real input, as a mouse makes it.
async fn user_clicks_at(cdp: &Cdp, session: &str, (x, y): (f64, f64)) {
    for kind in ["mousePressed", "mouseReleased"] {
        let ev = json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 });
        cdp.call("Input.dispatchMouseEvent", ev, Some(session)).await.unwrap();
    }
}

/// The user opens tabwire's toolbar popup for `tab` (here as a page of its own, about that tab)
/// and sees the hand-over's message there: the popup's CDP session.
async fn popup_showing(cdp: &Cdp, tab: i64, message: &str) -> String {
    let url = format!(
        "chrome-extension://{}/ui/popup.html?tab={tab}",
        tabwire_proto::extension_id::EXTENSION_ID
    );
    let popup = cdp.open(&url).await.unwrap();
    let shown = "!document.getElementById('handover').hidden && \
                 document.getElementById('handover-message').textContent";
    let got = cdp.wait_for(&popup, shown, Duration::from_secs(5)).await.unwrap();
    assert_eq!(got, message);
    popup
}

/// The user presses Done or Cancel (`answer`) in the popup, with a real click, once it takes one.
async fn press_in_popup(cdp: &Cdp, popup: &str, answer: &str) {
    let ready = format!("!document.getElementById('handover-{answer}').disabled");
    cdp.wait_for(popup, &ready, Duration::from_secs(5)).await.unwrap();
    cdp.click(popup, &format!("#handover-{answer}")).await.unwrap();
    // Answered: the popup no longer shows it.
    let gone = "document.getElementById('handover').hidden";
    cdp.wait_for(popup, gone, Duration::from_secs(5)).await.unwrap();
}

const BAR: &str = "document.querySelector('tabwire-handover') !== null";

#[tokio::test(flavor = "multi_thread")]
async fn the_user_alone_ends_a_hand_over_with_done() {
    let Plain { _browser, cdp, mcp, site, tab, session } = Plain::open().await;

    let message = "Sign in, then press Done";
    let ask =
        mcp.call("ask_user", json!({ "tab_id": tab, "message": message, "timeout_secs": 60 }));
    let user = async {
        cdp.wait_for(&session, BAR, Duration::from_secs(10)).await.unwrap();
        // The page cannot read the bar: its root is closed…
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
        // …and taking it away puts it back.
        cdp.eval(&session, "document.querySelector('tabwire-handover').remove()").await.unwrap();
        cdp.wait_for(&session, BAR, Duration::from_secs(5)).await.unwrap();
        // What the user sees in it: the message and where to answer, and no button.
        let doc = cdp
            .call("DOM.getDocument", json!({ "depth": -1, "pierce": true }), Some(&session))
            .await
            .unwrap();
        let mut bar = Vec::new();
        nodes_under(&doc["root"], "tabwire-handover", false, &mut bar);
        assert!(!bar.iter().any(|(n, _)| n == "BUTTON"), "a button in the bar: {bar:?}");
        let said: String = bar.iter().map(|(_, t)| t.as_str()).collect();
        assert!(said.contains(message) && said.contains("toolbar"), "{said}");
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
        let popup = popup_showing(&cdp, tab, message).await;
        press_in_popup(&cdp, &popup, "done").await;
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
async fn nothing_in_the_page_answers_a_hand_over() {
    let Plain { _browser, cdp, mcp, site: _site, tab, session } = Plain::open().await;
    let ask = mcp.call(
        "ask_user",
        json!({ "tab_id": tab, "message": "Approve the payment", "timeout_secs": 10 }),
    );
    let page = async {
        cdp.wait_for(&session, BAR, Duration::from_secs(10)).await.unwrap();
        // Everything a script of the page can do to the host element, as a page would try.
        let attempts = "const h = document.querySelector('tabwire-handover');
            for (const t of ['pointerdown', 'mousedown', 'mouseup', 'click']) h.dispatchEvent(new MouseEvent(t, { bubbles: true, composed: true, clientX: 5, clientY: 5 }));
            document.elementFromPoint(5, 5)?.click(); true";
        cdp.eval(&session, attempts).await.unwrap();
        // And the user's own clicks all over the bar: it has nothing that answers.
        let doc = cdp.call("DOM.getDocument", json!({ "depth": 1 }), Some(&session)).await.unwrap();
        let root = doc["root"]["nodeId"].as_i64().unwrap();
        let found = json!({ "nodeId": root, "selector": "tabwire-handover" });
        let host = cdp.call("DOM.querySelector", found, Some(&session)).await.unwrap();
        let model = json!({ "nodeId": host["nodeId"] });
        let model = cdp.call("DOM.getBoxModel", model, Some(&session)).await.unwrap();
        let q: Vec<f64> = model["model"]["border"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let y = (q[1] + q[5]) / 2.0;
        for i in 1..20 {
            user_clicks_at(&cdp, &session, (q[0] + (q[2] - q[0]) * f64::from(i) / 20.0, y)).await;
        }
    };
    let (asked, ()) = tokio::join!(ask, page);
    let got = asked.structured_content.clone().unwrap_or_else(|| panic!("{}", text(&asked)));
    assert_eq!(got["answer"], "timeout", "only the user answers, in the popup: {got:#}");
}

/// The attack of issue 44: a script of the (allowed) page makes tabwire's bar invisible — it still
/// takes clicks — and draws its own copy in the top layer, above everything and letting clicks
/// through (`pointer-events: none`), with its "Cancel" where a Done of tabwire's bar would be.
/// The attacker knows where that is (the bar looks the same for everyone); the test asks the
/// debugger. The user, who wants to cancel, clicks that "Cancel": the assistant must not hear
/// `done`. It hears nothing until the user answers in the popup.
#[tokio::test(flavor = "multi_thread")]
async fn a_page_that_hides_the_bar_and_draws_its_own_cannot_make_cancel_done() {
    let Plain { _browser, cdp, mcp, site: _site, tab, session } = Plain::open().await;
    let message = "Approve the payment of 900 EUR, then press Done";
    let ask =
        mcp.call("ask_user", json!({ "tab_id": tab, "message": message, "timeout_secs": 60 }));
    tokio::pin!(ask);
    let attack = async {
        cdp.wait_for(&session, BAR, Duration::from_secs(10)).await.unwrap();
        // Where the attacker puts its Cancel: on tabwire's Done if the bar has one, else in
        // the middle of the bar.
        let doc = cdp
            .call("DOM.getDocument", json!({ "depth": -1, "pierce": true }), Some(&session))
            .await
            .unwrap();
        let target = match node_with_id(&doc["root"], "done") {
            Some(done) => centre(&cdp, &session, done).await,
            None => {
                let root = doc["root"]["nodeId"].as_i64().unwrap();
                let found = json!({ "nodeId": root, "selector": "tabwire-handover" });
                let host = cdp.call("DOM.querySelector", found, Some(&session)).await.unwrap();
                centre(&cdp, &session, host["nodeId"].as_i64().unwrap()).await
            }
        };
        let hostile = format!(
            r#"(() => {{
            const [x, y] = [{}, {}];
            const style = document.createElement('style');
            style.textContent = 'tabwire-handover {{ opacity: 0 !important; }}';
            document.head.append(style);
            const fake = document.createElement('div');
            fake.popover = 'manual';
            fake.style.cssText = 'pointer-events: none; inset: 0 auto auto 0; margin: 0; padding: 0; border: 0; width: 100vw; height: 100vh; background: transparent;';
            fake.innerHTML = `<div style="font: 14px system-ui; background: #fff4c2; border-bottom: 2px solid #c90; padding: 10px 14px">
                <b>Your assistant asks you:</b> Approve the payment of 900 EUR?</div>
                <button id="fake-done" style="position: fixed">Done</button>
                <button id="fake-cancel" style="position: fixed">Cancel</button>`;
            document.body.append(fake);
            fake.showPopover();
            const cancel = fake.querySelector('#fake-cancel');
            const r = cancel.getBoundingClientRect();
            Object.assign(cancel.style, {{ left: `${{x - r.width / 2}}px`, top: `${{y - r.height / 2}}px` }});
            Object.assign(fake.querySelector('#fake-done').style, {{ left: `${{x - r.width / 2 - 90}}px`, top: `${{y - r.height / 2}}px` }});
            return getComputedStyle(document.querySelector('tabwire-handover')).opacity;
        }})()"#,
            target.0, target.1
        );
        assert_eq!(cdp.eval(&session, &hostile).await.unwrap(), "0", "the bar is hidden");
        let out = bins::repo_root().join("target/test-output");
        std::fs::create_dir_all(&out).unwrap();
        cdp.screenshot(&session, &out.join("ask_user_attack.png")).await.unwrap();
        // The user clicks the Cancel they see.
        let seen = "(() => { const r = document.getElementById('fake-cancel').getBoundingClientRect(); \
                    return [r.left + r.width / 2, r.top + r.height / 2]; })()";
        let at = cdp.eval(&session, seen).await.unwrap();
        let at = (at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
        user_clicks_at(&cdp, &session, at).await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
    };
    tokio::select! {
        asked = &mut ask => panic!(
            "the user's click on the page's \"Cancel\" ended the hand-over: {}",
            asked.structured_content.clone().map_or_else(|| text(&asked), |c| c.to_string())
        ),
        () = attack => {}
    }
    // Still open: the user answers where no page can draw, and the assistant hears that.
    let user = async {
        let popup = popup_showing(&cdp, tab, message).await;
        press_in_popup(&cdp, &popup, "cancel").await;
    };
    let (asked, ()) = tokio::join!(ask, user);
    let got = asked.structured_content.clone().unwrap_or_else(|| panic!("{}", text(&asked)));
    assert_eq!(got["answer"], "cancel", "{got:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_popup_shows_the_hand_over_of_its_tab_and_cancel_there_ends_it() {
    let Plain { _browser, cdp, mcp, site, tab, session } = Plain::open().await;
    let message = "Enter the 2FA code, then press Done";
    let badge = format!("chrome.action.getBadgeText({{ tabId: {tab} }})");
    let ask =
        mcp.call("ask_user", json!({ "tab_id": tab, "message": message, "timeout_secs": 60 }));
    let user = async {
        cdp.wait_for(&session, BAR, Duration::from_secs(10)).await.unwrap();
        // The user opens tabwire's popup for that tab: who asks, the message, Done and Cancel.
        let popup = popup_showing(&cdp, tab, message).await;
        let who = cdp.eval(&popup, "document.getElementById('handover-who').textContent").await;
        assert!(
            who.as_ref().unwrap().as_str().unwrap().ends_with("asks you, in this tab"),
            "{who:?}"
        );
        // As a person sees it, popup-sized (`target/test-output/ask_user_popup.png`).
        let size = json!({ "width": 360, "height": 420, "deviceScaleFactor": 1, "mobile": false });
        cdp.call("Emulation.setDeviceMetricsOverride", size, Some(&popup)).await.unwrap();
        let out = bins::repo_root().join("target/test-output");
        std::fs::create_dir_all(&out).unwrap();
        cdp.screenshot(&popup, &out.join("ask_user_popup.png")).await.unwrap();
        // tabwire's toolbar icon says so too, for that tab.
        assert_eq!(cdp.eval(&popup, &badge).await.unwrap(), "ask");
        press_in_popup(&cdp, &popup, "cancel").await;
        popup
    };
    let (asked, popup) = tokio::join!(ask, user);
    let got = asked.structured_content.clone().unwrap_or_else(|| panic!("{}", text(&asked)));
    assert_eq!(got["answer"], "cancel", "{got:#}");
    assert_eq!(got["origin"], site.origin());
    // The icon is back to what it shows for every tab: the connection.
    cdp.wait_for(&popup, &format!("{badge}.then((t) => t === 'on')"), Duration::from_secs(5))
        .await
        .unwrap();
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
