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
//!
//! `TABWIRE_BENCH_BEFORE=DIR` adds a fourth browser (X0) with the extension in DIR (another
//! version of it, e.g. the last commit's) taking its turns with the others, so a change is
//! measured against what it replaces in the same run: X − X0 paired like the rest. Several
//! folders, separated by `:`, add X0, X1, … (variants compared in one run). A folder whose
//! manifest has no worker is started like A, without a session: a manifest with tabwire's
//! permissions and no code measures what holding them costs.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tabwire_launcher::{Browser, LaunchOptions};
use tabwire_testkit::chromium::chromium_binary;
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp, bins};

/// Rounds unless `TABWIRE_BENCH_ROUNDS` says otherwise.
const ROUNDS: usize = 30;
const PAGES: &[&str] = &["plain.html", "app.html", "dom/widgets.html", "apps/react-todos.html"];
/// Fresh pages whose first and second read_page are timed.
const FIRST_READS: usize = 10;
/// Loads per site for the worker's listener counts.
const LISTENER_LOADS: usize = 20;

/// Where DOMContentLoaded's time goes, from the navigation's timing marks: the navigation
/// until the first byte of the response (the browser process, the network, what listens to
/// requests), the rest of the response, parsing until the document is interactive (the
/// scripts at `document_start`, the page's own blocking scripts), and from there to the end of
/// DOMContentLoaded (deferred scripts, its handlers). Indices into [`Subject::load`]'s marks,
/// from and to (the navigation's start is 0).
const PHASES: [(&str, Option<usize>, usize); 4] = [
    ("to the first byte", None, 2),
    ("response", Some(2), 3),
    ("parsing", Some(3), 4),
    ("to DOMContentLoaded end", Some(4), 0),
];

/// One load: its timing marks ([`Subject::load`]) and the CPU of the page renderers in ms.
type Load = ([f64; 5], f64);

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

    /// Load `url` in the tab of `site`; its navigation timing in ms from the navigation's start,
    /// as the page itself timed it: the ends of DOMContentLoaded and load, then the marks of
    /// [`PHASES`].
    async fn load(&self, site: usize, url: &str) -> [f64; 5] {
        let tab = &self.tabs[site];
        self.cdp.call("Page.navigate", json!({ "url": url }), Some(tab)).await.expect("navigate");
        let wait = format!(
            r#"new Promise((resolve, reject) => {{
                if (location.href !== {url:?}) return reject(new Error("the old page"));
                const done = () => setTimeout(() => {{
                    const n = performance.getEntriesByType("navigation")[0];
                    resolve([n.domContentLoadedEventEnd, n.loadEventEnd, n.responseStart, n.responseEnd, n.domInteractive].map((t) => t - n.startTime));
                }});
                document.readyState === "complete" ? done() : addEventListener("load", done, {{ once: true }});
            }})"#
        );
        let got = self.cdp.wait_for(tab, &wait, Duration::from_secs(20)).await.expect("loaded");
        std::array::from_fn(|k| got[k].as_f64().unwrap())
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
fn bare(extension: &Path) -> Browser {
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
        chrome_log: false,
    };
    Browser::spawn(&opts).unwrap_or_else(|e| panic!("{e}"))
}

fn pct(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * q).round() as usize]
}

/// A 95 % confidence interval of the median of `v`, free of any assumption on its
/// distribution: the order statistics n/2 ∓ 0.98·√n. A p50 is below a bound only if the
/// interval's top is; one inside the A/A's interval is noise.
fn median_ci(v: &[f64]) -> (f64, f64) {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let (n, half) = (v.len() as f64, 0.98 * (v.len() as f64).sqrt());
    let lo = (n / 2.0 - half).floor().max(0.0) as usize;
    let hi = ((n / 2.0 + half).ceil() as usize).min(v.len() - 1);
    (v[lo], v[hi])
}

/// A browser with tabwire's extension from `dir` (None: the checkout's) and a `tabwire mcp`
/// session attached, as a user has it.
async fn with_extension(dir: Option<&Path>) -> (Chromium, Mcp, Subject) {
    let mut browser = match dir {
        Some(dir) => Chromium::start_with_cdp_from(dir),
        None => Chromium::start_with_cdp(),
    };
    let (to, from) = browser.take_cdp_pipe().expect("a CDP pipe");
    let mcp = Mcp::start(&browser.runtime_dir).await;
    mcp.ok("list_tabs", json!({})).await;
    let pid = browser.pid();
    let host = Some(browser.host_pid());
    let subject = Subject::new(Cdp::new(to, from), pid, host).await;
    (browser, mcp, subject)
}

pub async fn run() {
    println!("\npage cost: the same pages in browsers with and without the extension, in turns");
    let rounds: usize =
        std::env::var("TABWIRE_BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(ROUNDS);
    // Another version of the extension (e.g. the last commit's: `git archive HEAD extension |
    // tar -x -C DIR`, then DIR/extension) as a fourth browser, for a before/after in one run.
    let before: Vec<PathBuf> = std::env::var_os("TABWIRE_BENCH_BEFORE")
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default();
    let allowed = Fixtures::serve();
    let other = Fixtures::serve_on("127.0.0.2");
    let sites = [&allowed, &other];
    const SITE: [&str; 2] = ["allowed 127.0.0.1", "not allowed 127.0.0.2"];

    let (_x_browser, x_mcp, x) = with_extension(None).await;
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(
        empty.path().join("manifest.json"),
        r#"{ "manifest_version": 3, "name": "empty", "version": "1" }"#,
    )
    .unwrap();
    let mut a = bare(empty.path());
    let mut b = bare(empty.path());
    let (to, from) = a.take_cdp_pipe().unwrap();
    let a_cdp = Subject::new(Cdp::new(to, from), a.pid(), None).await;
    let (to, from) = b.take_cdp_pipe().unwrap();
    let b_cdp = Subject::new(Cdp::new(to, from), b.pid(), None).await;
    // [X, A, B] and, with TABWIRE_BENCH_BEFORE, X0, X1, … = the other versions.
    let mut labels = vec!["X (ext)".to_owned(), "A".into(), "B".into()];
    let mut roots = vec![(0, bins::repo_root().join("extension"))];
    let mut subjects = vec![x, a_cdp, b_cdp];
    let (mut others, mut bare_others) = (Vec::new(), Vec::new());
    for (k, dir) in before.iter().enumerate() {
        let dir = dir.canonicalize().expect("TABWIRE_BENCH_BEFORE: an extension folder");
        println!("  X{k}: the extension in {} (TABWIRE_BENCH_BEFORE)", dir.display());
        labels.push(format!("X{k}"));
        // A folder with a manifest and no worker (e.g. tabwire's permissions alone) is
        // started like A: there is nothing to attach a session to.
        let manifest = std::fs::read(dir.join("manifest.json")).unwrap_or_default();
        let manifest: Value = serde_json::from_slice(&manifest).unwrap_or_default();
        if manifest.get("background").is_none() {
            let mut browser = bare(&dir);
            let (to, from) = browser.take_cdp_pipe().unwrap();
            subjects.push(Subject::new(Cdp::new(to, from), browser.pid(), None).await);
            bare_others.push(browser);
            continue;
        }
        let (browser, mcp, subject) = with_extension(Some(&dir)).await;
        others.push((browser, mcp));
        roots.push((subjects.len(), dir));
        subjects.push(subject);
    }
    let n_subjects = subjects.len();

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

    // [site][browser] → each load, in the same order for all.
    let mut times: [Vec<Vec<Load>>; 2] = Default::default();
    for t in &mut times {
        *t = vec![Vec::new(); n_subjects];
    }
    // [site][browser] → CPU ns per kind, summed.
    let mut cpu = [vec![[0u64; 5]; n_subjects], vec![[0u64; 5]; n_subjects]];
    for round in 0..rounds {
        for page in PAGES {
            for site in 0..2 {
                for k in 0..n_subjects {
                    let i = (round + k) % n_subjects;
                    let s = &mut subjects[i];
                    s.cpu_since(); // what came before (the others' turns) is not this load's
                    let got = s.load(site, &url(site, page)).await;
                    // Let what the load started (listeners, tab events) run before counting.
                    tokio::time::sleep(Duration::from_millis(30)).await;
                    let spent = s.cpu_since();
                    for (c, v) in cpu[site][i].iter_mut().zip(spent) {
                        *c += v;
                    }
                    times[site][i].push((got, spent[0] as f64 / 1e6));
                }
            }
        }
    }

    let loads = (rounds * PAGES.len()) as f64;
    println!(
        "  {} pages × {rounds} rounds per site, {n_subjects} browsers taking turns; paired \
         differences (X: this checkout's extension, A and B: none)",
        PAGES.len()
    );
    let mut pairs =
        vec![("extension − none (X−A)".to_owned(), 0, 1), ("A/A: none − none (B−A)".into(), 2, 1)];
    for k in 0..before.len() {
        pairs.push((format!("X{k} − none (X{k}−A)"), 3 + k, 1));
        pairs.push((format!("now − X{k} (X−X{k})"), 0, 3 + k));
    }
    for site in 0..2 {
        let t = &times[site];
        let base: Vec<f64> = t[1].iter().map(|l| l.0[0]).collect();
        println!(
            "  {} (DOMContentLoaded p50 without the extension: {:.2} ms)",
            SITE[site],
            pct(&base, 0.5)
        );
        for (label, i, j) in &pairs {
            let diff = |f: &dyn Fn(&Load) -> f64| -> Vec<f64> {
                t[*i].iter().zip(&t[*j]).map(|(x, y)| f(x) - f(y)).collect()
            };
            let (dcl, ld, cpu) = (diff(&|l| l.0[0]), diff(&|l| l.0[1]), diff(&|l| l.1));
            let (lo, hi) = median_ci(&dcl);
            println!(
                "    {label:<24} DOMContentLoaded p50 {:>+7.2} ms (95 % {lo:>+.1}…{hi:>+.1}) p90 \
                 {:>+7.2} ms   load p50 {:>+7.2} ms p90 {:>+7.2} ms   renderer CPU p50 {:>+6.2} ms",
                pct(&dcl, 0.5),
                pct(&dcl, 0.9),
                pct(&ld, 0.5),
                pct(&ld, 0.9),
                pct(&cpu, 0.5)
            );
            print!("      DOMContentLoaded by phase, p50:");
            for (name, from, to) in PHASES {
                let span = move |l: &Load| l.0[to] - from.map_or(0.0, |f| l.0[f]);
                print!("  {name} {:>+5.2}", pct(&diff(&span), 0.5));
            }
            println!(" ms");
        }
        print!("    CPU ms per load (mean)  ");
        for label in &labels {
            print!(" {label:>11}");
        }
        println!();
        for (k, kind) in KINDS.iter().enumerate() {
            print!("      {kind:<22}");
            for c in &cpu[site] {
                print!(" {:>11.3}", c[k] as f64 / 1e6 / loads);
            }
            println!();
        }
        print!("      {:<22}", "all");
        for c in &cpu[site] {
            print!(" {:>11.3}", c.iter().sum::<u64>() as f64 / 1e6 / loads);
        }
        println!();
    }

    // The worker's listener runs per load, with the debugger's coverage counter on (after the
    // timed rounds, so it does not slow them).
    for (i, root) in &roots {
        let (i, x) = (*i, &subjects[*i]);
        println!("  {}:", labels[i]);
        let worker = crate::sites::service_worker(&x.cdp).await;
        x.cdp.call("Profiler.enable", json!({}), Some(&worker)).await.expect("Profiler.enable");
        let precise = json!({ "callCount": true, "detailed": false });
        x.cdp
            .call("Profiler.startPreciseCoverage", precise, Some(&worker))
            .await
            .expect("coverage");
        let take = async || {
            x.cdp
                .call("Profiler.takePreciseCoverage", json!({}), Some(&worker))
                .await
                .expect("take")
        };
        take().await;
        for (site, name) in SITE.iter().enumerate() {
            for i in 0..LISTENER_LOADS {
                x.load(site, &url(site, PAGES[i % PAGES.len()])).await;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
            let (calls, by) = listener_calls(&take().await, root);
            let per = |c: u64| c as f64 / LISTENER_LOADS as f64;
            println!(
                "    worker on {}: {:.2} listener runs per load ({LISTENER_LOADS} loads){}",
                name,
                per(calls),
                if by.is_empty() { String::new() } else { ":".into() }
            );
            for (at, c) in by {
                println!("        {at:<40} {:.2}", per(c));
            }
        }
        let _ = x.cdp.call("Target.detachFromTarget", json!({ "sessionId": worker }), None).await;
    }

    // What the assistant sees of a version: its first read of a freshly loaded page (what a
    // page agent loaded on demand would slow down), and the next one.
    let mcps: Vec<&Mcp> = std::iter::once(&x_mcp).chain(others.iter().map(|(_, m)| m)).collect();
    for (mcp, (i, _)) in mcps.into_iter().zip(&roots) {
        let (mut first, mut next) = (Vec::new(), Vec::new());
        for _ in 0..FIRST_READS {
            let page = url(0, "dom/widgets.html");
            subjects[*i].load(0, &page).await;
            let tabs = mcp.ok("list_tabs", json!({})).await;
            let tab = tabs
                .as_array()
                .or(tabs["tabs"].as_array())
                .and_then(|t| t.iter().find(|t| t["url"].as_str() == Some(page.as_str())))
                .unwrap_or_else(|| panic!("the tab of {page} in {tabs}"))["id"]
                .clone();
            for times in [&mut first, &mut next] {
                let t = std::time::Instant::now();
                mcp.ok("read_page", json!({ "tab_id": tab })).await;
                times.push(t.elapsed().as_secs_f64() * 1000.0);
            }
        }
        println!(
            "  {}: read_page of a fresh page p50 {:.2} ms, the next one {:.2} ms ({FIRST_READS} pages)",
            labels[*i],
            pct(&first, 0.5),
            pct(&next, 0.5)
        );
    }
    drop(x_mcp);
}

/// How many times the worker ran a function passed to `addListener` (written inline there),
/// in all and by file:line, from a `Profiler.takePreciseCoverage` answer.
fn listener_calls(coverage: &Value, root: &Path) -> (u64, BTreeMap<String, u64>) {
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
            let before = String::from_utf16_lossy(&utf16[start.saturating_sub(60)..start]);
            if !passed_to_add_listener(&before) {
                continue;
            }
            let line = String::from_utf16_lossy(&utf16[..start]).lines().count();
            all += count;
            *by.entry(format!("{}:{line}", path.1)).or_default() += count;
        }
    }
    (all, by)
}

/// Whether the source just before a function is `addListener(`, or `addListener((name = `
/// (a listener kept to be removed later).
fn passed_to_add_listener(before: &str) -> bool {
    let b = before.trim_end();
    let b = match b.strip_suffix('=') {
        Some(assigned) => {
            let name = assigned.trim_end();
            let name = name.trim_end_matches(|c: char| c.is_alphanumeric() || "_$.".contains(c));
            match name.strip_suffix('(') {
                Some(b) => b,
                None => return false,
            }
        }
        None => b,
    };
    b.ends_with("addListener(")
}
