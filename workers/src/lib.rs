//! Workers: processes this session starts for its assistant (`spawn_worker`), each running a
//! command template the user wrote (`template.rs`), and each reported back to the session by
//! tabwire itself when it exits (`report.rs`), with only the environment variables that template
//! allows the caller to set (`env.rs`): the loop "spawn workers, then wait_for_event
//! until each worker_complete came" needs nothing from the workers.
//!
//! [`Workers`] keeps the table of this session's workers (mini-redis's `Arc<Shared>` shape:
//! short critical sections, no await under the lock). Each worker has a supervising task that
//! owns its process: it waits for the exit, stops it on request or at its timeout (SIGTERM to
//! its process group, SIGKILL 5 s later), then posts the `worker_complete`, unless the worker
//! already sent one itself (`self_reports.rs`). tabwire stops only processes it started,
//! by pid, and only before it has reaped them.

pub mod env;
pub mod git;
pub mod log;
#[cfg_attr(unix, path = "os_unix.rs")]
#[cfg_attr(windows, path = "os_windows.rs")]
mod os;
pub mod report;
mod self_reports;
pub mod spawn;
pub mod template;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use tabwire_proto::runtime_dir::now_ms;
use tabwire_proto::wire::code;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use report::{Ending, Stopped};
use self_reports::SelfReports;
use tabwire_link::core::Core;
use tabwire_link::error::CallError;
use tabwire_link::events::{SessionEvent, kind};
use tabwire_proto::sessions::{SESSION_ENV, WORKER_ENV};
use template::{Templates, Values};

/// Workers running at once in one session. Each is usually a Claude Code process (hundreds of
/// MiB); more than this is a runaway loop rather than a plan.
pub const MAX_RUNNING: usize = 32;
/// Ended workers `list_workers` still shows (the oldest are forgotten).
pub const KEEP_ENDED: usize = 100;
/// The longest prompt: one argument, and Linux refuses arguments over 128 KiB.
pub const MAX_PROMPT_BYTES: usize = 100 * 1024;
/// The longest name: with its suffix, a worker id is a file name.
pub const MAX_NAME_LEN: usize = 48;
/// Extra environment variables a worker may be given.
pub const MAX_ENV_VARS: usize = 100;
/// The longest `timeout_secs`: a week.
pub const MAX_TIMEOUT_SECS: u64 = 7 * 24 * 3600;
/// Between SIGTERM and SIGKILL when stopping a worker.
pub const KILL_AFTER: Duration = Duration::from_secs(5);
/// How long output is still read after the worker exited, while something it started holds
/// the pipe open.
pub const OUTPUT_GRACE: Duration = Duration::from_secs(1);
/// How long the end of a session waits for its stopped workers' reports.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);
/// Worker logs kept in the state directory (the oldest go first).
pub const KEEP_LOGS: usize = 200;

/// The pid of the `tabwire mcp` that started it, in its environment.
pub const PARENT_PID_ENV: &str = "TABWIRE_PARENT_PID";

/// Claude Code's `claude -p` (the default template) connects its MCP servers in the background
/// unless told otherwise, and may begin its first turn before tabwire's tools are there (a test
/// run saw it under load). Its own switch makes it wait for them; other programs ignore it. A
/// value in this server's environment is the user's and is left as it is.
const WAIT_FOR_MCP: (&str, &str) = ("MCP_CONNECTION_NONBLOCKING", "0");

/// What `spawn_worker` asks for.
#[derive(Debug, Clone, Default)]
pub struct Spawn {
    pub name: String,
    pub prompt: String,
    pub cwd: Option<String>,
    pub template: Option<String>,
    pub env: BTreeMap<String, String>,
    pub timeout_secs: Option<u64>,
}

/// One worker of this session, as `list_workers` shows it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WorkerInfo {
    /// Its id: its name and a random suffix. It is in the worker's environment as
    /// TABWIRE_WORKER_ID.
    pub worker_id: String,
    pub name: String,
    /// Its process id (it leads a process group of its own).
    pub pid: u32,
    /// The template of workers.json it runs.
    pub template: String,
    /// The directory it runs in.
    pub cwd: String,
    /// Its output (stdout and stderr), readable only by the user.
    pub log: String,
    /// `starting`, `running`, `stopping`, `success` or `error`.
    pub state: WorkerStatus,
    /// Milliseconds since the Unix epoch.
    pub started_at_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
}

/// Where a worker is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WorkerStatus {
    Starting,
    Running,
    /// Asked to stop (SIGTERM sent), not yet exited.
    Stopping,
    Success,
    Error,
}

impl WorkerStatus {
    fn ended(self) -> bool {
        matches!(self, WorkerStatus::Success | WorkerStatus::Error)
    }
}

/// How far a worker's end has gone: waited on by `stop_worker` and the session's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd)]
enum Phase {
    Running,
    Exited,
    Reported,
}

/// This session's workers. Cheap to clone.
#[derive(Clone)]
pub struct Workers {
    shared: Arc<Shared>,
}

struct Shared {
    core: Core,
    /// Logs go to `<state_dir>/workers/`.
    state_dir: PathBuf,
    /// `workers.json` is read from here at each spawn.
    config_dir: PathBuf,
    /// In start order.
    table: Mutex<Vec<Entry>>,
    /// The running workers that reported by themselves: the core's inbox hands this every
    /// `worker_complete`.
    reports: Arc<SelfReports>,
}

struct Entry {
    info: WorkerInfo,
    /// Asks its supervisor to stop it; `None` once it ended.
    stop: Option<mpsc::UnboundedSender<Stopped>>,
    phase: watch::Receiver<Phase>,
}

impl Workers {
    pub fn start(core: Core, state_dir: PathBuf, config_dir: PathBuf) -> Workers {
        let reports = Arc::new(SelfReports::default());
        let sink: Weak<SelfReports> = Arc::downgrade(&reports);
        core.inbox().register(kind::WORKER_COMPLETE, sink);
        let table = Mutex::default();
        Workers { shared: Arc::new(Shared { core, state_dir, config_dir, table, reports }) }
    }

    /// Start a worker; it is running when this returns.
    pub async fn spawn(&self, ask: Spawn) -> Result<WorkerInfo, CallError> {
        check(&ask)?;
        let Some(session) = self.shared.core.session().map(|s| s.session_id.clone()) else {
            return Err(CallError::new(
                code::INTERNAL,
                "this server was started without a session",
            ));
        };
        let cwd = resolve_cwd(ask.cwd.as_deref())?;
        let templates = Templates::load(&self.shared.config_dir)?;
        let template = ask.template.clone().unwrap_or_else(|| template::DEFAULT.to_owned());
        let worker_id = format!("{}-{}", ask.name, &uuid::Uuid::new_v4().simple().to_string()[..8]);
        let cwd_text = cwd.display().to_string();
        let values =
            Values { prompt: &ask.prompt, name: &ask.name, worker_id: &worker_id, cwd: &cwd_text };
        let argv = templates.argv(&template, &values)?;
        let mut own = vec![
            (SESSION_ENV.into(), session),
            (WORKER_ENV.into(), worker_id.clone()),
            (PARENT_PID_ENV.into(), std::process::id().to_string()),
            ("TABWIRE_RUNTIME_DIR".into(), self.shared.core.runtime_dir().display().to_string()),
        ];
        if std::env::var_os(WAIT_FOR_MCP.0).is_none() {
            own.push((WAIT_FOR_MCP.0.into(), WAIT_FOR_MCP.1.into()));
        }
        let env = templates.env(&template, own, &ask.env)?;

        let logs = self.shared.state_dir.join("workers");
        let log_path = logs.join(format!("{worker_id}.log"));
        let (phase_tx, phase) = watch::channel(Phase::Running);
        let (stop_tx, stop_rx) = mpsc::unbounded_channel();
        let info = WorkerInfo {
            worker_id: worker_id.clone(),
            name: ask.name.clone(),
            pid: 0,
            template: template.clone(),
            cwd: cwd_text,
            log: log_path.display().to_string(),
            state: WorkerStatus::Starting,
            started_at_ms: now_ms(),
            timeout_secs: ask.timeout_secs,
            ended_at_ms: None,
            exit_code: None,
            signal: None,
        };
        self.reserve(Entry { info, stop: Some(stop_tx), phase })?;
        // Listening before it starts: a quick worker may report before spawn() returns.
        self.shared.reports.expect(&worker_id, &ask.name);
        let started = async {
            let log = tabwire_proto::dirs::private_dir(&logs)
                .and_then(|()| log::Log::create(&log_path))
                .map_err(|e| {
                    CallError::new(
                        code::INTERNAL,
                        format!(
                            "cannot create the worker's log {} ({e}); check TABWIRE_STATE_DIR",
                            log_path.display()
                        ),
                    )
                })?;
            self.prune_logs(&logs);
            let scratch = logs.join(format!("{worker_id}.index"));
            let baseline = git::snapshot(&cwd, &scratch).await;
            let started = spawn::start(&argv, &cwd, &env, &template, &templates.path)?;
            Ok((started, log, baseline, scratch))
        }
        .await;
        let (started, log, baseline, scratch) = match started {
            Ok(started) => started,
            Err(e) => {
                self.forget(&worker_id);
                self.shared.reports.settle(&worker_id);
                return Err(e);
            }
        };
        let info = self.update(&worker_id, |info| {
            info.pid = started.pid;
            info.state = WorkerStatus::Running;
        });
        let supervisor = Supervisor {
            workers: self.clone(),
            worker_id,
            name: ask.name,
            timeout: ask.timeout_secs.map(Duration::from_secs),
            baseline,
            scratch,
            log: log_path.display().to_string(),
            phase: phase_tx,
        };
        tokio::spawn(supervisor.run(started, log, stop_rx));
        Ok(info.expect("reserved above"))
    }

    /// This session's workers, running and recently ended, in start order.
    pub fn list(&self) -> Vec<WorkerInfo> {
        self.lock().iter().map(|e| e.info.clone()).collect()
    }

    /// Stop worker `worker_id` (SIGTERM, SIGKILL 5 s later) and return it once it ended (or,
    /// should its report take long, once it exited). One that already ended is returned as it
    /// is.
    pub async fn stop(&self, worker_id: &str) -> Result<WorkerInfo, CallError> {
        let (stop, mut phase) = {
            let table = self.lock();
            let Some(entry) = table.iter().find(|e| e.info.worker_id == worker_id) else {
                let known: Vec<&str> = table.iter().map(|e| e.info.worker_id.as_str()).collect();
                return Err(CallError::new(
                    code::BAD_REQUEST,
                    format!(
                        "this session has no worker {worker_id:?}; its workers: {}",
                        if known.is_empty() { "none".to_owned() } else { known.join(", ") }
                    ),
                ));
            };
            (entry.stop.clone(), entry.phase.clone())
        };
        if let Some(stop) = stop {
            let _ = stop.send(Stopped::StopWorker);
            let reported = phase.wait_for(|p| *p == Phase::Reported);
            if tokio::time::timeout(KILL_AFTER + OUTPUT_GRACE * 2, reported).await.is_err() {
                let _ = phase.wait_for(|p| *p >= Phase::Exited).await;
            }
        }
        let table = self.lock();
        let entry = table.iter().find(|e| e.info.worker_id == worker_id);
        entry.map(|e| e.info.clone()).ok_or_else(|| {
            CallError::new(code::BAD_REQUEST, format!("worker {worker_id} failed to start"))
        })
    }

    /// The session ends: SIGTERM every running worker, and give their reports a moment to
    /// reach the queue.
    pub async fn stop_all(&self) {
        let running: Vec<_> = self
            .lock()
            .iter()
            .filter_map(|e| e.stop.clone().map(|stop| (stop, e.phase.clone())))
            .collect();
        if running.is_empty() {
            return;
        }
        tracing::info!(workers = running.len(), "the session ends: stopping its workers");
        let reported = running.into_iter().map(|(stop, mut phase)| async move {
            let _ = stop.send(Stopped::SessionEnded);
            let _ = phase.wait_for(|p| *p == Phase::Reported).await;
        });
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, futures::future::join_all(reported)).await;
    }

    fn reserve(&self, entry: Entry) -> Result<(), CallError> {
        let mut table = self.lock();
        let running: Vec<&WorkerInfo> =
            table.iter().map(|e| &e.info).filter(|i| !i.state.ended()).collect();
        if running.len() >= MAX_RUNNING {
            return Err(CallError::new(
                code::BAD_REQUEST,
                format!(
                    "{MAX_RUNNING} workers are running already, the most one session may have; \
                     wait for one (wait_for_event) or stop one (stop_worker)"
                ),
            ));
        }
        if let Some(twin) = running.iter().find(|i| i.name == entry.info.name) {
            return Err(CallError::new(
                code::BAD_REQUEST,
                format!(
                    "a worker named {:?} is running already ({}); give this one another name, \
                     or stop that one first",
                    twin.name, twin.worker_id
                ),
            ));
        }
        table.push(entry);
        let ended = table.iter().filter(|e| e.info.state.ended()).count();
        if ended > KEEP_ENDED {
            let mut extra = ended - KEEP_ENDED;
            table.retain(|e| {
                let forget = extra > 0 && e.info.state.ended();
                extra -= usize::from(forget);
                !forget
            });
        }
        Ok(())
    }

    fn forget(&self, worker_id: &str) {
        self.lock().retain(|e| e.info.worker_id != worker_id);
    }

    fn update(&self, worker_id: &str, change: impl FnOnce(&mut WorkerInfo)) -> Option<WorkerInfo> {
        let mut table = self.lock();
        let entry = table.iter_mut().find(|e| e.info.worker_id == worker_id)?;
        change(&mut entry.info);
        if entry.info.state.ended() {
            entry.stop = None;
        }
        Some(entry.info.clone())
    }

    /// Keep the newest [`KEEP_LOGS`] logs, and every running worker's.
    fn prune_logs(&self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        let mut logs: Vec<(std::time::SystemTime, PathBuf)> = entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        if logs.len() <= KEEP_LOGS {
            return;
        }
        let running: Vec<String> =
            self.list().into_iter().filter(|i| !i.state.ended()).map(|i| i.log).collect();
        logs.sort();
        let extra = logs.len() - KEEP_LOGS;
        for (_, path) in logs.into_iter().take(extra) {
            if !running.contains(&path.display().to_string()) {
                let _ = std::fs::remove_file(path);
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.shared.table.lock().expect("worker table poisoned")
    }
}

/// Owns one worker's process until it ended and was reported.
struct Supervisor {
    workers: Workers,
    worker_id: String,
    name: String,
    timeout: Option<Duration>,
    baseline: Option<Result<git::Snapshot, String>>,
    /// A free path for git's temporary index.
    scratch: PathBuf,
    /// Its log file.
    log: String,
    phase: watch::Sender<Phase>,
}

impl Supervisor {
    async fn run(
        mut self,
        started: spawn::Started,
        log: log::Log,
        mut stop: mpsc::UnboundedReceiver<Stopped>,
    ) {
        let since = Instant::now();
        let spawn::Started { mut child, pid, job, output } = started;
        let (end_output, output_ended) = oneshot::channel();
        let mut collector = tokio::spawn(log::collect(output, log, output_ended));
        let never = || Instant::now() + Duration::from_secs(MAX_TIMEOUT_SECS * 2);
        let deadline = self.timeout.map(|t| since + t);
        let mut kill_at = None;
        let mut stopped = None;
        let mut killed = false;
        let status = loop {
            tokio::select! {
                status = child.wait() => break status,
                Some(why) = stop.recv(), if stopped.is_none() => {
                    stopped = Some(why);
                    self.terminate(&job, &mut kill_at);
                }
                () = tokio::time::sleep_until(deadline.unwrap_or_else(never)),
                    if deadline.is_some() && stopped.is_none() => {
                    stopped = Some(Stopped::Timeout);
                    self.terminate(&job, &mut kill_at);
                }
                () = tokio::time::sleep_until(kill_at.unwrap_or_else(never)), if kill_at.is_some() => {
                    tracing::info!(worker = %self.worker_id, pid, "still running 5 s after SIGTERM: SIGKILL");
                    job.kill();
                    killed = true;
                    kill_at = None;
                }
            }
        };
        let _ = self.phase.send(Phase::Exited);
        let status = status.unwrap_or_else(|e| {
            tracing::warn!(worker = %self.worker_id, "cannot tell how the worker ended ({e})");
            os::unknown_status()
        });
        let output = match tokio::time::timeout(OUTPUT_GRACE, &mut collector).await {
            Ok(done) => done.unwrap_or_default(),
            Err(_) => {
                let _ = end_output.send(());
                collector.await.unwrap_or_default()
            }
        };
        let changes = match self.baseline.take() {
            None => None,
            Some(Err(why)) => Some(Err(why)),
            Some(Ok(before)) => Some(git::changes_since(&before, &self.scratch).await),
        };
        let ending = Ending {
            worker_id: self.worker_id.clone(),
            name: self.name.clone(),
            status,
            stopped,
            killed,
            timeout: self.timeout,
            output,
            changes,
            log: self.log.clone(),
            duration: since.elapsed(),
        };
        let report = self.workers.ended(&self.worker_id, ending);
        let core = &self.workers.shared.core;
        if self.workers.shared.reports.settle(&self.worker_id) {
            tracing::info!(worker = %self.worker_id, "it reported by itself: no second report");
        } else {
            core.queue().push(SessionEvent::new(kind::WORKER_COMPLETE, None, &report));
        }
        let _ = self.phase.send(Phase::Reported);
    }

    /// SIGTERM now, SIGKILL at `kill_at` unless it exits first.
    fn terminate(&self, job: &os::Job, kill_at: &mut Option<Instant>) {
        job.terminate();
        *kill_at = Some(Instant::now() + KILL_AFTER);
        self.workers.update(&self.worker_id, |info| info.state = WorkerStatus::Stopping);
    }
}

impl Workers {
    /// Record how worker `worker_id` ended; its report.
    fn ended(&self, worker_id: &str, ending: Ending) -> report::Report {
        let report = ending.report();
        self.update(worker_id, |info| {
            info.state = match report.status {
                tabwire_link::events::CompletionStatus::Success => WorkerStatus::Success,
                tabwire_link::events::CompletionStatus::Error => WorkerStatus::Error,
            };
            info.ended_at_ms = Some(now_ms());
            info.exit_code = report.exit_code;
            info.signal = report.signal.clone();
        });
        report
    }
}

/// The checks that need nothing but the request.
fn check(ask: &Spawn) -> Result<(), CallError> {
    let bad = |message: String| Err(CallError::new(code::BAD_REQUEST, message));
    let name = &ask.name;
    let name_ok = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if !name_ok {
        return bad(format!(
            "{name:?} is not a worker name: use letters, digits, '.', '_' and '-' (at most \
             {MAX_NAME_LEN}, not starting with '.'); it becomes part of the worker's id and log \
             file name"
        ));
    }
    if ask.prompt.len() > MAX_PROMPT_BYTES {
        return bad(format!(
            "the prompt has {} bytes, more than the {MAX_PROMPT_BYTES} a worker takes (it is one \
             command-line argument); write the details to a file in its cwd and point the prompt \
             at it",
            ask.prompt.len()
        ));
    }
    if ask.prompt.contains('\0') {
        return bad("the prompt contains a NUL character, which no argument can carry".into());
    }
    if let Some(secs) = ask.timeout_secs
        && !(1..=MAX_TIMEOUT_SECS).contains(&secs)
    {
        return bad(format!("timeout_secs must be from 1 to {MAX_TIMEOUT_SECS}; got {secs}"));
    }
    if ask.env.len() > MAX_ENV_VARS {
        return bad(format!("at most {MAX_ENV_VARS} env variables; got {}", ask.env.len()));
    }
    for (key, value) in &ask.env {
        if !env::is_name(key) {
            return bad(format!(
                "{key:?} is not an environment variable name: letters, digits and '_', not \
                 starting with a digit"
            ));
        }
        if env::RESERVED.contains(&key.as_str()) {
            return bad(format!("{key} is set by tabwire for every worker; leave it out of env"));
        }
        if value.contains('\0') {
            return bad(format!("the value of {key} contains a NUL character"));
        }
    }
    Ok(())
}

/// `cwd` as an existing directory: absolute, or relative to this process's directory (the
/// project the assistant works in). `None`: that directory.
fn resolve_cwd(cwd: Option<&str>) -> Result<PathBuf, CallError> {
    let here = std::env::current_dir().map_err(|e| {
        CallError::new(code::INTERNAL, format!("cannot tell this server's directory ({e})"))
    })?;
    let path = here.join(cwd.unwrap_or("."));
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_dir() => Ok(path.canonicalize().unwrap_or(path)),
        Ok(_) => Err(CallError::new(
            code::BAD_REQUEST,
            format!(
                "cwd {} is not a directory; give the directory the worker runs in",
                path.display()
            ),
        )),
        Err(e) => Err(CallError::new(
            code::BAD_REQUEST,
            format!(
                "cwd {} cannot be used ({e}); give an existing directory, absolute or relative \
                 to {}",
                path.display(),
                here.display()
            ),
        )),
    }
}
