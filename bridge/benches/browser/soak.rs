//! The soak benchmark (not in CI): `scripts/soak.sh [SECONDS]` (default 600). Ten `tabwire mcp`
//! bridges on one real headless Chromium keep 1,000 page commands in flight (100 each) while
//! the pages push events that every bridge drains; each command carries a tag the page echoes,
//! so a reply that reaches the wrong caller is counted as misrouted. Prints host and bridge RSS
//! at the start and the end, the replies, errors by code, lost (no reply within a minute) and
//! misrouted replies, and the events drained. Numbers, not a pass/fail: a non-zero lost or
//! misrouted count is the finding.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use tabwire_tests::{Chromium, Fixtures, Mcp, mcp::text};
use tokio::sync::Mutex;

const BRIDGES: usize = 10;
const IN_FLIGHT_PER_BRIDGE: usize = 100;
const TABS: usize = 5;
/// A reply that has not come after this long is counted as lost.
const LOST_AFTER: Duration = Duration::from_secs(60);

#[derive(Default)]
struct Tally {
    replies: AtomicU64,
    misrouted: AtomicU64,
    lost: AtomicU64,
    events: AtomicU64,
    errors: Mutex<BTreeMap<String, u64>>,
}

fn rss_kib(pid: u64) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn host_pids(runtime_dir: &Path) -> Vec<u64> {
    let dir = runtime_dir.join("hosts");
    let mut pids: Vec<u64> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".json")?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    pids.sort();
    pids
}

fn print_rss(when: &str, hosts: &[u64], bridges: &[u64]) {
    let host: Vec<String> = hosts.iter().map(|p| format!("{} KiB", rss_kib(*p))).collect();
    let each: Vec<u64> = bridges.iter().map(|p| rss_kib(*p)).collect();
    println!(
        "  {when}: host RSS {}; bridges RSS min {} / max {} / total {} KiB",
        host.join(", "),
        each.iter().min().unwrap_or(&0),
        each.iter().max().unwrap_or(&0),
        each.iter().sum::<u64>()
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let secs: u64 = std::env::var("SOAK_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(600);
    println!(
        "soak: {BRIDGES} bridges x {IN_FLIGHT_PER_BRIDGE} commands in flight, {TABS} pages \
         pushing events, {secs} s"
    );
    let browser = Chromium::start();
    let pages = Fixtures::serve();
    let mut bridges = Vec::new();
    for _ in 0..BRIDGES {
        bridges.push(Arc::new(Mcp::start(&browser.runtime_dir).await));
    }
    let mut tabs = Vec::new();
    for _ in 0..TABS {
        let tab = bridges[0].ok("open_tab", json!({ "url": pages.url("app.html") })).await;
        tabs.push(tab["tab"]["id"].clone());
    }
    let mut bridge_pids = Vec::new();
    for b in &bridges {
        bridge_pids.push(b.session().await["pid"].as_u64().unwrap());
    }
    let hosts = host_pids(&browser.runtime_dir);
    print_rss("start", &hosts, &bridge_pids);

    let tally = Arc::new(Tally::default());
    let stop = Arc::new(AtomicBool::new(false));
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut tasks = Vec::new();
    for (b, mcp) in bridges.iter().enumerate() {
        for slot in 0..IN_FLIGHT_PER_BRIDGE {
            let (mcp, tally, tabs) = (mcp.clone(), tally.clone(), tabs.clone());
            tasks.push(tokio::spawn(async move {
                let mut n: u64 = 0;
                while Instant::now() < deadline {
                    n += 1;
                    // head: who asked; tail: which request. The page echoes both.
                    let head = format!("{b:02}-{slot:05}");
                    let tail = format!("{n:08}");
                    let data = format!("{head}|{tail}");
                    let tab = &tabs[(slot + n as usize) % tabs.len()];
                    let args =
                        json!({ "tab_id": tab, "type": "measure", "payload": { "data": data } });
                    let call = tokio::time::timeout(LOST_AFTER, mcp.call("send_command", args));
                    let Ok(result) = call.await else {
                        tally.lost.fetch_add(1, Ordering::Relaxed);
                        continue;
                    };
                    if result.is_error == Some(true) {
                        let code = text(&result).split(':').next().unwrap_or("").to_owned();
                        *tally.errors.lock().await.entry(code).or_default() += 1;
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    }
                    tally.replies.fetch_add(1, Ordering::Relaxed);
                    let got = result.structured_content.unwrap_or_default();
                    let echoed = &got["result"];
                    if echoed["head"] != head[..8] || echoed["tail"] != tail[tail.len() - 8..] {
                        tally.misrouted.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }));
        }
        // Each bridge drains the page events it receives.
        let (mcp, tally, stop) = (mcp.clone(), tally.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let got = mcp.ok("wait_for_state_change", json!({ "timeout_secs": 1 })).await;
                let n = got["events"].as_array().map_or(0, |e| e.len());
                tally.events.fetch_add(n as u64, Ordering::Relaxed);
            }
        }));
    }
    // The pages push events: 10 per tab every half second.
    let pusher = {
        let (mcp, tabs, stop) = (bridges[0].clone(), tabs.clone(), stop.clone());
        tokio::spawn(async move {
            let mut pushed = 0u64;
            while !stop.load(Ordering::Relaxed) {
                for tab in &tabs {
                    let args = json!({ "tab_id": tab, "type": "burst", "payload": { "n": 10 } });
                    if mcp.call("send_command", args).await.is_error != Some(true) {
                        pushed += 10;
                    }
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            pushed
        })
    };
    let started = Instant::now();
    let mut last = 0;
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(30).min(deadline - Instant::now())).await;
        let replies = tally.replies.load(Ordering::Relaxed);
        println!(
            "  {:>4} s: {} replies ({}/s over the last period)",
            started.elapsed().as_secs(),
            replies,
            (replies - last) / 30
        );
        last = replies;
    }
    print_rss("end (under load)", &hosts, &bridge_pids);
    stop.store(true, Ordering::Relaxed);
    let pushed = pusher.await.unwrap();
    for t in tasks {
        let _ = t.await;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let replies = tally.replies.load(Ordering::Relaxed);
    println!(
        "  replies: {replies} ({:.0}/s); lost: {}; misrouted: {}",
        replies as f64 / elapsed,
        tally.lost.load(Ordering::Relaxed),
        tally.misrouted.load(Ordering::Relaxed)
    );
    println!("  errors by code: {:?}", tally.errors.lock().await);
    println!(
        "  page events pushed: {pushed}; drained by the bridges: {}",
        tally.events.load(Ordering::Relaxed)
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    print_rss("end (idle)", &hosts, &bridge_pids);
}
