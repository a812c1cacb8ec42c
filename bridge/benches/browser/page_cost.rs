//! What the extension costs the user's own browsing: the same pages loaded by a browser with
//! the extension (and a `tabwire mcp` session attached) and by one without it, taking turns,
//! on 127.0.0.1 (allowed) and 127.0.0.2 (not allowed). Each round loads one page in three
//! browsers — with the extension (X), without (A) and a second one without (B) — in an order
//! rotated every round, and pairs the loads: X − A is the extension's cost, B − A the noise
//! floor (A/A). Times are the page's own navigation timing (DOMContentLoaded and load end,
//! from the navigation's start). Finer: the CPU time each browser's processes spent per load
//! (`/proc/<pid>/task/*/schedstat`, summed per kind of process), and how often the extension's
//! service worker ran an event listener per load (V8's precise coverage call counts of the
//! functions passed to `addListener`).
//!
//! "Without the extension" is a browser started the same way with a manifest-only extension
//! in its place (the launcher always loads one): no worker, no content scripts.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use tabwire_launcher::{Browser, LaunchOptions};
use tabwire_tests::chromium::chromium_binary;
use tabwire_tests::{Cdp, Chromium, Fixtures, Mcp, bins};

const ROUNDS: usize = 20;
const PAGES: &[&str] = &["plain.html", "app.html", "dom/widgets.html", "apps/react-todos.html"];
/// Loads per site for the worker's listener counts.
const LISTENER_LOADS: usize = 20;

/// Kinds of process, in the order the CPU figures are printed.
const KINDS: [&str; 5] =
    ["page renderers", "extension process", "browser process", "other", "tabwire-host"];

struct Subject {
    cdp: Cdp,
    /// The session of its tab on each site: [allowed, not allowed].
    tabs: [String; 2],
    pgid: u32,
    host: Option<i32>,
    last: HashMap<i32, (usize, u64)>,
}

impl Subject {
    async fn new(cdp: Cdp, pgid: u32, host: Option<i32>) -> Subject {
        let mut tabs = [String::new(), String::new()];
        for tab in &mut tabs {
            *tab = cdp.open("about:blank").await.expect("open a tab");
            cdp.call("Page.enable", json!({}), Some(tab)).await.expect("Page.enable");
        }
        let mut s = Subject { cdp, tabs, pgid, host, last: HashMap::new() };
        s.cpu_since();
        s
    }

    /// Load `url` in the tab of `site`; (DOMContentLoaded, load) in ms from the navigation's
    /// start, as the page itself timed them.
    async fn load(&self, site: usize, url: &str) -> (f64, f64) {
        let tab = &self.tabs[site];
        self.cdp.call("Page.navigate", json!({ "url": url }), Some(tab)).await.expect("navigate");
        let wait = format!(
            r#"new Promise((resolve, reject) => {{
                if (location.href !== {url:?}) return reject(new Error("the old page"));
                const done = () => setTimeout(() => {{
                    const n = performance.getEntriesByType("navigation")[0];
                    resolve([n.domContentLoadedEventEnd - n.startTime, n.loadEventEnd - n.startTime]);
                }});
                document.readyState === "complete" ? done() : addEventListener("load", done, {{ once: true }});
            }})"#
        );
        let got = self.cdp.wait_for(tab, &wait, Duration::from_secs(20)).await.expect("loaded");
        (got[0].as_f64().unwrap(), got[1].as_f64().unwrap())
    }

    /// CPU time (ns) this browser's processes spent since the last call, by [`KINDS`].
    fn cpu_since(&mut self) -> [u64; 5] {
        let now = cpu_by_pid(self.pgid, self.host);
        let mut spent = [0u64; 5];
        for (pid, (kind, ns)) in &now {
            let before = self.last.get(pid).map_or(0, |&(_, b)| b);
            spent[*kind] += ns.saturating_sub(before);
        }
        self.last = now;
        spent
    }
}

/// pid → (kind, CPU ns of all its threads) for the processes of the browser's group and the host.
fn cpu_by_pid(pgid: u32, host: Option<i32>) -> HashMap<i32, (usize, u64)> {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else { return out };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let fields: Vec<&str> =
            stat.rsplit_once(')').map(|(_, r)| r.split_whitespace().collect()).unwrap_or_default();
        let in_group = fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid);
        if !in_group && Some(pid) != host {
            continue;
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline);
        let kind = if Some(pid) == host
            || cmdline.split('\0').next().is_some_and(|a| a.ends_with("tabwire-host"))
        {
            4
        } else if cmdline.contains("--type=renderer") && cmdline.contains("--extension-process") {
            1
        } else if cmdline.contains("--type=renderer") {
            0
        } else if !cmdline.contains("--type=") {
            2
        } else {
            3
        };
        let mut ns = 0;
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for task in tasks.flatten() {
                let s = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
                ns += s.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            }
        }
        out.insert(pid, (kind, ns));
    }
    out
}

/// A browser started like the others, with a manifest-only extension instead of tabwire's.
fn bare(extension: &std::path::Path) -> Browser {
    let opts = LaunchOptions {
        chromium: chromium_binary(),
        extension_dir: extension.to_owned(),
        host_binary: bins::bin("tabwire-host"),
        headless: true,
        root: bins::scratch_dir("bare").into_path(),
        keep: false,
        env: vec![],
        timeout: Duration::from_secs(30),
        write_manifest: false,
        cdp_pipe: true,
    };
    Browser::spawn(&opts).unwrap_or_else(|e| panic!("{e}"))
}

fn pct(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * q).round() as usize]
}

pub async fn run() {
    println!("\npage cost: the same pages in browsers with and without the extension, in turns");
    let allowed = Fixtures::serve();
    let other = Fixtures::serve_on("127.0.0.2");
    let sites = [&allowed, &other];
    const SITE: [&str; 2] = ["allowed 127.0.0.1", "not allowed 127.0.0.2"];

    let mut with = Chromium::start_with_cdp();
    let (to, from) = with.take_cdp_pipe().expect("a CDP pipe");
    let mcp = Mcp::start(&with.runtime_dir).await;
    mcp.ok("list_tabs", json!({})).await;
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(
        empty.path().join("manifest.json"),
        r#"{ "manifest_version": 3, "name": "empty", "version": "1" }"#,
    )
    .unwrap();
    let mut a = bare(empty.path());
    let mut b = bare(empty.path());
    let x = Subject::new(Cdp::new(to, from), with.pid(), Some(with.host_pid())).await;
    if std::env::var_os("TABWIRE_BENCH_OLD_LISTENERS").is_some() {
        old_listeners(&x.cdp).await;
    }
    let (to, from) = a.take_cdp_pipe().unwrap();
    let a_cdp = Subject::new(Cdp::new(to, from), a.pid(), None).await;
    let (to, from) = b.take_cdp_pipe().unwrap();
    let b_cdp = Subject::new(Cdp::new(to, from), b.pid(), None).await;
    let mut subjects = [x, a_cdp, b_cdp];

    // Warm up: every page once in every browser (caches, compiled code, processes).
    let mut n = 0usize;
    let mut url = |site: usize, page: &str| {
        n += 1;
        format!("{}?n={n}", sites[site].url(page))
    };
    for s in &subjects {
        for site in 0..2 {
            for page in PAGES {
                s.load(site, &url(site, page)).await;
            }
        }
    }
    for s in &mut subjects {
        s.cpu_since();
    }

    // [site] → (dcl diffs X−A, load diffs X−A, dcl diffs B−A, load diffs B−A, dcl of A)
    let mut diffs: [[Vec<f64>; 5]; 2] = Default::default();
    // [site][browser] → CPU ns per kind, summed.
    let mut cpu = [[[0u64; 5]; 3]; 2];
    for round in 0..ROUNDS {
        for page in PAGES {
            for site in 0..2 {
                let mut got = [(0.0, 0.0); 3];
                for k in 0..3 {
                    let i = (round + k) % 3;
                    let s = &mut subjects[i];
                    s.cpu_since(); // what came before (the others' turns) is not this load's
                    got[i] = s.load(site, &url(site, page)).await;
                    // Let what the load started (listeners, tab events) run before counting.
                    tokio::time::sleep(Duration::from_millis(30)).await;
                    let spent = s.cpu_since();
                    for (c, v) in cpu[site][i].iter_mut().zip(spent) {
                        *c += v;
                    }
                }
                let d = &mut diffs[site];
                d[0].push(got[0].0 - got[1].0);
                d[1].push(got[0].1 - got[1].1);
                d[2].push(got[2].0 - got[1].0);
                d[3].push(got[2].1 - got[1].1);
                d[4].push(got[1].0);
            }
        }
    }

    let loads = (ROUNDS * PAGES.len()) as f64;
    println!(
        "  {} pages × {ROUNDS} rounds per site, 3 browsers taking turns; paired differences",
        PAGES.len()
    );
    for site in 0..2 {
        let d = &mut diffs[site];
        let base = pct(&mut d[4], 0.5);
        println!("  {} (DOMContentLoaded p50 without the extension: {base:.2} ms)", SITE[site]);
        for (label, i) in [("extension − none (X−A)", 0), ("A/A: none − none (B−A)", 2)] {
            let (dcl50, dcl90) = (pct(&mut d[i], 0.5), pct(&mut d[i], 0.9));
            let (ld50, ld90) = (pct(&mut d[i + 1], 0.5), pct(&mut d[i + 1], 0.9));
            println!(
                "    {label:<24} DOMContentLoaded p50 {dcl50:>+7.2} ms p90 {dcl90:>+7.2} ms   \
                 load p50 {ld50:>+7.2} ms p90 {ld90:>+7.2} ms"
            );
        }
        println!("    CPU ms per load (mean)    {:>10} {:>10} {:>10}", "X (ext)", "A", "B");
        for (k, kind) in KINDS.iter().enumerate() {
            let ms = |i: usize| cpu[site][i][k] as f64 / 1e6 / loads;
            println!("      {kind:<22} {:>10.3} {:>10.3} {:>10.3}", ms(0), ms(1), ms(2));
        }
        let total = |i: usize| cpu[site][i].iter().sum::<u64>() as f64 / 1e6 / loads;
        println!("      {:<22} {:>10.3} {:>10.3} {:>10.3}", "all", total(0), total(1), total(2));
    }

    // The worker's listener runs per load, with the debugger's coverage counter on (after the
    // timed rounds, so it does not slow them).
    let x = &subjects[0];
    let worker = crate::sites::service_worker(&x.cdp).await;
    x.cdp.call("Profiler.enable", json!({}), Some(&worker)).await.expect("Profiler.enable");
    let precise = json!({ "callCount": true, "detailed": false });
    x.cdp.call("Profiler.startPreciseCoverage", precise, Some(&worker)).await.expect("coverage");
    let take = async || {
        x.cdp.call("Profiler.takePreciseCoverage", json!({}), Some(&worker)).await.expect("take")
    };
    take().await;
    for (site, name) in SITE.iter().enumerate() {
        for i in 0..LISTENER_LOADS {
            x.load(site, &url(site, PAGES[i % PAGES.len()])).await;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let (calls, by) = listener_calls(&take().await);
        let per = |c: u64| c as f64 / LISTENER_LOADS as f64;
        println!(
            "  worker on {}: {:.2} listener runs per load ({LISTENER_LOADS} loads){}",
            name,
            per(calls),
            if by.is_empty() { String::new() } else { ":".into() }
        );
        for (at, c) in by {
            println!("      {at:<40} {:.2}", per(c));
        }
    }
    let _ = x.cdp.call("Target.detachFromTarget", json!({ "sessionId": worker }), None).await;
    drop(mcp);
}

/// `TABWIRE_BENCH_OLD_LISTENERS=1`: the worker's listeners as they were before they were
/// added only while needed (worker/settle.js, worker/handover.js, worker/dom/open-dialogs.js):
/// always on, woken by every navigation and XHR of every site. Listeners that do nothing stand
/// in for them (theirs looked a tab up in an empty map).
async fn old_listeners(cdp: &Cdp) {
    println!("  (TABWIRE_BENCH_OLD_LISTENERS: the worker hears every navigation, as before)");
    let worker = crate::sites::service_worker(cdp).await;
    let script = r#"(() => {
        const nop = () => {}, xhr = { urls: ['<all_urls>'], types: ['xmlhttprequest'] };
        globalThis.benchOld = [nop, () => {}, () => {}, () => {}, () => {}, () => {}];
        const w = chrome.webNavigation, [a, b, c, d, e, f] = globalThis.benchOld;
        w.onBeforeNavigate.addListener(a); w.onCommitted.addListener(b); w.onCommitted.addListener(c);
        w.onDOMContentLoaded.addListener(d); w.onErrorOccurred.addListener(e); w.onCompleted.addListener(f);
        for (const ev of ['onBeforeRequest', 'onCompleted', 'onErrorOccurred'])
            chrome.webRequest[ev].addListener(() => {}, xhr);
        return true;
    })()"#;
    cdp.eval(&worker, script).await.expect("add the old listeners");
    let detach = json!({ "sessionId": worker });
    cdp.call("Target.detachFromTarget", detach, None).await.expect("detach from the worker");
}

/// How many times the worker ran a function passed to `addListener` (written inline there),
/// in all and by file:line, from a `Profiler.takePreciseCoverage` answer.
fn listener_calls(coverage: &Value) -> (u64, BTreeMap<String, u64>) {
    let root = bins::repo_root().join("extension");
    let mut sources: HashMap<String, Option<(Vec<u16>, String)>> = HashMap::new();
    let (mut all, mut by) = (0, BTreeMap::new());
    for script in coverage["result"].as_array().into_iter().flatten() {
        let url = script["url"].as_str().unwrap_or("");
        let Some(path) = url.strip_prefix("chrome-extension://").and_then(|r| r.split_once('/'))
        else {
            continue;
        };
        let source = sources.entry(path.1.to_owned()).or_insert_with(|| {
            let text = std::fs::read_to_string(root.join(PathBuf::from(path.1))).ok()?;
            Some((text.encode_utf16().collect(), text))
        });
        let Some((utf16, _)) = source else { continue };
        for f in script["functions"].as_array().into_iter().flatten() {
            let range = &f["ranges"][0];
            let (start, count) = (
                range["startOffset"].as_u64().unwrap_or(0) as usize,
                range["count"].as_u64().unwrap_or(0),
            );
            if count == 0 || start > utf16.len() {
                continue;
            }
            let before = String::from_utf16_lossy(&utf16[start.saturating_sub(40)..start]);
            if !before.trim_end().ends_with("addListener(") {
                continue;
            }
            let line = String::from_utf16_lossy(&utf16[..start]).lines().count();
            all += count;
            *by.entry(format!("{}:{line}", path.1)).or_default() += count;
        }
    }
    (all, by)
}
