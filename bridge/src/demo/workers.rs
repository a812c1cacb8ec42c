//! The demo's worker step: a lead session spawns a worker and `wait_for_event` returns the
//! worker's `worker_complete` — its status, the file it changed in a git repository, the last
//! thing it printed — without the worker doing anything to report.
//!
//! It runs in a `tabwire mcp` of its own, whose config directory holds the demo's template (a
//! shell script that appends the prompt to a file): the user's workers.json is neither read
//! nor written, and their Claude Code is not started.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};
use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use super::{Printer, Session};

/// The template: the prompt is `$1` of a fixed script, one whole argument, never shell text.
const TEMPLATE: &str = r#"{"note": ["sh", "-c",
  "printf '%s\n' \"$1\" >> notes.txt && echo \"wrote notes.txt as $TABWIRE_WORKER_ID\"",
  "sh", "{prompt}"]}"#;

pub(super) async fn show(exe: &Path) -> Result<()> {
    println!();
    let root = std::env::temp_dir().join(format!("tabwire-demo-workers-{}", std::process::id()));
    let shown = run(exe, &root).await;
    let _ = std::fs::remove_dir_all(&root);
    shown
}

async fn run(exe: &Path, root: &Path) -> Result<()> {
    let (config, repo) = (root.join("config"), root.join("repo"));
    std::fs::create_dir_all(&config)?;
    std::fs::create_dir_all(&repo)?;
    std::fs::write(config.join("workers.json"), TEMPLATE)?;
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
        .env("TABWIRE_RUNTIME_DIR", root.join("run"))
        .env("TABWIRE_STATE_DIR", root.join("state"))
        .env("TABWIRE_CONFIG_DIR", &config)
        .env_remove("TABWIRE_SESSION_ID");
    let printer = Printer { since: std::sync::Mutex::new(std::time::Instant::now()) };
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
    lead.client.cancel().await.ok();
    Ok(())
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("?")
}
