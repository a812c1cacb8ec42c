//! What the ownership check costs one call, alone and beside another session's group. Then many
//! sessions, one browser: 8 `tabwire mcp` sessions, each with its own tab group and 2 tabs
//! of `testkit/fixtures/sessions.html`, acting at once (read_page, click, fill, get_state) for a
//! fixed time, against one session alone in the same browser, first in a headless Chromium and
//! then in the background tabs of a headed one (under Xvfb). Then, in the headed browser, each
//! action in a background tab against the same action in the active tab (read_page, click and
//! fill until settled, wait_for, a chat operation), and what a screenshot of a background tab
//! does.
//!
//! Whether an action landed in another session's tab is read from the pages themselves at the
//! end, over CDP (`window.truth()` of the fixture), not from tabwire's reports: each tab counts
//! the clicks it got and keeps every value its Note box held, and each fill carries its session
//! and tab.
//!
//! `TABWIRE_BENCH_SECS=N` shortens each timed phase (default 60 s).

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tabwire_testkit::mcp::text;
use tabwire_testkit::xvfb::Xvfb;
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp};

use crate::stats::{Sample, ms};

const SESSIONS: usize = 8;
const TABS: usize = 2;
const ACTIONS: [&str; 4] = ["read_page", "click", "fill", "get_state"];
/// Rounds of each action in the active tab and in a background one.
const N: usize = 40;
const CHAT_ROUNDS: usize = 10;

pub async fn run() {
    let secs = std::env::var("TABWIRE_BENCH_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    let secs = Duration::from_secs(secs);
    let pages = Fixtures::serve();
    ownership(&pages).await;

    println!(
        "\nmany sessions, one browser: {SESSIONS} sessions × {TABS} tabs acting at once for \
         {secs:?}, against 1 session alone for {secs:?} (headless Chromium)"
    );
    let mut browser = Chromium::start_with_cdp();
    let (to, from) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to, from);
    crowd(&browser, &cdp, &pages, secs, "hl").await;
    drop(cdp);
    drop(browser);

    let xvfb = match Xvfb::start() {
        Ok(x) => x,
        Err(why) => return println!("  headed Chromium skipped: {why}"),
    };
    println!(
        "\nthe same in background tabs of a headed Chromium (Xvfb {}): every session's tabs \
         are behind the window's active tab",
        xvfb.display
    );
    let mut browser = Chromium::start_headed_with_cdp(&xvfb.display);
    let (to, from) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to, from);
    crowd(&browser, &cdp, &pages, secs, "hd").await;
    println!("\nactive tab against a background tab (headed, one session, sequential calls)");
    front_and_back(&browser, &cdp, &pages).await;
}

/// `SESSIONS` sessions at once on the real apps (`real_apps::crowd`), in a headed Chromium under
/// Xvfb where each session's tabs are in a window of its own, as `open_tab` opens them.
pub async fn on_real_apps() {
    let xvfb = match Xvfb::start() {
        Ok(x) => x,
        Err(why) => return println!("  real apps, many sessions: skipped: {why}"),
    };
    println!(
        "\nmany sessions on real apps: {SESSIONS} sessions, each doing every app's task in its own \
         window, against 1 session alone (headed Chromium, Xvfb {})",
        xvfb.display
    );
    let pages = Fixtures::serve();
    let mut browser = Chromium::start_headed_with_cdp(&xvfb.display);
    let (to, from) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to, from);
    // The user's own tab, in front in the user's window.
    cdp.open(&pages.url("plain.html")).await.unwrap();
    crate::real_apps::crowd(&browser, &cdp, &pages, SESSIONS).await;
}

/// What the ownership check costs a call: a forced `get_state` (a call that names the tab and
/// goes to its page) with no other session in the browser, then beside another live session's
/// group (each call then asks Chrome for the tab's group).
async fn ownership(pages: &Fixtures) {
    const CALLS: usize = 200;
    println!("\nthe ownership check: get_state forced, {CALLS} calls (headless Chromium)");
    let browser = Chromium::start();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab =
        mcp.ok("open_tab", json!({ "url": pages.url("app.html") })).await["tab"]["id"].clone();
    mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    let forced = json!({ "tab_id": tab, "force_refresh": true });
    Sample::time(CALLS, async || drop(mcp.ok("get_state", forced.clone()).await)).await;
    let mut alone =
        Sample::time(CALLS, async || drop(mcp.ok("get_state", forced.clone()).await)).await;
    alone.print("alone in the browser");
    let other = Mcp::start(&browser.runtime_dir).await;
    other.ok("open_tab", json!({ "url": pages.url("plain.html") })).await;
    let mut beside =
        Sample::time(CALLS, async || drop(mcp.ok("get_state", forced.clone()).await)).await;
    beside.print("beside another session's group");
}

/// One session's part: its MCP client, its name, its tabs and what it did in each.
struct Session {
    mcp: Mcp,
    name: String,
    tabs: Vec<Tab>,
}

struct Tab {
    id: Value,
    /// Clicks and fills tabwire reported done in this tab, by this session.
    clicks: u64,
    fills: Vec<String>,
}

/// Per-action latencies and the errors met.
#[derive(Default)]
struct Tally {
    took: BTreeMap<&'static str, Sample>,
    errors: BTreeMap<String, usize>,
}

async fn start(browser: &Chromium, pages: &Fixtures, name: &str) -> Session {
    let mcp = Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_SESSION_ID", name)]).await;
    let mut tabs = Vec::new();
    for t in 1..=TABS {
        let url = pages.url(&format!("sessions.html?owner={name}&tab={t}"));
        let id = mcp.ok("open_tab", json!({ "url": url })).await["tab"]["id"].clone();
        mcp.ok("wait_for", json!({ "tab_id": id, "text": "Clicked 0 times" })).await;
        tabs.push(Tab { id, clicks: 0, fills: Vec::new() });
    }
    Session { mcp, name: name.to_owned(), tabs }
}

/// Act for `secs`: in turn in each tab, read_page, click, fill, get_state.
async fn act(s: &mut Session, secs: Duration) -> Tally {
    let mut tally = Tally::default();
    let until = Instant::now() + secs;
    let mut round = 0u64;
    while Instant::now() < until {
        round += 1;
        for (t, tab) in s.tabs.iter_mut().enumerate() {
            let note = format!("{} t{} #{round}", s.name, t + 1);
            for action in ACTIONS {
                let args = match action {
                    "click" => json!({ "tab_id": tab.id, "selector": "#count" }),
                    "fill" => {
                        json!({ "tab_id": tab.id, "fields": [{ "selector": "#note", "value": note }] })
                    }
                    _ => json!({ "tab_id": tab.id }),
                };
                let t0 = Instant::now();
                let result = s.mcp.call(action, args).await;
                let took = t0.elapsed();
                if result.is_error == Some(true) {
                    let why = text(&result);
                    let head = why.split(':').next().unwrap_or("?").to_owned();
                    *tally.errors.entry(format!("{action}: {head}")).or_default() += 1;
                    if tally.errors.values().sum::<usize>() == 1 {
                        println!("    first error ({}): {action}: {why}", s.name);
                    }
                    continue;
                }
                tally.took.entry(action).or_default().push(took);
                match action {
                    "click" => tab.clicks += 1,
                    "fill" => tab.fills.push(note.clone()),
                    _ => {}
                }
            }
        }
    }
    tally
}

/// What the pages themselves hold, against what the sessions were told they did: actions in
/// another session's tab, and actions reported done that are not in their own tab.
async fn truth(cdp: &Cdp, sessions: &[&Session]) -> (u64, u64, BTreeMap<String, usize>) {
    let (mut elsewhere, mut missing) = (0, 0);
    let mut visibility = BTreeMap::new();
    for s in sessions {
        for (t, tab) in s.tabs.iter().enumerate() {
            let part = format!("owner={}&tab={}", s.name, t + 1);
            let target = cdp.target_id("page", &part).await.unwrap_or_else(|e| panic!("{e}"));
            let page = cdp.attach(&target).await.unwrap();
            let seen = cdp.eval(&page, "window.truth()").await.unwrap_or_else(|e| panic!("{e}"));
            let clicks = seen["clicks"].as_u64().unwrap();
            let notes: Vec<&str> =
                seen["notes"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
            let mine = format!("{} t{} #", s.name, t + 1);
            // A click counted here beyond this session's own came from another session.
            elsewhere += clicks.saturating_sub(tab.clicks);
            missing += tab.clicks.saturating_sub(clicks);
            elsewhere += notes.iter().filter(|n| !n.starts_with(&mine)).count() as u64;
            missing += tab.fills.iter().filter(|f| !notes.contains(&f.as_str())).count() as u64;
            *visibility
                .entry(seen["visibility"].as_str().unwrap_or("?").to_owned())
                .or_default() += 1;
            let _ = cdp.call("Target.detachFromTarget", json!({ "sessionId": page }), None).await;
        }
    }
    (elsewhere, missing, visibility)
}

/// One session alone, then `SESSIONS` at once, in the same browser; printed side by side.
async fn crowd(browser: &Chromium, cdp: &Cdp, pages: &Fixtures, secs: Duration, tag: &str) {
    let mut solo = start(browser, pages, &format!("{tag}-solo")).await;
    // A warm-up, whose latencies are not counted (its actions are: the pages count them too).
    act(&mut solo, Duration::from_secs(2)).await;
    let mut alone = act(&mut solo, secs).await;

    let mut crowd = Vec::new();
    for i in 1..=SESSIONS {
        crowd.push(start(browser, pages, &format!("{tag}-s{i}")).await);
    }
    // Chrome's own view: one group per session, titled with its name, holding its tabs.
    let sw = cdp.target_id("service_worker", "/worker/background.js").await.unwrap();
    let sw = cdp.attach(&sw).await.unwrap();
    let groups = "chrome.tabGroups.query({}).then((gs) => Promise.all(gs.map(async (g) => \
        `${g.title} (${(await chrome.tabs.query({ groupId: g.id })).length} tabs)`)))";
    let groups = cdp.eval(&sw, groups).await.unwrap();
    let groups: Vec<&str> = groups.as_array().unwrap().iter().filter_map(Value::as_str).collect();
    println!("  {} tab groups: {}", groups.len(), groups.join(", "));
    let _ = cdp.call("Target.detachFromTarget", json!({ "sessionId": sw }), None).await;
    let tallies = futures::future::join_all(crowd.iter_mut().map(|s| act(s, secs))).await;
    let mut all = Tally::default();
    for t in tallies {
        for (action, sample) in t.took {
            let into = all.took.entry(action).or_default();
            for d in sample.durations() {
                into.push(d);
            }
        }
        for (e, n) in t.errors {
            *all.errors.entry(e).or_default() += n;
        }
    }

    println!(
        "  {:<12} {:>28}   {:>28}   {:>9}",
        "action",
        "1 session alone: n  p50  p99",
        format!("{SESSIONS} sessions at once: n  p50  p99"),
        "p50 ratio"
    );
    for action in ACTIONS {
        let (a, b) = (alone.took.entry(action).or_default(), all.took.entry(action).or_default());
        let (a50, a99) = (ms(a.percentile(0.5)), ms(a.percentile(0.99)));
        let (b50, b99) = (ms(b.percentile(0.5)), ms(b.percentile(0.99)));
        println!(
            "  {action:<12} {:>8} {a50:>8.1} ms {a99:>7.1} ms   {:>8} {b50:>8.1} ms {b99:>7.1} ms   {:>8.1}×",
            a.len(),
            b.len(),
            b50 / a50
        );
    }
    let n_alone: usize = alone.took.values().map(Sample::len).sum();
    let n_all: usize = all.took.values().map(Sample::len).sum();
    println!(
        "  throughput: {:.0} actions/s alone, {:.0} actions/s with {SESSIONS} sessions",
        n_alone as f64 / secs.as_secs_f64(),
        n_all as f64 / secs.as_secs_f64()
    );
    for (what, errors) in [("alone", &alone.errors), ("at once", &all.errors)] {
        if !errors.is_empty() {
            println!("  errors {what}: {errors:?}");
        }
    }
    let everyone: Vec<&Session> = std::iter::once(&solo).chain(crowd.iter()).collect();
    let (elsewhere, missing, visibility) = truth(cdp, &everyone).await;
    println!(
        "  actions that landed in another session's tab (the pages' own count): {elsewhere}; \
         reported done but not in their own tab: {missing}; the {} tabs were {visibility:?}",
        everyone.len() * TABS
    );
    for s in crowd.into_iter().chain([solo]) {
        let _ = s.mcp.client.cancel().await;
    }
}

fn epoch_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64() * 1000.0
}

/// The CDP session of the fixture tab `owner`/`tab`.
async fn page_of(cdp: &Cdp, part: &str) -> String {
    let target = cdp.target_id("page", part).await.unwrap_or_else(|e| panic!("{e}"));
    cdp.attach(&target).await.unwrap()
}

async fn front_and_back(browser: &Chromium, cdp: &Cdp, pages: &Fixtures) {
    let s = start(browser, pages, "fg-bg").await;
    let (front, back) = (s.tabs[0].id.clone(), s.tabs[1].id.clone());
    s.mcp.ok("activate_tab", json!({ "tab_id": front })).await;
    let (front_page, back_page) =
        (page_of(cdp, "owner=fg-bg&tab=1").await, page_of(cdp, "owner=fg-bg&tab=2").await);
    // Background tabs are throttled harder after some time hidden: let it set in.
    tokio::time::sleep(Duration::from_secs(2)).await;
    for (which, page) in [("active", &front_page), ("background", &back_page)] {
        let how = cdp.eval(page, "window.truth()").await.unwrap();
        println!(
            "  the {which} tab: visibility {}, next animation frame after {} ms, a 20 ms timer \
             {} ms late",
            how["visibility"], how["frame_ms"], how["timer_late_ms"]
        );
    }

    println!(
        "  {:<40} {:>24}   {:>24}",
        "", "active tab: p50    p99", "background tab: p50    p99"
    );
    let row = |label: &str, a: &mut Sample, b: &mut Sample| {
        let (a50, a99, b50, b99) = (
            ms(a.percentile(0.5)),
            ms(a.percentile(0.99)),
            ms(b.percentile(0.5)),
            ms(b.percentile(0.99)),
        );
        println!("  {label:<40} {a50:>12.1} {a99:>9.1} ms   {b50:>12.1} {b99:>9.1} ms");
    };
    // read_page, click and fill until settled: alternating between the two tabs.
    for action in ["read_page", "click", "fill"] {
        let (mut took, mut inside) =
            ([Sample::new(), Sample::new()], [Sample::new(), Sample::new()]);
        for i in 0..2 * N {
            let tab = [&front, &back][i % 2];
            let args = match action {
                "click" => json!({ "tab_id": tab, "selector": "#count" }),
                "fill" => {
                    json!({ "tab_id": tab, "fields": [{ "selector": "#note", "value": format!("fg-bg #{i}") }] })
                }
                _ => json!({ "tab_id": tab }),
            };
            let t0 = Instant::now();
            let result = s.mcp.call(action, args).await;
            took[i % 2].push(t0.elapsed());
            assert_ne!(result.is_error, Some(true), "{action}: {}", text(&result));
            if let Some(report) = &result.structured_content {
                inside[i % 2].push_ms(report["ms"].as_f64().unwrap_or(0.0));
            }
        }
        let [a, b] = &mut took;
        row(action, a, b);
        if action != "read_page" {
            let [a, b] = &mut inside;
            row("  of which settling in the extension", a, b);
        }
    }

    // wait_for: from the page's change (made over CDP, outside the page's own timers) to the
    // call's answer at the client.
    let mut waits = [Sample::new(), Sample::new()];
    for i in 0..2 * N {
        let (tab, page) = [(&front, &front_page), (&back, &back_page)][i % 2];
        let want = format!("arrived {i}");
        let wait = async {
            let r = s.mcp.call("wait_for", json!({ "tab_id": tab, "text": want })).await;
            (r, epoch_ms())
        };
        let change = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let js = format!(
                "document.getElementById('arrive').textContent = {want:?}, \
                 performance.timeOrigin + performance.now()"
            );
            cdp.eval(page, &js).await.unwrap().as_f64().unwrap()
        };
        let ((result, answered), changed) = tokio::join!(wait, change);
        assert_ne!(result.is_error, Some(true), "wait_for: {}", text(&result));
        waits[i % 2].push_ms(answered - changed);
    }
    let [a, b] = &mut waits;
    row("wait_for: page change → answer", a, b);

    chat(&s.mcp, pages, &front).await;

    // A screenshot of a background tab.
    let shot = s.mcp.call("screenshot", json!({ "tab_id": back })).await;
    let what = if shot.is_error == Some(true) {
        format!("refused: {}", text(&shot))
    } else {
        "taken".into()
    };
    let active = s.mcp.ok("list_tabs", json!({})).await;
    let still =
        active["tabs"].as_array().unwrap().iter().any(|t| t["id"] == front && t["active"] == true);
    println!("  screenshot of a background tab: {what} (the active tab stayed in front: {still})");
    let _ = s.mcp.client.cancel().await;
}

/// A chat operation (testkit/fixtures/chat.html, 3 words) in the active tab and then, with
/// `other` brought to the front, in the background: with a done marker (complete on the page's
/// change) and without one (complete after `stable_ms` = 300 ms of quiet).
async fn chat(mcp: &Mcp, pages: &Fixtures, other: &Value) {
    let url = pages.url("chat.html?words=3&word_ms=5&start_ms=20");
    let tab = mcp.ok("open_tab", json!({ "url": url })).await["tab"]["id"].clone();
    mcp.ok("wait_for", json!({ "tab_id": tab, "selector": "#prompt" })).await;
    for (label, done, stable) in
        [("done marker", ".done", 0), ("no done marker, stable_ms 300", "", 300)]
    {
        let mut adapter = json!({
            "name": "fixture", "matches": ["http://127.0.0.1:*/*chat.html*"], "input": "#prompt",
            "submit": "#send", "user_message": ".msg.user", "assistant_message": ".msg.assistant",
            "generating": ".typing", "stable_ms": stable.max(50),
        });
        if !done.is_empty() {
            adapter["done"] = json!(done);
        }
        let (mut total, mut late, mut page) = (
            [Sample::new(), Sample::new()],
            [Sample::new(), Sample::new()],
            [Sample::new(), Sample::new()],
        );
        for (i, front) in [(0, &tab), (1, other)] {
            mcp.ok("activate_tab", json!({ "tab_id": front })).await;
            tokio::time::sleep(Duration::from_millis(500)).await;
            for round in 0..CHAT_ROUNDS {
                let t0 = Instant::now();
                let args = json!({ "tab_id": tab, "text": format!("question {round}"), "adapter": adapter });
                let id = mcp.ok("send_message_async", args).await["operation_id"].clone();
                let r = mcp.ok("wait_for_operation", json!({ "operation_id": id })).await;
                let answered = epoch_ms();
                total[i].push(t0.elapsed());
                assert_eq!(r["status"], "completed", "{r}");
                let state =
                    mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
                let stamps = state["state"]["stamps"].as_array().unwrap();
                let at = |what: &str| {
                    stamps.iter().rev().find(|s| s["what"] == what).unwrap()["t"].as_f64().unwrap()
                };
                late[i].push_ms(answered - at("done") - stable as f64);
                page[i].push_ms(at("done") - at("user"));
            }
        }
        println!("  chat operation, {label}:");
        let [a, b] = &mut total;
        let row = |l: &str, a: &mut Sample, b: &mut Sample| {
            println!(
                "    {l:<38} {:>12.1} {:>9.1} ms   {:>12.1} {:>9.1} ms",
                ms(a.percentile(0.5)),
                ms(a.percentile(0.99)),
                ms(b.percentile(0.5)),
                ms(b.percentile(0.99))
            );
        };
        row("send → completed, at the client", a, b);
        let [a, b] = &mut page;
        row("the page's own answer (user → done)", a, b);
        let [a, b] = &mut late;
        row("last change (+ stable_ms) → completed", a, b);
    }
}
