//! The tools around reading and acting (`specs/tools.md`, "Seeing any page"), measured in one
//! run against `list_tabs` (an extension worker call with no page hop): screenshot of the visible
//! area, console_messages, network_requests; and what the console capture costs the page — its
//! own `console.log` on an allowed site (hooked) against the same page on a site not allowed
//! (no hook), both timed inside the page, and the same hook installed by page code (to tell the
//! wrapping's cost from what Chrome adds for an extension's script on the stack).

use std::time::Duration;

use serde_json::json;
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp};

use crate::stats::Sample;

const CALLS: usize = 300;
const SHOTS: usize = 20;
const LOGS: u32 = 20_000;

pub async fn run() {
    println!("\nscreenshot, console and network (sequential calls over MCP stdio)");
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to_browser, from_browser);
    let pages = Fixtures::serve();
    let stranger = Fixtures::serve_on("127.0.0.2");
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let open =
        async |url: String| mcp.ok("open_tab", json!({ "url": url })).await["tab"]["id"].clone();

    let plain = open(stranger.url("extra/console.html")).await;
    let tab = open(pages.url("extra/console.html")).await;
    let args = json!({ "tab_id": tab });
    Sample::time(CALLS, async || drop(mcp.ok("list_tabs", json!({})).await))
        .await
        .print("list_tabs (baseline: worker, no page hop)");
    Sample::time(CALLS, async || drop(mcp.ok("console_messages", args.clone()).await))
        .await
        .print("console_messages (≈ 10 messages)");
    Sample::time(CALLS, async || drop(mcp.ok("network_requests", args.clone()).await))
        .await
        .print("network_requests (3 requests)");
    // Chrome allows about two captures a second: pause between calls, untimed, so that the
    // figure is the capture's own cost and not tabwire waiting for its turn.
    let mut shots = Sample::new();
    for _ in 0..SHOTS {
        tokio::time::sleep(Duration::from_millis(600)).await;
        let t = std::time::Instant::now();
        mcp.ok("screenshot", args.clone()).await;
        shots.push(t.elapsed());
    }
    shots.print("screenshot, visible area (PNG, image block)");

    // The hook's cost to the page: LOGS calls of console.log, timed in the page.
    let time_logs = format!(
        "(() => {{ const t = performance.now(); for (let i = 0; i < {LOGS}; i++) console.log('line', i); return performance.now() - t; }})()"
    );
    let per_call = async |part: &str| {
        let session = page(&cdp, part).await;
        let mut best = f64::MAX;
        for _ in 0..5 {
            let ms = cdp.eval(&session, &time_logs).await.unwrap().as_f64().unwrap();
            best = best.min(ms);
        }
        best * 1000.0 / f64::from(LOGS)
    };
    let hooked = per_call(&pages.origin()).await;
    let bare = per_call(&stranger.origin()).await;
    // The same hook installed by the page's own code on the unhooked page: what wrapping costs
    // when no extension script is on the stack.
    let session = page(&cdp, &stranger.origin()).await;
    let hook = std::fs::read_to_string(
        tabwire_testkit::bins::repo_root().join("extension/page-world/console-hook.js"),
    )
    .unwrap();
    cdp.eval(&session, &hook).await.unwrap();
    let by_page = per_call(&stranger.origin()).await;
    println!(
        "  console.log in the page, best of 5 × {LOGS}: {hooked:.3} µs hooked (allowed site), \
         {bare:.3} µs without the hook (site not allowed) — +{:.3} µs a call",
        hooked - bare
    );
    println!("  the same hook installed by the page's own code: {by_page:.3} µs a call");
    drop(plain);
}

/// A CDP session on the page whose URL starts with `prefix`.
async fn page(cdp: &Cdp, prefix: &str) -> String {
    let targets = cdp.call("Target.getTargets", json!({}), None).await.expect("list targets");
    let target = targets["targetInfos"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["type"] == "page" && t["url"].as_str().is_some_and(|u| u.starts_with(prefix)))
        .unwrap_or_else(|| panic!("no page at {prefix} among {targets}"));
    cdp.attach(target["targetId"].as_str().unwrap()).await.expect("attach to the page")
}
