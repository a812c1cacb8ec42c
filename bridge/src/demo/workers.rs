//! The demo's worker step: a lead session spawns workers and `wait_for_event` returns each
//! worker's `worker_complete` without the worker doing anything to report. The first changes a
//! file in a git repository (the report lists it); two more are each a tabwire session of their
//! own against the demo's browser, and the tab each opens lands in a tab group named after it.
//!
//! The lead is a `tabwire mcp` of its own on the demo's browser, whose config directory holds
//! the demo's templates: the user's workers.json is neither read nor written, and their Claude
//! Code is not started.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use super::{Printer, Session, step};

/// The note template: the prompt is `$1` of a fixed script, one whole argument, never shell text.
const NOTE: &str =
    "printf '%s\\n' \"$1\" >> notes.txt && echo \"wrote notes.txt as $TABWIRE_WORKER_ID\"";
/// The browse template: a stand-in for an assistant, whose prompt is the MCP lines it says to
/// its own `tabwire mcp` (`$1`, this binary). The worker's environment names the lead
/// (TABWIRE_SESSION_ID) and the worker (TABWIRE_WORKER_ID), so that tabwire is a session of its
/// own, the lead's worker, named after it. At stdin's end it still answers what is in flight
/// (for up to 5 s) before it exits.
const BROWSE: &str = "printf '%s\\n' \"$2\" | \"$1\" mcp";

/// The browser workers, each opening one tab.
const BROWSERS: [&str; 2] = ["north", "south"];

pub(super) async fn show(exe: &Path, runtime_dir: &Path, url: &str) -> Result<()> {
    println!();
    let root = std::env::temp_dir().join(format!("tabwire-demo-workers-{}", std::process::id()));
    let shown = run(exe, runtime_dir, url, &root).await;
    let _ = std::fs::remove_dir_all(&root);
    shown
}

async fn run(exe: &Path, runtime_dir: &Path, url: &str, root: &Path) -> Result<()> {
    let (config, repo) = (root.join("config"), root.join("repo"));
    std::fs::create_dir_all(&config)?;
    std::fs::create_dir_all(&repo)?;
    let templates = json!({
        "note": ["sh", "-c", NOTE, "sh", "{prompt}"],
        "browse": ["sh", "-c", BROWSE, "sh", exe, "{prompt}"],
    });
    std::fs::write(config.join("workers.json"), templates.to_string())?;
    std::fs::write(repo.join("notes.txt"), "notes\n")?;
    for args in [&["init", "-q"][..], &["add", "notes.txt"], &["commit", "-q", "-m", "notes"]] {
        // Without git the step still runs; the report then lists no changes.
        let _ = Command::new("git")
            .args(["-c", "user.name=demo", "-c", "user.email=demo@localhost"])
            .args(["-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(&repo)
            .output();
    }
    let mut cmd = tokio::process::Command::new(exe);
    cmd.args(["mcp", "--tools", "all"])
        .env("TABWIRE_RUNTIME_DIR", runtime_dir)
        .env("TABWIRE_STATE_DIR", root.join("state"))
        .env("TABWIRE_CONFIG_DIR", &config)
        .env_remove("TABWIRE_SESSION_ID");
    let printer = Printer { since: std::sync::Mutex::new(Instant::now()) };
    let client = printer
        .serve(TokioChildProcess::new(cmd)?)
        .await
        .context("MCP handshake with the lead's `tabwire mcp`")?;
    let lead = Session { client };
    let args = json!({ "name": "demo", "command": "note", "prompt": "hello from a worker",
                       "cwd": repo });
    let started = lead.call("spawn_worker", args).await?;
    println!(
        "      worker {} started, pid {}",
        started["worker_id"].as_str().unwrap_or("?"),
        started["pid"]
    );
    let done = lead.call("wait_for_event", json!({ "timeout_secs": 10 })).await?;
    let changes: Vec<String> = done["diff_stat"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| format!("{} (+{} -{})", text(&c["path"]), c["added"], c["removed"]))
        .collect();
    println!(
        "      {} {}: status {}, changes: {}",
        text(&done["type"]),
        text(&done["worker_id"]),
        text(&done["status"]),
        if changes.is_empty() { "none".to_owned() } else { changes.join(", ") }
    );
    println!("      it said: {}", text(&done["message"]));

    // Two workers at once, each its own session in the demo's browser.
    for name in BROWSERS {
        let t = Instant::now();
        let args = json!({ "name": name, "command": "browse", "prompt": open_tab(url),
                           "cwd": repo });
        lead.call_quiet("spawn_worker", args).await?;
        step(
            &format!("spawn_worker {name} (template browse: its prompt is its MCP calls)"),
            t.elapsed(),
            "",
        );
    }
    let mut opened = Vec::new();
    for _ in BROWSERS {
        let done = lead.call("wait_for_event", json!({ "timeout_secs": 20 })).await?;
        opened.push((text(&done["worker_id"]).to_owned(), answered(&done)?));
    }
    opened.sort_by(|a, b| a.0.cmp(&b.0));
    for (worker, tab) in &opened {
        println!(
            "      worker {worker}, its own session: opened tab {} in tab group \"{}\"",
            tab["id"],
            text(&tab["group"])
        );
    }
    let listed = lead.call("list_workers", json!({})).await?;
    let states: Vec<String> = listed["workers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| format!("{} {}", text(&w["name"]), text(&w["state"])))
        .collect();
    println!("      the lead's workers: {}", states.join(", "));
    lead.client.cancel().await.ok();
    Ok(())
}

/// What a browse worker says to its tabwire: the MCP handshake, then `open_tab url` (id 2).
fn open_tab(url: &str) -> String {
    let init = json!({ "protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": { "name": "demo worker", "version": "1" } });
    let call = json!({ "name": "open_tab", "arguments": { "url": url } });
    [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call }),
    ]
    .map(|line| line.to_string())
    .join("\n")
}

/// The tab a browse worker's tabwire answered to its `open_tab`, from the worker's last output
/// (its report's `message`).
fn answered(done: &Value) -> Result<Value> {
    let said = text(&done["message"]);
    let answer = said
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|line| line["id"] == 2);
    let Some(result) = answer.map(|a| a["result"].clone()) else {
        bail!("worker {} did not answer open_tab: {said}", text(&done["worker_id"]));
    };
    if result["isError"] == true || done["status"] != "success" {
        bail!("worker {}'s open_tab failed: {result}", text(&done["worker_id"]));
    }
    Ok(result["structuredContent"]["tab"].clone())
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("?")
}
