//! Telling the browsers where each workflow stands: after every change this bridge makes, the
//! extension method `workflow.update {project, session, state, graph}` goes to every attached
//! browser, whose extension keeps the live workflows and shows them (`workflow.html`, and pages
//! that follow one with `tabwire.onWorkflow`).
//!
//! One task owns the sending (the shape of the host's relay: others only hand it messages), so
//! the tools never wait for a browser: `complete_skill` returns as soon as the state file is
//! written. Updates that pile up while a browser is slow are folded, per workflow, into the
//! latest. The task also remembers the latest state of the most recent workflows
//! ([`MAX_LIVE`]) and sends them to a browser that attaches later — a browser started
//! afterwards, or an extension whose worker restarted — so it never shows less than it should.
//! A browser that refuses (an older extension: `unknown_method`) is only logged.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;
use tabwire_proto::wire::code;
use tokio::sync::mpsc;

use super::graph::Graph;
use super::limits::MAX_LIVE;
use super::state::SessionState;
use tabwire_link::browser::Registry;
use tabwire_link::core::Core;
use tabwire_link::methods::{Method, WorkflowUpdate, invoke_on};

/// How often the attached browsers are compared with those already told, while there is
/// something to tell: a new browser shows the workflows within this.
const NEW_BROWSERS_EVERY: Duration = Duration::from_millis(250);

/// One workflow's new state, for the browsers.
pub struct Push {
    pub project: String,
    pub session: String,
    pub state: SessionState,
    pub graph: Arc<Graph>,
}

/// Hands updates to the sending task. Cheap to clone.
#[derive(Clone)]
pub struct Pusher {
    tx: mpsc::UnboundedSender<Push>,
}

impl Pusher {
    pub fn start(core: &Core) -> Pusher {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(core.registry().clone(), rx));
        Pusher { tx }
    }

    pub fn send(&self, push: Push) {
        let _ = self.tx.send(push);
    }
}

/// The params of one `workflow.update`, as JSON text (built once, sent to every browser).
type Params = Arc<str>;

/// The latest update of each workflow, oldest first, at most [`MAX_LIVE`].
#[derive(Default)]
struct Latest {
    order: Vec<String>,
    params: HashMap<String, Params>,
}

impl Latest {
    fn put(&mut self, key: String, params: Params) {
        self.order.retain(|k| k != &key);
        self.order.push(key.clone());
        self.params.insert(key, params);
        while self.order.len() > MAX_LIVE {
            let oldest = self.order.remove(0);
            self.params.remove(&oldest);
        }
    }

    fn all(&self) -> Vec<Params> {
        self.order.iter().filter_map(|k| self.params.get(k).cloned()).collect()
    }
}

/// Each graph's JSON text, made once: a graph does not change while the catalog keeps it.
#[derive(Default)]
struct GraphTexts(Vec<(Arc<Graph>, Arc<str>)>);

impl GraphTexts {
    fn of(&mut self, graph: &Arc<Graph>) -> Arc<str> {
        if let Some((_, text)) = self.0.iter().find(|(g, _)| Arc::ptr_eq(g, graph)) {
            return text.clone();
        }
        let text: Arc<str> = serde_json::to_string(graph.workflow()).unwrap_or_default().into();
        self.0.truncate(7); // a few workflows at most are followed at once
        self.0.insert(0, (graph.clone(), text.clone()));
        text
    }
}

/// `{project, session, state, graph}` as JSON text.
fn params(push: &Push, graphs: &mut GraphTexts) -> Params {
    fn text(value: &impl serde::Serialize) -> String {
        serde_json::to_string(value).unwrap_or_else(|_| "null".into())
    }
    format!(
        r#"{{"project":{},"session":{},"state":{},"graph":{}}}"#,
        text(&push.project),
        text(&push.session),
        text(&push.state),
        graphs.of(&push.graph)
    )
    .into()
}

/// Send until the pushers or the browsers are let go of.
async fn run(browsers: Registry, mut rx: mpsc::UnboundedReceiver<Push>) {
    let mut latest = Latest::default();
    let mut graphs = GraphTexts::default();
    // Host pids of the browsers that have every update in `latest`.
    let mut told: HashSet<u32> = HashSet::new();
    let mut tick = tokio::time::interval(NEW_BROWSERS_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            () = browsers.closing().cancelled() => return,
            push = rx.recv() => {
                let Some(push) = push else { return };
                // Fold everything waiting: per workflow, only the last state is sent.
                let mut batch: Vec<(String, Params)> = Vec::new();
                for push in std::iter::once(push).chain(std::iter::from_fn(|| rx.try_recv().ok())) {
                    let key = serde_json::to_string(&[&push.project, &push.session]).unwrap_or_default();
                    let params = params(&push, &mut graphs);
                    batch.retain(|(k, _)| k != &key);
                    batch.push((key.clone(), params.clone()));
                    latest.put(key, params);
                }
                let attached = browsers.browsers();
                for browser in &attached {
                    for (_, params) in &batch {
                        send(&browsers, browser.host_pid, params).await;
                    }
                }
                // A browser that attached since the last look has this batch, not the rest:
                // the next tick sends it everything.
                told.retain(|pid| attached.iter().any(|b| b.host_pid == *pid));
            }
            _ = tick.tick(), if !latest.order.is_empty() => {
                let attached = browsers.browsers();
                for browser in attached.iter().filter(|b| !told.contains(&b.host_pid)) {
                    for params in latest.all() {
                        send(&browsers, browser.host_pid, &params).await;
                    }
                }
                told = attached.iter().map(|b| b.host_pid).collect();
            }
        }
    }
}

async fn send(browsers: &Registry, host_pid: u32, params: &Params) {
    let pid = host_pid.to_string();
    let Ok(raw) = RawValue::from_string(params.to_string()) else { return };
    let sent = match browsers.pick(Some(&pid)).await {
        Ok(conn) => invoke_on::<WorkflowUpdate>(&conn, &raw, WorkflowUpdate::TIMEOUT).await.0,
        Err(e) => Err(e),
    };
    match sent {
        Ok(_) => {}
        Err(e) if e.is(code::UNKNOWN_METHOD) => {
            tracing::debug!(
                host_pid,
                "this browser's extension does not show workflows (older version)"
            )
        }
        Err(e) => {
            tracing::debug!(host_pid, error = %e, "a workflow update did not reach the browser")
        }
    }
}
