//! The bridge's core: what MCP tools and CLI commands call. It knows the attached browsers,
//! picks the one a call is for, and carries the call there. Cheap to clone.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use serde_json::Value;
use tabwire_proto::runtime_dir::{self, RuntimeDirError, SessionRecord};
use tabwire_proto::wire::code;
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use crate::browser::{self, BrowserEvent, BrowserInfo, Connection};
use crate::error::CallError;
use crate::events::{EventQueue, SessionEvent, kind};
use crate::inbox::Inbox;
use crate::methods::{self, Method};
use crate::state_cache::StateCache;
use crate::workers::SelfReports;

/// Events kept for a subscriber that falls behind before it starts losing the oldest.
const EVENT_BACKLOG: usize = 4096;

#[derive(Clone)]
pub struct Core {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    runtime_dir: PathBuf,
    /// `--browser`: attach to this browser only.
    only: Option<String>,
    /// Attached browsers, oldest first: the last one is the default.
    attached: Mutex<Vec<Arc<Connection>>>,
    /// Where the connections' readers put events: the session's queue, the state cache, and
    /// the broadcast behind [`Core::events`].
    inbox: Inbox,
    /// True once the hosts present at start-up have been attached (or given up on).
    ready: watch::Receiver<bool>,
    /// Who this process is as a session (`tabwire mcp` only).
    session: OnceLock<SessionRecord>,
    /// This session's running workers that reported by themselves.
    self_reports: SelfReports,
    /// Ask the hosts for events. Off for one-shot commands (`status`, `doctor`), so that they
    /// do not take the events a host keeps for the next session.
    subscribe: bool,
    /// Fired by [`Core::close`] or when the last handle goes: the watcher stops and the
    /// connections to the hosts close. A process with one core ends with it anyway; one that
    /// holds a core per session (`tabwire serve --http`) must not keep a closed session's
    /// connections open.
    closing: CancellationToken,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.closing.cancel();
    }
}

impl Core {
    /// Prepare the runtime directory and start watching it for browsers. `only` restricts the
    /// bridge to one browser (`--browser`: a host pid, a brand or a profile id).
    pub fn start(only: Option<String>) -> Result<Core, RuntimeDirError> {
        Self::start_in(&runtime_dir::resolve(), only)
    }

    /// [`Core::start`] with the runtime directory given instead of read from the environment.
    pub fn start_in(runtime_dir: &Path, only: Option<String>) -> Result<Core, RuntimeDirError> {
        Self::open(runtime_dir, only, true)
    }

    /// A core for a one-shot command (`tabwire status`, `tabwire doctor`): it attaches and can
    /// call the browsers, but receives no events.
    pub fn probe_in(runtime_dir: &Path, only: Option<String>) -> Result<Core, RuntimeDirError> {
        Self::open(runtime_dir, only, false)
    }

    fn open(
        runtime_dir: &Path,
        only: Option<String>,
        subscribe: bool,
    ) -> Result<Core, RuntimeDirError> {
        let runtime_dir = runtime_dir::prepare(runtime_dir)?;
        let (ready_tx, ready) = watch::channel(false);
        let core = Core {
            inner: Arc::new(Inner {
                runtime_dir,
                only: only.filter(|s| !s.trim().is_empty()),
                attached: Mutex::new(Vec::new()),
                inbox: Inbox {
                    broadcast: broadcast::channel(EVENT_BACKLOG).0,
                    queue: EventQueue::new(),
                    cache: StateCache::default(),
                    sites: Arc::default(),
                    commands: Default::default(),
                },
                ready,
                session: OnceLock::new(),
                self_reports: SelfReports::default(),
                subscribe,
                closing: CancellationToken::new(),
            }),
        };
        tokio::spawn(browser::watch(core.downgrade(), ready_tx));
        Ok(core)
    }

    /// Wait until the browsers running at start-up are attached, so that "no browser" means none
    /// is running rather than "not attached yet".
    pub async fn ready(&self) {
        let _ = self.inner.ready.clone().wait_for(|ready| *ready).await;
    }

    pub fn runtime_dir(&self) -> &Path {
        &self.inner.runtime_dir
    }

    /// The attached browsers, oldest first (the last one is the default).
    pub fn browsers(&self) -> Vec<BrowserInfo> {
        self.attached().iter().map(|c| c.info().clone()).collect()
    }

    /// Every event from every attached browser, from now on. A subscriber that falls more than
    /// a few thousand events behind loses the oldest (`RecvError::Lagged` says how many).
    pub fn events(&self) -> broadcast::Receiver<BrowserEvent> {
        self.inner.inbox.broadcast.subscribe()
    }

    /// This session's event queue: every event from the browsers (and from other sessions) in
    /// arrival order, losing none in a burst. Other parts of the bridge add their own with
    /// `core.queue().push(SessionEvent::new("operation", Some(tab_id), &data))`.
    pub fn queue(&self) -> &EventQueue {
        &self.inner.inbox.queue
    }

    /// This process as a session, once `session::Session::start` made it one.
    pub fn session(&self) -> Option<&SessionRecord> {
        self.inner.session.get()
    }

    /// Queue an event that another session, a worker or this session itself sent here
    /// (`notify_completion`, `post_message`, `ask_question`, `answer_question`, `tabwire
    /// notify`); its id in the queue. A worker's own report is remembered, so that the one
    /// tabwire makes when that worker exits is not a second one.
    pub fn receive(&self, kind: &str, data: &Value) -> u64 {
        if kind == kind::WORKER_COMPLETE {
            self.inner.self_reports.heard(data);
        }
        self.queue().push(SessionEvent::new(kind, None, data))
    }

    /// The reports this session's running workers made by themselves.
    pub fn self_reports(&self) -> &SelfReports {
        &self.inner.self_reports
    }

    pub(crate) fn set_session(&self, record: SessionRecord) {
        let _ = self.inner.session.set(record);
    }

    /// The sites the user allowed in `browser` (its profile key), as its extension last
    /// announced them; `None` before it has.
    pub fn allowed_sites(&self, browser: &BrowserInfo) -> Option<Vec<String>> {
        self.inner.inbox.sites.lock().expect("sites poisoned").get(&browser.key()).cloned()
    }

    /// The commands the pages declared, per browser and tab.
    pub fn commands(&self) -> &crate::commands::registry::CommandRegistry {
        &self.inner.inbox.commands
    }

    /// The pages' last known states.
    pub fn state_cache(&self) -> &StateCache {
        &self.inner.inbox.cache
    }

    /// Call the extension method `M` (`crate::methods`) in the browser `browser` names, or the
    /// default one, and read its answer; the browser gets `M::TIMEOUT`.
    pub async fn invoke<M: Method>(
        &self,
        browser: Option<&str>,
        params: &M::Params,
    ) -> Result<M::Output, CallError> {
        self.invoke_within::<M>(browser, params, M::TIMEOUT).await
    }

    /// [`Core::invoke`] with a timeout of the caller's: a wait the user chose, a page's load.
    pub async fn invoke_within<M: Method>(
        &self,
        browser: Option<&str>,
        params: &M::Params,
        timeout: Duration,
    ) -> Result<M::Output, CallError> {
        let conn = self.pick(browser).await?;
        methods::invoke_on::<M>(&conn, params, timeout).await.0
    }

    /// The browser a call goes to: the one `selector` names, else the most recently attached.
    pub async fn pick(&self, selector: Option<&str>) -> Result<Arc<Connection>, CallError> {
        self.ready().await;
        let attached = self.attached();
        let Some(default) = attached.last() else { return Err(CallError::NoBrowser) };
        let Some(selector) = selector.map(str::trim).filter(|s| !s.is_empty()) else {
            return Ok(default.clone());
        };
        let hits: Vec<_> = attached.iter().filter(|c| c.info().matches(selector)).collect();
        let list = || attached.iter().map(|c| describe(c.info())).collect::<Vec<_>>().join(", ");
        match hits.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(CallError::new(
                code::BAD_REQUEST,
                format!(
                    "no attached browser is {selector:?}; attached: {}. Name one by its host pid, \
                     brand or profile id, as list_browsers shows",
                    list()
                ),
            )),
            many => Err(CallError::new(
                code::BAD_REQUEST,
                format!(
                    "{} attached browsers match {selector:?}: {}. Name one by its host pid or \
                     profile id",
                    many.len(),
                    list()
                ),
            )),
        }
    }

    fn attached(&self) -> Vec<Arc<Connection>> {
        self.inner.attached.lock().expect("attached list poisoned").clone()
    }

    /// Let go of the browsers: stop watching for hosts and close every connection (the hosts
    /// cancel what this core still had in flight). Calls made afterwards fail with
    /// `browser_disconnected`.
    pub fn close(&self) {
        self.inner.closing.cancel();
        self.inner.attached.lock().expect("attached list poisoned").clear();
    }

    /// Resolves once [`Core::close`] was called or the last handle dropped.
    pub(crate) fn closing(&self) -> CancellationToken {
        self.inner.closing.clone()
    }

    pub(crate) fn only(&self) -> Option<&str> {
        self.inner.only.as_deref()
    }

    /// Whether this core asks its hosts for events.
    pub(crate) fn subscribes(&self) -> bool {
        self.inner.subscribe
    }

    pub(crate) fn inbox(&self) -> Inbox {
        self.inner.inbox.clone()
    }

    pub(crate) fn attach(&self, conn: Arc<Connection>) {
        let mut attached = self.inner.attached.lock().expect("attached list poisoned");
        if self.inner.closing.is_cancelled() {
            return; // closed while this host was being attached
        }
        attached.retain(|c| c.info().host_pid != conn.info().host_pid);
        attached.push(conn);
    }

    pub(crate) fn detach(&self, conn: &Arc<Connection>) {
        let mut attached = self.inner.attached.lock().expect("attached list poisoned");
        attached.retain(|c| !Arc::ptr_eq(c, conn));
    }

    pub(crate) fn downgrade(&self) -> Weak<Inner> {
        Arc::downgrade(&self.inner)
    }

    pub(crate) fn from_inner(inner: Arc<Inner>) -> Core {
        Core { inner }
    }
}

/// `chrome (host pid 4242, profile 3f1c…)`, for lists in messages.
fn describe(info: &BrowserInfo) -> String {
    let profile: String = info.profile.chars().take(8).collect();
    format!("{} (host pid {}, profile {profile})", info.browser, info.host_pid)
}
