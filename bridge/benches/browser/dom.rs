//! Any page: read_page's size against Playwright MCP's browser_snapshot on the same
//! fixtures, and the latency of acting — click → settled report, click whose fetch answers 204
//! after 150 ms, fill of 10 React fields, read_page of 5,000 elements — with the MCP stdio
//! baseline (list_tabs) and, where it runs, Playwright MCP's own numbers, in the same run.
//!
//! Playwright MCP comes from npm into target/peers/ (testkit/harness/peers.rs installs it; no
//! browser download: it is pointed at /usr/bin/chromium).

use std::time::Instant;

use serde_json::{Value, json};
use tabwire_testkit::mcp::text;
use tabwire_testkit::{Chromium, Fixtures, Mcp, peers};

use crate::stats::Sample;

const N: usize = 40;
const PAGES: [&str; 4] = ["dom/widgets.html", "dom/form.html", "dom/csp.html", "dom/big.html"];

pub async fn run() {
    println!("\nany page: read_page and actions (sequential calls over MCP stdio)");
    let browser = Chromium::start();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let open = async |file: &str| {
        mcp.ok("open_tab", json!({ "url": pages.url(file) })).await["tab"]["id"].clone()
    };

    let (base, _) = Sample::time(N, async || drop(mcp.ok("list_tabs", json!({})).await))
        .await
        .print("baseline: list_tabs (MCP + worker, no page)");

    // Sizes, ours then the peer's.
    let peer = Peer::start().await;
    println!(
        "  {:<28} {:>16} {:>8} {:>14} {:>22} {:>8}",
        "page", "read_page tokens", "refs", "in Claude Code", "browser_snapshot tokens", "refs"
    );
    for file in PAGES {
        let tab = open(file).await;
        mcp.ok("wait_for", json!({ "tab_id": tab, "selector": "button" })).await;
        let result = mcp.call("read_page", json!({ "tab_id": tab })).await;
        let (ours, seen) = (text(&result), seen_by_claude_code(&result));
        let theirs = match &peer {
            Ok(p) => p.snapshot(&pages.url(file)).await,
            Err(_) => None,
        };
        let (t, r) = theirs.as_deref().map(|s| (tokens(s), refs(s))).unwrap_or((0, 0));
        dump(file, &ours, theirs.as_deref());
        println!(
            "  {file:<28} {:>16} {:>8} {:>14} {:>22} {:>8}{}",
            tokens(&ours),
            refs(&ours),
            tokens(&seen),
            if theirs.is_some() { t.to_string() } else { "-".into() },
            if theirs.is_some() { r.to_string() } else { "-".into() },
            if theirs.is_some() {
                let pct = |s: &str| 100.0 * tokens(s) as f64 / t as f64;
                format!("   ours {:.0} % ({:.0} % in Claude Code)", pct(&ours), pct(&seen))
            } else {
                String::new()
            }
        );
    }
    if let Err(why) = &peer {
        println!("  Playwright MCP did not run, so only our numbers: {why}");
    }

    // Latency.
    let big = open("dom/big.html").await;
    mcp.read_page(json!({ "tab_id": big })).await;
    let (p50, _) = Sample::time(N, async || drop(mcp.read_page(json!({ "tab_id": big })).await))
        .await
        .print("read_page, 5,000-element page (target p50 ≤ 80 ms)");
    println!("    {:.1}× the baseline", p50 / base);

    let widgets = open("dom/widgets.html").await;
    let lines = mcp.read_page(json!({ "tab_id": widgets })).await.lines;
    let counter = ref_in(&lines, "button \"Clicked 0 times\"");
    let fetch204 = ref_in(&lines, "button \"Fetch 204\"");
    // Each action's report says how long it took in the extension (`ms`: from the agent's
    // act to settled), printed below the whole call's time to show where the rest went.
    let inside = std::cell::RefCell::new(Sample::new());
    let click = |r: String| {
        let args = json!({ "tab_id": widgets, "ref": r });
        let (mcp, inside) = (&mcp, &inside);
        async move || {
            let report = mcp.ok("click", args.clone()).await;
            inside.borrow_mut().push_ms(report["ms"].as_f64().unwrap_or(0.0));
        }
    };
    Sample::time(N, click(counter)).await.print("click → settled, no network (target p50 ≤ 60 ms)");
    inside.take().print("  of which in the extension (report.ms)");
    Sample::time(N, click(fetch204))
        .await
        .print("click → fetch answered 204 after 150 ms → settled (target ≤ 210)");
    inside.take().print("  of which in the extension (report.ms)");

    let form = open("dom/form.html").await;
    mcp.ok("wait_for", json!({ "tab_id": form, "text": "Create account" })).await;
    let lines = mcp.read_page(json!({ "tab_id": form })).await.lines;
    let names =
        ["Name", "Email", "City", "Zip", "Phone", "Company", "Bio", "Country", "I agree", "Start"];
    let mut i = 0;
    Sample::time(N, async || {
        i += 1;
        let fields: Vec<Value> = names
            .iter()
            .map(|n| {
                let line = lines.lines().find(|l| l.contains(&format!("\"{n}\""))).unwrap();
                let r = line.split("[ref=").nth(1).unwrap().split(']').next().unwrap();
                let value = match *n {
                    "Country" => json!(["France", "Germany", "Japan"][i % 3]),
                    "I agree" => json!(i % 2 == 0),
                    "Start" => json!(format!("2026-12-{:02}", 1 + i % 28)),
                    _ => json!(format!("{n} {i}")),
                };
                json!({ "ref": r, "value": value })
            })
            .collect();
        let report = mcp.ok("fill", json!({ "tab_id": form, "fields": fields })).await;
        inside.borrow_mut().push_ms(report["ms"].as_f64().unwrap_or(0.0));
    })
    .await
    .print("fill of 10 React-controlled fields (target p50 ≤ 50 ms)");
    inside.take().print("  of which in the extension (report.ms)");

    if let Ok(p) = peer {
        p.latency(&pages.url("dom/widgets.html")).await;
        p.0.stop().await; // its browser ended by PID, its profile removed
    }
}

/// With TABWIRE_BENCH_DUMP=DIR, both outputs of each page go to DIR (`<page>.tabwire.txt`,
/// `<page>.playwright.txt`), to see what each line spends its tokens on.
fn dump(file: &str, ours: &str, theirs: Option<&str>) {
    let Some(dir) = std::env::var_os("TABWIRE_BENCH_DUMP") else { return };
    let dir = std::path::PathBuf::from(dir);
    let base = file.replace('/', "_");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(dir.join(format!("{base}.tabwire.txt")), ours);
    if let Some(t) = theirs {
        let _ = std::fs::write(dir.join(format!("{base}.playwright.txt")), t);
    }
}

/// What Claude Code hands its model for a tool result (2.1.x, checked offline against a
/// stand-in Messages API: `bridge/tests/clients/claude_code.rs`): the structured content as JSON when
/// there is any, the text content otherwise. Playwright MCP's tools return text only.
fn seen_by_claude_code(result: &rmcp::model::CallToolResult) -> String {
    match &result.structured_content {
        Some(v) => v.to_string(),
        None => text(result),
    }
}

fn tokens(s: &str) -> usize {
    s.encode_utf16().count().div_ceil(4)
}

fn refs(s: &str) -> usize {
    s.matches("[ref=").count()
}

fn ref_in(lines: &str, start: &str) -> String {
    let line = lines.lines().map(str::trim).find(|l| l.starts_with(start)).expect(start);
    line.split("[ref=").nth(1).unwrap().split(']').next().unwrap().to_owned()
}

/// Playwright MCP as the harness runs it (testkit/harness/peers.rs: from npm, on
/// /usr/bin/chromium), with what this bench asks of it.
struct Peer(peers::Running);

impl Peer {
    async fn start() -> Result<Peer, String> {
        let running = peers::Peer::Playwright { settle_ms: None }.start().await?;
        running.open("about:blank").await?;
        Ok(Peer(running))
    }

    async fn call(&self, tool: &str, args: Value) -> Result<String, String> {
        self.0.call(tool, args).await
    }

    async fn snapshot(&self, url: &str) -> Option<String> {
        self.call("browser_navigate", json!({ "url": url })).await.ok()?;
        self.call("browser_snapshot", json!({})).await.ok()
    }

    /// Its click → report on the same button (by selector: its refs are its own business).
    async fn latency(&self, url: &str) {
        if self.snapshot(url).await.is_none() {
            return;
        }
        let r = "#counter".to_owned();
        let mut sample = Sample::new();
        for _ in 0..10 {
            let t = Instant::now();
            if let Err(e) =
                self.call("browser_click", json!({ "element": "counter", "target": r })).await
            {
                println!("  Playwright MCP click failed: {e}");
                return;
            }
            sample.push(t.elapsed());
        }
        sample.print("Playwright MCP: browser_click → its report, no network");
    }
}
