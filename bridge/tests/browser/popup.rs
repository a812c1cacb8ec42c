//! The extension's popup, clicked as a user clicks it (real mouse events through CDP, so the
//! page sees trusted clicks): "Allow tabwire on this site" lets a site in — after a reload the
//! page works through `tabwire mcp` — and the site's "Revoke" shuts it out at once.
//!
//! The popup page is opened in a tab of its own, `ui/popup.html?tab=<id>`, which makes it about
//! that tab. `127.0.0.2` stands in for any website: it is loopback, but not a default site.
//!
//! And the popup as a person sees it (a screenshot goes to `target/test-output/popup*.png`):
//! every control fits its width, on one line, its text not clipped.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tabwire_proto::extension_id::EXTENSION_ID;
use tabwire_testkit::mcp::text;
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp, bins};

/// How long a change may take to show (popup, worker, host, bridge).
const WITHIN: Duration = Duration::from_secs(5);

const DEFAULT_SITES: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// What the popup shows about its tab: its rendered text without the list of sites.
const SITE_TEXT: &str =
    r##"document.body.innerText.replace(document.querySelector("#sites")?.innerText ?? "", "")"##;

/// The list of allowed sites as the popup shows it: each entry's text and its button.
const SITES_LIST: &str = r##"[...document.querySelectorAll("#sites li")].map((li) => {
    const b = li.querySelector("button[data-pattern]");
    return { text: li.innerText, pattern: b?.dataset.pattern ?? null, button: b?.textContent.trim() ?? null };
})"##;

/// Record every click the popup gets, and whether it was trusted (a real input event).
const RECORD_CLICKS: &str = r#"window.__clicks = [];
document.addEventListener("click", (e) => {
    const t = e.target;
    window.__clicks.push({ on: t.id || t.dataset?.pattern || t.tagName, trusted: e.isTrusted });
}, true);
true"#;

fn visible(selector: &str) -> String {
    format!("!!document.querySelector({selector:?})?.checkVisibility()")
}

/// The popup's view, for failure messages.
async fn popup_text(cdp: &Cdp, popup: &str) -> String {
    cdp.eval(popup, "document.body.innerText")
        .await
        .map(|v| v.as_str().unwrap_or_default().to_owned())
        .unwrap_or_else(|e| format!("(cannot read the popup: {e})"))
}

/// Wait until `expression` holds in the popup; its value. Fails showing the popup's text.
async fn until(cdp: &Cdp, popup: &str, what: &str, expression: &str) -> Value {
    match cdp.wait_for(popup, expression, WITHIN).await {
        Ok(value) => value,
        Err(e) => panic!(
            "the popup should show {what}: {e}\n--- the popup ---\n{}",
            popup_text(cdp, popup).await
        ),
    }
}

async fn click(cdp: &Cdp, popup: &str, selector: &str) {
    if let Err(e) = cdp.click(popup, selector).await {
        panic!("{e}\n--- the popup ---\n{}", popup_text(cdp, popup).await);
    }
}

/// Retry `probe` until it gives a value, for up to `WITHIN`.
async fn eventually<T>(what: &str, mut probe: impl AsyncFnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + WITHIN;
    loop {
        match probe().await {
            Ok(value) => return value,
            Err(last) if Instant::now() > deadline => {
                panic!("{what}: not within {WITHIN:?}; last: {last}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// The sites `list_browsers` reports for the one browser.
async fn listed_sites(mcp: &Mcp) -> Vec<String> {
    let listed = mcp.ok("list_browsers", json!({})).await;
    let sites =
        listed["browsers"][0]["sites"].as_array().unwrap_or_else(|| panic!("no sites in {listed}"));
    sites.iter().map(|s| s.as_str().expect("a pattern").to_owned()).collect()
}

/// `get_state` on `tab` is refused as a site not allowed.
async fn refused(mcp: &Mcp, args: Value) -> Result<String, String> {
    let result = mcp.call("get_state", args).await;
    let said = text(&result);
    if result.is_error == Some(true) && said.starts_with("site_not_allowed:") {
        Ok(said)
    } else {
        Err(format!("is_error {:?}: {said}", result.is_error))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_popup_allows_a_site_and_revokes_it() {
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to_browser, from_browser);
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let stranger = Fixtures::serve_on("127.0.0.2");
    let origin = stranger.origin();

    // A page on a site that is not allowed: nothing of tabwire there, and calls are refused.
    let opened = mcp.ok("open_tab", json!({ "url": stranger.url("probe.html?name=popup") })).await;
    let tab = opened["tab"]["id"].as_i64().unwrap_or_else(|| panic!("a tab id in {opened}"));
    assert_eq!(stranger.beacon("popup").await, "page=popup&tabwire=false&relay=false");
    let err = mcp.err("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    assert!(err.starts_with("site_not_allowed:"), "{err}");
    assert!(!listed_sites(&mcp).await.contains(&origin));

    // The popup for that tab names its site, says it is not allowed, and offers to allow it.
    let url = format!("chrome-extension://{EXTENSION_ID}/ui/popup.html?tab={tab}");
    let popup = cdp.open(&url).await.unwrap_or_else(|e| panic!("open the popup: {e}"));
    let shown = until(&cdp, &popup, "the allow button", &visible("#allow")).await;
    assert_eq!(shown, true);
    let site = until(&cdp, &popup, "the site", SITE_TEXT).await;
    let site = site.as_str().unwrap();
    assert!(site.contains(&origin), "the popup names {origin}:\n{site}");
    assert!(site.contains("not allowed"), "the popup says {origin} is not allowed:\n{site}");
    let label = cdp.eval(&popup, r##"document.querySelector("#allow").textContent.trim()"##).await;
    assert_eq!(label, Ok(json!("Allow tabwire on this site")));
    let listed = cdp.eval(&popup, SITES_LIST).await.unwrap();
    for pattern in DEFAULT_SITES {
        let entry = listed.as_array().unwrap().iter().find(|e| e["pattern"] == pattern);
        let entry = entry.unwrap_or_else(|| panic!("the default {pattern} is listed: {listed}"));
        assert!(entry["text"].as_str().unwrap().contains(pattern), "{entry}");
        assert_eq!(entry["button"], "Revoke", "{entry}");
    }
    assert!(!listed.to_string().contains(&origin), "{listed}");
    assert_eq!(cdp.eval(&popup, RECORD_CLICKS).await, Ok(json!(true)));

    // Allow: the site is in the extension's list (as the bridge sees it) and the popup's.
    click(&cdp, &popup, "#allow").await;
    let sites = eventually("list_browsers shows the allowed site", async || {
        let sites = listed_sites(&mcp).await;
        if sites.contains(&origin) { Ok(sites) } else { Err(format!("{sites:?}")) }
    })
    .await;
    for pattern in DEFAULT_SITES {
        assert!(sites.iter().any(|s| s == pattern), "{pattern} is still allowed: {sites:?}");
    }
    let entry = format!(
        "{SITES_LIST}.find((e) => e.pattern === {origin:?} && e.button === \"Revoke\" && e.text.includes({origin:?}))"
    );
    until(&cdp, &popup, "the site in the list, with a Revoke button", &entry).await;
    until(&cdp, &popup, "the allow button gone", &format!("!{}", visible("#allow"))).await;
    let site = cdp.eval(&popup, SITE_TEXT).await.unwrap();
    let site = site.as_str().unwrap();
    assert!(site.contains(&origin) && !site.contains("not allowed"), "now allowed:\n{site}");

    // Reload from the popup: the page gets window.tabwire and answers.
    click(&cdp, &popup, "#reload").await;
    assert_eq!(stranger.beacon("popup").await, "page=popup&tabwire=true&relay=true");
    let got = mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    assert_eq!(got["state"]["items"], json!(["first"]), "{got}");
    assert_eq!(got["origin"], origin.as_str(), "{got}");

    // What the assistant does shows in the popup without moving the Revoke button the user
    // is about to press (a click must not land on another site's).
    let revoke = format!("#sites button[data-pattern={origin:?}]");
    let place =
        format!("JSON.stringify(document.querySelector({revoke:?}).getBoundingClientRect())");
    let acted = "document.querySelectorAll('#activity li').length";
    let before = (cdp.eval(&popup, &place).await.unwrap(), cdp.eval(&popup, acted).await.unwrap());
    mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    until(&cdp, &popup, "the call in the activity", &format!("{acted} > {}", before.1)).await;
    assert_eq!(cdp.eval(&popup, &place).await.unwrap(), before.0, "the Revoke button moved");

    // Revoke that site from the list: refused at once, with no reload — cached and fresh.
    click(&cdp, &popup, &revoke).await;
    eventually("get_state refused after the revoke", async || {
        refused(&mcp, json!({ "tab_id": tab })).await
    })
    .await;
    let err = refused(&mcp, json!({ "tab_id": tab, "force_refresh": true })).await;
    assert!(err.is_ok(), "a fresh read after the revoke: {err:?}");
    eventually("list_browsers without the revoked site", async || {
        let sites = listed_sites(&mcp).await;
        if sites.contains(&origin) { Err(format!("{sites:?}")) } else { Ok(()) }
    })
    .await;
    let gone = format!("!{SITES_LIST}.some((e) => e.text.includes({origin:?}))");
    until(&cdp, &popup, "the site gone from the list", &gone).await;
    until(&cdp, &popup, "the allow button back", &visible("#allow")).await;
    let site = cdp.eval(&popup, SITE_TEXT).await.unwrap();
    assert!(site.as_str().unwrap().contains("not allowed"), "not allowed again:\n{site}");
    let listed = cdp.eval(&popup, SITES_LIST).await.unwrap().to_string();
    assert!(DEFAULT_SITES.iter().all(|p| listed.contains(p)), "the defaults stay: {listed}");

    // Every click was a real, trusted one, on what the test meant.
    let clicks = cdp.eval(&popup, "window.__clicks").await.unwrap();
    assert_eq!(
        clicks,
        json!([
            { "on": "allow", "trusted": true },
            { "on": "reload", "trusted": true },
            { "on": origin, "trusted": true },
        ])
    );
}

/// Every control and line of text the popup shows that is not inside the popup's width, wraps
/// onto a second line, or clips its text (`scrollWidth > clientWidth`): what is wrong with each.
const LAYOUT_FAULTS: &str = r##"(() => {
    const width = document.documentElement.getBoundingClientRect().width;
    const faults = [];
    if (document.documentElement.scrollWidth > Math.ceil(width)) faults.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} > ${width}`);
    const picked = "button, select, input, label, a, summary, #connection, #site, #site-status, #sessions .name, #sessions .last, #sites .row span";
    let checked = 0;
    for (const e of document.querySelectorAll(picked)) {
        if (!e.checkVisibility()) continue;
        checked += 1;
        const r = e.getBoundingClientRect();
        const name = `${e.tagName.toLowerCase()}${e.id ? "#" + e.id : ""} "${(e.innerText ?? "").trim().slice(0, 40)}"`;
        if (r.left < -0.5 || r.right > width + 0.5) faults.push(`${name} outside the popup: ${r.left}..${r.right} of ${width}`);
        if (e.clientWidth > 0 && e.scrollWidth > e.clientWidth) faults.push(`${name} clipped: ${e.scrollWidth} > ${e.clientWidth}`);
        const one = ["BUTTON", "LABEL", "SUMMARY", "A", "SELECT"].includes(e.tagName);
        if (one && e.getClientRects().length > 1) faults.push(`${name} wraps onto ${e.getClientRects().length} lines`);
        const line = parseFloat(getComputedStyle(e).lineHeight) || 18;
        if (e.tagName === "BUTTON" && r.height > 2 * line) faults.push(`${name} wraps: ${r.height}px high`);
    }
    return { width, checked, faults };
})()"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_popup_fits_its_width_for_a_person() {
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to_browser, from_browser);
    let pages = Fixtures::serve();
    let alpha =
        Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_SESSION_ID", "research-worker-alpha")])
            .await;
    let beta = Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_SESSION_ID", "beta")]).await;
    let a = alpha.ok("open_tab", json!({ "url": pages.url("dom/form.html") })).await["tab"]["id"]
        .clone();
    let b =
        beta.ok("open_tab", json!({ "url": pages.url("plain.html") })).await["tab"]["id"].clone();
    alpha.ok("wait_for", json!({ "tab_id": a, "selector": "body" })).await;
    alpha.ok("read_page", json!({ "tab_id": a })).await;
    beta.ok("click", json!({ "tab_id": b, "selector": "body" })).await;

    let url = format!("chrome-extension://{EXTENSION_ID}/ui/popup.html?tab={a}");
    let popup = cdp.open(&url).await.unwrap_or_else(|e| panic!("open the popup: {e}"));
    // What a person sees first: the connection in a line, this site with its switches, each
    // session with its group and last action and a Stop, and Stop all.
    let ready = r##"document.querySelectorAll("#sessions li").length === 2
        && !!document.querySelector("#stop")?.checkVisibility()
        && !!document.querySelector("#site-switches input")?.checkVisibility()
        && document.querySelector("#connection").innerText"##;
    let line = until(&cdp, &popup, "the sessions, Stop and the site's switches", ready).await;
    assert!(line.as_str().unwrap().starts_with("Connected · 2 sessions"), "{line}");
    let rows = r##"[...document.querySelectorAll("#sessions li")].map((li) => li.innerText.replace(/\s+/g, " "))"##;
    let rows = until(
        &cdp,
        &popup,
        "each session's last action",
        // The log is written at most every 0.5 s (worker/activity.js), and the popup shows each
        // write as it lands: wait for the last calls, not for any call.
        &format!("{rows}.some((r) => r.includes('dom.read')) && {rows}.some((r) => r.includes('dom.click')) && {rows}"),
    )
    .await;
    let rows = rows.to_string();
    assert!(rows.contains("research-worker-alpha · 1 tab") && rows.contains("dom.read"), "{rows}");
    assert!(rows.contains("beta · 1 tab") && rows.contains("dom.click"), "{rows}");
    let site = cdp.eval(&popup, "document.querySelector('#here').innerText").await.unwrap();
    assert!(site.as_str().unwrap().contains(&pages.origin()), "{site}");

    let out = bins::repo_root().join("target/test-output");
    std::fs::create_dir_all(&out).unwrap();
    // Popup-sized: Chrome gives a popup the width its page asks for.
    let size = json!({ "width": 360, "height": 900, "deviceScaleFactor": 1, "mobile": false });
    cdp.call("Emulation.setDeviceMetricsOverride", size, Some(&popup)).await.unwrap();
    for (shot, state) in [("popup.png", "running"), ("popup_stopped.png", "one session stopped")] {
        if state == "one session stopped" {
            click(&cdp, &popup, r#"#sessions button[data-name="beta"][data-action="stop"]"#).await;
            until(
                &cdp,
                &popup,
                "beta stopped",
                "document.body.innerText.includes('Stopped by you')",
            )
            .await;
        }
        let layout = cdp.eval(&popup, LAYOUT_FAULTS).await.unwrap();
        cdp.screenshot(&popup, &out.join(shot)).await.unwrap();
        assert_eq!(layout["width"], 360, "{layout}");
        assert!(layout["checked"].as_u64().unwrap() >= 15, "{layout}");
        assert_eq!(layout["faults"], json!([]), "{state}: {layout:#}");
    }
}
