//! Worker tools: spawn_worker, list_workers, stop_worker. A lead assistant starts workers
//! (processes running a template of the user's workers.json), then waits with wait_for_event,
//! whose default is exactly their worker_complete reports. The work is in `crate::workers`.

use std::collections::BTreeMap;

use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::reply::Reply;
use super::server::TabwireServer;
use crate::error::CallError;
use crate::workers::{Spawn, WorkerInfo, WorkerStatus};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SpawnWorkerParams {
    /// A short name for the worker: letters, digits, '.', '_', '-' (at most 48). Its worker_id
    /// is this name and a random suffix. Two running workers of this session cannot share a name.
    pub name: String,
    /// The task. It reaches the worker as one whole argument (the template's {prompt}), never
    /// through a shell; at most 100 KiB.
    pub prompt: String,
    /// The directory it runs in, absolute or relative to this server's directory. Default:
    /// this server's directory. When it is in a git work tree, the report lists the files the
    /// worker changed there.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Which command template of the user's workers.json to run. Default: "default", which is
    /// `claude -p {prompt}` unless the user changed it.
    #[serde(default)]
    pub command: Option<String>,
    /// Extra environment variables for the worker (it inherits this server's environment, plus
    /// TABWIRE_SESSION_ID, TABWIRE_WORKER_ID and TABWIRE_PARENT_PID, which cannot be set here).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Stop it after this many seconds (SIGTERM, then SIGKILL 5 s later) and report it as an
    /// error that says it timed out. Default: no limit.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListWorkersParams {}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct StopWorkerParams {
    /// The worker to stop, as spawn_worker or list_workers gave it.
    pub worker_id: String,
}

/// This session's workers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkerList {
    /// Running ones and the last 100 that ended, in start order.
    pub workers: Vec<WorkerInfo>,
}

#[tool_router(router = worker_tools, vis = "pub(super)")]
impl TabwireServer {
    /// Start a worker process (a command template of the user's workers.json, by default
    /// `claude -p PROMPT`) in `cwd` and return its worker_id and pid at once; it runs with
    /// TABWIRE_SESSION_ID set to this session, its output in a log file. When it exits this
    /// session gets its worker_complete (status, exit code or signal, changed files, last
    /// output): wait for it with wait_for_event, whose default is exactly that. Follow or stop
    /// workers with list_workers and stop_worker (running ones get SIGTERM when this session
    /// ends).
    #[tool(
        output_schema = schema_for_output::<WorkerInfo>(),
        annotations(
            title = "Start a worker",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn spawn_worker(
        &self,
        Parameters(p): Parameters<SpawnWorkerParams>,
    ) -> Result<Reply<WorkerInfo>, CallError> {
        let ask = Spawn {
            name: p.name,
            prompt: p.prompt,
            cwd: p.cwd,
            template: p.command,
            env: p.env,
            timeout_secs: p.timeout_secs,
        };
        let info = self.workers.spawn(ask).await?;
        let text = format!(
            "started worker {} (pid {}, template {:?}) in {}; its output goes to {}. \
             wait_for_event returns its worker_complete when it ends",
            info.worker_id, info.pid, info.template, info.cwd, info.log
        );
        Ok(Reply::new(text, info))
    }

    /// This session's workers: the running ones and the last 100 that ended, each with its
    /// state (starting, running, stopping, success, error), pid, cwd and log file. To wait for
    /// one to finish use wait_for_event (worker_complete); to stop one, stop_worker.
    #[tool(
        output_schema = schema_for_output::<WorkerList>(),
        annotations(
            title = "List workers",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn list_workers(
        &self,
        Parameters(_): Parameters<ListWorkersParams>,
    ) -> Result<Reply<WorkerList>, CallError> {
        let workers = self.workers.list();
        let lines: Vec<String> = workers.iter().map(describe).collect();
        let text = match lines.len() {
            0 => "this session has no workers".to_owned(),
            n => format!("{n} worker{}:\n{}", if n == 1 { "" } else { "s" }, lines.join("\n")),
        };
        Ok(Reply::new(text, WorkerList { workers }))
    }

    /// Stop one of this session's workers: SIGTERM to it and what it started, SIGKILL 5 s later
    /// if still running; returns once it exited, and its worker_complete (stopped: stop_worker)
    /// still comes to wait_for_event. Use list_workers to see which are running.
    #[tool(
        output_schema = schema_for_output::<WorkerInfo>(),
        annotations(
            title = "Stop a worker",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn stop_worker(
        &self,
        Parameters(p): Parameters<StopWorkerParams>,
    ) -> Result<Reply<WorkerInfo>, CallError> {
        let info = self.workers.stop(&p.worker_id).await?;
        Ok(Reply::new(describe(&info), info))
    }
}

/// `build-1a2b3c4d (pid 4242): running in /src/app`
fn describe(info: &WorkerInfo) -> String {
    let state = match (info.state, info.exit_code, &info.signal) {
        (WorkerStatus::Success, ..) => "success".to_owned(),
        (WorkerStatus::Error, Some(code), _) => format!("error, exit code {code}"),
        (WorkerStatus::Error, None, Some(signal)) => format!("error, {signal}"),
        (state, ..) => serde_json::to_value(state)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
    };
    format!("{} (pid {}): {state} in {}", info.worker_id, info.pid, info.cwd)
}
