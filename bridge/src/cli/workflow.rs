//! `tabwire workflow show [--project P] --session S [--json]`: where a workflow session stands,
//! in a terminal — what the extension's `workflow.html` shows — read straight from
//! `<project>/.collab/<session>/collab-state.json`, so it needs no browser and no running
//! session.

use anyhow::Context;
use serde_json::{Value, json};

use tabwire_workflows::{self as workflows, draw};

#[derive(Debug, clap::Args)]
pub struct WorkflowArgs {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Show where a session stands: its state, the skill it waits for, its items, batches and
    /// tasks, and the workflow's graph.
    Show {
        /// The project's directory. Default: the current directory.
        #[arg(long)]
        project: Option<std::path::PathBuf>,
        /// The session's name, as given to start_workflow.
        #[arg(long)]
        session: String,
        /// Print JSON instead of text: the session's state with its graph.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: &WorkflowArgs) -> anyhow::Result<()> {
    let Action::Show { project, session, json } = &args.action;
    let project = match project {
        Some(path) => std::path::absolute(path),
        None => std::env::current_dir(),
    }
    .context("cannot tell which directory the project is")?;
    let seen =
        workflows::show(&tabwire_proto::dirs::config_dir(), &project.to_string_lossy(), session)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    if *json {
        let mut out = json!({
            "project": seen.place.project,
            "session": seen.place.session,
            "file": seen.place.file(),
            "next_skill": seen.next.next_skill,
            "action": seen.next.action,
            "graph": seen.graph.workflow(),
        });
        if let (Value::Object(out), Value::Object(state)) =
            (&mut out, serde_json::to_value(&seen.state)?)
        {
            out.extend(state);
        }
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!(
        "session {} of {} ({})",
        seen.place.session,
        seen.place.project.display(),
        seen.place.file().display()
    );
    for line in draw::where_it_stands(&seen.graph, &seen.state, true) {
        println!("{line}");
    }
    println!("graph:");
    for line in draw::graph_lines(&seen.graph, &seen.state.state) {
        println!("{line}");
    }
    Ok(())
}
