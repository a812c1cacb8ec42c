//! The popup's Stop, pressed as a user presses it (a trusted click through CDP): a call in
//! flight ends at once with `paused_by_user`, new calls are refused the same way, and only the
//! popup's Resume lets them through again — for every session (Stop all) or for one session
//! (its own Stop), the others going on. And while a session acts in a tab, the tab shows it.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tabwire_proto::extension_id::EXTENSION_ID;
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp, bins};

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
    let said = tabwire_testkit::mcp::text(&waited);
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
        let said = tabwire_testkit::mcp::text(&result);
        assert!(Instant::now() < deadline, "read_page after Resume: {said}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        cdp.eval(&popup, "document.querySelector('#stop').checkVisibility()").await
            == Ok(json!(true))
    );
}

/// `tool` called until it answers without an error, for up to `WITHIN`.
async fn until_ok(mcp: &Mcp, tool: &str, args: Value) {
    let deadline = Instant::now() + WITHIN;
    loop {
        let result = mcp.call(tool, args.clone()).await;
        if result.is_error != Some(true) {
            return;
        }
        let said = tabwire_testkit::mcp::text(&result);
        assert!(Instant::now() < deadline, "{tool}: {said}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_own_stop_ends_its_calls_and_leaves_the_others_running() {
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to_browser, from_browser);
    let pages = Fixtures::serve();
    let alpha = Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_SESSION_ID", "alpha")]).await;
    let beta = Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_SESSION_ID", "beta")]).await;
    let a =
        alpha.ok("open_tab", json!({ "url": pages.url("plain.html") })).await["tab"]["id"].clone();
    let b =
        beta.ok("open_tab", json!({ "url": pages.url("plain.html") })).await["tab"]["id"].clone();
    alpha.ok("wait_for", json!({ "tab_id": a, "selector": "body" })).await;
    beta.ok("wait_for", json!({ "tab_id": b, "selector": "body" })).await;
    let url = format!("chrome-extension://{EXTENSION_ID}/ui/popup.html?tab={a}");
    let popup = cdp.open(&url).await.unwrap_or_else(|e| panic!("open the popup: {e}"));
    let stop_alpha = r#"#sessions button[data-name="alpha"][data-action="stop"]"#;

    // Each session in flight when the user presses alpha's Stop: alpha's wait ends at once,
    // beta's goes on to its own end (its timeout).
    let alpha_waits =
        alpha.call("wait_for", json!({ "tab_id": a, "text": "never here", "timeout_ms": 30_000 }));
    let beta_waits = async {
        let started = Instant::now();
        let r = beta
            .call("wait_for", json!({ "tab_id": b, "text": "never here", "timeout_ms": 2_500 }));
        (r.await, started.elapsed())
    };
    let pressed = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        click(&cdp, &popup, stop_alpha).await;
        Instant::now()
    };
    let (waited, (beta_waited, beta_took), pressed_at) =
        tokio::join!(alpha_waits, beta_waits, pressed);
    let after = pressed_at.elapsed();
    let said = tabwire_testkit::mcp::text(&waited);
    assert_eq!(waited.is_error, Some(true), "alpha's wait_for should have been stopped: {said}");
    assert!(
        said.starts_with("paused_by_user:")
            && said.contains("this session")
            && said.contains("alpha"),
        "{said}"
    );
    assert!(after < Duration::from_secs(3), "alpha's call ended {after:?} after its Stop");
    let beta_said = tabwire_testkit::mcp::text(&beta_waited);
    assert!(!beta_said.starts_with("paused_by_user:"), "beta was not stopped: {beta_said}");
    assert!(beta_took >= Duration::from_secs(2), "beta's wait ran to its end: {beta_took:?}");

    // alpha is refused, beta acts; the popup says which one is stopped.
    for (tool, args) in [
        ("read_page", json!({ "tab_id": a })),
        ("click", json!({ "tab_id": a, "selector": "body" })),
        ("open_tab", json!({ "url": pages.url("plain.html") })),
    ] {
        let err = alpha.err(tool, args).await;
        assert!(err.starts_with("paused_by_user:") && err.contains("alpha"), "{tool}: {err}");
    }
    beta.ok("read_page", json!({ "tab_id": b })).await;
    beta.ok("click", json!({ "tab_id": b, "selector": "body" })).await;
    let row = r#"(document.querySelector('#sessions li:has(button[data-name="alpha"])')?.innerText ?? '')"#;
    let shown = cdp
        .wait_for(&popup, &format!("{row}.includes('Stopped by you') && {row}"), WITHIN)
        .await
        .unwrap_or_else(|e| panic!("the popup says alpha is stopped: {e}"));
    assert!(shown.as_str().unwrap().contains("alpha"), "{shown}");
    let beta_row =
        r#"document.querySelector('#sessions li:has(button[data-name="beta"])').innerText"#;
    let beta_row = cdp.eval(&popup, beta_row).await.unwrap();
    assert!(!beta_row.as_str().unwrap().contains("Stopped"), "{beta_row}");

    // alpha's Resume: it acts again.
    click(&cdp, &popup, r#"#sessions button[data-name="alpha"][data-action="resume"]"#).await;
    until_ok(&alpha, "read_page", json!({ "tab_id": a })).await;
    cdp.wait_for(&popup, &format!("!!document.querySelector({stop_alpha:?})"), WITHIN)
        .await
        .unwrap_or_else(|e| panic!("alpha's Stop is back: {e}"));
}

/// Every node of the page with its closed shadow roots, as CDP sees them: the text in them.
async fn all_text(cdp: &Cdp, page: &str) -> String {
    let doc = cdp
        .call("DOM.getDocument", json!({ "depth": -1, "pierce": true }), Some(page))
        .await
        .unwrap();
    fn walk(node: &Value, out: &mut String) {
        if node["nodeType"] == 3 {
            out.push_str(node["nodeValue"].as_str().unwrap_or_default());
            out.push('\n');
        }
        for k in ["children", "shadowRoots"] {
            for kid in node[k].as_array().into_iter().flatten() {
                walk(kid, out);
            }
        }
    }
    let mut out = String::new();
    walk(&doc["root"], &mut out);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tab_shows_which_session_acts_in_it_and_the_mark_is_no_click_target() {
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to_browser, from_browser);
    let pages = Fixtures::serve();
    let alpha = Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_SESSION_ID", "alpha")]).await;
    let tab =
        alpha.ok("open_tab", json!({ "url": pages.url("plain.html") })).await["tab"]["id"].clone();
    alpha.ok("wait_for", json!({ "tab_id": tab, "selector": "body" })).await;
    let target = cdp.target_id("page", "plain.html").await.unwrap();
    let page = cdp.attach(&target).await.unwrap();
    // The user looks at the tab (a background tab draws no frames to take a screenshot of).
    cdp.call("Page.bringToFront", json!({}), Some(&page)).await.unwrap();
    let badge = "document.querySelector('tabwire-badge') !== null";
    let gone = "document.querySelector('tabwire-badge') === null";
    cdp.wait_for(&page, gone, WITHIN).await.expect("no mark once the last call is long over");

    let out = bins::repo_root().join("target/test-output");
    std::fs::create_dir_all(&out).unwrap();
    let acting =
        alpha.call("wait_for", json!({ "tab_id": tab, "text": "never here", "timeout_ms": 4_000 }));
    let user = async {
        // While the call runs: the mark is there, names the session's group…
        cdp.wait_for(&page, badge, WITHIN).await.expect("the mark while alpha acts");
        let text = all_text(&cdp, &page).await;
        assert!(text.contains("alpha is acting in this tab"), "{text}");
        // …the page cannot read it…
        let root = cdp.eval(&page, "document.querySelector('tabwire-badge').shadowRoot").await;
        assert_eq!(root, Ok(Value::Null));
        // …nor is it a click target: the page's element is under every point of it (the label
        // sits in the bottom-right corner, the border runs along the edges)…
        let hits = "[[innerWidth - 30, innerHeight - 14], [1, 1], [innerWidth / 2, 1], [1, innerHeight / 2]]
            .map(([x, y]) => document.elementFromPoint(x, y)?.tagName)";
        let hits = cdp.eval(&page, hits).await.unwrap();
        for hit in hits.as_array().unwrap() {
            assert!(hit == "HTML" || hit == "BODY", "a page element under the mark: {hits}");
        }
        // …and taking it away puts it back.
        cdp.eval(&page, "document.querySelector('tabwire-badge').remove()").await.unwrap();
        cdp.wait_for(&page, badge, WITHIN).await.expect("the mark put back");
        cdp.screenshot(&page, &out.join("badge_acting.png")).await.unwrap()
    };
    let (acted, shot) = tokio::join!(acting, user);
    assert_eq!(acted.is_error, Some(true), "the wait timed out as asked");
    // A moment after the call, the mark is gone.
    cdp.wait_for(&page, gone, WITHIN).await.expect("the mark gone after the call");
    let after = cdp.screenshot(&page, &out.join("badge_after.png")).await.unwrap();
    assert_ne!(shot, after, "the screenshots during and after the action differ");

    // Reading what the page declares changes nothing a person sees: no mark, not even for a
    // moment (a watcher in the page notes every time one appears); an action still shows it.
    let watch = "window.marked = 0; new MutationObserver(() => { if (document.querySelector('tabwire-badge')) window.marked++; }).observe(document.documentElement, { childList: true, subtree: true }); true";
    cdp.eval(&page, watch).await.unwrap();
    for _ in 0..3 {
        let said = alpha.err("list_commands", json!({ "tab_id": tab })).await;
        assert!(said.starts_with("no_handler:"), "the page declares nothing: {said}");
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(cdp.eval(&page, "window.marked").await.unwrap(), 0, "a read showed the mark");
    alpha.ok("wait_for", json!({ "tab_id": tab, "selector": "body" })).await;
    cdp.wait_for(&page, "window.marked > 0", WITHIN).await.expect("an action shows the mark");
}

/// What each method the worker answers is, as its handler says (extension/worker/traits.js),
/// read from the running worker: the sets the guards used to keep by name (pause.js's
/// still-answered, unmarked and capture lists, groups.js's and activity.js's) come out of the
/// traits as they were — so Stop, the acting mark, the log and the ownership check treat every
/// method as before, and a new method is one line beside its handler.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_method_says_what_it_is_beside_its_handler() {
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to_browser, from_browser);
    let _mcp = Mcp::start(&browser.runtime_dir).await; // the worker is up once a session is
    let worker = cdp.target_id("service_worker", "/worker/background.js").await.unwrap();
    let worker = cdp.attach(&worker).await.unwrap();
    let with = |trait_: &str| {
        format!(
            "Object.entries(tabwireDebug.methods).filter(([, f]) => f.traits?.{trait_}).map(([n]) => n).sort()"
        )
    };
    let names = async |expr: String| -> Vec<String> {
        serde_json::from_value(cdp.eval(&worker, &expr).await.unwrap()).unwrap()
    };
    let set = |names: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        v.sort();
        v
    };
    // Not logged, not checked for its session: the bridges' own upkeep (activity.js's old QUIET).
    assert_eq!(names(with("bookkeeping")).await, set(&["page.drained", "chat.status"]));
    // Still answered while the user pressed Stop (pause.js's old STILL_ANSWERED).
    let still = "Object.entries(tabwireDebug.methods).filter(([, f]) => f.traits?.bookkeeping || \
                 f.traits?.pageless || f.traits?.stops).map(([n]) => n).sort()";
    let old_still = [
        "ping",
        "echo",
        "sites.list",
        "sites.allow",
        "sites.revoke",
        "workflow.update",
        "page.drained",
        "chat.status",
        "chat.cancel",
        "tabs.list",
    ];
    assert_eq!(names(still.into()).await, set(&old_still));
    // No acting mark (pause.js's old UNMARKED, less the bookkeeping), and held off for a capture.
    assert_eq!(
        names(with("declared")).await,
        set(&["page.get_state", "page.commands", "page.echo"])
    );
    assert_eq!(
        names(with("capture")).await,
        set(&["dom.screenshot", "webdev.pdf", "handover.ask"])
    );
    // groups.js: what answers with a tab, opens one, or lists them.
    assert_eq!(
        names(with("answersTab")).await,
        set(&["tabs.open", "tabs.activate", "tabs.navigate"])
    );
    assert_eq!(names(with("opens")).await, set(&["tabs.open"]));
    assert_eq!(names(with("listsTabs")).await, set(&["tabs.list"]));
    assert_eq!(names(with("listsPages")).await, set(&["page.commands"]));
    // Moves a tab into another session's group: no acting mark on a tab that is leaving.
    assert_eq!(names(with("regroups")).await, set(&["tabs.give"]));
    // Reaching no page: still answered for a tab handed over to the user (handover.js).
    let pageless = set(&[
        "ping",
        "echo",
        "sites.list",
        "sites.allow",
        "sites.revoke",
        "workflow.update",
        "tabs.list",
    ]);
    assert_eq!(names(with("pageless")).await, pageless);
}
