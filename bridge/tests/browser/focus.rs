//! The user's focus stays where the user put it: no tool brings a tab forward or focuses a
//! window unless the call asks for it (`open_tab {active: true}`, `activate_tab`). The assistant
//! works in background tabs while the user keeps typing in theirs.
//!
//! Unix only: the headed Chromium runs under Xvfb, an X server (tabwire_testkit::xvfb).
#![cfg(unix)]

use std::time::Duration;

use serde_json::{Value, json};
use tabwire_testkit::xvfb::Xvfb;
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp};

/// The active tab of each window and which window has the focus, as list_tabs reports them.
async fn focus(mcp: &Mcp) -> Vec<(Value, Value, Value)> {
    let listed = mcp.ok("list_tabs", json!({})).await;
    let mut active: Vec<_> = listed["tabs"]
        .as_array()
        .unwrap_or_else(|| panic!("tabs in {listed}"))
        .iter()
        .filter(|t| t["active"] == true)
        .map(|t| (t["window_id"].clone(), t["id"].clone(), t["window_focused"].clone()))
        .collect();
    active.sort_by_key(|a| a.0.to_string());
    active
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_tool_takes_the_users_focus_unless_asked() {
    // Headed, under Xvfb: windows, focus and what is on screen as a user has them.
    let xvfb = Xvfb::start().unwrap_or_else(|e| panic!("{e}"));
    let mut browser = Chromium::start_headed_with_cdp(&xvfb.display);
    let (to, from) = browser.take_cdp_pipe().unwrap();
    let _cdp = Cdp::new(to, from);
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;

    // The user's own tab, in front.
    let mine = mcp.ok("open_tab", json!({ "url": pages.url("plain.html"), "active": true })).await;
    let mine = mine["tab"]["id"].clone();
    let before = focus(&mcp).await;
    assert!(
        before.iter().any(|(_, id, f)| *id == mine && *f == true),
        "the user's tab is in front: {before:?}"
    );

    let opened = mcp.ok("open_tab", json!({ "url": pages.url("plain.html") })).await;
    let tab = opened["tab"]["id"].clone();
    // In the session's own window, as that window's active tab: it renders and runs at full
    // speed (docs/performance.md, "Pages the user is not looking at"), without the focus.
    assert_eq!(opened["tab"]["window_focused"], false, "{opened}");
    let after_open = focus(&mcp).await;
    let theirs: Vec<_> = after_open.iter().filter(|a| !before.contains(a)).collect();
    assert_eq!(theirs.len(), 1, "one window more, the session's: {after_open:?}");
    assert_eq!((&theirs[0].1, &theirs[0].2), (&tab, &json!(false)), "{after_open:?}");
    let unchanged = |now: &Vec<(Value, Value, Value)>| -> bool {
        before.iter().all(|b| now.contains(b)) && now.iter().filter(|a| a.2 == true).count() == 1
    };
    // A second tab of the session goes to the same window.
    let second = mcp.ok("open_tab", json!({ "url": pages.url("plain.html") })).await;
    assert_eq!(second["tab"]["window_id"], opened["tab"]["window_id"], "{second}");
    let now = focus(&mcp).await;
    assert!(unchanged(&now), "after a second open_tab: {now:?}, before {before:?}");

    let second = second["tab"]["id"].clone();
    let steps: Vec<(&str, Value)> = vec![
        ("navigate", json!({ "tab_id": tab, "url": pages.url("dom/form.html") })),
        ("read_page", json!({ "tab_id": tab })),
        ("find", json!({ "tab_id": tab, "text": "Create account" })),
        (
            "fill",
            json!({ "tab_id": tab, "fields": [{ "selector": "input[name=name]", "value": "Ada" }] }),
        ),
        ("type", json!({ "tab_id": tab, "selector": "input[name=city]", "text": "Paris" })),
        ("press_key", json!({ "tab_id": tab, "selector": "input[name=zip]", "keys": "Tab" })),
        ("pointer", json!({ "tab_id": tab, "action": "hover", "selector": "button[type=submit]" })),
        ("pointer", json!({ "tab_id": tab, "action": "scroll", "dy": 200 })),
        ("handle_dialog", json!({ "tab_id": tab, "accept": true })),
        ("click", json!({ "tab_id": tab, "selector": "button[type=submit]" })),
        ("wait_for", json!({ "tab_id": tab, "text": "Submitted" })),
        ("screenshot", json!({ "tab_id": tab })),
        ("list_tabs", json!({})),
        ("close_tab", json!({ "tab_id": second })),
    ];
    for (tool, args) in steps {
        let result = mcp.call(tool, args).await;
        let said = tabwire_testkit::mcp::text(&result);
        assert_ne!(result.is_error, Some(true), "{tool}: {said}");
        let now = focus(&mcp).await;
        assert!(unchanged(&now), "after {tool}: {now:?}, before {before:?}");
    }

    // Asked, it does.
    mcp.ok("activate_tab", json!({ "tab_id": tab })).await;
    let after = focus(&mcp).await;
    assert!(
        after.iter().any(|(_, id, f)| *id == tab && *f == true),
        "activate_tab brings it forward: {after:?}"
    );
}

/// What Chromium does to a page the user is not looking at, measured in a headed Chromium
/// under Xvfb (docs/performance.md, "Pages the user is not looking at", holds the table this
/// prints: `cargo test -p tabwire --test browser -- focus::pages_the_user --nocapture`). Each page
/// counts its animation frames and a `setTimeout(0)` chain for a second, times a 100 ms
/// timeout, lays out a box, waits for its ResizeObserver and IntersectionObserver, focuses an
/// input (does `focus`/`focusin` fire?), plays a muted video (frames presented), and a
/// screenshot of it is asked of tabwire (captureVisibleTab of its window). What the design of
/// specs/tools.md ("In the background") relies on is asserted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_the_user_is_not_looking_at_as_chromium_runs_them() {
    let xvfb = Xvfb::start().unwrap_or_else(|e| panic!("{e}"));
    let mut browser = Chromium::start_headed_with_cdp(&xvfb.display);
    let (to, from) = browser.take_cdp_pipe().unwrap();
    let cdp = Cdp::new(to, from);
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let url = |p: &str| pages.url(&format!("plain.html?p={p}"));
    let target = async |params: Value| {
        let made = cdp.call("Target.createTarget", params, None).await.unwrap();
        made["targetId"].as_str().unwrap().to_owned()
    };
    let bounds = |t: &str| {
        json!({ "url": url(t), "newWindow": true, "background": true,
        "left": 0, "top": 0, "width": 900, "height": 700 })
    };
    // The user's tab, in front of the focused window.
    let front = target(json!({ "url": url("front") })).await;
    let back = target(json!({ "url": url("back"), "background": true })).await;
    let unfocused = target(json!({ "url": url("unfocused"), "newWindow": true,
        "background": true, "left": 950, "top": 0, "width": 300, "height": 300 }))
    .await;
    let covered = target(bounds("covered")).await;
    let _cover = target(bounds("cover")).await; // mapped later: on top in X's stacking order
    let minimized = target(bounds("minimized")).await;
    let window = cdp.call("Browser.getWindowForTarget", json!({ "targetId": minimized }), None);
    let window = window.await.unwrap()["windowId"].clone();
    let state = json!({ "windowId": window, "bounds": { "windowState": "minimized" } });
    cdp.call("Browser.setWindowBounds", state, None).await.unwrap();
    // The session's own window, as open_tab makes it (specs/tools.md, "In the background").
    let opened = mcp.ok("open_tab", json!({ "url": url("session") })).await;
    let session_tab = opened["tab"]["id"].clone();
    let session = cdp.target_id("page", "p=session").await.unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;

    let situations = [
        ("active tab, focused window", front.clone()),
        // Before the covered and minimized ones, whose screenshots hang and hold the next.
        ("open_tab's own window", session),
        ("background tab", back),
        ("active tab, unfocused window", unfocused),
        ("window covered by another", covered),
        ("minimized window", minimized),
    ];
    let listed = mcp.ok("list_tabs", json!({})).await;
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let mut seen = Vec::new();
    for (name, target) in &situations {
        let s = cdp.attach(target).await.unwrap();
        // Started, then read when done: in a throttled page it takes many seconds.
        cdp.eval(&s, &format!("void ({PROBE}).then((r) => (window.probed = r))")).await.unwrap();
        let got = match cdp.wait_for(&s, "window.probed", Duration::from_secs(30)).await {
            Ok(got) => got,
            Err(_) => cdp.eval(&s, "window.probing").await.unwrap(), // what it got to
        };
        let p = got["p"].as_str().unwrap().to_owned();
        let id = listed["tabs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["url"].as_str().is_some_and(|u| u.ends_with(&format!("p={p}"))));
        let shot = match id {
            Some(t) => {
                let r = mcp.call("screenshot", json!({ "tab_id": t["id"] })).await;
                if r.is_error == Some(true) {
                    let said = tabwire_testkit::mcp::text(&r);
                    format!("error: {}", said.chars().take(60).collect::<String>())
                } else {
                    "taken".into()
                }
            }
            None => "?".into(),
        };
        seen.push((name.to_string(), got.clone()));
        rows.push((
            name.to_string(),
            vec![
                got["visibility"].to_string(),
                got["hasFocus"].to_string(),
                got["frames"].to_string(),
                format!("{} in {} ms", got["ticks"], got["tickMs"]),
                got["timeout100"].to_string(),
                got["layout"].to_string(),
                got["resize"].to_string(),
                got["intersect"].to_string(),
                format!("{}/{}", got["focus"], got["focusin"]),
                format!("{} (play: {})", got["video"], got["played"]),
                shot,
            ],
        ));
    }
    let heads = [
        "visibilityState",
        "hasFocus()",
        "frames in 1 s",
        "setTimeout(0) chain in 1 s",
        "setTimeout(100) took ms",
        "box width",
        "ResizeObserver ms",
        "IntersectionObserver ms",
        "focus/focusin on el.focus()",
        "video frames in 1 s",
        "screenshot",
    ];
    println!("\n| | {} |", situations.iter().map(|s| s.0).collect::<Vec<_>>().join(" | "));
    println!("|---|{}", "---|".repeat(situations.len()));
    for (i, head) in heads.iter().enumerate() {
        let cells: Vec<&str> = rows.iter().map(|r| r.1[i].as_str()).collect();
        println!("| {head} | {} |", cells.join(" | "));
    }

    let at = |name: &str| &seen.iter().find(|s| s.0 == name).unwrap().1;
    assert!(at("background tab")["frames"] == 0, "a background tab draws no frames");
    for name in ["active tab, unfocused window", "open_tab's own window"] {
        let got = at(name);
        assert_eq!(got["visibility"], "visible", "{name}: {got}");
        assert!(got["frames"].as_u64().unwrap() > 20, "{name} draws frames: {got}");
        assert!(got["timeout100"].as_f64().unwrap() < 300.0, "{name} runs timers: {got}");
    }
    // And the user's tab kept the focus all along.
    let s = cdp.attach(&front).await.unwrap();
    assert_eq!(cdp.eval(&s, "document.hasFocus()").await.unwrap(), true);
    let now = focus(&mcp).await;
    assert!(now.iter().any(|(_, _, f)| *f == true), "{now:?}");
    assert!(
        !now.iter().any(|(_, id, f)| *id == session_tab && *f == true),
        "the session's window never took the focus: {now:?}"
    );
}

/// Measures one page (see the test above); what it found, with the page's `p`.
const PROBE: &str = r#"(async () => {
  const out = window.probing = { p: new URLSearchParams(location.search).get('p'),
    visibility: document.visibilityState, hasFocus: document.hasFocus() };
  const ms = (t) => Math.round(performance.now() - t);
  let frames = 0, on = true;
  const frame = () => { if (on) { frames++; requestAnimationFrame(frame); } };
  requestAnimationFrame(frame);
  let ticks = 0; const t0 = performance.now();
  await new Promise((r) => { const tick = () => { ticks++; performance.now() - t0 < 1000 ? setTimeout(tick, 0) : r(); }; setTimeout(tick, 0); });
  on = false;
  Object.assign(out, { frames, ticks, tickMs: ms(t0) });
  const t1 = performance.now();
  await new Promise((r) => setTimeout(r, 100));
  out.timeout100 = ms(t1);
  const box = document.createElement('div');
  box.style.cssText = 'width:100px;height:50px';
  document.body.append(box);
  out.layout = box.getBoundingClientRect().width;
  const first = (make) => new Promise((r) => { const t = performance.now(); const o = make(() => (o.disconnect(), r(ms(t)))); o.observe(box); setTimeout(() => (o.disconnect(), r(null)), 3000); });
  out.resize = await first((cb) => new ResizeObserver(cb));
  out.intersect = await first((cb) => new IntersectionObserver(cb));
  const input = document.createElement('input');
  document.body.append(input);
  out.focus = 0; out.focusin = 0;
  input.addEventListener('focus', () => out.focus++);
  input.addEventListener('focusin', () => out.focusin++);
  input.focus();
  const canvas = document.createElement('canvas');
  const ctx = canvas.getContext('2d');
  const paint = setInterval(() => ctx.fillRect(Math.random() * 100, 0, 10, 10), 20);
  const video = document.createElement('video');
  video.muted = true; video.srcObject = canvas.captureStream(30);
  document.body.append(video);
  // A hidden page's media waits to start until it is shown: not waited for past 2 s.
  out.played = await Promise.race([video.play().then(() => true, () => false), new Promise((r) => setTimeout(r, 2000, 'waits'))]);
  out.video = 0;
  const count = () => { out.video++; video.requestVideoFrameCallback(count); };
  video.requestVideoFrameCallback(count);
  await new Promise((r) => setTimeout(r, 1000));
  clearInterval(paint); video.remove();
  return out;
})()"#;
