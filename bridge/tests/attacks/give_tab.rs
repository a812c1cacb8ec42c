//! What `give_tab` refuses (specs/tools.md, "Worker tools" and "Sessions and their tab groups"):
//! a tab is given only by a worker's lead, only to a running worker of its own, and only a tab
//! the lead may use. Each refusal says what to do instead, and the tab stays where it was, as
//! Chrome itself has it.

use serde_json::{Value, json};
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp};

/// Chrome's own view of tab `tab`, from the extension's service worker: its window, place,
/// whether it is active, and its group (id, title, colour) or null.
async fn where_is(cdp: &Cdp, worker: &str, tab: &Value) -> Value {
    let expr = format!(
        r#"(async () => {{
        const t = await chrome.tabs.get({tab});
        const g = t.groupId === -1 ? null : await chrome.tabGroups.get(t.groupId);
        return {{ window: t.windowId, index: t.index, active: t.active,
                  group: g && {{ id: g.id, title: g.title, color: g.color }} }};
    }})()"#
    );
    cdp.eval(worker, &expr).await.unwrap_or_else(|e| panic!("read Chrome's tab {tab}: {e}"))
}

/// A browser, its extension's service worker over CDP, and a lead session (`lead`) whose
/// template `wait` starts a worker that only waits.
struct World {
    browser: Chromium,
    cdp: Cdp,
    worker: String,
    pages: Fixtures,
    dir: tabwire_testkit::bins::Scratch,
    lead: Mcp,
}

async fn world(name: &str) -> World {
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to_browser, from_browser);
    let pages = Fixtures::serve();
    let dir = tabwire_testkit::bins::scratch_dir(name);
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
    World { browser, cdp, worker, pages, dir, lead }
}

impl World {
    /// Another session, with an id of its own and the same templates as the lead.
    async fn session(&self, id: &str) -> Mcp {
        let (config, state) = (self.dir.join("config"), self.dir.join(format!("state-{id}")));
        let env = [
            ("TABWIRE_SESSION_ID", id),
            ("TABWIRE_CONFIG_DIR", config.to_str().unwrap()),
            ("TABWIRE_STATE_DIR", state.to_str().unwrap()),
        ];
        Mcp::start_with(&self.browser.runtime_dir, &env).await
    }

    async fn open(&self, mcp: &Mcp, page: &str) -> Value {
        mcp.ok("open_tab", json!({ "url": self.pages.url(page) })).await["tab"]["id"].clone()
    }

    async fn where_is(&self, tab: &Value) -> Value {
        where_is(&self.cdp, &self.worker, tab).await
    }
}

/// spawn_worker `name` (it waits a minute); its worker_id.
async fn spawn(lead: &Mcp, name: &str) -> String {
    let spawned =
        lead.ok("spawn_worker", json!({ "name": name, "prompt": "60", "command": "wait" }));
    spawned.await["worker_id"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_workers_lead_gives_it_a_tab() {
    let w = world("give-not-lead").await;
    let scout = spawn(&w.lead, "scout").await;
    let given = w.open(&w.lead, "plain.html").await;
    w.lead.ok("give_tab", json!({ "tab_id": given, "worker_id": scout })).await;
    let scouts = w.where_is(&given).await["group"].clone();
    assert_eq!(scouts["title"], "scout", "{scouts}");

    // Another session, with a tab of its own, cannot give it to the lead's worker: the worker is
    // not its own, and the error says which are (none) and how to start one.
    let other = w.session("other").await;
    let tab = w.open(&other, "plain.html").await;
    let before = w.where_is(&tab).await;
    assert_eq!(before["group"]["title"], "other", "{before}");
    let err = other.err("give_tab", json!({ "tab_id": tab, "worker_id": scout })).await;
    assert!(
        err.starts_with("bad_request:")
            && err.contains(&format!("\"{scout}\" is not a worker of this session"))
            && err.contains("running: none")
            && err.contains("spawn_worker"),
        "{err}"
    );
    assert_eq!(w.where_is(&tab).await, before, "the refused tab stays where it was");

    // Nor can the worker's own session, whose lead it is not: it has no workers.
    let env = [("TABWIRE_SESSION_ID", "lead"), ("TABWIRE_WORKER_ID", scout.as_str())];
    let worker = Mcp::start_with(&w.browser.runtime_dir, &env).await;
    let mine = w.open(&worker, "plain.html").await;
    let before = w.where_is(&mine).await;
    assert_eq!(before["group"]["id"], scouts["id"], "the worker took its group: {before}");
    let err = worker.err("give_tab", json!({ "tab_id": mine, "worker_id": scout })).await;
    assert!(err.starts_with("bad_request:") && err.contains("running: none"), "{err}");
    assert_eq!(w.where_is(&mine).await, before, "the refused tab stays where it was");

    // A worker of the other session with the same name is another worker: what the other
    // session gives it goes into a group of its own, never into the lead's worker's.
    let namesake = spawn(&other, "scout").await;
    other.ok("give_tab", json!({ "tab_id": tab, "worker_id": namesake })).await;
    let theirs = w.where_is(&tab).await["group"].clone();
    assert_eq!(theirs["title"], "scout", "{theirs}");
    assert_ne!(theirs["id"], scouts["id"], "not the lead's worker's group");
    assert_eq!(w.where_is(&given).await["group"], scouts, "the lead's worker keeps its tab");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lead_cannot_give_another_live_sessions_tab() {
    let w = world("give-owned").await;
    let scout = spawn(&w.lead, "scout").await;
    let other = w.session("other").await;
    let tab = w.open(&other, "dom/form.html").await;
    let before = w.where_is(&tab).await;
    assert_eq!(before["group"]["title"], "other", "{before}");

    let err = w.lead.err("give_tab", json!({ "tab_id": tab, "worker_id": scout })).await;
    assert!(
        err.starts_with("tab_owned_by_other_session:")
            && err.contains(&format!("tab {tab} is in the tab group \"other\""))
            && err.contains("nothing was done"),
        "names the owner and what to do: {err}"
    );
    assert_eq!(w.where_is(&tab).await, before, "the refused tab stays where it was");
    other.read_page(json!({ "tab_id": tab })).await; // and is still the other session's
    let listed = w.lead.ok("list_workers", json!({})).await;
    assert_eq!(listed["workers"][0]["state"], "running", "the worker is untouched: {listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_or_ended_worker_gets_no_tab() {
    let w = world("give-ended").await;
    let scout = spawn(&w.lead, "scout").await;
    let tab = w.open(&w.lead, "plain.html").await;
    let before = w.where_is(&tab).await;
    assert_eq!(before["group"]["title"], "lead", "{before}");

    // An id no worker of this session has: the error lists the running ones.
    let err =
        w.lead.err("give_tab", json!({ "tab_id": tab, "worker_id": "nobody-12345678" })).await;
    assert!(
        err.starts_with("bad_request:")
            && err.contains("\"nobody-12345678\" is not a worker of this session")
            && err.contains(&format!("running: {scout}")),
        "{err}"
    );
    assert_eq!(w.where_is(&tab).await, before, "the refused tab stays where it was");

    // A worker that ended (stop_worker returns once it has) takes no tab.
    let stopped = w.lead.ok("stop_worker", json!({ "worker_id": scout })).await;
    assert_eq!(stopped["state"], "error", "{stopped}");
    let err = w.lead.err("give_tab", json!({ "tab_id": tab, "worker_id": scout })).await;
    assert!(
        err.starts_with("bad_request:")
            && err.contains(&format!("worker {scout} has ended"))
            && err.contains("running: none"),
        "{err}"
    );
    assert_eq!(w.where_is(&tab).await, before, "the refused tab stays where it was");
    w.lead.read_page(json!({ "tab_id": tab })).await; // and is still the lead's
}
