//! The soak benchmark (not in CI): `scripts/soak.sh [SECONDS]` (default 600 for each phase).
//! Ten `tabwire mcp` sessions on one real headless Chromium, each on a tab of its own and one
//! tab the user shares with all, keep 1,000 page commands in flight (100 each) while the pages
//! push events (testkit/harness/soak.rs says how). Then the same again with one more session that
//! is refused on every call, as fast as it can. Prints each period's served rate, the extension
//! process's CPU per reply, the worker's JS heap and the RSS of the host and the bridges; then
//! replies, refusals and failures by code, lost and misrouted. Numbers, not a pass/fail: any
//! lost, misrouted or timed-out reply is a finding. `SOAK_PROFILE=DIR` also writes the worker's
//! CPU profile of each phase there and prints where its time went.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;
use tabwire_testkit::Chromium;
use tabwire_testkit::soak::{self, Load, Period};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let secs: u64 = std::env::var("SOAK_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(600);
    let period: u64 = std::env::var("SOAK_PERIOD").ok().and_then(|s| s.parse().ok()).unwrap_or(30);
    let profile_dir = std::env::var_os("SOAK_PROFILE").map(std::path::PathBuf::from);
    let load = Load {
        bridges: 10,
        in_flight: 100,
        quiet: Duration::from_secs(secs),
        refused: Duration::from_secs(secs),
        refused_in_flight: 100,
        period: Duration::from_secs(period),
        profile: profile_dir.is_some(),
    };
    println!(
        "soak: {} sessions x {} commands in flight, each on its own tab and one shared tab, pages \
         pushing events; {secs} s alone, then {secs} s beside a session refused on every call",
        load.bridges, load.in_flight
    );
    println!(
        "  {:>6}  {:>8}  {:>9}  {:>8}  {:>6}  {:>10}  {:>11}  {:>9}  {:>22}",
        "at s",
        "served/s",
        "refused/s",
        "timeouts",
        "stolen",
        "ext µs/rpl",
        "worker heap",
        "host RSS",
        "bridges RSS min/max"
    );
    let mut browser = Chromium::start_with_cdp();
    let every = load.period;
    let report = soak::run(&mut browser, &load, |p: &Period| {
        println!(
            "  {:>6.0}  {:>8.0}  {:>9.0}  {:>8}  {:>5.0}%  {:>10.1}  {:>8.1} MiB  {:>5.1} MiB  {:>8.1} / {:>5.1} MiB",
            p.at_secs,
            p.rate(every),
            p.refusals as f64 / every.as_secs_f64(),
            p.timeouts,
            p.stolen * 100.0,
            p.cpu_per_reply_us(),
            p.worker_heap as f64 / 1048576.0,
            p.host_rss_kib as f64 / 1024.0,
            *p.bridge_rss_kib.iter().min().unwrap_or(&0) as f64 / 1024.0,
            *p.bridge_rss_kib.iter().max().unwrap_or(&0) as f64 / 1024.0,
        );
    })
    .await;
    let phase = |flooded: bool| {
        let ps: Vec<&Period> = report.periods.iter().filter(|p| p.flooded == flooded).collect();
        let replies: u64 = ps.iter().map(|p| p.replies).sum();
        let rate = replies as f64 / (ps.len().max(1) as f64 * every.as_secs_f64());
        let (second, last) = (ps.get(1).map(|p| p.rate(every)), ps.last().map(|p| p.rate(every)));
        (rate, second, last)
    };
    for (name, flooded) in [("alone", false), ("beside the refused session", true)] {
        let (rate, second, last) = phase(flooded);
        let drift = match (second, last) {
            (Some(s), Some(l)) if s > 0.0 => format!("{:+.1} %", (l / s - 1.0) * 100.0),
            _ => "n/a".into(),
        };
        println!("  {name}: {rate:.0} replies/s; last period against the second: {drift}");
    }
    println!(
        "  replies: {}; lost: {}; misrouted: {}; timeouts: {}",
        report.replies,
        report.lost,
        report.misrouted,
        report.timeouts()
    );
    println!("  failures by code: {:?}", report.failures);
    println!("  refusals of the working sessions: {:?}", report.refusals);
    println!("  the refused session heard: {:?}", report.flood);
    println!(
        "  page events pushed: {}; drained by the sessions: {}",
        report.events_pushed, report.events_drained
    );
    if let Some(dir) = profile_dir {
        std::fs::create_dir_all(&dir).expect("the profile folder");
        for (i, profile) in report.profiles.iter().enumerate() {
            let path = dir.join(format!("worker-phase{}.cpuprofile", i + 1));
            std::fs::write(&path, profile.to_string()).expect("write the profile");
            println!("  worker profile, phase {}: {}", i + 1, path.display());
            for (ms, share, name) in top(profile, 25) {
                println!("    {ms:>9.1} ms {share:>5.1} %  {name}");
            }
        }
    }
}

/// The `n` functions with the most self time in a `Profiler.Profile`: (ms, share %, name).
fn top(profile: &Value, n: usize) -> Vec<(f64, f64, String)> {
    let nodes = profile["nodes"].as_array().cloned().unwrap_or_default();
    let name_of: HashMap<u64, String> = nodes
        .iter()
        .filter_map(|node| {
            let f = &node["callFrame"];
            let url = f["url"].as_str().unwrap_or("");
            let file = url.rsplit('/').next().unwrap_or("");
            let name = match f["functionName"].as_str() {
                Some("") | None => "(anonymous)",
                Some(s) => s,
            };
            let line = f["lineNumber"].as_i64().unwrap_or(0) + 1;
            let label =
                if file.is_empty() { name.to_owned() } else { format!("{name} {file}:{line}") };
            Some((node["id"].as_u64()?, label))
        })
        .collect();
    let samples = profile["samples"].as_array().cloned().unwrap_or_default();
    let deltas = profile["timeDeltas"].as_array().cloned().unwrap_or_default();
    let mut by: HashMap<String, f64> = HashMap::new();
    let mut all = 0.0;
    for (s, d) in samples.iter().zip(&deltas) {
        let us = d.as_f64().unwrap_or(0.0);
        all += us;
        let name = s.as_u64().and_then(|id| name_of.get(&id)).cloned().unwrap_or_default();
        *by.entry(name).or_default() += us;
    }
    let mut out: Vec<(f64, f64, String)> =
        by.into_iter().map(|(k, us)| (us / 1000.0, us / all.max(1.0) * 100.0, k)).collect();
    out.sort_by(|a, b| b.0.total_cmp(&a.0));
    out.truncate(n);
    out
}
