//! The demo's workflow step: the assistant reports each skill it finishes and the server says
//! which comes next — `start_workflow`, then `complete_skill` three times through the built-in
//! `collab` graph (a context clear, then the first work item) — and where the session stands,
//! as the browser's Workflows page and `tabwire workflow show` show it. The session's state
//! lives in a scratch project, removed afterwards.

use anyhow::Result;
use serde_json::{Value, json};

use super::Session;

pub(super) async fn show(session: &Session) -> Result<()> {
    println!();
    let project = std::env::temp_dir().join(format!("tabwire-demo-project-{}", std::process::id()));
    std::fs::create_dir_all(&project)?;
    let shown = walk(session, &project).await;
    let _ = std::fs::remove_dir_all(&project);
    shown
}

async fn walk(session: &Session, project: &std::path::Path) -> Result<()> {
    let at = |mut args: Value| {
        args["project"] = json!(project);
        args["session"] = json!("demo");
        args
    };
    let items = json!([{ "title": "Add a login page", "type": "code" }]);
    let mut next = session.call("start_workflow", at(json!({ "items": items }))).await?;
    let mut walked = vec![step(&next)];
    for _ in 0..3 {
        let skill = next["next_skill"].clone();
        next = session.call("complete_skill", at(json!({ "skill": skill }))).await?;
        walked.push(step(&next));
    }
    println!("      workflow collab: {}", walked.join(" → "));
    let state = session.call("get_workflow_state", at(json!({}))).await?;
    println!(
        "      state {} (phase {}), {} of {} items documented, revision {}; saved in {}",
        state["state"].as_str().unwrap_or("?"),
        state["phase"].as_str().unwrap_or("?"),
        state["documentedItems"],
        state["totalItems"],
        state["revision"],
        state["file"].as_str().unwrap_or("?")
    );
    Ok(())
}

/// `collab-clear (clear context)`, `brainstorm-exploring (item 1)`.
fn step(next: &Value) -> String {
    let skill = next["next_skill"].as_str().unwrap_or("done");
    match (next["action"].as_str(), next["params"]["item_number"].as_u64()) {
        (Some("clear"), _) => format!("{skill} (clear context)"),
        (_, Some(item)) => format!("{skill} (item {item})"),
        _ => skill.to_owned(),
    }
}
