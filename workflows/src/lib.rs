//! Workflows (`specs/workflows.md`): the assistant reports each skill it finishes with
//! `complete_skill`, and the server — not the assistant — decides what comes next from a
//! declared graph, saves where the session stands in the project, and tells the browsers.
//!
//! - `graph.rs`: the model, its validation, and the next state (`Graph::step`);
//! - `collab.json`: the built-in workflow, as data; `catalog.rs`: it and the user's files;
//! - `state.rs`: a session's record and the facts the transitions read;
//! - `walk.rs`: moving a session through the graph;
//! - `store.rs`: `<project>/.collab/<session>/collab-state.json`;
//! - `push.rs`: to the browsers (`workflow.update`); `draw.rs`: in words;
//! - `limits.rs`: every bound.
//!
//! [`Workflows`] is what the MCP tools call; `tabwire workflow show` calls [`show`].

pub mod catalog;
pub mod draw;
pub mod graph;
pub mod limits;
pub mod push;
pub mod state;
pub mod store;
pub mod walk;

use std::path::Path;
use std::sync::{Arc, Mutex};

use tabwire_proto::runtime_dir::now_ms;
use tabwire_proto::wire::code;

use self::catalog::{Catalog, DEFAULT, Loader};
use self::graph::Graph;
use self::push::{Push, Pusher};
use self::state::{Changes, ItemInput, SessionState};
use self::store::Place;
use self::walk::{Next, Refusal};
use tabwire_link::core::Core;
use tabwire_link::error::CallError;

/// The family's own error codes (`specs/protocol.md`, "Error codes").
pub use tabwire_proto::wire::code::{CORRUPT_STATE, NO_WORKFLOW, WRONG_SKILL};

/// A session's state with its graph and what comes next: what every tool answers.
#[derive(Debug, Clone)]
pub struct Seen {
    pub place: Place,
    pub state: SessionState,
    pub graph: Arc<Graph>,
    pub next: Next,
}

impl Seen {
    fn new(place: Place, state: SessionState, graph: Arc<Graph>) -> Seen {
        let next = walk::next(&graph, &state);
        Seen { place, state, graph, next }
    }
}

/// The workflows of this bridge: their catalog, and the sending of every change to the browsers.
#[derive(Clone)]
pub struct Workflows {
    inner: Arc<Inner>,
}

struct Inner {
    loader: Loader,
    pusher: Pusher,
    /// The sessions this bridge started, moved or read, latest last, at most
    /// [`limits::MAX_LIVE`]: what the MCP resources list.
    followed: Mutex<Vec<Place>>,
}

impl Workflows {
    /// User workflows from `$TABWIRE_CONFIG_DIR/workflows`.
    pub fn start(core: &Core) -> Workflows {
        Self::start_with(core, &tabwire_proto::dirs::config_dir())
    }

    pub fn start_with(core: &Core, config_dir: &Path) -> Workflows {
        let inner = Inner {
            loader: Loader::new(config_dir),
            pusher: Pusher::start(core),
            followed: Mutex::default(),
        };
        Workflows { inner: Arc::new(inner) }
    }

    pub fn catalog(&self) -> Arc<Catalog> {
        self.inner.loader.load()
    }

    /// `start_workflow`: a new session record at the workflow's first skill. A session that
    /// already has one is refused unless `restart`.
    pub async fn begin(
        &self,
        project: &str,
        session: &str,
        workflow: Option<String>,
        items: Vec<ItemInput>,
        restart: bool,
    ) -> Result<Seen, CallError> {
        let place = Place::resolve(project, session)?;
        let catalog = self.catalog();
        let name = workflow.filter(|w| !w.trim().is_empty()).unwrap_or_else(|| DEFAULT.into());
        let graph = catalog.graph(&name).ok_or_else(|| unknown_workflow(&catalog, &name))?;
        let at = place.clone();
        let changes = Changes { items: Some(items), ..Changes::default() };
        let seen = blocking(move || {
            let (state, ()) = at.change(|before| {
                if let Some(before) = before.filter(|_| !restart) {
                    return Err(CallError::new(
                        code::BAD_REQUEST,
                        format!(
                            "session {:?} of {} already follows workflow {:?} (state {}, \
                             revision {}): complete_skill goes on from there, get_workflow_state \
                             shows it. Pass restart: true to start over, or use another session name",
                            at.session,
                            at.project.display(),
                            before.workflow,
                            before.state,
                            before.revision
                        ),
                    ));
                }
                let mut state = SessionState::new(&graph, now_ms());
                state.apply(&changes).map_err(|why| CallError::new(code::BAD_REQUEST, why))?;
                walk::start(&graph, &mut state).map_err(|r| refused(r, &at, None))?;
                Ok((state, ()))
            })?;
            Ok(Seen::new(at, state, graph))
        })
        .await?;
        self.push(&seen);
        Ok(seen)
    }

    /// `complete_skill`: check `skill` is the one the session waits for, walk on, save.
    pub async fn complete(
        &self,
        project: &str,
        session: &str,
        skill: &str,
    ) -> Result<Seen, CallError> {
        let place = Place::resolve(project, session)?;
        let catalog = self.catalog();
        let skill = skill.to_owned();
        let seen = blocking(move || {
            let (state, graph) = place.change(|before| {
                let mut state = before.ok_or_else(|| no_workflow(&place))?;
                let graph = graph_of(&catalog, &state, &place)?;
                walk::complete(&graph, &mut state, &skill)
                    .map_err(|r| refused(r, &place, Some(&skill)))?;
                Ok((state, graph))
            })?;
            Ok(Seen::new(place, state, graph))
        })
        .await?;
        self.push(&seen);
        Ok(seen)
    }

    /// `get_workflow_state`.
    pub async fn get(&self, project: &str, session: &str) -> Result<Seen, CallError> {
        let (project, session) = (project.to_owned(), session.to_owned());
        let catalog = self.catalog();
        let seen = blocking(move || look(&catalog, &project, &session)).await?;
        self.follow(&seen.place);
        Ok(seen)
    }

    /// The sessions this bridge started, moved or read, oldest first.
    pub fn followed(&self) -> Vec<Place> {
        self.inner.followed.lock().expect("followed poisoned").clone()
    }

    fn follow(&self, place: &Place) {
        let mut followed = self.inner.followed.lock().expect("followed poisoned");
        followed.retain(|p| p.project != place.project || p.session != place.session);
        followed.push(place.clone());
        if followed.len() > limits::MAX_LIVE {
            followed.remove(0);
        }
    }

    /// `update_workflow`: record facts the transitions read; all or nothing.
    pub async fn update(
        &self,
        project: &str,
        session: &str,
        changes: Changes,
    ) -> Result<(Seen, Vec<String>), CallError> {
        if changes.is_empty() {
            return Err(CallError::new(
                code::BAD_REQUEST,
                "nothing to record: give item_type, items, batches, tasks or has_snapshot",
            ));
        }
        let place = Place::resolve(project, session)?;
        let catalog = self.catalog();
        let (seen, said) = blocking(move || {
            let (state, (graph, said)) = place.change(|before| {
                let mut state = before.ok_or_else(|| no_workflow(&place))?;
                let graph = graph_of(&catalog, &state, &place)?;
                let said =
                    state.apply(&changes).map_err(|why| CallError::new(code::BAD_REQUEST, why))?;
                Ok((state, (graph, said)))
            })?;
            Ok((Seen::new(place, state, graph), said))
        })
        .await?;
        self.push(&seen);
        Ok((seen, said))
    }

    fn push(&self, seen: &Seen) {
        self.follow(&seen.place);
        self.inner.pusher.send(Push {
            project: seen.place.project.display().to_string(),
            session: seen.place.session.clone(),
            state: seen.state.clone(),
            graph: seen.graph.clone(),
        });
    }
}

/// A session as it is on disk, with its graph from the config dir's catalog: for
/// `tabwire workflow show`, which needs no browser and no running session.
pub fn show(config_dir: &Path, project: &str, session: &str) -> Result<Seen, CallError> {
    look(&Loader::new(config_dir).load(), project, session)
}

fn look(catalog: &Catalog, project: &str, session: &str) -> Result<Seen, CallError> {
    let place = Place::resolve(project, session)?;
    let state = place.read()?.ok_or_else(|| no_workflow(&place))?;
    let graph = graph_of(catalog, &state, &place)?;
    Ok(Seen::new(place, state, graph))
}

/// Run file work off the async runtime: a lock may be held by another bridge for a moment.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, CallError> + Send + 'static,
) -> Result<T, CallError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        CallError::new(code::INTERNAL, format!("the workflow store's thread failed: {e}"))
    })?
}

fn graph_of(
    catalog: &Catalog,
    state: &SessionState,
    place: &Place,
) -> Result<Arc<Graph>, CallError> {
    catalog.graph(&state.workflow).ok_or_else(|| {
        let problems: Vec<String> =
            catalog.problems.iter().map(|p| format!("{}: {}", p.path, p.error)).collect();
        CallError::new(
            code::BAD_REQUEST,
            format!(
                "session {:?} follows workflow {:?}, which is not defined any more (there are: \
                 {}{}); restore its file in {}, or start_workflow {{restart: true}}",
                place.session,
                state.workflow,
                catalog.names(),
                if problems.is_empty() {
                    String::new()
                } else {
                    format!("; files skipped: {}", problems.join("; "))
                },
                catalog.directory
            ),
        )
    })
}

fn unknown_workflow(catalog: &Catalog, name: &str) -> CallError {
    let skipped = catalog
        .problems
        .iter()
        .map(|p| format!("; skipped {}: {}", p.path, p.error))
        .collect::<String>();
    CallError::new(
        code::BAD_REQUEST,
        format!(
            "`workflow`: there is no workflow named {name:?}; there are: {} (list_workflows; user \
             workflows are read from {}){skipped}",
            catalog.names(),
            catalog.directory
        ),
    )
}

fn no_workflow(place: &Place) -> CallError {
    CallError::new(
        NO_WORKFLOW,
        format!(
            "no workflow was started in session {:?} of {} (there is no {}); start_workflow \
             starts one",
            place.session,
            place.project.display(),
            place.file().display()
        ),
    )
}

/// A walk that did not happen, in words: what was expected, what to do.
fn refused(refusal: Refusal, place: &Place, skill: Option<&str>) -> CallError {
    let session = &place.session;
    match refusal {
        Refusal::WrongSkill { state, expected: Some(expected), got } => CallError::new(
            WRONG_SKILL,
            format!(
                "session {session:?} is in state {state}, which waits for skill {expected:?}, \
                 not {got:?}; nothing was changed. Run {expected} and complete it \
                 (get_workflow_state shows where the session stands)"
            ),
        ),
        Refusal::WrongSkill { state, expected: None, got } => CallError::new(
            WRONG_SKILL,
            format!(
                "the workflow of session {session:?} is done (state {state}): no skill is \
                 expected, not {got:?}; nothing was changed. start_workflow {{restart: true}} \
                 starts it over"
            ),
        ),
        Refusal::Stuck { state, missing } => {
            let again = skill
                .map_or(String::new(), |s| format!(", then complete_skill {{skill: {s:?}}} again"));
            CallError::new(
                code::BAD_REQUEST,
                format!(
                    "from state {state} no transition holds: {missing}{again}. Nothing was changed"
                ),
            )
        }
        Refusal::UnknownState { state } => CallError::new(
            code::BAD_REQUEST,
            format!(
                "session {session:?} is in state {state:?}, which its workflow no longer has (its \
                 file changed); start_workflow {{restart: true}} starts over"
            ),
        ),
    }
}
