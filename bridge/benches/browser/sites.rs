//! The cost of the site checks (`specs/security.md`) on the hottest page call, forced
//! `get_state`, measured in one run: the call's own latency over MCP, and — inside the
//! extension's service worker, through the debugger — what the checks each call makes cost:
//! the allowlist check (cached per origin, as every call makes it, and uncached, as the first
//! call of an origin makes it) with the `expected_origin` comparison.

use std::time::Instant;

use serde_json::json;
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp};

use crate::stats::Sample;

const FORCED: usize = 2_000;
const CHECKS: u32 = 200_000;

pub async fn run() {
    println!("\nsite checks on forced get_state (sequential calls over MCP stdio)");
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to_browser, from_browser);
    let pages = Fixtures::serve();
    let origin = pages.origin();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab =
        mcp.ok("open_tab", json!({ "url": pages.url("app.html") })).await["tab"]["id"].clone();
    let args = json!({ "tab_id": tab, "force_refresh": true, "expected_origin": origin });
    mcp.ok("get_state", args.clone()).await;

    let mut forced = Sample::new();
    for _ in 0..FORCED {
        let t = Instant::now();
        mcp.ok("get_state", args.clone()).await;
        forced.push(t.elapsed());
    }
    let (p50, _) = forced.print("get_state force_refresh, expected_origin (every check)");

    let worker = service_worker(&cdp).await;
    // One call's checks: the allowlist (cached by origin) and expected_origin; then the
    // uncached match, as for an origin's first call.
    let script = format!(
        r#"(() => {{
            const c = globalThis.tabwireDebug.checks, o = {origin:?}, n = {CHECKS};
            let t = performance.now();
            for (let i = 0; i < n; i++) c.checkSite(1, o, o);
            const cached = (performance.now() - t) / n;
            t = performance.now();
            for (let i = 0; i < n; i++) if (c.allowedBy(o) === null) throw new Error("not allowed");
            const uncached = (performance.now() - t) / n;
            return {{ cached: cached * 1000, uncached: uncached * 1000 }};
        }})()"#
    );
    let got = cdp.eval(&worker, &script).await.expect("time the checks in the worker");
    let (cached, uncached) = (got["cached"].as_f64().unwrap(), got["uncached"].as_f64().unwrap());
    let share = |us: f64| us / 1000.0 / p50 * 100.0;
    println!(
        "  origin checks of one call, in the worker: {cached:.3} µs ({:.3} % of the p50 above; \
         target ≤ 5 %)",
        share(cached)
    );
    println!(
        "  the same, first call of an origin (no cache): {uncached:.3} µs ({:.3} %)",
        share(uncached)
    );
    drop(cdp);
}

/// A debugger session on the extension's service worker.
pub async fn service_worker(cdp: &Cdp) -> String {
    let id = cdp
        .target_id("service_worker", "/worker/background.js")
        .await
        .expect("the extension's service worker");
    cdp.attach(&id).await.expect("attach to the service worker")
}
