//! Workflows over MCP stdio, release binaries: `complete_skill` — check the skill, walk the
//! graph, write `collab-state.json` (lock, temp file, rename) — against `get_session`, a tool
//! that touches nothing (the cost of MCP stdio itself), measured in the same run; first with no
//! browser (the tool and the file alone), then with a real headless Chromium attached (each
//! change also goes to it, as in use); and `get_workflow_state` (lock and read, no write).
//! The walk goes through the built-in `collab` graph again and again: three items (code, task,
//! bugfix), no batches, `start_workflow {restart: true}` (not timed) whenever it is done.

use std::path::Path;
use std::time::Instant;

use serde_json::{Value, json};
use tabwire_testkit::{Chromium, Mcp, bins};

use crate::stats::Sample;

const CALLS: usize = 2_000;

pub async fn run() {
    println!("workflows (sequential calls over MCP stdio, state file on disk)");
    let scratch = bins::scratch_dir("bench-wf");
    let (project, config) = (scratch.join("project"), scratch.join("config"));
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&config).unwrap();
    let env = [("TABWIRE_CONFIG_DIR", config.to_str().unwrap())];
    let at = |mut args: Value| {
        args["project"] = json!(project);
        args["session"] = json!("bench");
        args
    };

    let alone = Mcp::start_with(&bins::scratch_dir("bench-wf-run"), &env).await;
    let noop = async || drop(alone.ok("get_session", json!({})).await);
    Sample::time(CALLS, noop).await.print("baseline: get_session (no browser)");
    complete_skills(&alone, &at).await.print("complete_skill (no browser)");
    drop(alone);

    let browser = Chromium::start();
    let mcp = Mcp::start_with(&browser.runtime_dir, &env).await;
    let noop = async || drop(mcp.ok("get_session", json!({})).await);
    Sample::time(CALLS, noop).await.print("baseline: get_session (browser attached)");
    complete_skills(&mcp, &at).await.print("complete_skill (browser attached, sent to it)");
    let read = async || drop(mcp.ok("get_workflow_state", at(json!({}))).await);
    Sample::time(CALLS, read).await.print("get_workflow_state (locked read)");
    println!("  (project in {})", project.parent().map_or(Path::new("?"), |p| p).display());
    let _ = std::fs::remove_dir_all(&scratch);
    println!();
}

/// `CALLS` timed `complete_skill`s, each naming the skill the last call returned.
async fn complete_skills(mcp: &Mcp, at: &impl Fn(Value) -> Value) -> Sample {
    let items = json!([
        { "title": "code", "type": "code" },
        { "title": "task", "type": "task" },
        { "title": "bug", "type": "bugfix" }
    ]);
    let start = at(json!({ "items": items, "restart": true }));
    let mut next = mcp.ok("start_workflow", start.clone()).await;
    let mut sample = Sample::new();
    for _ in 0..CALLS {
        if next["next_skill"].is_null() {
            next = mcp.ok("start_workflow", start.clone()).await;
        }
        let skill = next["next_skill"].clone();
        let t = Instant::now();
        next = mcp.ok("complete_skill", at(json!({ "skill": skill }))).await;
        sample.push(t.elapsed());
    }
    sample
}
