//! Worker tools: spawn_worker, list_workers, stop_worker. A lead assistant starts workers
//! (processes running a template of the user's workers.json), then waits with wait_for_event,
//! whose default is exactly their worker_complete reports. The work is in `tabwire_workers`.

use std::collections::BTreeMap;

use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mcp::params::Target;
use crate::mcp::reply::{Reply, ToolError};
use crate::mcp::server::TabwireServer;
use tabwire_link::error::CallError;
use tabwire_link::methods::{GiveTab, Given, TabsGive};
use tabwire_proto::wire::code;
use tabwire_workers::{Spawn, WorkerInfo, WorkerStatus};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SpawnWorkerParams {
    /// Letters, digits, '.', '_', '-' (at most 48), unique among running workers; the worker_id
    /// adds a suffix.
    pub name: String,
    /// The task: one whole argument (the template's {prompt}), never shell text; at most 100 KiB.
    pub prompt: String,
    /// Where it runs (default: this server's directory); in a git work tree the report lists the
    /// files it changed.
    #[serde(default)]
    pub cwd: Option<String>,
    /// A command template of the user's workers.json (default "default": `claude -p {prompt}`).
    #[serde(default)]
    pub command: Option<String>,
    /// Variables the template's allow_env in workers.json permits (none by default; never PATH,
    /// LD_*, NODE_* and the like); any other is refused.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Stop it (SIGTERM, SIGKILL 5 s later) after this many seconds and report a timeout error.
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

#[derive(Debug, Deserialize, JsonSchema)]
pub struct GiveTabParams {
    /// A tab of yours (in your group) or of the user's.
    pub tab_id: i64,
    /// The running worker that gets it, as spawn_worker or list_workers gave it.
    pub worker_id: String,
    #[serde(flatten)]
    pub target: Target,
}

/// This session's workers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkerList {
    /// Running ones and the last 100 that ended, in start order.
    pub workers: Vec<WorkerInfo>,
}

#[tool_router(router = worker_tools, vis = "pub(super)")]
impl TabwireServer {
    /// Start a worker (by default `claude -p PROMPT`, or a template of the user's workers.json) and
    /// return its worker_id and pid at once. wait_for_event returns its worker_complete (status,
    /// exit code, changed files, last output) when it exits; list_workers and stop_worker follow
    /// and stop it.
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
    ) -> Result<Reply<WorkerInfo>, ToolError> {
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

    /// This session's workers, running and the last 100 ended, each with state, pid, cwd and log
    /// file. wait_for_event waits for one to end; stop_worker stops one.
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
    ) -> Result<Reply<WorkerList>, ToolError> {
        let workers = self.workers.list();
        let lines: Vec<String> = workers.iter().map(describe).collect();
        let text = match lines.len() {
            0 => "this session has no workers".to_owned(),
            n => format!("{n} worker{}:\n{}", if n == 1 { "" } else { "s" }, lines.join("\n")),
        };
        Ok(Reply::new(text, WorkerList { workers }))
    }

    /// Stop a worker: SIGTERM to it and what it started, SIGKILL 5 s later; returns once it exited,
    /// and its worker_complete still comes to wait_for_event. list_workers shows the running ones.
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
    ) -> Result<Reply<WorkerInfo>, ToolError> {
        let info = self.workers.stop(&p.worker_id).await?;
        Ok(Reply::new(describe(&info), info))
    }

    /// Give one of your tabs to a running worker (spawn_worker, list_workers): it moves into the
    /// worker's tab group (made now if the worker has none yet) and is the worker's from then on;
    /// you no longer act in it.
    #[tool(
        output_schema = schema_for_output::<Given>(),
        annotations(
            title = "Give a tab to a worker",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn give_tab(
        &self,
        Parameters(p): Parameters<GiveTabParams>,
    ) -> Result<Reply<Given>, ToolError> {
        let workers = self.workers.list();
        let running = || {
            let names: Vec<&str> =
                workers.iter().filter(|w| !ended(w)).map(|w| w.worker_id.as_str()).collect();
            if names.is_empty() { "none".to_owned() } else { names.join(", ") }
        };
        let Some(worker) = workers.iter().find(|w| w.worker_id == p.worker_id) else {
            let why = format!(
                "{:?} is not a worker of this session (running: {}); spawn_worker starts one",
                p.worker_id,
                running()
            );
            return Err(CallError::new(code::BAD_REQUEST, why).into());
        };
        if ended(worker) {
            let why = format!(
                "worker {} has ended, so it cannot take a tab (running: {})",
                p.worker_id,
                running()
            );
            return Err(CallError::new(code::BAD_REQUEST, why).into());
        }
        let params = GiveTab { tab_id: p.tab_id, to: worker.name.clone() };
        let given = self.core.invoke::<TabsGive>(p.target.browser.as_deref(), &params).await?;
        let text = format!(
            "tab {} is in the tab group \"{}\" of worker {} now; it is the worker's to use",
            given.tab_id, given.group, worker.worker_id
        );
        Ok(Reply::new(text, given))
    }
}

fn ended(info: &WorkerInfo) -> bool {
    matches!(info.state, WorkerStatus::Success | WorkerStatus::Error)
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
