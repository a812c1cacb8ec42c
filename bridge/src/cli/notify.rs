//! `tabwire notify`: a hook or script tells a session that a worker finished (the CLI twin of
//! the notify_completion tool).

use std::process::Command;

use anyhow::{Context, bail};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use serde_json::json;
use tabwire_proto::runtime_dir;

use tabwire_link::events::kind;
use tabwire_session::SessionClient;
use tabwire_session::messages::CompletionStatus;

#[derive(Debug, clap::Args)]
pub struct NotifyArgs {
    /// The session to tell (its id, as get_session shows). Default: $TABWIRE_SESSION_ID, else
    /// the only running session.
    #[arg(long, env = "TABWIRE_SESSION_ID", value_name = "ID")]
    pub session: Option<String>,
    /// Who finished: the name or id the session gave the worker. Default: $TABWIRE_WORKER_ID
    /// (set in workers that spawn_worker started).
    #[arg(long, env = "TABWIRE_WORKER_ID", value_name = "NAME")]
    pub worker: String,
    /// How it ended.
    #[arg(long, value_parser = status())]
    pub status: CompletionStatus,
    /// What was done, or what went wrong.
    #[arg(long, default_value = "")]
    pub message: String,
    /// A file that changed (repeat for several).
    #[arg(long = "change", value_name = "FILE")]
    pub changes: Vec<String>,
    /// Add the files git sees changed here (`git diff --name-only HEAD`, and untracked files).
    #[arg(long)]
    pub changes_from_git: bool,
}

/// `--status`: a status by its name in `worker_complete` (clap lists the names in the help).
fn status() -> impl TypedValueParser<Value = CompletionStatus> {
    PossibleValuesParser::new(["success", "error"])
        .map(|name| serde_json::from_value(name.into()).expect("a status worker_complete has"))
}

pub async fn run(args: NotifyArgs) -> anyhow::Result<()> {
    let mut changes = args.changes;
    if args.changes_from_git {
        changes.extend(git_changes()?);
    }
    changes.sort();
    changes.dedup();
    let data = json!({
        "from": null,
        "worker_id": args.worker,
        "status": args.status,
        "changes": changes,
        "message": args.message,
    });
    let dir = runtime_dir::resolve();
    let mut session = SessionClient::connect_default(&dir, args.session.as_deref()).await?;
    let id = session.push(kind::WORKER_COMPLETE, data).await?;
    println!("delivered worker_complete to session {} (event {id})", session.record.session_id);
    Ok(())
}

/// Changed and untracked files of the git work tree here.
fn git_changes() -> anyhow::Result<Vec<String>> {
    let mut files = git(&["diff", "--name-only", "HEAD"])
        .or_else(|_| git(&["diff", "--name-only"])) // a repository without commits yet
        .context("--changes-from-git")?;
    files.extend(
        git(&["ls-files", "--others", "--exclude-standard"]).context("--changes-from-git")?,
    );
    Ok(files)
}

fn git(args: &[&str]) -> anyhow::Result<Vec<String>> {
    let out = Command::new("git").args(args).output().context("cannot run git")?;
    if !out.status.success() {
        bail!(
            "`git {}` failed: {}; run this inside a git work tree",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect())
}
