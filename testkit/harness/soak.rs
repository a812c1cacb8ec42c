//! The soak: sessions working as users run them, for a while, through one real Chromium. Both
//! the soak benchmark (`scripts/soak.sh`, bridge/benches/browser/soak.rs, which prints) and the
//! CI guard (bridge/tests/attacks/abuse.rs, which asserts) run this one implementation.
//!
//! Each of `bridges` `tabwire mcp` sessions opens a tab of its own and keeps `in_flight` page
//! commands going: nine in ten to its own tab, one in ten to a tab the user opened and every
//! session may use. Every page pushes events, which each session drains. Each command carries a
//! tag the page echoes, so a reply that reaches the wrong caller is counted as misrouted. A
//! second phase adds one more session that is refused on every call (it sends to the others'
//! tabs), as fast as it can: a refusal must cost the others nothing.
//!
//! Every `period`, a sample: replies, the extension process's CPU time, the worker's JS heap
//! after a collection (through the DevTools protocol, as a debugger sees it), and the RSS of the
//! host and of each bridge. The heap is read with no command in flight (the sessions hold their
//! next one for those few milliseconds), so what calls under way hold is not counted as kept.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::mcp::{text, users_tab};
use crate::{Cdp, Chromium, Fixtures, Mcp};

/// A reply that has not come after this long is counted as lost.
const LOST_AFTER: Duration = Duration::from_secs(60);
/// Page events each tab pushes a second: a tenth of the page SDK's per-tab limit.
const EVENTS_PER_SEC: f64 = 20.0;
/// Error codes that are the rules saying no, not a failure.
const REFUSALS: &[&str] = &["tab_owned_by_other_session", "paused_by_user", "rate_limited"];

/// How hard and how long.
#[derive(Clone, Debug)]
pub struct Load {
    pub bridges: usize,
    pub in_flight: usize,
    /// The first phase: the sessions alone.
    pub quiet: Duration,
    /// The second phase: with one refused session flooding.
    pub refused: Duration,
    /// Commands the refused session keeps in flight.
    pub refused_in_flight: usize,
    pub period: Duration,
    /// Profile the worker (the DevTools protocol's CPU profiler) in each phase after its first
    /// period: [`Report::profiles`].
    pub profile: bool,
}

/// One period's sample.
#[derive(Clone, Debug)]
pub struct Period {
    /// Seconds since the start, at the end of the period.
    pub at_secs: f64,
    /// Whether the refused session was flooding in this period.
    pub flooded: bool,
    /// Served replies of the working sessions in this period.
    pub replies: u64,
    /// Refusals the refused session got in this period.
    pub refusals: u64,
    /// Working sessions' calls that timed out in this period.
    pub timeouts: u64,
    /// The share of the machine's CPU time the hypervisor took for others in this period
    /// (`steal` in /proc/stat): a virtual machine's CPU that was not there to use.
    pub stolen: f64,
    /// CPU time of the extension's process in this period, ns.
    pub extension_cpu_ns: u64,
    /// The worker's JS heap after a collection, bytes (0 when it could not be read).
    pub worker_heap: u64,
    pub host_rss_kib: u64,
    pub bridge_rss_kib: Vec<u64>,
}

impl Period {
    pub fn rate(&self, period: Duration) -> f64 {
        self.replies as f64 / period.as_secs_f64()
    }

    /// The extension process's CPU per served reply, µs.
    pub fn cpu_per_reply_us(&self) -> f64 {
        self.extension_cpu_ns as f64 / 1000.0 / self.replies.max(1) as f64
    }
}

/// What a soak found.
#[derive(Debug, Default)]
pub struct Report {
    pub replies: u64,
    pub misrouted: u64,
    pub lost: u64,
    /// Errors of the working sessions by code, refusals apart.
    pub failures: BTreeMap<String, u64>,
    pub refusals: BTreeMap<String, u64>,
    /// What the refused session heard, by code (all should be refusals).
    pub flood: BTreeMap<String, u64>,
    pub events_pushed: u64,
    pub events_drained: u64,
    pub periods: Vec<Period>,
    /// The worker's CPU profiles (`Profiler.Profile`), one per phase, when asked for.
    pub profiles: Vec<Value>,
}

impl Report {
    /// Timeouts of the working sessions: each one is a finding.
    pub fn timeouts(&self) -> u64 {
        self.failures.get("timeout").copied().unwrap_or(0)
    }
}

#[derive(Default)]
struct Tally {
    replies: AtomicU64,
    misrouted: AtomicU64,
    lost: AtomicU64,
    events: AtomicU64,
    flood: AtomicU64,
    timeouts: AtomicU64,
    /// Commands under way, and whether the sessions hold their next one.
    in_flight: AtomicU64,
    held: AtomicBool,
    errors: Mutex<BTreeMap<String, u64>>,
    flood_errors: Mutex<BTreeMap<String, u64>>,
}

/// Run the soak on a browser started with a CDP pipe ([`Chromium::start_with_cdp`]); `tell` is
/// called with each period as it ends.
pub async fn run(browser: &mut Chromium, load: &Load, tell: impl Fn(&Period)) -> Report {
    let pages = Fixtures::serve();
    let (to, from) = browser.take_cdp_pipe().expect("a browser started with a CDP pipe");
    let cdp = Cdp::new(to, from);
    let shared = users_tab(&browser.runtime_dir, &pages.url("app.html")).await;
    let mut bridges = Vec::new();
    let mut own = Vec::new();
    for _ in 0..load.bridges {
        let mcp = Mcp::start(&browser.runtime_dir).await;
        own.push(json!(mcp.open_tab(&pages.url("app.html")).await));
        bridges.push(Arc::new(mcp));
    }
    let bridge_pids: Vec<u32> = bridges.iter().filter_map(|b| b.pid).collect();
    let host = browser.host_pid() as u32;
    let extension = extension_pid(browser.pid()).expect("the extension's process");
    let worker = cdp.target_id("service_worker", "/worker/background.js").await.expect("worker");
    let worker = cdp.attach(&worker).await.expect("attach to the worker");

    let tally = Arc::new(Tally::default());
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for (b, mcp) in bridges.iter().enumerate() {
        for slot in 0..load.in_flight {
            let (mcp, tally, stop) = (mcp.clone(), tally.clone(), stop.clone());
            let (mine, shared) = (own[b].clone(), shared.clone());
            tasks.push(tokio::spawn(async move {
                let mut n: u64 = 0;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let tab = if (slot as u64 + n).is_multiple_of(10) { &shared } else { &mine };
                    command(&mcp, tab, b, slot, n, &tally).await;
                }
            }));
        }
        // Each session drains the page events it hears.
        let (mcp, tally, stop) = (mcp.clone(), tally.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let got = mcp.ok("wait_for_state_change", json!({ "timeout_secs": 1 })).await;
                let n = got["events"].as_array().map_or(0, |e| e.len());
                tally.events.fetch_add(n as u64, Ordering::Relaxed);
            }
        }));
    }
    // The pages push events, EVENTS_PER_SEC per tab, each by the tab's owner. A push waits its
    // turn behind its owner's commands in flight, so each tab pushes on its own and each push
    // carries the events owed since the last one: the rate holds however slow a reply is.
    let sends = bridges.iter().zip(&own).chain([(&bridges[0], &shared)]);
    let pushers: Vec<_> = sends
        .map(|(mcp, tab)| {
            let (mcp, tab, stop) = (mcp.clone(), tab.clone(), stop.clone());
            tokio::spawn(async move {
                let (mut pushed, mut last) = (0u64, Instant::now());
                while !stop.load(Ordering::Relaxed) {
                    tokio::time::sleep_until((last + Duration::from_millis(500)).into()).await;
                    let now = Instant::now();
                    let n = ((now - last).as_secs_f64() * EVENTS_PER_SEC).round() as u64;
                    last = now;
                    let args = json!({ "tab_id": tab, "type": "burst", "payload": { "n": n } });
                    if mcp.call("send_command", args).await.is_error != Some(true) {
                        pushed += n;
                    }
                }
                pushed
            })
        })
        .collect();

    let mut report = Report::default();
    let started = Instant::now();
    let (mut replies, mut flood, mut cpu) = (0, 0, process_cpu_ns(extension));
    let (mut timeouts, mut ticks) = (0, cpu_ticks());
    let mut flooder: Option<Flooder> = None;
    let total = load.quiet + load.refused;
    while started.elapsed() + Duration::from_millis(100) < total {
        if flooder.is_none() && started.elapsed() + Duration::from_millis(100) >= load.quiet {
            flooder = Some(flood_start(browser, &own, load.refused_in_flight, &tally).await);
        }
        let next = (started.elapsed().as_secs_f64() / load.period.as_secs_f64()).floor() + 1.0;
        let until = started + load.period.mul_f64(next);
        tokio::time::sleep_until(until.into()).await;
        let (r, f, c) = (
            tally.replies.load(Ordering::Relaxed),
            tally.flood.load(Ordering::Relaxed),
            process_cpu_ns(extension),
        );
        let (t, now) = (tally.timeouts.load(Ordering::Relaxed), cpu_ticks());
        let (all, stolen) = (now.0 - ticks.0, now.1 - ticks.1);
        let period = Period {
            at_secs: started.elapsed().as_secs_f64(),
            flooded: flooder.is_some(),
            replies: r - replies,
            refusals: f - flood,
            timeouts: t - timeouts,
            stolen: stolen as f64 / all.max(1) as f64,
            extension_cpu_ns: c.saturating_sub(cpu),
            worker_heap: quiet_heap(&cdp, &worker, &tally).await,
            host_rss_kib: rss_kib(host),
            bridge_rss_kib: bridge_pids.iter().map(|p| rss_kib(*p)).collect(),
        };
        (replies, flood, cpu) = (r, f, process_cpu_ns(extension));
        (timeouts, ticks) = (t, now);
        tell(&period);
        report.periods.push(period);
        if load.profile {
            let near = |t: Duration| started.elapsed() + Duration::from_millis(100) >= t;
            let phase_ends = if flooder.is_none() { near(load.quiet) } else { near(total) };
            let first_of_phase =
                report.periods.iter().filter(|p| p.flooded == flooder.is_some()).count() == 1;
            if first_of_phase && !phase_ends {
                let _ = cdp.call("Profiler.enable", json!({}), Some(&worker)).await;
                let _ = cdp.call("Profiler.start", json!({}), Some(&worker)).await;
            } else if phase_ends
                && let Ok(p) = cdp.call("Profiler.stop", json!({}), Some(&worker)).await
            {
                report.profiles.push(p["profile"].clone());
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    if let Some((_, stop, tasks)) = flooder {
        stop.store(true, Ordering::Relaxed);
        for t in tasks {
            let _ = t.await;
        }
    }
    for pusher in pushers {
        report.events_pushed += pusher.await.unwrap_or(0);
    }
    for t in tasks {
        let _ = t.await;
    }
    report.replies = tally.replies.load(Ordering::Relaxed);
    report.misrouted = tally.misrouted.load(Ordering::Relaxed);
    report.lost = tally.lost.load(Ordering::Relaxed);
    report.events_drained = tally.events.load(Ordering::Relaxed);
    for (code, n) in tally.errors.lock().await.iter() {
        let into = if REFUSALS.contains(&code.as_str()) {
            &mut report.refusals
        } else {
            &mut report.failures
        };
        into.insert(code.clone(), *n);
    }
    report.flood = tally.flood_errors.lock().await.clone();
    let _ = cdp.call("Target.detachFromTarget", json!({ "sessionId": worker }), None).await;
    report
}

/// Wait while the sessions are held; then count a command under way until `Going` drops.
async fn go(tally: &Tally) -> Going<'_> {
    while tally.held.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    tally.in_flight.fetch_add(1, Ordering::SeqCst);
    Going(tally)
}

struct Going<'a>(&'a Tally);

impl Drop for Going<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The worker's heap after a collection, read while no command is under way (at most 5 s of
/// waiting for the last to end).
async fn quiet_heap(cdp: &Cdp, worker: &str, tally: &Tally) -> u64 {
    tally.held.store(true, Ordering::SeqCst);
    let until = Instant::now() + Duration::from_secs(5);
    while tally.in_flight.load(Ordering::SeqCst) > 0 && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let heap = heap_after_gc(cdp, worker).await;
    tally.held.store(false, Ordering::SeqCst);
    heap
}

/// One tagged page command of session `b`, slot `slot`, its `n`th.
async fn command(mcp: &Mcp, tab: &Value, b: usize, slot: usize, n: u64, tally: &Tally) {
    let _going = go(tally).await;
    // head: who asked; tail: which request. The page echoes both.
    let head = format!("{b:02}-{slot:05}");
    let tail = format!("{n:08}");
    let data = format!("{head}|{tail}");
    let args = json!({ "tab_id": tab, "type": "measure", "payload": { "data": data } });
    let Ok(result) = tokio::time::timeout(LOST_AFTER, mcp.call("send_command", args)).await else {
        tally.lost.fetch_add(1, Ordering::Relaxed);
        return;
    };
    if result.is_error == Some(true) {
        let code = text(&result).split(':').next().unwrap_or("").to_owned();
        if code == "timeout" {
            tally.timeouts.fetch_add(1, Ordering::Relaxed);
        }
        *tally.errors.lock().await.entry(code).or_default() += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
        return;
    }
    tally.replies.fetch_add(1, Ordering::Relaxed);
    let got = result.structured_content.unwrap_or_default();
    let echoed = &got["result"];
    if echoed["head"] != head[..8] || echoed["tail"] != tail[tail.len() - 8..] {
        tally.misrouted.fetch_add(1, Ordering::Relaxed);
    }
}

/// The refused session, the switch that stops it, and its callers.
type Flooder = (Arc<Mcp>, Arc<AtomicBool>, Vec<tokio::task::JoinHandle<()>>);

/// One more session, sending to the working sessions' tabs as fast as it can.
async fn flood_start(
    browser: &Chromium,
    tabs: &[Value],
    in_flight: usize,
    tally: &Arc<Tally>,
) -> Flooder {
    let mcp = Arc::new(Mcp::start(&browser.runtime_dir).await);
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for slot in 0..in_flight {
        let (mcp, stop, tally, tabs) = (mcp.clone(), stop.clone(), tally.clone(), tabs.to_vec());
        tasks.push(tokio::spawn(async move {
            let mut n = slot;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let args = json!({ "tab_id": tabs[n % tabs.len()], "type": "measure", "payload": { "data": "x|y" } });
                let going = go(&tally).await;
                let result = mcp.call("send_command", args).await;
                drop(going);
                let code = if result.is_error == Some(true) {
                    text(&result).split(':').next().unwrap_or("").to_owned()
                } else {
                    "served".to_owned()
                };
                *tally.flood_errors.lock().await.entry(code).or_default() += 1;
                tally.flood.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    (mcp, stop, tasks)
}

/// The worker's JS heap in use after a full collection, bytes; 0 when it cannot be read.
async fn heap_after_gc(cdp: &Cdp, worker: &str) -> u64 {
    let _ = cdp.call("HeapProfiler.collectGarbage", json!({}), Some(worker)).await;
    let used = cdp.call("Runtime.getHeapUsage", json!({}), Some(worker)).await;
    used.ok().and_then(|u| u["usedSize"].as_f64()).unwrap_or(0.0) as u64
}

/// The browser's extension process (where the worker runs): a child of `browser` that is a
/// renderer with `--extension-process`.
pub fn extension_pid(browser: u32) -> Option<u32> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let found = std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd);
            let ours = cmd.contains("--extension-process") && cmd.contains("--type=renderer");
            (ours && descends_from(pid, browser)).then_some(pid)
        });
        if found.is_some() || Instant::now() > deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn descends_from(mut pid: u32, ancestor: u32) -> bool {
    for _ in 0..8 {
        if pid == ancestor {
            return true;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
        let Some(ppid) = stat.rsplit_once(')').and_then(|(_, r)| r.split_whitespace().nth(1))
        else {
            return false;
        };
        pid = ppid.parse().unwrap_or(0);
    }
    false
}

/// The machine's CPU ticks since boot, as /proc/stat's first line counts them (1/100 s each):
/// user, nice, system, idle, iowait, irq, softirq, steal, ….
pub fn machine_ticks() -> Vec<u64> {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    stat.lines()
        .next()
        .and_then(|l| l.strip_prefix("cpu "))
        .map(|l| l.split_whitespace().filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_default()
}

/// All the machine's CPU ticks since boot, and those stolen by the hypervisor.
fn cpu_ticks() -> (u64, u64) {
    let ticks = machine_ticks();
    (ticks.iter().take(8).sum(), ticks.get(7).copied().unwrap_or(0))
}

/// CPU time of every thread of `pid`, ns, from the scheduler's own count.
pub fn process_cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return 0 };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
