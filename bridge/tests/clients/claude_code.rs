//! The real Claude Code CLI with tabwire: `tabwire install --claude` runs
//! `claude mcp add tabwire -- <abs>/tabwire mcp` in a throwaway HOME and `claude mcp list`
//! connects to it; and `claude -p` drives tabwire's tools in a real browser for a scripted
//! stand-in model ([`tabwire_testkit::model`]), which records exactly what Claude Code hands the
//! model from each tool's result.
//!
//! The CLI comes from the npm registry (`@anthropic-ai/claude-code`), installed once into the
//! target dir and reused; if it cannot be installed, the test fails and says why.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tabwire_testkit::claude::{QUIET_ENV, claude_cli, print_mode};
use tabwire_testkit::model::{StandInModel, Step, ToolResult};
use tabwire_testkit::{Chromium, Fixtures, Mcp, bins, http};

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run command");
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

#[test]
fn claude_code_adds_tabwire_and_connects() {
    let claude = claude_cli();
    let root = bins::scratch_dir("claude");
    let home = root.join("home");
    let profile = root.join("profile");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&profile).unwrap();
    let path = format!(
        "{}:{}",
        claude.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = |cmd: &mut Command| {
        cmd.env("HOME", &home)
            .env("PATH", &path)
            .env("TABWIRE_CONFIG_DIR", root.join("config"))
            .env("TABWIRE_RUNTIME_DIR", root.join("run"))
            .envs(QUIET_ENV);
    };

    let mut install = Command::new(bins::bin("tabwire"));
    install
        .args(["install", "--claude", "--user-data-dir"])
        .arg(&profile)
        .arg("--host-path")
        .arg(bins::bin("tabwire-host"));
    env(&mut install);
    let said = run(&mut install);
    assert!(said.contains("claude mcp add tabwire"), "{said}");

    let config =
        std::fs::read_to_string(home.join(".claude.json")).expect("claude wrote ~/.claude.json");
    assert!(
        config.contains(&bins::bin("tabwire").display().to_string()),
        "registered with the absolute path:\n{config}"
    );

    let mut list = Command::new(&claude);
    list.args(["mcp", "list"]);
    env(&mut list);
    let listed = run(&mut list);
    let line = listed
        .lines()
        .find(|l| l.starts_with("tabwire"))
        .unwrap_or_else(|| panic!("tabwire not listed:\n{listed}"));
    assert!(line.contains("Connected"), "claude could not connect to `tabwire mcp`:\n{listed}");
    let _ = std::fs::remove_dir_all(&root);
}

/// How long `claude -p` may take for the whole scripted conversation before it is killed.
const CLAUDE_TIMEOUT: Duration = Duration::from_secs(120);

/// What the model reads of a tool result: the string, or its text blocks joined.
fn raw_text(result: &ToolResult) -> String {
    match &result.content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n")
        }
        other => other.to_string(),
    }
}

/// A result the model got as one JSON string (the tool's structured content), parsed.
fn parsed(result: &ToolResult) -> Value {
    let Value::String(s) = &result.content else {
        panic!("{}: the model got {}, not a JSON string", result.tool, result.content)
    };
    serde_json::from_str(s).unwrap_or_else(|e| panic!("{}: not JSON ({e}): {s}", result.tool))
}

/// The ref on the first line after `label`, read the way a model would read it off the text
/// (`label` without quotes, so that JSON-escaped text is read too).
fn ref_after(text: &str, label: &str) -> String {
    let from = text.find(label).unwrap_or_else(|| panic!("no {label} in:\n{text}"));
    let tail = &text[from..];
    let at = tail.find("[ref=").unwrap_or_else(|| panic!("no ref after {label} in:\n{text}"));
    tail[at + 5..].split(']').next().unwrap().to_owned()
}

/// Everything a pipe gives until its writers close it, or 10 s pass (a grandchild may hold it).
async fn read_all(mut pipe: impl tokio::io::AsyncRead + Unpin) -> String {
    use tokio::io::AsyncReadExt;
    let mut bytes = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), pipe.read_to_end(&mut bytes)).await;
    String::from_utf8_lossy(&bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_codes_model_reads_the_page_as_lines() {
    let claude = claude_cli();
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let root = bins::scratch_dir("ccm");

    let url = pages.url("dom/widgets.html");
    let tab_of = |results: &[ToolResult]| parsed(&results[0])["tab"]["id"].clone();
    let script = vec![
        Step::new("mcp__tabwire__open_tab", move |_| json!({ "url": url })),
        Step::new("mcp__tabwire__read_page", move |r| json!({ "tab_id": tab_of(r) })),
        Step::new("mcp__tabwire__click", move |r| {
            let counter = ref_after(&raw_text(&r[1]), "Clicked 0 times");
            json!({ "tab_id": tab_of(r), "ref": counter })
        }),
    ];
    let tools: Vec<String> = script.iter().map(|s| s.tool.clone()).collect();
    let key = "sk-test";
    let model = StandInModel::start(key, script).await;
    // Another local process, without the test's key, is refused and drives nothing.
    let port: u16 = model.url().rsplit(':').next().unwrap().parse().unwrap();
    let stranger = http::request(port, "POST", "/v1/messages", &[("x-api-key", "other")], "{}");
    assert_eq!(stranger.await.status, 401);

    let config = root.join("mcp.json");
    let servers = json!({ "mcpServers": { "tabwire": {
        "type": "stdio",
        "command": bins::bin("tabwire"),
        "args": ["mcp"],
        "env": { "TABWIRE_RUNTIME_DIR": browser.runtime_dir },
    }}});
    std::fs::write(&config, servers.to_string()).unwrap();

    let prompt = "Open the widgets page, read it and click the counter.";
    let mut cmd = print_mode(&claude, prompt, &config, &root, model.url(), key);
    cmd.args(["--allowedTools", &tools.join(",")]).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start claude -p");
    let stdout = tokio::spawn(read_all(child.stdout.take().unwrap()));
    let stderr = tokio::spawn(read_all(child.stderr.take().unwrap()));
    let (exited_ok, status) = match tokio::time::timeout(CLAUDE_TIMEOUT, child.wait()).await {
        Ok(status) => {
            let status = status.expect("wait for claude -p");
            (status.success(), status.to_string())
        }
        Err(_) => {
            child.start_kill().expect("kill claude -p by its pid");
            child.wait().await.unwrap();
            (false, format!("timed out after {CLAUDE_TIMEOUT:?}, killed"))
        }
    };
    let (stdout, stderr) = (stdout.await.unwrap(), stderr.await.unwrap());
    let seen = model.tool_results();
    let tail: String =
        stdout.chars().rev().take(4000).collect::<Vec<_>>().into_iter().rev().collect();
    let report = || {
        format!(
            "claude -p: {status}\nstderr:\n{stderr}\nstdout (the end):\n{}\nrequests to the model:\n{}",
            tail,
            model.requests().join("\n"),
        )
    };
    assert!(exited_ok && seen.len() == 3, "{}", report());
    for r in &seen {
        assert!(!r.is_error, "{} failed: {}\n{}", r.tool, r.content, report());
        eprintln!("the model received {} characters from {}", r.chars(), r.tool);
    }

    // open_tab: the tab's id, in the JSON string the model gets.
    let opened = parsed(&seen[0]);
    let tab = opened["tab"]["id"].as_i64().unwrap_or_else(|| panic!("no tab id: {opened}"));

    // click: what it did to the page.
    let clicked = parsed(&seen[2]);
    assert_eq!(clicked["effect"], "changed", "{clicked}");

    // And the user sees it: the counter now says so.
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let found = mcp.ok("find", json!({ "tab_id": tab, "text": "Clicked 1 times" })).await;
    assert!(found["matches"][0]["line"].as_str().is_some(), "the click did not land: {found}");

    // read_page: the lines raw, as a text block, not JSON with every quote and newline escaped.
    let page = &seen[1];
    let first = &page.content[0];
    assert!(
        page.content.is_array() && first["type"] == "text",
        "the model got read_page as {}, not text blocks",
        page.content
    );
    let text = first["text"].as_str().unwrap();
    assert!(text.starts_with("page \"Widgets\" at http://127.0.0.1:"), "{text}");
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("button \"Clicked 0 times\" [ref=e")),
        "{text}"
    );
    assert!(!text.contains("\\\"") && !text.contains("\\n"), "escaped JSON: {text}");
}
