//! Many sessions, one browser: each session's tabs in a Chrome tab group of its own, named after
//! it; a session does not act in another live session's tabs; a page's new tab joins its
//! opener's group; a session that ends leaves its group collapsed and titled "… (done)"; and no
//! tool that does not ask to activate moves the user's focus (specs/tools.md, "Sessions and their
//! tab groups").

use std::time::Duration;

use serde_json::{Value, json};
use tabwire_proto::extension_id::EXTENSION_ID;
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp};

const WITHIN: Duration = Duration::from_secs(10);

/// Chrome's own view, from the extension's service worker: each tab's group (title, colour,
/// collapsed), the active tab of each window and the focused window.
async fn chrome(cdp: &Cdp, worker: &str) -> Value {
    let expr = r#"(async () => {
        const groups = Object.fromEntries((await chrome.tabGroups.query({})).map((g) => [g.id, g]));
        const tabs = (await chrome.tabs.query({})).map((t) => ({ id: t.id, active: t.active, window: t.windowId,
            group: groups[t.groupId] ? { id: t.groupId, title: groups[t.groupId].title, color: groups[t.groupId].color,
            collapsed: groups[t.groupId].collapsed } : null }));
        const focused = (await chrome.windows.getLastFocused()).id;
        return { tabs, focused };
    })()"#;
    cdp.eval(worker, expr).await.unwrap_or_else(|e| panic!("read Chrome's tabs: {e}"))
}

/// The group `tab` is in, as Chrome has it (null for none).
async fn group_of(cdp: &Cdp, worker: &str, tab: &Value) -> Value {
    let now = chrome(cdp, worker).await;
    let found = now["tabs"].as_array().unwrap().iter().find(|t| t["id"] == *tab);
    found.unwrap_or_else(|| panic!("tab {tab} in {now}"))["group"].clone()
}

/// The active tab of each of the user's windows and the focused window. A session's own window
/// (its tabs, all in its group: specs/tools.md, "In the background") is not the user's.
async fn focus(cdp: &Cdp, worker: &str) -> (Vec<(Value, Value)>, Value) {
    let now = chrome(cdp, worker).await;
    let tabs = now["tabs"].as_array().unwrap();
    let users = |w: &Value| tabs.iter().any(|t| t["window"] == *w && t["group"].is_null());
    let mut active: Vec<_> = tabs
        .iter()
        .filter(|t| t["active"] == true && users(&t["window"]))
        .map(|t| (t["window"].clone(), t["id"].clone()))
        .collect();
    active.sort_by_key(|a| a.0.to_string());
    (active, now["focused"].clone())
}

async fn open(mcp: &Mcp, url: String) -> Value {
    mcp.ok("open_tab", json!({ "url": url })).await["tab"]["id"].clone()
}

fn ids(listed: &Value) -> Vec<Value> {
    listed["tabs"].as_array().unwrap().iter().map(|t| t["id"].clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_session_works_in_its_own_tab_group_and_not_in_anothers() {
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to_browser, from_browser);
    let pages = Fixtures::serve();
    let alpha = Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_SESSION_ID", "alpha")]).await;
    let beta = Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_SESSION_ID", "beta")]).await;
    let worker = cdp.target_id("service_worker", "/worker/background.js").await.unwrap();
    let worker = cdp.attach(&worker).await.unwrap();
    let before = focus(&cdp, &worker).await;

    // Each session's tabs go into its own group, titled with its name, in the background.
    let a1 = open(&alpha, pages.url("plain.html")).await;
    let a2 = open(&alpha, pages.url("dom/form.html")).await;
    let b1 = open(&beta, pages.url("plain.html")).await;
    assert_eq!(focus(&cdp, &worker).await, before, "after open_tab");
    let (ga1, ga2, gb1) = (
        group_of(&cdp, &worker, &a1).await,
        group_of(&cdp, &worker, &a2).await,
        group_of(&cdp, &worker, &b1).await,
    );
    assert_eq!(ga1["title"], "alpha", "{ga1}");
    assert_eq!(ga1["id"], ga2["id"], "one group for alpha's tabs: {ga1} {ga2}");
    assert_eq!(gb1["title"], "beta", "{gb1}");
    assert_ne!(ga1["id"], gb1["id"]);
    assert!(ga1["color"].is_string() && gb1["color"].is_string(), "{ga1} {gb1}");

    // Each lists its own tabs (and the user's), never the other's.
    let listed = alpha.ok("list_tabs", json!({})).await;
    let seen = ids(&listed);
    assert!(seen.contains(&a1) && seen.contains(&a2) && !seen.contains(&b1), "{listed}");
    let mine = listed["tabs"].as_array().unwrap().iter().find(|t| t["id"] == a1).unwrap();
    assert_eq!((&mine["shared"], &mine["group"]), (&json!(true), &json!("alpha")), "{mine}");
    let seen = ids(&beta.ok("list_tabs", json!({})).await);
    assert!(seen.contains(&b1) && !seen.contains(&a1), "{seen:?}");

    // Acting in the other's tab is refused, naming its owner; nothing moves.
    for (tool, args) in [
        ("read_page", json!({ "tab_id": a1 })),
        ("click", json!({ "tab_id": a1, "selector": "body" })),
        ("navigate", json!({ "tab_id": a2, "url": pages.url("plain.html") })),
        ("close_tab", json!({ "tab_id": a2 })),
    ] {
        let err = beta.err(tool, args).await;
        assert!(
            err.starts_with("tab_owned_by_other_session:") && err.contains("\"alpha\""),
            "{tool}: {err}"
        );
        assert_eq!(focus(&cdp, &worker).await, before, "after {tool}");
    }
    let err = alpha.err("read_page", json!({ "tab_id": b1 })).await;
    assert!(err.starts_with("tab_owned_by_other_session:") && err.contains("\"beta\""), "{err}");
    // Its own tabs, as usual, without taking the focus.
    for (tool, args) in [
        ("read_page", json!({ "tab_id": a2 })),
        (
            "fill",
            json!({ "tab_id": a2, "fields": [{ "selector": "input[name=name]", "value": "Ada" }] }),
        ),
        ("find", json!({ "tab_id": a2, "text": "Create account" })),
        ("wait_for", json!({ "tab_id": a2, "text": "Create account" })),
        ("navigate", json!({ "tab_id": a1, "url": pages.url("dom/widgets.html") })),
        ("list_tabs", json!({})),
    ] {
        let result = alpha.call(tool, args).await;
        assert_ne!(result.is_error, Some(true), "{tool}: {}", tabwire_testkit::text(&result));
        assert_eq!(focus(&cdp, &worker).await, before, "after {tool}");
    }

    // A worker alpha spawned (a `tabwire mcp` with alpha's id and its own worker id) gets a
    // group of its own, named after the worker; neither acts in the other's tabs.
    let env = [("TABWIRE_SESSION_ID", "alpha"), ("TABWIRE_WORKER_ID", "scout-1a2b3c4d")];
    let scout = Mcp::start_with(&browser.runtime_dir, &env).await;
    let w1 = open(&scout, pages.url("plain.html")).await;
    let gw1 = group_of(&cdp, &worker, &w1).await;
    assert_eq!(gw1["title"], "scout", "{gw1}");
    assert_ne!(gw1["id"], ga1["id"]);
    let err = scout.err("read_page", json!({ "tab_id": a1 })).await;
    assert!(err.starts_with("tab_owned_by_other_session:") && err.contains("\"alpha\""), "{err}");
    let err = alpha.err("read_page", json!({ "tab_id": w1 })).await;
    assert!(err.starts_with("tab_owned_by_other_session:") && err.contains("\"scout\""), "{err}");
    assert_eq!(focus(&cdp, &worker).await, before, "after the worker's open_tab");

    // A tab the page opens from alpha's tab (a target=_blank link) joins alpha's group. In
    // front: Chrome opens no tab for a link clicked in a background tab.
    alpha.ok("activate_tab", json!({ "tab_id": a1 })).await;
    let link = json!({ "tab_id": a1, "selector": "a[target=_blank]" });
    let done = alpha.ok("click", link).await;
    let new_tab = done["new_tab"].clone();
    assert!(new_tab.is_i64(), "{done}");
    let expr = format!("chrome.tabs.get({new_tab}).then((t) => t.groupId !== -1 && t.groupId)");
    let joined = cdp.wait_for(&worker, &expr, WITHIN).await.expect("the new tab joins a group");
    assert_eq!(joined, ga1["id"], "the opener's group");
    let err = beta.err("read_page", json!({ "tab_id": new_tab })).await;
    assert!(err.starts_with("tab_owned_by_other_session:"), "{err}");

    // The extension's service worker restarts (its host goes with it, and the sessions attach
    // to the new one): who owns which group is kept.
    let host = browser.host_pid();
    let sw = cdp.target_id("service_worker", "/worker/background.js").await.unwrap();
    cdp.call("Target.closeTarget", json!({ "targetId": sw }), None).await.unwrap();
    let deadline = std::time::Instant::now() + WITHIN;
    while browser.host_running(host) {
        assert!(std::time::Instant::now() < deadline, "the host outlived its worker");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A tab event wakes the worker again.
    let wake = json!({ "url": "about:blank", "background": true });
    cdp.call("Target.createTarget", wake, None).await.unwrap();
    let worker = loop {
        let err = beta.err("read_page", json!({ "tab_id": a1 })).await;
        if err.starts_with("tab_owned_by_other_session:") {
            assert!(err.contains("\"alpha\""), "{err}");
            break cdp
                .attach(&cdp.target_id("service_worker", "/worker/").await.unwrap())
                .await
                .unwrap();
        }
        assert!(std::time::Instant::now() < deadline + WITHIN, "after the restart: {err}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(group_of(&cdp, &worker, &a1).await["title"], "alpha");
    // Alpha is attached to the new host (it reconnects on its own, as beta did; a call that
    // succeeds makes sure it has, so that the host names it among its sessions, as it would
    // for a session at work). Under Wine it may find the new host a moment after beta.
    alpha.ok_within("list_tabs", json!({}), "no browser is connected", WITHIN).await;

    // Alpha ends: its group stays for the user, collapsed and titled done; its tabs are the
    // user's now, which beta may use when it names them, and beta's group is untouched.
    alpha.client.cancel().await.unwrap();
    let expr = format!(
        "chrome.tabGroups.get({}).then((g) => g.title === 'alpha (done)' && g.collapsed && g.title)",
        ga1["id"]
    );
    cdp.wait_for(&worker, &expr, WITHIN).await.expect("alpha's group titled done");
    assert_eq!(group_of(&cdp, &worker, &b1).await["title"], "beta");
    assert_eq!(group_of(&cdp, &worker, &w1).await["title"], "scout", "the worker lives on");
    let listed = beta.ok("list_tabs", json!({})).await;
    let theirs = listed["tabs"].as_array().unwrap().iter().find(|t| t["id"] == a2);
    let theirs = theirs.unwrap_or_else(|| panic!("a2 is the user's now: {listed}"));
    assert_eq!((&theirs["shared"], &theirs["group"]), (&json!(false), &json!("alpha (done)")));
    beta.read_page(json!({ "tab_id": a2 })).await;

    // The user hands a tab over by dragging it into beta's group: it is beta's.
    let drag = format!("chrome.tabs.group({{ tabIds: [{a2}], groupId: {} }})", gb1["id"]);
    cdp.eval(&worker, &drag).await.unwrap();
    let listed = beta.ok("list_tabs", json!({})).await;
    let given = listed["tabs"].as_array().unwrap().iter().find(|t| t["id"] == a2).unwrap();
    assert_eq!((&given["shared"], &given["group"]), (&json!(true), &json!("beta")), "{given}");
    let err = scout.err("read_page", json!({ "tab_id": a2 })).await;
    assert!(err.contains("\"beta\""), "{err}");

    // Or with the popup's "Give this tab to", which lists the running sessions.
    let url = format!("chrome-extension://{EXTENSION_ID}/ui/popup.html?tab={a1}");
    let popup = cdp.open(&url).await.unwrap_or_else(|e| panic!("open the popup: {e}"));
    let offered = "!document.querySelector('#give').hidden && \
        [...document.querySelectorAll('#give-to option')].map((o) => o.textContent).sort().join()";
    let offered = cdp.wait_for(&popup, offered, WITHIN).await.expect("the popup offers the tab");
    assert_eq!(offered, "beta,scout");
    let pick = format!("document.querySelector('#give-to').value = '{}'", gb1["id"]);
    cdp.eval(&popup, &pick).await.unwrap();
    cdp.click(&popup, "#give-button").await.unwrap();
    let expr = format!("chrome.tabs.get({a1}).then((t) => t.groupId === {})", gb1["id"]);
    cdp.wait_for(&worker, &expr, WITHIN).await.expect("the tab joins beta's group");
    let listed = beta.ok("list_tabs", json!({})).await;
    let given = listed["tabs"].as_array().unwrap().iter().find(|t| t["id"] == a1).unwrap();
    assert_eq!(given["shared"], true, "{given}");
}

/// The tabs whose commands `list_commands` shows this session.
async fn command_tabs(mcp: &Mcp) -> Vec<Value> {
    let listed = mcp.ok("list_commands", json!({})).await;
    listed["pages"].as_array().unwrap().iter().map(|p| p["tab_id"].clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_lists_the_commands_of_its_own_tabs_and_the_users_not_of_anothers() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let alpha = Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_SESSION_ID", "alpha")]).await;
    let beta = Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_SESSION_ID", "beta")]).await;
    let b1 = open(&beta, pages.url("colour.html")).await;

    // Alpha opens a page that declares commands (testkit/fixtures/colour.html).
    let a1 = open(&alpha, pages.url("colour.html")).await;
    alpha.ok("get_state", json!({ "tab_id": a1 })).await;
    assert!(command_tabs(&alpha).await.contains(&a1), "alpha lists its own page's commands");
    let theirs = command_tabs(&beta).await;
    assert!(!theirs.contains(&a1) && theirs.contains(&b1), "beta lists {theirs:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lead_gives_a_tab_to_its_worker() {
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to_browser, from_browser);
    let pages = Fixtures::serve();
    // A worker template that only waits: the worker's own tabwire is started below, as the
    // assistant a real template runs would start it (the lead's id, the worker's id).
    let dir = tabwire_testkit::bins::scratch_dir("give");
    std::fs::create_dir_all(dir.join("config")).unwrap();
    std::fs::write(dir.join("config/workers.json"), r#"{"wait": ["sleep", "{prompt}"]}"#).unwrap();
    let (config, state) = (dir.join("config"), dir.join("state"));
    let env = [
        ("TABWIRE_SESSION_ID", "lead"),
        ("TABWIRE_CONFIG_DIR", config.to_str().unwrap()),
        ("TABWIRE_STATE_DIR", state.to_str().unwrap()),
    ];
    let lead = Mcp::start_with(&browser.runtime_dir, &env).await;
    let worker = cdp.target_id("service_worker", "/worker/background.js").await.unwrap();
    let worker = cdp.attach(&worker).await.unwrap();
    let t1 = open(&lead, pages.url("plain.html")).await;
    let t2 = open(&lead, pages.url("dom/form.html")).await;
    let leads = group_of(&cdp, &worker, &t2).await;
    let spawned = lead
        .ok("spawn_worker", json!({ "name": "scout", "prompt": "60", "command": "wait" }))
        .await;
    let id = spawned["worker_id"].as_str().unwrap().to_owned();
    let before = focus(&cdp, &worker).await;

    // Given before the worker made a call of its own: the tab moves into a group titled with the
    // worker's name at once, without taking the focus, and the lead no longer acts in it.
    let given = lead.ok("give_tab", json!({ "tab_id": t1, "worker_id": id })).await;
    assert_eq!((&given["tab_id"], &given["group"]), (&t1, &json!("scout")), "{given}");
    let scouts = group_of(&cdp, &worker, &t1).await;
    assert_eq!(scouts["title"], "scout", "{scouts}");
    assert_ne!(scouts["id"], leads["id"]);
    assert_eq!(focus(&cdp, &worker).await, before, "after give_tab");
    let err = lead.err("read_page", json!({ "tab_id": t1 })).await;
    assert!(err.starts_with("tab_owned_by_other_session:") && err.contains("\"scout\""), "{err}");

    // The worker's tabwire takes the group as its own: it acts in the tab, lists it as its own,
    // and the tabs it opens join the same group.
    let scout = Mcp::start_with(
        &browser.runtime_dir,
        &[("TABWIRE_SESSION_ID", "lead"), ("TABWIRE_WORKER_ID", id.as_str())],
    )
    .await;
    scout.read_page(json!({ "tab_id": t1 })).await;
    let listed = scout.ok("list_tabs", json!({})).await;
    let mine = listed["tabs"].as_array().unwrap().iter().find(|t| t["id"] == t1).unwrap();
    assert_eq!((&mine["shared"], &mine["group"]), (&json!(true), &json!("scout")), "{mine}");
    assert!(!ids(&listed).contains(&t2), "the lead's other tab stays the lead's: {listed}");
    let w1 = open(&scout, pages.url("plain.html")).await;
    assert_eq!(group_of(&cdp, &worker, &w1).await["id"], scouts["id"]);

    // Once the worker is known, a tab given joins its group all the same.
    lead.ok("give_tab", json!({ "tab_id": t2, "worker_id": id })).await;
    assert_eq!(group_of(&cdp, &worker, &t2).await["id"], scouts["id"]);
    scout.read_page(json!({ "tab_id": t2 })).await;

    // What the lead may not give: a tab that is not its own, to a worker that is not its own.
    let err = lead.err("give_tab", json!({ "tab_id": w1, "worker_id": id })).await;
    assert!(err.starts_with("tab_owned_by_other_session:"), "{err}");
    let mine = open(&lead, pages.url("plain.html")).await;
    let err = lead.err("give_tab", json!({ "tab_id": mine, "worker_id": "nobody-12345678" })).await;
    assert!(err.starts_with("bad_request:") && err.contains(&id), "names the running ones: {err}");
    assert_eq!(group_of(&cdp, &worker, &mine).await["title"], "lead", "nothing moved");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_user_chooses_in_the_popup_that_an_ended_sessions_tabs_close() {
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to_browser, from_browser);
    let pages = Fixtures::serve();
    let worker = cdp.target_id("service_worker", "/worker/background.js").await.unwrap();
    let worker = cdp.attach(&worker).await.unwrap();

    // The popup offers the choice, "keep" first; the user picks "close its tabs".
    let url = format!("chrome-extension://{EXTENSION_ID}/ui/popup.html");
    let popup = cdp.open(&url).await.unwrap_or_else(|e| panic!("open the popup: {e}"));
    // Once the popup's script ran (it fills in the extension's id).
    let ran = "document.querySelector('#extension_id')?.textContent.length > 1";
    cdp.wait_for(&popup, ran, WITHIN).await.expect("the popup's script runs");
    let shown = "document.querySelector('#when-ended')?.value === 'keep' && \
        [...document.querySelectorAll('#when-ended option')].map((o) => o.textContent).join(' | ')";
    let offered = cdp.wait_for(&popup, shown, WITHIN).await.expect("the popup offers the choice");
    assert_eq!(offered, "keep its tabs, collapsed | close its tabs");
    let pick = "const s = document.querySelector('#when-ended'); s.focus(); s.value = 'close'; \
        s.dispatchEvent(new Event('change', { bubbles: true })); true";
    cdp.eval(&popup, pick).await.unwrap();
    let saved = "chrome.storage.local.get('when_ended').then((g) => g.when_ended === 'close')";
    cdp.wait_for(&worker, saved, WITHIN).await.expect("the choice is kept");

    let gamma = Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_SESSION_ID", "gamma")]).await;
    let delta = Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_SESSION_ID", "delta")]).await;
    let g1 = open(&gamma, pages.url("plain.html")).await;
    let g2 = open(&gamma, pages.url("dom/form.html")).await;
    let d1 = open(&delta, pages.url("plain.html")).await;

    // Gamma ends: its tabs close; delta's stay, and so does every other tab.
    gamma.client.cancel().await.unwrap();
    let gone = format!(
        "chrome.tabs.query({{}}).then((ts) => !ts.some((t) => [{g1}, {g2}].includes(t.id)))"
    );
    cdp.wait_for(&worker, &gone, WITHIN).await.expect("gamma's tabs closed");
    assert_eq!(group_of(&cdp, &worker, &d1).await["title"], "delta");
    delta.read_page(json!({ "tab_id": d1 })).await;
}

/// A session does not hear of another live session's tabs: no `tab`, `page_event` or
/// `state_update` event about them reaches it, while those about its own tabs do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_hears_of_its_own_tabs_not_of_anothers() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let alpha = Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_SESSION_ID", "alpha")]).await;
    let beta = Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_SESSION_ID", "beta")]).await;
    let b1 = open(&beta, pages.url("plain.html")).await;
    let a1 = open(&alpha, pages.url("app.html")).await;
    alpha.ok("navigate", json!({ "tab_id": a1, "url": pages.url("plain.html") })).await;
    beta.ok("navigate", json!({ "tab_id": b1, "url": pages.url("app.html") })).await;
    let mut heard = Vec::new();
    loop {
        let types = json!(["tab", "page_event", "state_update"]);
        let e = beta.ok("wait_for_event", json!({ "types": types, "timeout_secs": 2 })).await;
        if e["type"] == "timeout" || heard.len() > 200 {
            break;
        }
        heard.push(e);
    }
    let about = |tab: &Value| heard.iter().filter(|e| e["tab_id"] == *tab).count();
    assert!(about(&b1) > 0, "beta heard nothing of its own tab {b1}: {heard:?}");
    assert_eq!(about(&a1), 0, "beta heard of alpha's tab {a1}: {heard:?}");
}

/// `tabwire call ARGS` in session `session` (`""`: the user's own call).
fn shell(browser: &Chromium, session: &str, args: &[&str]) -> (i32, String) {
    tabwire_testkit::shell::call(&browser.runtime_dir, session, args)
}

/// The ref on the first line of `page` that holds `what`.
fn ref_on(page: &str, what: &str) -> String {
    let line = page.lines().find(|l| l.contains(what) && l.contains("[ref="));
    let line = line.unwrap_or_else(|| panic!("no {what} line with a ref in:\n{page}"));
    line.split("[ref=").nth(1).unwrap().split(']').next().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shells_tabwire_calls_are_one_session_that_keeps_its_tab() {
    let browser = Chromium::start();
    let pages = Fixtures::serve();
    let url = pages.url("dom/a11y.html");
    // Shell A opens a page, reads it, fills and clicks by the refs it read: four processes,
    // one session (`shell-a`), whose tab group holds the tab.
    let (code, opened) = shell(&browser, "shell-a", &["open_tab", "--url", &url, "--json"]);
    assert_eq!(code, 0, "{opened}");
    let opened: Value = serde_json::from_str(&opened).unwrap_or_else(|e| panic!("{e}: {opened}"));
    let tab = opened["tab"]["id"].to_string();
    let (code, page) = shell(&browser, "shell-a", &["read_page", "--tab-id", &tab]);
    assert_eq!(code, 0, "{page}");
    let (field, button) = (ref_on(&page, "textbox"), ref_on(&page, "button"));
    let fields = json!({ "fields": [{ "ref": field, "value": "ada@example.com" }] }).to_string();
    let (code, said) = shell(&browser, "shell-a", &["fill", "--tab-id", &tab, "--json", &fields]);
    assert_eq!(code, 0, "{said}");
    let (code, said) = shell(&browser, "shell-a", &["click", "--tab-id", &tab, "--ref", &button]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("sent ada@example.com"), "the text the model reads: {said}");
    let (_, tabs) = shell(&browser, "shell-a", &["list_tabs", "--json"]);
    let tabs: Value = serde_json::from_str(&tabs).unwrap();
    let ours = tabs["tabs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"].as_i64().map(|i| i.to_string()).as_deref() == Some(tab.as_str()));
    assert_eq!(ours.unwrap()["group"], "shell-a", "{tabs:#}");

    // Another shell's session is refused that tab (exit 2), and its words name the owner.
    let (code, said) = shell(&browser, "shell-b", &["read_page", "--tab-id", &tab]);
    assert_eq!(code, 2, "{said}");
    assert!(said.starts_with("tab_owned_by_other_session") && said.contains("shell-a"), "{said}");
    // A tool that does not exist, or an argument it does not take: refused too, nothing done.
    let (code, said) = shell(&browser, "shell-b", &["no_such_tool"]);
    assert_eq!(code, 2, "{said}");
    let (code, said) = shell(&browser, "shell-b", &["read_page", "--tab-id", "\"x\""]);
    assert_eq!(code, 2, "{said}");
    // A call that fails for other reasons exits 1.
    let (code, said) = shell(&browser, "shell-b", &["read_page", "--tab-id", "999999"]);
    assert_eq!(code, 1, "{said}");

    // What shell A did is one session's: exported as one test. Without a session id, each
    // command is a session of its own that did nothing, and export_test says what to set.
    let (code, spec) = shell(&browser, "shell-a", &["export_test", "--tab-id", &tab]);
    assert_eq!(code, 0, "{spec}");
    // Its four commands, four processes: all there (this page's field and button have no name,
    // which the file says at their steps).
    assert!(
        spec.contains("steps 1–4 as a Playwright test") && spec.contains("page.goto("),
        "{spec}"
    );
    let (code, said) = shell(&browser, "", &["export_test"]);
    assert_eq!(code, 2, "{said}");
    assert!(said.contains("TABWIRE_SESSION_ID"), "{said}");

    // Shell A ends its session: the tab is the user's, and shell B may use it.
    let (code, said) = shell(&browser, "shell-a", &["--end"]);
    assert_eq!(code, 0, "{said}");
    let deadline = std::time::Instant::now() + WITHIN;
    loop {
        let (code, said) = shell(&browser, "shell-b", &["read_page", "--tab-id", &tab]);
        if code == 0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still refused: {said}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    shell(&browser, "shell-b", &["--end"]);
    // Without a session id, one call of the user's own, in this process.
    let (code, said) = shell(&browser, "", &["list_tabs"]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("a11y.html"), "{said}");
}
