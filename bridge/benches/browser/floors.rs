//! The side-by-side benchmark: a page read through tabwire against the floors of its
//! own path and against the other browser MCP servers, every line over MCP stdio with the same
//! rmcp client, in one run.
//!
//! Floors: F0 a call the bridge answers alone (`list_browsers`); the hops beyond it as
//! `diagnose {tab_id}` times them from inside the bridge (to the extension's service worker,
//! on to the tab's content script, on to window.tabwire in the page's world), so F1, F2 and F3
//! over MCP are F0 plus the hop. The goal lines run first with one browser and one bridge on
//! the machine, beside the machine's own floors (`bare`: the same round trips with no tabwire
//! code); then Native Messaging only, in a browser of its own (each browser with one bridge).
//! Lines are measured in interleaved rounds, so a burst of load from elsewhere on the machine
//! lands on all of them alike, and each round starts one line further on, so that no line
//! always follows the same one; beside each line, the CPU time per call of the server and of
//! this client. Then the peers (`harness::peers`), each
//! reading the same fixture page's state with its own evaluate tool; and cold start, from
//! launching the program to the first read, for each.

use std::time::Instant;

use serde_json::{Value, json};
use tabwire_testkit::peers::Peer;
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp};

use crate::bare::{Cat, WorkerEcho};
use crate::cpu::run_ns;
use crate::stats::{Sample, ms};

/// Calls per line: `ROUNDS` rounds of `PER_ROUND`, the lines taking turns.
const ROUNDS: usize = 10;
const PER_ROUND: usize = 200;
/// Calls per peer line (a slow one gets fewer: Playwright's default settles 500 ms a call).
const PEER_CALLS: usize = 500;
const SLOW_PEER_CALLS: usize = 60;
/// What the peers evaluate: the fixture's state, the value its provideState returns.
const READ_STATE: &str = "() => state";

pub async fn run() {
    println!("side by side: a page's state over MCP stdio, the same rmcp client throughout");
    let pages = Fixtures::serve();
    let url = pages.url("app.html");

    let started = Instant::now();
    // With a CDP pipe: to set up the worker's bare echo (then detached), and at the end to time
    // the page hops inside the worker.
    let mut browser = Chromium::start_with_cdp();
    // One session (the variant bridge below is the same session, so it may read this tab).
    let session = ("TABWIRE_SESSION_ID", "floors");
    let mcp = Mcp::start_with(&browser.runtime_dir, &[session]).await;
    let tab = mcp.ok("open_tab", json!({ "url": url })).await["tab"]["id"].clone();
    let first = mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    let cold = started.elapsed();
    assert_eq!(first["state"]["items"][0], "first", "{first}");
    let (to_browser, from_browser) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to_browser, from_browser);
    let cat = Cat::start();
    let worker_echo = WorkerEcho::start(&cdp, None).await;
    let tab_echo = WorkerEcho::start(&cdp, tab.as_i64()).await;

    // Phase 1, the goal lines: this browser and this bridge alone on the machine, and the
    // machine's own floors (no tabwire code) beside F0 and F1.
    let f0 = json!({});
    let forced_in = |tab: &Value| json!({ "tab_id": tab, "force_refresh": true });
    let forced = forced_in(&tab);
    let cached = json!({ "tab_id": tab });
    let goal_lines = [
        ("machine: a line echoed by cat over two pipes", Via::Cat(&cat)),
        ("F0 list_browsers: the bridge answers", Via::Tool(&mcp, "list_browsers", f0.clone())),
        ("machine: a WebSocket echo in the extension's worker", Via::Worker(&worker_echo)),
        ("machine: the same, by a content script in the tab", Via::Worker(&tab_echo)),
        ("tabwire get_state from the cache", Via::Tool(&mcp, "get_state", cached.clone())),
        ("tabwire get_state forced (provideState)", Via::Tool(&mcp, "get_state", forced.clone())),
    ];
    let (p50, p99s) = measure(&goal_lines).await;
    let (f0_p50, cached_p50, forced_p50) = (p50[1], p50[4], p50[5]);
    let (tab_echo_p50, forced_p99) = (p50[3], p99s[5]);
    let [f1, f2, f3] = hops(&mcp, &tab, "F1, F2, F3 (diagnose)").await.map(|hop| f0_p50 + hop);
    println!(
        "  goals: forced ≤ 1.10 × F3: {:.2}×   F3 − F2 ≤ 0.10 ms: {:+.3} ms   cache ≤ 1.3 × F0: {:.2}×",
        forced_p50 / f3,
        f3 - f2,
        cached_p50 / f0_p50
    );
    println!(
        "  F1 {f1:.3} ms, F2 {f2:.3} ms, F3 {f3:.3} ms over MCP (F0 + the hop); p99 / p50: cat {:.1}, F0 {:.1}; worker echo {:.1}; worker and tab echo {:.1}",
        p99s[0] / p50[0],
        p99s[1] / p50[1],
        p99s[2] / p50[2],
        p99s[3] / p50[3]
    );
    println!(
        "  an extension's least cost to ask a page (the worker and tab echo, no tabwire code): {tab_echo_p50:.3} ms; \
         tabwire's forced read is {:+.3} ms over it",
        forced_p50 - tab_echo_p50
    );
    println!(
        "  cold start tabwire (Chromium + host + extension, tabwire mcp, open_tab, first forced read): {:.0} ms",
        ms(cold)
    );
    drop(tab_echo);
    drop(worker_echo);
    drop(cat);

    // Phase 2, what the fast link buys: the variant beside its baseline in the same
    // interleaved rounds, and the hops of each.
    println!("  what the fast link buys (the variant and its baseline, in the same rounds):");
    // A browser whose host keeps everything on Native Messaging (`TABWIRE_FAST_LINK=off`;
    // host/src/fast_link.rs), with one bridge as the baseline's browser has again now: what the
    // fast link buys.
    let native_browser = Chromium::start_with(&[("TABWIRE_FAST_LINK", "off")]);
    let native = Mcp::start(&native_browser.runtime_dir).await;
    let native_tab = native.ok("open_tab", json!({ "url": url })).await["tab"]["id"].clone();
    let browser_lines = [
        ("get_state forced", Via::Tool(&mcp, "get_state", forced)),
        (
            "  get_state forced by Native Messaging only",
            Via::Tool(&native, "get_state", forced_in(&native_tab)),
        ),
    ];
    measure(&browser_lines).await;
    hops(&mcp, &tab, "the hops with the fast link").await;
    hops(&native, &native_tab, "  the hops by Native Messaging only").await;
    drop(native);
    drop(native_browser);
    // Last: closing its debugger pipe may end the browser.
    in_the_worker(&cdp, &tab).await;
    drop(mcp);
    drop(cdp);
    drop(browser);

    let peers = [
        Peer::Playwright { settle_ms: Some(0) },
        Peer::Playwright { settle_ms: None },
        Peer::DevTools,
    ];
    for peer in peers {
        match measure_peer(peer, &url).await {
            Ok((mut sample, cold, cpu)) => {
                let (median, p99) = sample.print(&peer.name());
                let cpu = cpu
                    .map(|us| format!("; CPU per call: its node process {us:.0} µs"))
                    .unwrap_or_default();
                println!(
                    "  {:<58} cold start {:.0} ms; tabwire forced is {:.1}× faster at p50, {:.1}× at p99, cached {:.0}× at p50 \
                     (the worker and tab echo, no tabwire code: {:.1}× at p50){cpu}",
                    "",
                    ms(cold),
                    median / forced_p50,
                    p99 / forced_p99,
                    median / cached_p50,
                    median / tab_echo_p50
                );
            }
            Err(why) => println!("  {:<58} not measured: {why}", peer.name()),
        }
    }
    println!();
}

/// What one line calls.
enum Via<'a> {
    /// A tool over MCP: the client, the tool and its arguments.
    Tool(&'a Mcp, &'a str, Value),
    /// A line echoed by `cat` (no tabwire code).
    Cat(&'a Cat),
    /// A WebSocket echo in the extension's worker (no tabwire code).
    Worker(&'a WorkerEcho),
}

impl Via<'_> {
    async fn call(&self) {
        match self {
            Via::Tool(client, tool, args) => {
                let got = client.ok(tool, args.clone()).await;
                assert!(!got.is_null(), "{tool}: {got}");
            }
            Via::Cat(cat) => cat.round_trip().await,
            Via::Worker(echo) => echo.round_trip().await,
        }
    }

    /// The process that answers, when it is one of ours whose CPU time we can read.
    fn server(&self) -> Option<u32> {
        match self {
            Via::Tool(client, ..) => client.pid,
            Via::Cat(_) | Via::Worker(_) => None,
        }
    }
}

/// One line: its label and what it calls.
type Line<'a> = (&'a str, Via<'a>);

/// Measure `lines` in interleaved rounds (so a burst of load from elsewhere on the machine lands
/// on all of them alike), each round starting one line further on (so no line always comes
/// right after the same one: the browser is still busy for a while after a line that used it,
/// which fell on the cached read every time when the order was fixed); print each, with the
/// CPU time per call of the server and of this client (the time their threads ran, from the
/// scheduler). Their p50s and p99s in ms.
async fn measure(lines: &[Line<'_>]) -> (Vec<f64>, Vec<f64>) {
    for (_, via) in lines {
        via.call().await;
    }
    let client = std::process::id();
    let mut samples: Vec<Sample> = lines.iter().map(|_| Sample::new()).collect();
    // Per line: nanoseconds the server and this client ran.
    let mut cpu = vec![(0u64, 0u64); lines.len()];
    for round in 0..ROUNDS {
        for i in (0..lines.len()).map(|k| (k + round) % lines.len()) {
            let via = &lines[i].1;
            let (server_before, client_before) = (via.server().map(run_ns), run_ns(client));
            for _ in 0..PER_ROUND {
                let t = Instant::now();
                via.call().await;
                samples[i].push(t.elapsed());
            }
            let server = via.server().map(run_ns).zip(server_before).map(|(a, b)| a - b);
            cpu[i].0 += server.unwrap_or(0);
            cpu[i].1 += run_ns(client) - client_before;
        }
    }
    let calls = (ROUNDS * PER_ROUND) as f64;
    let (mut p50, mut p99s) = (Vec::new(), Vec::new());
    for (((label, via), sample), (server, client)) in lines.iter().zip(&mut samples).zip(cpu) {
        let (median, p99) = sample.print(label);
        let per_call = |ns: u64| ns as f64 / calls / 1000.0;
        let server = match via.server() {
            Some(_) => format!("the server {:.1} µs, ", per_call(server)),
            None => String::new(),
        };
        println!(
            "  {:<58} p99 = {:.1} × p50; CPU per call: {server}this client {:.1} µs",
            "",
            p99 / median,
            per_call(client)
        );
        p50.push(median);
        p99s.push(p99);
    }
    (p50, p99s)
}

/// The hops `diagnose {tab_id}` times from inside the bridge (to the worker, the tab's isolated
/// world, its page world): the median over `ROUNDS` diagnoses of each one's median, in ms.
async fn hops(mcp: &Mcp, tab: &Value, label: &str) -> [f64; 3] {
    let mut each: [Vec<f64>; 3] = Default::default();
    for _ in 0..ROUNDS {
        let got = mcp.ok("diagnose", json!({ "tab_id": tab })).await;
        let hops = got["hops"].as_array().filter(|h| h.len() == 3);
        let hops = hops.unwrap_or_else(|| panic!("diagnose timed no three hops: {got}"));
        for (sample, hop) in each.iter_mut().zip(hops) {
            sample.push(hop["median_ms"].as_f64().expect("a median"));
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let [w, i, p] = each.map(|mut v| median(&mut v));
    println!(
        "  {label:<58} to the worker {w:.3} ms, its isolated world {i:.3} ms, the page's world \
         {p:.3} ms (medians of {ROUNDS} diagnoses)"
    );
    [w, i, p]
}

/// The page hops without MCP, the host or Native Messaging: the worker's own methods called in
/// a loop through the debugger, the three kinds taking turns, timed with the worker's clock
/// (coarse, so means over many calls).
async fn in_the_worker(cdp: &Cdp, tab: &Value) {
    // Batches short enough for the debugger's 10 s answer time.
    const BATCHES: usize = 10;
    const CALLS: usize = 200;
    let worker = crate::sites::service_worker(cdp).await;
    let script = format!(
        r#"(async () => {{
            const m = globalThis.tabwireDebug.methods, tab_id = {tab}, n = {CALLS};
            const ctx = {{ signal: new AbortController().signal }};
            const kinds = [
              () => m['page.echo']({{ tab_id, world: 'content' }}, ctx),
              () => m['page.echo']({{ tab_id, world: 'page' }}, ctx),
              () => m['page.get_state']({{ tab_id }}, ctx),
            ];
            const total = [0, 0, 0];
            for (let i = 0; i < n; i++)
              for (let k = 0; k < kinds.length; k++) {{
                const t = performance.now();
                await kinds[k]();
                total[k] += performance.now() - t;
              }}
            return total.map((ms) => ms / n * 1000);
        }})()"#
    );
    let mut us = [0.0; 3];
    for _ in 0..BATCHES {
        let got = cdp.eval(&worker, &script).await.expect("time the page hops in the worker");
        for (sum, v) in us.iter_mut().zip(got.as_array().unwrap()) {
            *sum += v.as_f64().unwrap() / BATCHES as f64;
        }
    }
    println!(
        "  inside the worker (mean of {}): content script echo {:.1} µs, page world echo \
         {:.1} µs (the hop between the worlds: {:+.1} µs), page.get_state {:.1} µs",
        BATCHES * CALLS,
        us[0],
        us[1],
        us[1] - us[0],
        us[2]
    );
}

/// Start `peer`, open `url`, read once (cold start), then time its reads.
/// A peer's latencies, its cold start, and the CPU time its server (node) ran per call.
async fn measure_peer(
    peer: Peer,
    url: &str,
) -> Result<(Sample, std::time::Duration, Option<f64>), String> {
    let started = Instant::now();
    let running = peer.start().await?;
    let result = async {
        running.open(url).await?;
        let first = running.evaluate(READ_STATE).await?;
        let cold = started.elapsed();
        if !first.contains("first") {
            return Err(format!("the first read did not return the page's state: {first}"));
        }
        let calls = if matches!(peer, Peer::Playwright { settle_ms: None }) {
            SLOW_PEER_CALLS
        } else {
            PEER_CALLS
        };
        let mut sample = Sample::new();
        let server = running.mcp.pid;
        let before = server.map(run_ns);
        for _ in 0..calls {
            let t = Instant::now();
            running.evaluate(READ_STATE).await?;
            sample.push(t.elapsed());
        }
        let cpu = server.map(run_ns).zip(before).map(|(a, b)| (a - b) as f64 / calls as f64);
        Ok((sample, cold, cpu.map(|ns| ns / 1000.0)))
    }
    .await;
    running.stop().await;
    result
}
