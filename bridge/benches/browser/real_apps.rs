//! Real third-party apps (the npm packages of `testkit/fixtures/apps/package.json`, their own
//! prebuilt builds, served on 127.0.0.1): one short task per app, done through tabwire and
//! through Playwright MCP in the same run, each as an assistant would with that server's own
//! output — elements found by role and name (tabwire's `find` refs, the refs of Playwright
//! MCP's snapshots), then acted on. The chat is asked as each server offers: through tabwire's
//! chat operation (`send_message_async`, then `wait_for_operation`, as its server instructions
//! say, with the adapter its chat detector proposes), through Playwright MCP by typing and
//! reading snapshots until the answer stops changing. Success is judged outside both servers:
//! the app's own state read in the page (through the debugger protocol for tabwire's browser,
//! Playwright's `browser_evaluate` for its own, neither counted), or the fake chat model's
//! record of what it was asked, with the whole answer in what the server gave back. Per app:
//! success, tool calls, tokens (characters of all tool results / 4) and the task's time, from
//! the first call after the page is loaded to the last.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tabwire_testkit::mcp::text;
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp, fixtures, peers};

/// An app of the suite: its name, its page under `testkit/fixtures/apps/`, a JavaScript
/// expression true once it has rendered, and what its state must read after the task (the
/// expression, then the value; `None` for the chat, judged by the fake model's record).
struct App {
    name: &'static str,
    page: &'static str,
    ready: &'static str,
    truth: Option<Truth>,
}

/// A JavaScript expression of the app's state, and the value it must have.
type Truth = (&'static str, fn() -> Value);

const CODE: &str = "function greet(name) {\n  return \"hello \" + name;\n}\ngreet('you');";
const LINE: &str = "greet('you');";
const QUESTION: &str = "When are you open on Saturday?";

const APPS: [App; 10] = [
    App {
        name: "Monaco (EditContext): append a line, read it back",
        page: "monaco.html",
        ready: "!!window.editor && !!document.querySelector('.view-line')",
        truth: Some(("editor.getValue()", || json!(CODE))),
    },
    App {
        name: "CodeMirror 6: append a line, read it back",
        page: "codemirror.html",
        ready: "!!window.view && !!document.querySelector('.cm-line')",
        truth: Some(("view.state.doc.toString()", || json!(CODE))),
    },
    App {
        name: "ProseMirror: add a list item",
        page: "prosemirror.html",
        ready: "!!window.view && !!document.querySelector('.ProseMirror li')",
        truth: Some(("view.state.doc.child(1).content.content.map(i => i.textContent)", || {
            json!(["Milk", "Bread", "Eggs"])
        })),
    },
    App {
        name: "Quill: make the first line bold",
        page: "quill.html",
        ready: "!!window.quill && !!document.querySelector('.ql-editor')",
        truth: Some((
            "[quill.getText(), !!quill.getFormat(0, 10).bold, !!quill.getFormat(11, 3).bold]",
            || json!(["First line\nOne\nTwo\n", true, false]),
        )),
    },
    App {
        name: "AG Grid: edit a price in place",
        page: "aggrid.html",
        ready: "!!window.grid && !!document.querySelector('[role=gridcell]')",
        truth: Some((
            "(() => { let p; grid.forEachNode(n => { if (n.data.model === 'F-Series') p = n.data.price; }); return p; })()",
            || json!(35000),
        )),
    },
    App {
        name: "AG Grid: sort by price, filter, read the rows",
        page: "aggrid.html",
        ready: "!!window.grid && !!document.querySelector('[role=gridcell]')",
        truth: Some((
            "[grid.getColumnState().find(c => c.colId === 'price').sort, grid.getFilterModel().make?.filter, grid.getDisplayedRowCount()]",
            || json!(["asc", "Toyota", 5]),
        )),
    },
    App {
        name: "Ant Design form: select, date, combobox",
        page: "antd-form.html",
        ready: "!!document.querySelector('.ant-picker input')",
        truth: Some((
            "window.saved ?? null",
            || json!({ "name": "Ada", "country": "Japan", "start": "2026-03-14", "city": "Osaka" }),
        )),
    },
    App {
        name: "Vue Router shop: product, cart, check out",
        page: "vue-shop.html",
        ready: "!!window.shop && !!document.querySelector('main li a')",
        truth: Some((
            "[shop.router.currentRoute.value.path, shop.ordered]",
            || json!(["/cart", [{ "name": "Blue mug", "quantity": 2 }]]),
        )),
    },
    App {
        name: "Swagger UI: try an operation",
        page: "swagger.html",
        ready: "!!document.querySelector('.opblock-summary-path')",
        truth: Some((
            "String(ui.specSelectors.requestFor('/pets/{petId}', 'get')?.get('url')).endsWith('/pets/7')",
            || json!(true),
        )),
    },
    App {
        name: "Deep Chat: ask, read the whole answer",
        page: "deepchat.html",
        ready: fixtures::DEEP_CHAT_READY,
        truth: None,
    },
];

/// Tool calls and the characters of their results, over one task; tabwire's also the time
/// of each call, by tool.
#[derive(Default, Clone)]
struct Meter {
    calls: usize,
    chars: usize,
    took: Vec<(String, Duration)>,
    /// Whether the page was hidden when the task began (tabwire's tab).
    hidden: bool,
}

/// One task's outcome on one server.
struct Outcome {
    result: Result<(), String>,
    meter: Meter,
    ms: u128,
}

/// One app's task, run a few times on one server.
#[derive(Default)]
struct Runs(Vec<Outcome>);

impl Runs {
    fn ok(&self) -> usize {
        self.0.iter().filter(|o| o.result.is_ok()).count()
    }

    /// The median of `of` over the rounds (the lower one of an even count).
    fn median(&self, of: impl Fn(&Outcome) -> u128) -> u128 {
        let mut all: Vec<u128> = self.0.iter().map(of).collect();
        all.sort_unstable();
        all.get((all.len().max(1) - 1) / 2).copied().unwrap_or(0)
    }

    fn min_ms(&self) -> u128 {
        self.0.iter().map(|o| o.ms).min().unwrap_or(0)
    }

    fn max_ms(&self) -> u128 {
        self.0.iter().map(|o| o.ms).max().unwrap_or(0)
    }
}

pub async fn run() {
    println!(
        "\nreal apps: one task per app, tabwire beside Playwright MCP (judged by the app's state)"
    );
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().unwrap();
    let cdp = Cdp::new(to_browser, from_browser);
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    if let Err(why) = tabwire_testkit::npm::install_apps() {
        println!("  the apps could not be installed, so nothing ran: {why}");
        return;
    }
    let peer = peers::Peer::Playwright { settle_ms: None }.start().await;
    if let Err(why) = &peer {
        println!("  Playwright MCP did not run, so only tabwire's column: {why}");
    }

    // `REAL_APPS_ROUNDS=N` (3 unless set): each task N times on each server, the two in turns.
    // A time is the median of its app's rounds, with the fastest and slowest beside it: one run
    // says little where a server's time has two modes (Playwright MCP's chat task takes 1.7 s
    // or 6.8 s, as its typing waits for the page's requests or not).
    let rounds: usize =
        std::env::var("REAL_APPS_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(3).max(1);
    println!(
        "  {rounds} rounds per task; ok: rounds that succeeded; calls, tokens, ms: medians (ms: fastest-slowest)"
    );
    println!(
        "  {:<50} {:>4} {:>5} {:>7} {:>6} {:>11}   {:>4} {:>5} {:>7} {:>6} {:>11}   {:>6} {:>5}",
        "app: task",
        "tw",
        "calls",
        "tokens",
        "ms",
        "",
        "PW",
        "calls",
        "tokens",
        "ms",
        "",
        "tokens",
        "time"
    );
    let mut totals = [(0usize, 0usize, 0usize, 0u128); 2];
    let mut read = Vec::new(); // per app: tabwire's results, chars (median)
    let mut failures = Vec::new();
    // `REAL_APPS_ONLY=grid` runs only the apps whose page's name contains that.
    let only = std::env::var("REAL_APPS_ONLY").unwrap_or_default();
    let apps: Vec<&App> = APPS.iter().filter(|a| a.page.contains(&only)).collect();
    for app in &apps {
        let url = pages.url(&format!("apps/{}", app.page));
        let (mut ours, mut theirs) = (Runs::default(), Runs::default());
        for _ in 0..rounds {
            ours.0.push(tabwire_run(&mcp, &cdp, &pages, app, &url, Alone::InFront).await);
            if let Ok(p) = &peer {
                theirs.0.push(playwright_run(p, &pages, app, &url).await);
            }
        }
        let cells = |r: &Runs| match r.0.is_empty() {
            false => format!(
                "{:>4} {:>5} {:>7} {:>6} {:>11}",
                format!("{}/{}", r.ok(), r.0.len()),
                r.median(|o| o.meter.calls as u128),
                r.median(|o| o.meter.chars as u128) / 4,
                r.median(|o| o.ms),
                format!("{}-{}", r.min_ms(), r.max_ms())
            ),
            true => format!("{:>4} {:>5} {:>7} {:>6} {:>11}", "-", "-", "-", "-", ""),
        };
        // tabwire's tokens as a share of Playwright's, and how many times shorter its time was.
        let versus = match theirs.0.is_empty() {
            false => format!(
                "{:>5}% {:>4.1}x",
                100 * ours.median(|o| o.meter.chars as u128)
                    / theirs.median(|o| o.meter.chars as u128).max(1),
                theirs.median(|o| o.ms) as f64 / ours.median(|o| o.ms).max(1) as f64
            ),
            true => String::new(),
        };
        println!("  {:<50} {}   {}   {versus}", app.name, cells(&ours), cells(&theirs));
        read.push((app.name, ours.median(|o| o.meter.chars as u128) as usize));
        for (i, runs) in [&ours, &theirs].into_iter().enumerate() {
            if runs.0.is_empty() {
                continue;
            }
            totals[i].0 += runs.ok();
            totals[i].1 += runs.median(|o| o.meter.calls as u128) as usize;
            totals[i].2 += runs.median(|o| o.meter.chars as u128) as usize;
            totals[i].3 += runs.median(|o| o.ms);
            for o in &runs.0 {
                if let Err(why) = &o.result {
                    let who = ["tabwire", "Playwright MCP"][i];
                    failures.push(format!("{who} on {}: {why}", app.name));
                }
            }
        }
    }
    let total = |i: usize| {
        let (ok, calls, chars, ms) = totals[i];
        format!(
            "{:>4} {:>5} {:>7} {:>6}",
            format!("{ok}/{}", apps.len() * rounds),
            calls,
            chars / 4,
            ms
        )
    };
    println!(
        "  {:<50} {} {:>11}   {}",
        "total",
        total(0),
        "",
        if peer.is_ok() { total(1) } else { "-".into() }
    );
    for f in &failures {
        println!("    {}", f.chars().take(400).collect::<String>());
    }
    through_the_shell(&browser, &read).await;
    if let Ok(p) = peer {
        p.stop().await;
    }
}

/// Many sessions on real apps at once (from sessions.rs, in a headed browser): `n` sessions,
/// each doing every app's task in tabs `open_tab` opens the default way (the session's own
/// window, not in front of the user), each starting at another app; against one session
/// alone doing the same in the same browser first. Per tool: calls, p50 and p99 alone and at
/// once; tasks that succeeded (judged by each app's state, the chat by its answer) and how
/// many ran in a hidden page; and whether the user's own tab stayed in front.
pub async fn crowd(browser: &Chromium, cdp: &Cdp, pages: &Fixtures, n: usize) {
    if let Err(why) = tabwire_testkit::npm::install_apps() {
        println!("  the apps could not be installed, so nothing ran: {why}");
        return;
    }
    let sw = cdp.target_id("service_worker", "/worker/background.js").await.unwrap();
    let sw = cdp.attach(&sw).await.unwrap();
    let in_front = "chrome.tabs.query({ active: true, lastFocusedWindow: true }).then((t) => \
        t.map((t) => `${t.id} ${t.url}`).join())";
    let user = cdp.eval(&sw, in_front).await.unwrap();
    let url = |app: &App, who: &str| pages.url(&format!("apps/{}?session={who}", app.page));
    let start = |name: String| async move {
        Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_SESSION_ID", name.as_str())]).await
    };

    let solo = start("apps-solo".into()).await;
    let (t_alone, busy_alone) = (Instant::now(), crate::stats::machine_busy_secs());
    let mut alone = Vec::new();
    for app in &APPS {
        alone.push((
            app.name,
            tabwire_run(&solo, cdp, pages, app, &url(app, "solo"), Alone::Behind).await,
        ));
    }
    let (wall_alone, busy_alone) =
        (t_alone.elapsed().as_secs_f64(), crate::stats::machine_busy_secs() - busy_alone);
    let mut crowd = Vec::new();
    for i in 1..=n {
        crowd.push(start(format!("apps-s{i}")).await);
    }
    let (t0, busy0) = (Instant::now(), crate::stats::machine_busy_secs());
    let runs = futures::future::join_all(crowd.iter().enumerate().map(|(i, mcp)| async move {
        let mut done = Vec::new();
        for k in 0..APPS.len() {
            let app = &APPS[(i + k) % APPS.len()];
            let at = url(app, &format!("s{i}"));
            done.push((app.name, tabwire_run(mcp, cdp, pages, app, &at, Alone::Among).await));
        }
        done
    }))
    .await;
    let wall = t0.elapsed();
    let busy_together = crate::stats::machine_busy_secs() - busy0;
    let together: Vec<(&str, Outcome)> = runs.into_iter().flatten().collect();

    let by_tool = |runs: &[(&str, Outcome)]| {
        let mut tools: std::collections::BTreeMap<String, crate::stats::Sample> =
            Default::default();
        for (_, o) in runs {
            for (tool, d) in &o.meter.took {
                tools.entry(tool.clone()).or_default().push(*d);
            }
        }
        tools
    };
    let (mut a, mut b) = (by_tool(&alone), by_tool(&together));
    println!(
        "  {:<22} {:>26}   {:>26}   {:>9}",
        "tool",
        "1 session alone: n  p50  p99",
        format!("{n} sessions at once: n  p50  p99"),
        "p50 ratio"
    );
    use crate::stats::ms;
    for (tool, one) in a.iter_mut() {
        let Some(many) = b.get_mut(tool) else { continue };
        let (a50, a99, b50, b99) = (
            ms(one.percentile(0.5)),
            ms(one.percentile(0.99)),
            ms(many.percentile(0.5)),
            ms(many.percentile(0.99)),
        );
        println!(
            "  {tool:<22} {:>6} {a50:>8.1} {a99:>8.1} ms   {:>6} {b50:>8.1} {b99:>8.1} ms   {:>8.2}×",
            one.len(),
            many.len(),
            b50 / a50.max(0.001)
        );
    }
    let summary = |runs: &[(&str, Outcome)]| {
        let ok = runs.iter().filter(|(_, o)| o.result.is_ok()).count();
        let hidden = runs.iter().filter(|(_, o)| o.meter.hidden).count();
        format!("{ok}/{} tasks succeeded, {hidden} of them began in a hidden page", runs.len())
    };
    println!(
        "  alone: {}; at once: {} (in {:.1} s)",
        summary(&alone),
        summary(&together),
        wall.as_secs_f64()
    );
    // The floor no scheduling can beat: the n sessions' work is n times one session's CPU, on
    // this machine's cores; against the time one session took alone.
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get()) as f64;
    let floor = (n as f64 * busy_alone / cores / wall_alone).max(1.0);
    println!(
        "  the machine's CPU: alone {busy_alone:.0} core-s in {wall_alone:.1} s ({:.2} of {cores} \
         cores busy); at once {busy_together:.0} core-s in {:.1} s ({:.2} busy); so {n} sessions' \
         work takes at least {floor:.2}× one session's time here, whatever tabwire does",
        busy_alone / wall_alone,
        wall.as_secs_f64(),
        busy_together / wall.as_secs_f64()
    );
    for (name, o) in alone.iter().chain(together.iter()) {
        if let Err(why) = &o.result {
            println!("    failed: {name}: {}", why.chars().take(300).collect::<String>());
        }
    }
    let still = cdp.eval(&sw, in_front).await.unwrap();
    println!(
        "  the user's tab in front before: {user}; after: {still} (the same: {})",
        user == still
    );
    let _ = cdp.call("Target.detachFromTarget", json!({ "sessionId": sw }), None).await;
    for mcp in crowd.into_iter().chain([solo]) {
        let _ = mcp.client.cancel().await;
    }
}

/// What the model reads per task through the skill and `tabwire call` (`tabwire install --claude
/// --skill`), against through MCP, definitions included. MCP: the default sets' tools/list
/// (name + description + input schema of each tool) and the server's instructions, which the
/// client puts in every conversation, plus the results. Skill + CLI: the skill (its front
/// matter is in every conversation; Claude Code reads the rest when a task needs it, counted
/// whole here) plus the results, which `tabwire call` prints as the tools' own text, the same
/// text counted above (`bridge/tests/browser/groups.rs`). Chars ÷ 4, as everywhere in these benches.
async fn through_the_shell(browser: &Chromium, read: &[(&str, usize)]) {
    let env = [("TABWIRE_TOOLS", "default"), ("TABWIRE_OUTPUT_SCHEMAS", "0")];
    let lean = Mcp::start_with(&browser.runtime_dir, &env).await;
    let tools = lean.client.list_all_tools().await.unwrap_or_default();
    let mut defs: usize = tools
        .iter()
        .map(|t| {
            let schema = serde_json::to_string(&t.input_schema).unwrap_or_default().len();
            t.name.len() + t.description.as_deref().unwrap_or_default().len() + schema
        })
        .sum();
    let info = lean.client.peer_info().and_then(|i| i.instructions.clone());
    defs += info.unwrap_or_default().len();
    let skill = tabwire_install::skill::skill_text("tabwire");
    let front = skill.split("\n---\n").next().unwrap_or_default().len();
    println!(
        "\n  read per task, skill + `tabwire call` against MCP (definitions included), tokens: MCP's \
         {} default tools and instructions ≈ {} in every conversation; the skill ≈ {} (its front \
         matter ≈ {} in every conversation, the rest read when a task needs it); the results' \
         text the same through both",
        tools.len(),
        defs / 4,
        skill.len() / 4,
        front / 4
    );
    println!("  {:<50} {:>7} {:>10} {:>6}", "app: task", "MCP", "skill+CLI", "share");
    let (mut mcp_all, mut cli_all) = (0, 0);
    for (name, chars) in read {
        let (mcp, cli) = ((defs + chars) / 4, (skill.len() + chars) / 4);
        println!("  {name:<50} {mcp:>7} {cli:>10} {:>5}%", 100 * cli / mcp.max(1));
        mcp_all += mcp;
        cli_all += cli;
    }
    println!("  {:<50} {mcp_all:>7} {cli_all:>10} {:>5}%", "total", 100 * cli_all / mcp_all.max(1));
}

/// With `REAL_APPS_TRACE=1`, every call and what it answered (to see why a task failed).
fn trace(who: &str, tool: &str, args: &Value, said: &str) {
    if std::env::var_os("REAL_APPS_TRACE").is_some() {
        println!("    [{who}] {tool} {args}\n{said}\n");
    }
}

/// The ref in a line of either server's output (`… [ref=e12]`).
fn ref_of(line: &str) -> Option<String> {
    Some(line.split("[ref=").nth(1)?.split(']').next()?.to_owned())
}

/// Whether a line of either server's output (`role "name" [ref=…]`, or Playwright MCP's
/// `role [ref=…]: text`) is of `role` (any, when empty) with a name, or text, containing `name`.
fn names(line: &str, role: &str, name: &str) -> bool {
    let (r, rest) = line.split_once(' ').unwrap_or((line, ""));
    let named = match rest.strip_prefix('"') {
        Some(n) => n.split('"').next().unwrap_or_default(),
        None => rest.rsplit_once("]: ").map_or("", |(_, t)| t.trim_matches('"')),
    };
    (role.is_empty() || r == role) && named.contains(name)
}

/// Whether `read` (what a server's own read of the page gave) shows the whole answer of the
/// fake model to `QUESTION`, as rendered (markdown marks gone).
fn shows_answer(read: &str) -> Result<(), String> {
    let read = read.replace("\\\"", "\"");
    let answer = fixtures::chat_answer(QUESTION);
    // Each piece between code spans: a server may put a code span on a line of its own.
    for line in answer.lines().filter(|l| !l.is_empty()) {
        for piece in line.trim_start_matches("- ").split('`').map(str::trim) {
            if !read.contains(piece) {
                return Err(format!("the read does not show {piece:?} of the answer"));
            }
        }
    }
    Ok(())
}

/// Whether `read` (a server's answer) shows the grid filtered to its five Toyotas: each of
/// their prices, and none of the cheaper cars of other makes the sort put first (lines a
/// change report says went, `- …`, aside).
fn shows_the_toyotas(read: &str) -> bool {
    let now: Vec<&str> = read.lines().filter(|l| !l.starts_with("- ")).collect();
    let prices = ["18000", "19327", "29600", "36218", "53109"];
    prices.iter().all(|p| now.iter().any(|l| l.contains(&format!("\"{p}\""))))
        && !now
            .iter()
            .any(|l| ["\"Fiat\"", "\"Nissan\"", "\"Renault\""].iter().any(|m| l.contains(m)))
}

/// The fake model's record since `before` entries: exactly `QUESTION`, once.
fn asked_once(pages: &Fixtures, before: usize) -> Result<(), String> {
    let asked: Vec<String> = pages.chats().into_iter().skip(before).map(|(q, _)| q).collect();
    if asked == [QUESTION] {
        Ok(())
    } else {
        Err(format!("the model was asked {asked:?}, not once {QUESTION:?}"))
    }
}

// ---- tabwire ----

struct Tw<'a> {
    mcp: &'a Mcp,
    tab: Value,
    /// The last answer's text: an action's changed lines hold the refs of what it showed.
    seen: String,
    meter: Meter,
}

impl Tw<'_> {
    /// A tool call on the tab: its structured result (read_page: its text as a string).
    async fn call(&mut self, tool: &str, mut args: Value) -> Result<Value, String> {
        args["tab_id"] = self.tab.clone();
        self.call_as_is(tool, args).await
    }

    /// A tool call with exactly `args` (wait_for_operation names an operation, not a tab).
    async fn call_as_is(&mut self, tool: &str, args: Value) -> Result<Value, String> {
        let t0 = Instant::now();
        let result = self.mcp.call(tool, args.clone()).await;
        self.meter.took.push((tool.to_owned(), t0.elapsed()));
        let said = text(&result);
        self.meter.calls += 1;
        self.meter.chars += said.chars().count();
        trace("tabwire", tool, &args, &said);
        self.seen = said.clone();
        if result.is_error == Some(true) {
            return Err(format!("{tool} {args}: {said}"));
        }
        Ok(result.structured_content.unwrap_or(Value::String(said)))
    }

    /// The ref of the first element of `role` (any, when empty) named with `name`: from the
    /// lines the last action added when it is there (as for Playwright MCP's snapshots), else
    /// the first `find` gives; asked once more a moment later if there is none yet (a menu
    /// still opening).
    async fn find(&mut self, role: &str, name: &str) -> Result<String, String> {
        let added = self.seen.lines().filter(|l| l.starts_with('+')).map(|l| l[1..].trim());
        if let Some(r) = added.filter(|l| names(l, role, name)).find_map(ref_of) {
            return Ok(r);
        }
        let args = if role.is_empty() {
            json!({ "name": name })
        } else {
            json!({ "role": role, "name": name })
        };
        let mut found = self.call("find", args.clone()).await?;
        if found["total"] == 0 {
            tokio::time::sleep(Duration::from_millis(300)).await;
            found = self.call("find", args).await?;
        }
        let line = found["matches"][0]["line"].as_str().unwrap_or_default();
        ref_of(line).ok_or(format!("find {role} {name:?}: no element with a ref in {found}"))
    }

    async fn click(&mut self, role: &str, name: &str) -> Result<Value, String> {
        let r = self.find(role, name).await?;
        self.call("click", json!({ "ref": r })).await
    }

    async fn read(&mut self, mode: &str) -> Result<String, String> {
        let page = self.call("read_page", json!({ "mode": mode, "budget": 20000 })).await?;
        Ok(page.as_str().unwrap_or_default().to_owned())
    }
}

/// The page targets a run took, for runs at once on one app whose URL does not tell them apart.
static CLAIMED: std::sync::Mutex<std::collections::BTreeSet<String>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// The first page target at `part` no run took.
async fn unclaimed(cdp: &Cdp, part: &str) -> Result<String, String> {
    let all = cdp.call("Target.getTargets", json!({}), None).await?;
    let taken = CLAIMED.lock().unwrap().clone();
    all["targetInfos"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["type"] == "page" && t["url"].as_str().is_some_and(|u| u.contains(part)))
        .filter_map(|t| t["targetId"].as_str())
        .find(|id| !taken.contains(*id))
        .map(str::to_owned)
        .ok_or(format!("no page target at {part} that no other run took"))
}

/// Where a task runs: in the tab in front of the user, alone (the chat judged by the fake
/// model's record too), or in a tab of the session's own as `open_tab` opens it by default,
/// `Among` other sessions asking the same model at once (judged by the answer alone).
#[derive(Clone, Copy, PartialEq)]
enum Alone {
    InFront,
    Behind,
    Among,
}

async fn tabwire_run(
    mcp: &Mcp,
    cdp: &Cdp,
    pages: &Fixtures,
    app: &App,
    url: &str,
    how: Alone,
) -> Outcome {
    let mut tw = Tw { mcp, tab: Value::Null, seen: String::new(), meter: Meter::default() };
    let setup = async {
        let args = match how {
            Alone::InFront => json!({ "url": url, "active": true }),
            _ => json!({ "url": url }),
        };
        let opened = mcp.call("open_tab", args).await;
        if opened.is_error == Some(true) {
            return Err(format!("open_tab: {}", text(&opened)));
        }
        let page = url.split_once("/apps/").map_or(url, |(_, p)| p);
        let tab = opened.structured_content.unwrap_or_default()["tab"]["id"].clone();
        // The page by the query that names its session; an app whose router drops the query
        // (the Vue shop) by its path, the first no other run took.
        let target = match cdp.target_id("page", &format!("apps/{page}")).await {
            Ok(target) => target,
            Err(_) => unclaimed(cdp, &format!("apps/{}", app.page)).await?,
        };
        CLAIMED.lock().unwrap().insert(target.clone());
        let session = cdp.attach(&target).await?;
        let ready = cdp.wait_for(&session, app.ready, Duration::from_secs(20)).await;
        // A page another session's window hid before its first paint draws nothing until an
        // action drives its frames (specs/tools.md, "In the background"): go on without it.
        let hidden = cdp.eval(&session, "document.hidden").await.unwrap_or_default() == json!(true);
        if how == Alone::InFront || !hidden {
            ready?;
        }
        // Behind: drawn once, then a window of the same size and place over the session's
        // (X stacks the newer on top), as a user's own window would be: the page is hidden.
        let cover = match how {
            Alone::InFront => None,
            _ => {
                let window =
                    cdp.call("Browser.getWindowForTarget", json!({ "targetId": target }), None);
                let b = window.await?["bounds"].clone();
                let over = json!({ "url": pages.url("plain.html"), "newWindow": true, "background": true,
                    "left": b["left"], "top": b["top"], "width": b["width"], "height": b["height"] });
                let over = cdp.call("Target.createTarget", over, None).await?;
                let _ = cdp.wait_for(&session, "document.hidden", Duration::from_secs(5)).await;
                over["targetId"].as_str().map(str::to_owned)
            }
        };
        Ok((tab, session, cover))
    };
    let (tab, session, cover) = match setup.await {
        Ok(s) => s,
        Err(e) => return Outcome { result: Err(e), meter: tw.meter, ms: 0 },
    };
    tw.tab = tab.clone();
    let hidden = cdp.eval(&session, "document.hidden").await.unwrap_or_default();
    tw.meter.hidden = hidden == json!(true);
    let before = pages.chats().len();
    let t = Instant::now();
    let mut result = tabwire_task(&mut tw, app).await;
    let ms = t.elapsed().as_millis();
    if result.is_ok() {
        result = match app.truth {
            Some((expr, want)) => match cdp.eval(&session, expr).await {
                Ok(got) if got == want() => Ok(()),
                Ok(got) => Err(format!("the app holds {got}, not {}", want())),
                Err(e) => Err(e),
            },
            None if how == Alone::Among => Ok(()), // the answer was checked in the task
            None => asked_once(pages, before),
        };
    }
    let _ = mcp.call("close_tab", json!({ "tab_id": tab })).await;
    if let Some(over) = cover {
        let _ = cdp.call("Target.closeTarget", json!({ "targetId": over }), None).await;
    }
    Outcome { result, meter: tw.meter, ms }
}

async fn tabwire_task(tw: &mut Tw<'_>, app: &App) -> Result<(), String> {
    match app.page {
        "monaco.html" | "codemirror.html" => {
            let name = if app.page == "monaco.html" { "Editor content" } else { "Code" };
            let editor = tw.find("textbox", name).await?;
            tw.call("type", json!({ "ref": editor, "text": LINE })).await?;
            let code = tw.read("full").await?;
            if !code.contains(LINE) {
                return Err(format!("read_page full does not show {LINE:?}: {code}"));
            }
        }
        "prosemirror.html" => {
            let editor = tw.find("textbox", "").await?;
            tw.call("press_key", json!({ "ref": editor, "keys": "Control+End Enter" })).await?;
            tw.call("type", json!({ "text": "Eggs" })).await?;
        }
        "quill.html" => {
            let editor = tw.find("textbox", "").await?;
            tw.call("press_key", json!({ "ref": editor, "keys": "Control+Home Shift+End" }))
                .await?;
            tw.click("button", "bold").await?;
        }
        "aggrid.html" if app.name.contains("filter") => {
            tw.click("columnheader", "Price").await?;
            let field = tw.find("textbox", "Make").await?;
            tw.call("type", json!({ "ref": field, "text": "Toyota" })).await?;
            // The rows from the typing's result when it shows them, else from the page, read
            // again a moment later while the grid has not applied its filter (as a model would).
            let mut read = tw.seen.clone();
            for _ in 0..5 {
                if shows_the_toyotas(&read) {
                    return Ok(());
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
                read = tw.read("interactive").await?;
            }
            return Err(format!("no read showed the five Toyotas alone: {read}"));
        }
        "aggrid.html" => {
            let cell = tw.find("gridcell", "33850").await?;
            tw.call("click", json!({ "ref": cell, "count": 2 })).await?;
            let editor = tw.find("spinbutton", "").await?;
            tw.call("fill", json!({ "fields": [{ "ref": editor, "value": "35000" }] })).await?;
            tw.call("press_key", json!({ "keys": "Enter" })).await?;
        }
        "antd-form.html" => {
            let name = tw.find("textbox", "Traveller").await?;
            tw.call("fill", json!({ "fields": [{ "ref": name, "value": "Ada" }] })).await?;
            tw.click("combobox", "Country").await?;
            tw.click("", "Japan").await?;
            let date = tw.find("textbox", "Start date").await?;
            tw.call("type", json!({ "ref": date, "text": "2026-03-14", "submit": true })).await?;
            let city = tw.find("combobox", "City").await?;
            tw.call("type", json!({ "ref": city, "text": "Osa" })).await?;
            tw.click("", "Osaka").await?;
            tw.click("button", "Save trip").await?;
        }
        "vue-shop.html" => {
            tw.click("link", "Blue mug").await?;
            let quantity = tw.find("spinbutton", "Quantity").await?;
            tw.call("fill", json!({ "fields": [{ "ref": quantity, "value": "2" }] })).await?;
            tw.click("button", "Add to cart").await?;
            tw.click("link", "Cart").await?;
            tw.click("button", "Check out").await?;
        }
        "swagger.html" => {
            tw.click("button", "GET /pets/{petId}").await?;
            tw.click("button", "Try it out").await?;
            let id = tw.find("textbox", "petId").await?;
            tw.call("fill", json!({ "fields": [{ "ref": id, "value": "7" }] })).await?;
            tw.click("button", "Execute").await?;
        }
        "deepchat.html" => {
            // What tabwire's server instructions tell an assistant to do for a chat in a tab
            // (bridge/src/mcp/handler.rs): send_message_async, then wait_for_operation for the
            // answer. No adapter is passed: the chat detector's, as a new user would get.
            let started = tw.call("send_message_async", json!({ "text": QUESTION })).await?;
            let id = json!({ "operation_id": started["operation_id"] });
            let op = tw.call_as_is("wait_for_operation", id).await?;
            if op["status"] != "completed" {
                return Err(format!("the operation ended {}: {op}", op["status"]));
            }
            return shows_answer(op["response_text"].as_str().unwrap_or_default());
        }
        _ => unreachable!(),
    }
    Ok(())
}

// ---- Playwright MCP ----

struct Pw<'a> {
    p: &'a peers::Running,
    /// The last output that held a snapshot of the page: where refs are looked up first.
    seen: String,
    meter: Meter,
}

impl Pw<'_> {
    async fn call(&mut self, tool: &str, args: Value) -> Result<String, String> {
        let result = self.p.mcp.call(tool, args.clone()).await;
        let said = text(&result);
        self.meter.calls += 1;
        self.meter.chars += said.chars().count();
        trace("Playwright", tool, &args, &said);
        if result.is_error == Some(true) {
            return Err(format!("{tool} {args}: {said}"));
        }
        // Refs are looked up in this answer's snapshot; one without a snapshot inline (an
        // action's, which Playwright MCP writes to a file) leaves none that is sure to hold.
        self.seen = if said.contains("[ref=") { said.clone() } else { String::new() };
        Ok(said)
    }

    /// The ref of the first element of `role` (any, when empty) whose name, or text when it
    /// has none, contains `name`, in the last snapshot seen, else in a new `browser_snapshot`.
    async fn find(&mut self, role: &str, name: &str) -> Result<String, String> {
        let look = |s: &str| {
            s.lines()
                .map(|l| l.trim().trim_start_matches("- ").trim_start_matches('\''))
                .filter(|l| names(l, role, name))
                .find_map(ref_of)
        };
        if let Some(r) = look(&self.seen) {
            return Ok(r);
        }
        // A fresh snapshot; once more a moment later if it is not there yet (a menu still
        // opening has no ref), as a model would look again.
        let mut snapshot = self.call("browser_snapshot", json!({})).await?;
        if let Some(r) = look(&snapshot) {
            return Ok(r);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        snapshot = self.call("browser_snapshot", json!({})).await?;
        look(&snapshot).ok_or(format!("no {role} {name:?} in the snapshot:\n{snapshot}"))
    }

    /// The ref of the element that holds the one [`Pw::find`] finds (the line above it with
    /// less indentation), in the last snapshot.
    async fn parent(&mut self, role: &str, name: &str) -> Result<String, String> {
        let child = self.find(role, name).await?;
        let lines: Vec<&str> = self.seen.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains(&format!("[ref={child}]")))
            .ok_or("the found element is not in the last snapshot")?;
        let indent = |l: &str| l.len() - l.trim_start().len();
        lines[..at]
            .iter()
            .rev()
            .find(|l| indent(l) < indent(lines[at]))
            .and_then(|l| ref_of(l))
            .ok_or(format!("nothing holds {role} {name:?}"))
    }

    async fn click(&mut self, role: &str, name: &str) -> Result<String, String> {
        let r = self.find(role, name).await?;
        self.call("browser_click", json!({ "element": name, "target": r })).await
    }
}

/// Evaluate `expr` in Playwright's page (not counted: the judge, not the task).
async fn pw_eval(p: &peers::Running, expr: &str) -> Result<Value, String> {
    let said = p.evaluate(&format!("() => JSON.stringify(({expr}) ?? null)")).await?;
    let at = said.find("### Result").ok_or(format!("no result in {said}"))? + 10;
    let body = said[at..].split("\n###").next().unwrap_or_default().trim();
    let inner: String = serde_json::from_str(body).map_err(|e| format!("{e}: {body}"))?;
    serde_json::from_str(&inner).map_err(|e| format!("{e}: {inner}"))
}

async fn playwright_run(p: &peers::Running, pages: &Fixtures, app: &App, url: &str) -> Outcome {
    let mut pw = Pw { p, seen: String::new(), meter: Meter::default() };
    let setup = async {
        p.open(url).await?;
        let deadline = Instant::now() + Duration::from_secs(20);
        while pw_eval(p, app.ready).await != Ok(json!(true)) {
            if Instant::now() > deadline {
                return Err(format!("{} never rendered", app.page));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    };
    if let Err(e) = setup.await {
        return Outcome { result: Err(e), meter: pw.meter, ms: 0 };
    }
    let before = pages.chats().len();
    let t = Instant::now();
    let mut result = playwright_task(&mut pw, app).await;
    let ms = t.elapsed().as_millis();
    if result.is_ok() {
        result = match app.truth {
            Some((expr, want)) => match pw_eval(p, expr).await {
                Ok(got) if got == want() => Ok(()),
                Ok(got) => Err(format!("the app holds {got}, not {}", want())),
                Err(e) => Err(e),
            },
            None => asked_once(pages, before),
        };
    }
    Outcome { result, meter: pw.meter, ms }
}

async fn playwright_task(pw: &mut Pw<'_>, app: &App) -> Result<(), String> {
    match app.page {
        "monaco.html" | "codemirror.html" => {
            // `browser_type` fills (replacing all the code): a person clicks into the editor,
            // goes to the end and types. Monaco's text box has no ref (no size): its code has.
            let (role, name) =
                if app.page == "monaco.html" { ("code", "") } else { ("textbox", "Code") };
            let editor = pw.find(role, name).await?;
            pw.call("browser_click", json!({ "element": name, "target": editor })).await?;
            pw.call("browser_press_key", json!({ "key": "Control+End" })).await?;
            let args = json!({ "element": name, "target": editor, "text": LINE, "slowly": true });
            pw.call("browser_type", args).await?;
            let code = pw.call("browser_snapshot", json!({})).await?;
            if !code.contains(LINE) {
                return Err(format!("browser_snapshot does not show {LINE:?}: {code}"));
            }
        }
        "prosemirror.html" => {
            // Its editor is a `generic`: the item's paragraph is what has a ref and a name.
            let editor = pw.find("paragraph", "Bread").await?;
            pw.call("browser_click", json!({ "element": "Bread", "target": editor })).await?;
            pw.call("browser_press_key", json!({ "key": "End" })).await?;
            pw.call("browser_press_key", json!({ "key": "Enter" })).await?;
            // Typed into the editor (the paragraph's holder), keys one by one: `browser_type`
            // fills otherwise, replacing the whole document.
            let editor = pw.parent("paragraph", "Shopping").await?;
            let args =
                json!({ "element": "editor", "target": editor, "text": "Eggs", "slowly": true });
            pw.call("browser_type", args).await?;
        }
        "quill.html" => {
            let editor = pw.find("paragraph", "First line").await?;
            pw.call("browser_click", json!({ "element": "First line", "target": editor })).await?;
            pw.call("browser_press_key", json!({ "key": "Home" })).await?;
            pw.call("browser_press_key", json!({ "key": "Shift+End" })).await?;
            pw.click("button", "bold").await?;
        }
        "aggrid.html" if app.name.contains("filter") => {
            pw.click("columnheader", "Price").await?;
            let field = pw.find("textbox", "Make").await?;
            let args = json!({ "element": "Make filter", "target": field, "text": "Toyota" });
            pw.call("browser_type", args).await?;
            let mut read = pw.seen.clone();
            for _ in 0..5 {
                if shows_the_toyotas(&read) {
                    return Ok(());
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
                read = pw.call("browser_snapshot", json!({})).await?;
            }
            return Err(format!("no snapshot showed the five Toyotas alone: {read}"));
        }
        "aggrid.html" => {
            let cell = pw.find("gridcell", "33850").await?;
            let args = json!({ "element": "price", "target": cell, "doubleClick": true });
            pw.call("browser_click", args).await?;
            let input = match pw.find("spinbutton", "").await {
                Ok(r) => r,
                Err(_) => pw.find("textbox", "").await?,
            };
            let args =
                json!({ "element": "price", "target": input, "text": "35000", "submit": true });
            pw.call("browser_type", args).await?;
        }
        "antd-form.html" => {
            let name = pw.find("textbox", "Traveller").await?;
            let args = json!({ "element": "Traveller", "target": name, "text": "Ada" });
            pw.call("browser_type", args).await?;
            pw.click("combobox", "Country").await?;
            pw.click("", "Japan").await?;
            let date = pw.find("textbox", "Start date").await?;
            let args =
                json!({ "element": "date", "target": date, "text": "2026-03-14", "submit": true });
            pw.call("browser_type", args).await?;
            let city = pw.find("combobox", "City").await?;
            pw.call("browser_type", json!({ "element": "City", "target": city, "text": "Osa" }))
                .await?;
            pw.click("", "Osaka").await?;
            pw.click("button", "Save trip").await?;
        }
        "vue-shop.html" => {
            pw.click("link", "Blue mug").await?;
            let quantity = pw.find("spinbutton", "Quantity").await?;
            let args = json!({ "element": "Quantity", "target": quantity, "text": "2" });
            pw.call("browser_type", args).await?;
            pw.click("button", "Add to cart").await?;
            pw.click("link", "Cart").await?;
            pw.click("button", "Check out").await?;
        }
        "swagger.html" => {
            pw.click("button", "GET /pets/{petId}").await?;
            pw.click("button", "Try it out").await?;
            let id = pw.find("textbox", "petId").await?;
            pw.call("browser_type", json!({ "element": "petId", "target": id, "text": "7" }))
                .await?;
            pw.click("button", "Execute").await?;
        }
        "deepchat.html" => {
            let input = pw.find("textbox", "").await?;
            let args =
                json!({ "element": "message", "target": input, "text": QUESTION, "submit": true });
            pw.call("browser_type", args).await?;
            let mut last = String::new();
            for _ in 0..20 {
                tokio::time::sleep(Duration::from_millis(300)).await;
                let read = pw.call("browser_snapshot", json!({})).await?;
                if read == last {
                    return shows_answer(&read);
                }
                last = read;
            }
            return Err("the answer never stopped changing".into());
        }
        _ => unreachable!(),
    }
    Ok(())
}
