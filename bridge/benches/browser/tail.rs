//! Where the tail comes from: the floors' calls run again under the kernel's
//! scheduler tracer (ftrace, `sched_switch` and `sched_wakeup`), and every call slower than 3×
//! its line's median is explained by what the trace shows inside it: the longest time any
//! thread spent ready to run but not running, which thread that was, on which CPU, and what ran
//! there meanwhile. Needs root and tracefs (`/sys/kernel/tracing`); elsewhere it says so and
//! measures nothing. Run alone: `cargo bench -p tabwire --bench browser -- tail`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tabwire_testkit::{Chromium, Fixtures, Mcp};

/// Calls per line, and the lines traced.
const CALLS: usize = 2_000;
/// Per-CPU trace buffer: a call makes ~60 scheduler events; 2,000 calls × 3 lines fit.
const BUFFER_KB: &str = "65536";

pub async fn run() {
    println!("\nwhere the tail comes from: the floors' calls under the kernel's scheduler tracer");
    let trace = match Tracer::open() {
        Ok(t) => t,
        Err(why) => {
            println!("  not measured: {why}");
            return;
        }
    };
    let pages = Fixtures::serve();
    let browser = Chromium::start();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab =
        mcp.ok("open_tab", json!({ "url": pages.url("app.html") })).await["tab"]["id"].clone();
    let lines: [(&str, &str, Value); 4] = [
        ("F0 the bridge (list_browsers)", "list_browsers", json!({})),
        ("F1 the worker (list_tabs)", "list_tabs", json!({})),
        ("get_state from the cache", "get_state", json!({ "tab_id": tab })),
        ("get_state forced", "get_state", json!({ "tab_id": tab, "force_refresh": true })),
    ];
    for (_, tool, args) in &lines {
        for _ in 0..200 {
            mcp.ok(tool, args.clone()).await;
        }
    }
    trace.start();
    let mut windows: Vec<Vec<(u64, u64)>> = Vec::new();
    for (_, tool, args) in &lines {
        let mut w = Vec::with_capacity(CALLS);
        for _ in 0..CALLS {
            let t0 = mono_ns();
            mcp.ok(tool, args.clone()).await;
            w.push((t0, mono_ns()));
        }
        windows.push(w);
    }
    let events = trace.stop_and_read();
    // TABWIRE_TAIL_KEEP=DIR keeps the trace and the calls' windows, to read one call by hand.
    if let Some(dir) = std::env::var_os("TABWIRE_TAIL_KEEP") {
        let dir = PathBuf::from(dir);
        std::fs::write(dir.join("trace.txt"), &events).expect("keep the trace");
        let mut calls = String::new();
        for ((label, _, _), w) in lines.iter().zip(&windows) {
            for (a, b) in w {
                let _ = writeln!(calls, "{label}\t{a}\t{b}");
            }
        }
        std::fs::write(dir.join("calls.tsv"), calls).expect("keep the windows");
    }
    let waits = Waits::from_trace(&events);
    println!("  {} scheduler events traced", waits.events);
    for ((label, _, _), w) in lines.iter().zip(&windows) {
        println!("{}", explain(label, w, &waits));
    }
}

/// CLOCK_MONOTONIC in ns: the clock the trace is told to use (`trace_clock mono`).
fn mono_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// ftrace in its own instance, so nothing else using the tracer is disturbed.
struct Tracer {
    dir: PathBuf,
}

impl Tracer {
    fn open() -> Result<Tracer, String> {
        let root = Path::new("/sys/kernel/tracing");
        if !root.join("instances").is_dir() {
            return Err("no tracefs at /sys/kernel/tracing (mount -t tracefs nodev /sys/kernel/tracing, as root)".into());
        }
        let dir = root.join("instances").join(format!("tabwire-{}", std::process::id()));
        std::fs::create_dir(&dir)
            .map_err(|e| format!("cannot make a trace instance (needs root): {e}"))?;
        let t = Tracer { dir };
        t.set("trace_clock", "mono")?;
        t.set("buffer_size_kb", BUFFER_KB)?;
        t.set("options/record-tgid", "1").ok();
        t.set("events/sched/sched_switch/enable", "1")?;
        t.set("events/sched/sched_wakeup/enable", "1")?;
        t.set("events/sched/sched_waking/enable", "1")?;
        t.set("tracing_on", "0")?;
        // TABWIRE_TAIL_EVENTS="raw_syscalls/sys_enter:comm == \"Chrome_IOThread\";…": more
        // events (each with an optional filter), for reading a call by hand.
        for spec in std::env::var("TABWIRE_TAIL_EVENTS").unwrap_or_default().split(';') {
            let (event, filter) = spec.split_once(':').unwrap_or((spec, ""));
            if event.is_empty() {
                continue;
            }
            if !filter.is_empty() {
                t.set(&format!("events/{event}/filter"), filter)?;
            }
            t.set(&format!("events/{event}/enable"), "1")?;
        }
        Ok(t)
    }

    fn set(&self, file: &str, value: &str) -> Result<(), String> {
        std::fs::write(self.dir.join(file), value).map_err(|e| format!("{file}: {e}"))
    }

    fn start(&self) {
        self.set("trace", "").expect("clear the trace");
        self.set("tracing_on", "1").expect("start tracing");
    }

    fn stop_and_read(&self) -> String {
        self.set("tracing_on", "0").expect("stop tracing");
        std::fs::read_to_string(self.dir.join("trace")).expect("read the trace")
    }
}

impl Drop for Tracer {
    fn drop(&mut self) {
        let _ = self.set("events/enable", "0");
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// One stretch a thread spent ready but not running.
#[derive(Clone)]
struct Wait {
    ready: u64,
    ran: u64,
    tid: u32,
    /// Who woke it (None: it was preempted, not woken).
    waker: Option<u32>,
    cpu: u32,
    /// The thread that held that CPU when this one became ready, how long it had run by then,
    /// and how many other threads ran there before this one did.
    ahead: u32,
    ahead_ran_ms: f64,
    others: usize,
}

struct Waits {
    /// Sorted by `ready`.
    all: Vec<Wait>,
    events: usize,
    /// tid → thread name, from the trace.
    names: HashMap<u32, String>,
}

impl Waits {
    fn from_trace(text: &str) -> Waits {
        let mut ready: HashMap<u32, (u64, Option<u32>)> = HashMap::new();
        let mut waker_of: HashMap<u32, u32> = HashMap::new();
        // cpu → (tid, since); tid → cpu for the running ones
        let mut current: HashMap<u32, (u32, u64)> = HashMap::new();
        let mut running: HashMap<u32, u32> = HashMap::new();
        // cpu → the ready mark of each thread queued there, to count who ran first
        let mut switches: HashMap<u32, Vec<u64>> = HashMap::new();
        let mut names = HashMap::new();
        let mut all = Vec::new();
        let mut events = 0;
        for line in text.lines() {
            let Some(ev) = Event::parse(line) else { continue };
            events += 1;
            match ev.kind {
                Kind::Waking { tid } => {
                    waker_of.insert(tid, ev.current);
                }
                Kind::Wakeup { tid } => {
                    if !running.contains_key(&tid) {
                        ready
                            .entry(tid)
                            .or_insert((ev.ts, Some(waker_of.remove(&tid).unwrap_or(0))));
                    }
                }
                Kind::Switch { prev, prev_tid, prev_runnable, next, next_tid } => {
                    names.insert(prev_tid, prev);
                    names.insert(next_tid, next);
                    running.remove(&prev_tid);
                    if prev_runnable && prev_tid != 0 {
                        ready.insert(prev_tid, (ev.ts, None));
                    } else {
                        ready.remove(&prev_tid);
                    }
                    let list = switches.entry(ev.cpu).or_default();
                    list.push(ev.ts);
                    if list.len() > 256 {
                        list.drain(..128);
                    }
                    if let Some((since, waker)) = ready.remove(&next_tid) {
                        let (ahead, ahead_since) =
                            current.get(&ev.cpu).copied().unwrap_or((prev_tid, since));
                        let others = list.iter().filter(|t| **t > since && **t < ev.ts).count();
                        all.push(Wait {
                            ready: since,
                            ran: ev.ts,
                            tid: next_tid,
                            waker,
                            cpu: ev.cpu,
                            ahead,
                            ahead_ran_ms: since.saturating_sub(ahead_since) as f64 / 1e6,
                            others,
                        });
                    }
                    if next_tid != 0 {
                        running.insert(next_tid, ev.cpu);
                    }
                    current.insert(ev.cpu, (next_tid, ev.ts));
                }
            }
        }
        all.sort_by_key(|w| w.ready);
        Waits { all, events, names }
    }

    /// The waits that began inside [t0, t1].
    fn within(&self, t0: u64, t1: u64) -> &[Wait] {
        let a = self.all.partition_point(|w| w.ready < t0);
        let b = self.all.partition_point(|w| w.ready <= t1);
        &self.all[a..b]
    }

    /// `process:thread`, the process told by its command line (Chromium's `--type=`).
    fn who(&self, tid: u32) -> String {
        if tid == 0 {
            return "idle".into();
        }
        let thread = self.names.get(&tid).map(|n| n.as_str()).unwrap_or("?");
        format!("{}:{thread}", process_of(tid))
    }
}

/// What process a thread belongs to, read from /proc while the processes still run: ours by
/// name (the benchmark itself is "client"), Chromium's by `--type=` ("browser" without one,
/// "extension" for the extension's renderer).
fn process_of(tid: u32) -> String {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).unwrap_or_default();
    let Some(tgid) = status.lines().find_map(|l| l.strip_prefix("Tgid:")) else {
        return "gone".into();
    };
    let tgid = tgid.trim();
    let exe = std::fs::read_link(format!("/proc/{tgid}/exe")).unwrap_or_default();
    let exe = exe.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if exe.starts_with("browser-") {
        return "client".into();
    }
    if !exe.contains("chrom") {
        return exe;
    }
    // Chromium rewrites its command line as one string: split on spaces too.
    let cmd = std::fs::read(format!("/proc/{tgid}/cmdline")).unwrap_or_default();
    let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
    if cmd.split(' ').any(|a| a == "--extension-process") {
        return "extension".into();
    }
    cmd.split(' ').find_map(|a| a.strip_prefix("--type=")).unwrap_or("browser").to_owned()
}

struct Event {
    ts: u64,
    cpu: u32,
    /// The thread the event was recorded on.
    current: u32,
    kind: Kind,
}

enum Kind {
    Waking { tid: u32 },
    Wakeup { tid: u32 },
    Switch { prev: String, prev_tid: u32, prev_runnable: bool, next: String, next_tid: u32 },
}

impl Event {
    /// `comm-tid (tgid) [cpu] flags secs.micros: sched_x: fields`
    fn parse(line: &str) -> Option<Event> {
        let (head, rest) = line.split_once(": sched_")?;
        let cpu_at = head.rfind('[')?;
        let cpu: u32 = head[cpu_at + 1..].split(']').next()?.trim().parse().ok()?;
        let before = head[..cpu_at].trim_end();
        let before = before.rsplit_once(" (").map_or(before, |(b, _)| b).trim_end();
        let current: u32 = before.rsplit_once('-')?.1.parse().ok()?;
        let ts_text = head.rsplit(' ').next()?;
        let (s, frac) = ts_text.split_once('.')?;
        let ts = s.parse::<u64>().ok()? * 1_000_000_000
            + frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32);
        let (name, fields) = rest.split_once(": ")?;
        let field = |key: &str| -> Option<&str> {
            let at = fields.find(&format!(" {key}="))? + key.len() + 2;
            Some(fields[at..].split(' ').next().unwrap_or(""))
        };
        let kind = match name {
            "waking" => Kind::Waking { tid: field("pid")?.parse().ok()? },
            "wakeup" => Kind::Wakeup { tid: field("pid")?.parse().ok()? },
            "switch" => {
                // comm may hold spaces: take prev_comm up to " prev_pid=".
                let prev =
                    fields.split(" prev_pid=").next()?.strip_prefix("prev_comm=")?.to_owned();
                let next =
                    fields.split("next_comm=").nth(1)?.split(" next_pid=").next()?.to_owned();
                Kind::Switch {
                    prev,
                    prev_tid: field("prev_pid")?.parse().ok()?,
                    prev_runnable: field("prev_state")?.starts_with('R'),
                    next,
                    next_tid: field("next_pid")?.parse().ok()?,
                }
            }
            _ => return None,
        };
        Some(Event { ts, cpu, current, kind })
    }
}

/// The line's percentiles, then its slow calls explained, grouped by who waited behind what.
fn explain(label: &str, windows: &[(u64, u64)], waits: &Waits) -> String {
    let mut took: Vec<u64> = windows.iter().map(|(a, b)| b - a).collect();
    took.sort_unstable();
    let pct = |q: f64| took[((took.len() - 1) as f64 * q).round() as usize] as f64 / 1e6;
    let (p50, p99) = (pct(0.5), pct(0.99));
    let mut out = String::new();
    let slow: Vec<&(u64, u64)> =
        windows.iter().filter(|(a, b)| (b - a) as f64 / 1e6 > 3.0 * p50).collect();
    let _ = writeln!(
        out,
        "  {label:<24} p50 {p50:.3} ms  p99 {p99:.3} ms  ({:.1}×)  slow calls (> 3× p50): {}",
        p99 / p50,
        slow.len()
    );
    // The longest wait inside each slow call (clipped to the call), grouped by who waited,
    // who woke it and what held the CPU.
    let clip =
        |w: &Wait, a: u64, b: u64| (w.ran.min(b).saturating_sub(w.ready.max(a))) as f64 / 1e6;
    let mut groups: HashMap<String, (usize, f64, f64)> = HashMap::new();
    let (mut explained, mut excess) = (0.0, 0.0);
    for &&(a, b) in &slow {
        excess += (b - a) as f64 / 1e6 - p50;
        let inside = waits.within(a, b);
        let Some(w) = inside.iter().max_by(|x, y| clip(x, a, b).total_cmp(&clip(y, a, b))) else {
            continue;
        };
        let wait_ms = clip(w, a, b);
        explained += wait_ms;
        let key = format!(
            "{} {} on cpu{}, behind {}{}",
            waits.who(w.tid),
            match w.waker {
                Some(by) => format!("(woken by {})", waits.who(by)),
                None => "(preempted)".into(),
            },
            w.cpu,
            waits.who(w.ahead),
            if w.others > 0 { " and others" } else { "" }
        );
        let g = groups.entry(key).or_default();
        g.0 += 1;
        g.1 += wait_ms;
        g.2 += w.ahead_ran_ms;
    }
    let mut groups: Vec<_> = groups.into_iter().collect();
    groups.sort_by_key(|g| std::cmp::Reverse(g.1.0));
    for (key, (n, total, ahead)) in groups.iter().take(6) {
        let n = *n as f64;
        let _ = writeln!(
            out,
            "    {n:>4} × waited {:.2} ms: {key} (which had run {:.2} ms when it woke)",
            total / n,
            ahead / n
        );
    }
    // And the typical call: its threads' time ready but not running, summed.
    let fast: Vec<f64> = windows
        .iter()
        .filter(|(a, b)| ((b - a) as f64 / 1e6) <= p50)
        .map(|&(a, b)| waits.within(a, b).iter().map(|w| clip(w, a, b)).sum())
        .collect();
    let _ = write!(
        out,
        "    the longest wait in each slow call is {:.0} % of its time over p50; a call at or \
         below p50 spends {:.3} ms ready but not running (summed over its threads)",
        if excess > 0.0 { 100.0 * explained / excess } else { 0.0 },
        fast.iter().sum::<f64>() / fast.len().max(1) as f64
    );
    out
}
