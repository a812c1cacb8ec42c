//! `tabwire demo`: the whole path, end to end, in one command. It starts Chromium with the
//! extension and a private profile, serves a small web app on 127.0.0.1, starts `tabwire mcp`
//! as a child and drives it with rmcp's MCP client — the same way Claude Code would — printing
//! each step with its latency.

mod files;
mod lab;
mod server;
mod workers;
mod workflows;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt, service::RunningService};
use serde_json::{Value, json};
use tabwire_launcher::{Browser, DEFAULT_CHROMIUM, LaunchOptions};

/// Options of `tabwire demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Show the browser window (needs a display); headless otherwise.
    #[arg(long)]
    pub headed: bool,
    /// The Chromium-family browser to start.
    #[arg(long, default_value = DEFAULT_CHROMIUM)]
    pub chromium: PathBuf,
    /// Keep the browser's scratch folder (profile, log) afterwards.
    #[arg(long)]
    pub keep: bool,
    /// How many state reads to time at the end.
    #[arg(long, default_value_t = 200)]
    pub reads: usize,
}

pub async fn run(args: DemoArgs) -> Result<()> {
    if args.headed
        && std::env::var_os("DISPLAY").is_none()
        && std::env::var_os("WAYLAND_DISPLAY").is_none()
    {
        bail!(
            "--headed needs a display (DISPLAY or WAYLAND_DISPLAY is not set); run without --headed"
        );
    }
    let exe = std::env::current_exe().context("where is this tabwire binary?")?;
    let env = tabwire_install::Env::from_process()?;
    let host = tabwire_install::locate_host(None, &env)?;
    let root = std::env::temp_dir().join(format!("tabwire-demo-{}", std::process::id()));
    // A checkout's extension/ as it is; else (an installed tabwire) the one this binary carries.
    let extension_dir = match tabwire_install::find_extension_dir(&env) {
        Some(dir) => dir,
        None => {
            let dir = root.join("extension");
            tabwire_install::extension::unpack(&dir)?;
            dir
        }
    };
    let state_dir = root.join("state"); // the demo's operations stay out of the user's state dir
    files::set_download_dir(&root)?;
    let opts = LaunchOptions {
        chromium: args.chromium.clone(),
        extension_dir,
        host_binary: host.path,
        headless: !args.headed,
        root,
        keep: args.keep,
        env: Vec::new(),
        timeout: Duration::from_secs(30),
        write_manifest: true,
        cdp_pipe: false,
        chrome_log: false,
    };

    println!("tabwire demo — a scripted MCP session against a real browser\n");
    let t = Instant::now();
    let url = server::serve_demo_pages("127.0.0.1").await.context("serving the demo pages")?;
    let elsewhere =
        server::serve_demo_pages("127.0.0.2").await.context("serving the demo pages")?;
    let browser = tokio::task::spawn_blocking(move || Browser::launch(&opts)).await??;
    let host = browser.host().context("the host went away")?;
    step(
        "start Chromium + extension, host listening",
        t.elapsed(),
        &format!("host pid {}", host.pid),
    );

    let t = Instant::now();
    let mut cmd = tokio::process::Command::new(&exe);
    // The demo shows every family, so it asks for every tool set.
    cmd.args(["mcp", "--tools", "all"]).env("TABWIRE_RUNTIME_DIR", &browser.runtime_dir);
    cmd.env("TABWIRE_STATE_DIR", &state_dir);
    let printer = Printer { since: std::sync::Mutex::new(Instant::now()) };
    let client: RunningService<RoleClient, Printer> = printer
        .serve(TokioChildProcess::new(cmd)?)
        .await
        .context("MCP handshake with `tabwire mcp`")?;
    step("start `tabwire mcp`, MCP handshake", t.elapsed(), "");

    let session = Session { client };
    let browsers = session.call("list_browsers", json!({})).await?;
    let b = &browsers["browsers"][0];
    println!(
        "      {} {} (profile {})",
        b["browser"].as_str().unwrap_or("?"),
        b["extension_version"].as_str().unwrap_or(""),
        b["profile"].as_str().unwrap_or("?")
    );
    let sites: Vec<&str> =
        b["sites"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    println!("      allowed sites: {}", sites.join(", "));

    let opened = session.call("open_tab", json!({ "url": url })).await?;
    let tab = opened["tab"]["id"].clone();
    println!("      tab {tab}: {}", opened["tab"]["title"].as_str().unwrap_or(""));

    let tabs = session.call("list_tabs", json!({})).await?;
    let all = tabs["tabs"].as_array().cloned().unwrap_or_default();
    println!("      {} tab(s) open; {}", all.len(), in_front(&all, &tab));

    let state = session.call("get_state", json!({ "tab_id": tab, "force_refresh": true })).await?;
    println!("      items: {}", state["state"]["items"]);

    let changed = session
        .call(
            "send_command",
            json!({ "tab_id": tab, "type": "add_item", "payload": { "item": "coffee" } }),
        )
        .await?;
    println!("      the page now has {} items", changed["result"]["items"]);

    let state = session.call("get_state", json!({ "tab_id": tab })).await?;
    println!(
        "      items: {} (source: {}, updated by {})",
        state["state"]["items"],
        state["source"].as_str().unwrap_or("?"),
        state["state"]["updated_by"].as_str().unwrap_or("?")
    );

    // A person presses the page's button (the demo does it through a command): the page pushes
    // an event, and the assistant's wait returns it.
    session.call("send_command", json!({ "tab_id": tab, "type": "press_add" })).await?;
    let event = session
        .call("wait_for_event", json!({ "types": ["page_event"], "timeout_secs": 5 }))
        .await?;
    println!(
        "      the page pushed {} (from {}, tab {})",
        event["data"],
        event["origin"].as_str().unwrap_or("?"),
        event["tab_id"]
    );

    // Declared commands: the page said what add_item takes, so a bad payload is refused before
    // the page sees it.
    let listed = session.call("list_commands", json!({ "tab_id": tab })).await?;
    let names: Vec<&str> = listed["pages"][0]["commands"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["type"].as_str())
        .collect();
    println!("      the page's commands: {}", names.join(", "));
    let bad = json!({ "tab_id": tab, "type": "add_item", "payload": { "item": 5 } });
    let refused = session.call_err("send_command", bad).await?;
    println!("      refused before the page saw it: {}", first_line(&refused));

    // Any page of an allowed site, built for tabwire or not: read it as lines with refs, click
    // a ref, and see what the click changed — no debugger.
    let read = session.call("read_page", json!({ "tab_id": tab })).await?;
    let read = read.as_str().unwrap_or_default();
    let lines = read.lines().skip(1).count();
    println!("      read_page: {lines} lines, {} tokens", read.len().div_ceil(4));
    let found = session
        .call("find", json!({ "tab_id": tab, "role": "button", "name": "Add by hand" }))
        .await?;
    let line = found["matches"][0]["line"].as_str().unwrap_or_default().to_owned();
    let r#ref = line.split("[ref=").nth(1).and_then(|s| s.split(']').next());
    let report =
        session.call("click", json!({ "tab_id": tab, "ref": r#ref.context("a ref")? })).await?;
    println!(
        "      clicked {line}: effect {}, added {}",
        report["effect"].as_str().unwrap_or("?"),
        report["added"]
    );
    // What was done there, as a Playwright test the developer keeps (the webdev set).
    let test = json!({ "tab_id": tab, "name": "adds an item by hand" });
    let test = session.call("export_test", test).await?;
    println!(
        "      export_test: steps {}–{} as a Playwright test",
        test["first_step"], test["last_step"]
    );
    let code = test["test"].as_str().unwrap_or_default();
    // Its steps and what the session read back after each, as checks.
    for line in code.lines().map(str::trim).filter(|l| l.starts_with("await ")).take(6) {
        println!("        {line}");
    }
    // Its accessibility, by axe-core injected for this call only: each rule broken, and the
    // refs of the elements, which click and fill take (the webdev set).
    let audit = session.call("audit_accessibility", json!({ "tab_id": tab })).await?;
    let broken = audit["violations"].as_array().cloned().unwrap_or_default();
    let engine = audit["engine"].as_str().unwrap_or("?");
    println!(
        "      audit_accessibility by {engine}: {} rules broken, {} passed",
        broken.len(),
        audit["passed"]
    );
    for v in broken.iter().take(2) {
        let at = v["elements"][0]["ref"].as_str().unwrap_or("no ref");
        let rule = v["rule"].as_str().unwrap_or("?");
        println!("        {rule} ({}): {} — {at}", v["impact"].as_str().unwrap_or("?"), v["help"]);
    }
    // The same tools as terminal commands (what an assistant with tabwire's skill runs): one
    // shell's commands are one session, with its own tab group.
    let shell = |args: Vec<String>| {
        let mut cmd = tokio::process::Command::new(&exe);
        cmd.arg("call").args(args).env("TABWIRE_RUNTIME_DIR", &browser.runtime_dir);
        cmd.env("TABWIRE_SESSION_ID", "demo-shell").output()
    };
    let opened = shell(vec!["open_tab".into(), "--url".into(), url.clone(), "--json".into()]);
    let opened = opened.await?;
    let opened: serde_json::Value = serde_json::from_slice(&opened.stdout).unwrap_or_default();
    let shell_tab = opened["tab"]["id"].to_string();
    let read =
        shell(vec!["find".into(), "--tab-id".into(), shell_tab, "--role".into(), "button".into()]);
    let read = read.await?;
    let said = String::from_utf8_lossy(&read.stdout);
    println!(
        "      tabwire call find (exit {}): {}",
        read.status.code().unwrap_or(-1),
        first_line(&said)
    );
    shell(vec!["--end".into()]).await?;
    files::download(&session, &tab).await?; // a click that downloads; the file, hashed

    // Sites: tabwire works only where the user allowed it. 127.0.0.2 is not among the
    // defaults: the page there gets nothing, and every call to it is refused until the user
    // (here, the demo running `tabwire sites` as the user would) allows it.
    println!();
    let stranger = session.call("open_tab", json!({ "url": elsewhere })).await?;
    let stranger_tab = stranger["tab"]["id"].clone();
    let origin = origin_of(&elsewhere);
    let refused = session
        .call_err("get_state", json!({ "tab_id": stranger_tab, "force_refresh": true }))
        .await?;
    println!("      refused: {}", first_line(&refused));
    sites_cli(&exe, &browser, &["allow", &origin]).await?;
    session.call("navigate", json!({ "tab_id": stranger_tab, "url": elsewhere })).await?;
    let state =
        session.call("get_state", json!({ "tab_id": stranger_tab, "force_refresh": true })).await?;
    println!("      allowed: items {} from {}", state["state"]["items"], state["origin"]);
    sites_cli(&exe, &browser, &["revoke", &origin]).await?;
    let refused = session.call_err("get_state", json!({ "tab_id": stranger_tab })).await?;
    println!("      revoked, at once: {}", first_line(&refused));
    files::cookies(&session, &exe, &browser, &tab, &origin_of(&url)).await?; // the webdev set
    lab::show(&session, &url, args.headed).await?; // WebMCP, network_rules, ask_user

    println!("\n  timing {} reads of the page's state:", args.reads);
    for force in [false, true] {
        let mut lat = Vec::with_capacity(args.reads);
        for _ in 0..args.reads {
            let t = Instant::now();
            session
                .call_quiet("get_state", json!({ "tab_id": tab, "force_refresh": force }))
                .await?;
            lat.push(t.elapsed());
        }
        lat.sort();
        let p = |q: f64| lat[((lat.len() as f64 - 1.0) * q).round() as usize];
        println!(
            "    {:<44} p50 {:>7.3} ms   p99 {:>7.3} ms",
            if force {
                "get_state, fresh from the page"
            } else {
                "get_state, from the bridge's cache"
            },
            ms(p(0.5)),
            ms(p(0.99)),
        );
    }

    // An AI chat in a tab: send it a message and follow the answer as the page writes it.
    // The progress notifications are printed (by Printer) as they arrive.
    println!();
    let chat = session.call("open_tab", json!({ "url": format!("{url}chat.html") })).await?;
    // What the chat detector would use on this page, before any adapter is given.
    let listed = session.call("list_adapters", json!({ "tab_id": chat["tab"]["id"] })).await?;
    let detected = &listed["tab"]["detected"];
    let (proposed, clear) = (&detected["adapter"], detected["clear"] == true);
    println!(
        "      the chat detector proposes: input {}, send {}, stop {} ({})",
        proposed["input"],
        proposed["submit"],
        proposed["stop"],
        if clear { "clear: send_message_async would use it" } else { "not clear" }
    );
    let text = "What is tabwire?";
    let args = json!({ "tab_id": chat["tab"]["id"], "text": text, "adapter": demo_adapter() });
    *session.client.service().since.lock().expect("demo clock") = Instant::now();
    let started = session.call("send_message_async", args).await?;
    let waited = json!({ "operation_id": started["operation_id"] });
    let done = session.call("wait_for_operation", waited).await?;
    println!("      answer: {}", done["response_text"].as_str().unwrap_or("(none)"));
    // A lead spawns workers; wait_for_event returns their reports. Two are tabwire sessions
    // in this browser, each with its tab in a group named after it.
    workers::show(&exe, &browser.runtime_dir, &url).await?;
    workflows::show(&session).await?; // complete_skill walks the collab graph; where it stands

    session.client.cancel().await.ok();
    drop(browser);
    println!("\ndone: browser stopped, its profile removed.");
    Ok(())
}

struct Session {
    client: RunningService<RoleClient, Printer>,
}

/// `tabwire sites ARGS` against the demo's browser, as the user would type it.
async fn sites_cli(exe: &std::path::Path, browser: &Browser, args: &[&str]) -> Result<()> {
    let t = Instant::now();
    let out = tokio::process::Command::new(exe)
        .arg("sites")
        .args(args)
        .env("TABWIRE_RUNTIME_DIR", &browser.runtime_dir)
        .output()
        .await?;
    let said = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        bail!(
            "tabwire sites {} failed: {said}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    step(&format!("(the user) tabwire sites {}", args.join(" ")), t.elapsed(), said.trim());
    Ok(())
}

/// `http://127.0.0.2:4321` of `http://127.0.0.2:4321/token/`.
/// Where the session's tab `ours` opened, and that the user's tab stayed in front: the session
/// works in a window of its own, never taking the user's screen (specs/tools.md, "In the
/// background").
fn in_front(tabs: &[Value], ours: &Value) -> String {
    let front = tabs.iter().find(|t| t["active"] == true && t["window_focused"] == true);
    let mine = tabs.iter().find(|t| &t["id"] == ours);
    let window = |t: Option<&Value>| t.map_or("?".to_owned(), |t| t["window_id"].to_string());
    match front {
        Some(front) if &front["id"] != ours => format!(
            "the session's tab {ours} opened in window {} of its own; in front of the user, \
             still: tab {} of window {}",
            window(mine),
            front["id"],
            window(Some(front))
        ),
        Some(_) => format!("the session's tab {ours} is in front of the user (it was asked to be)"),
        None => format!("the session's tab {ours} opened in window {}", window(mine)),
    }
}

fn origin_of(url: &str) -> String {
    url.split('/').take(3).collect::<Vec<_>>().join("/")
}

fn first_line(text: &str) -> &str {
    let line = text.lines().next().unwrap_or("");
    line.split_once("; ").map_or(line, |(head, _)| head)
}

/// The demo's MCP client: prints each progress notification as it arrives.
struct Printer {
    /// When the message was sent: progress is timed from there.
    since: std::sync::Mutex<Instant>,
}

impl rmcp::ClientHandler for Printer {
    fn on_progress(
        &self,
        p: rmcp::model::ProgressNotificationParam,
        _: rmcp::service::NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        let message = p.message.unwrap_or_default();
        let at = ms(self.since.lock().map(|t| t.elapsed()).unwrap_or_default());
        println!("      ↳ progress {:.2}/3  {message}  ({at:.0} ms after the send)", p.progress);
        std::future::ready(())
    }
}

/// The site adapter of chat.html: which elements are the box, the button and the bubbles.
fn demo_adapter() -> Value {
    json!({
        "name": "demo chat",
        "matches": ["http://127.0.0.1:*/*/chat.html"],
        "input": "#box",
        "submit": "#send",
        "user_message": ".msg.user",
        "assistant_message": ".msg.assistant",
        "generating": ".typing",
        "done": ".done",
    })
}

impl Session {
    /// Call a tool, print the step with its latency, return its structured result.
    async fn call(&self, tool: &str, args: Value) -> Result<Value> {
        let t = Instant::now();
        let result = self.call_quiet(tool, args.clone()).await?;
        let shown = if args.as_object().is_some_and(|a| a.is_empty()) {
            String::new()
        } else {
            args.to_string()
        };
        step(&format!("{tool} {shown}"), t.elapsed(), "");
        Ok(result)
    }

    /// Call a tool that must fail; print the step; its error text.
    async fn call_err(&self, tool: &str, args: Value) -> Result<String> {
        let t = Instant::now();
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(map) = args.clone() {
            params = params.with_arguments(map);
        }
        let result: CallToolResult = self.client.call_tool(params).await?;
        let text: Vec<&str> =
            result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
        if result.is_error != Some(true) {
            bail!("{tool} should have been refused, but it answered: {}", text.join(" "));
        }
        step(&format!("{tool} {args} (refused)"), t.elapsed(), "");
        Ok(text.join(" "))
    }

    async fn call_quiet(&self, tool: &str, args: Value) -> Result<Value> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        let result: CallToolResult = self.client.call_tool(params).await?;
        let text: Vec<&str> =
            result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
        if result.is_error == Some(true) {
            bail!("{tool} failed: {}", text.join(" "));
        }
        // A tool that answers with text only (read_page) gives its text.
        Ok(result.structured_content.unwrap_or_else(|| Value::String(text.join("\n"))))
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn step(what: &str, took: Duration, note: &str) {
    let what: String = what.chars().take(70).collect();
    println!("  ✓ {what:<72} {:>9.3} ms  {note}", ms(took));
}
