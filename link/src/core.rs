//! The bridge's core: what MCP tools and CLI commands call. It holds the attached browsers (a
//! `browser::Registry`) and the inbox their events go to, picks the browser a call is for, and
//! carries the call there. Cheap to clone.

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::Value;
use tabwire_proto::runtime_dir::{self, RuntimeDirError, SessionRecord};

use crate::browser::{self, BrowserInfo, Connection, Registry};
use crate::error::CallError;
use crate::events::{EventQueue, SessionEvent};
use crate::inbox::Inbox;
use crate::methods::{self, Method};
use crate::state_cache::StateCache;

#[derive(Clone)]
pub struct Core {
    inner: Arc<Inner>,
}

struct Inner {
    /// The attached browsers.
    browsers: Registry,
    /// Where the connections' readers put events: the session's queue, the state cache, the
    /// declared commands, the allowed sites, the features' sinks.
    inbox: Inbox,
    /// Who this process is as a session (`tabwire mcp` only).
    session: OnceLock<SessionRecord>,
}

impl Drop for Inner {
    /// The last handle went: let go of the browsers. A process with one core ends with it
    /// anyway; one that holds a core per session (`tabwire serve --http`) must not keep a
    /// closed session's connections open.
    fn drop(&mut self) {
        self.browsers.close();
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
        let inbox = Inbox::default();
        let browsers = browser::attach_all(runtime_dir, only, subscribe, inbox.clone());
        let inner = Inner { browsers, inbox, session: OnceLock::new() };
        Ok(Core { inner: Arc::new(inner) })
    }

    /// Wait until the browsers running at start-up are attached, so that "no browser" means none
    /// is running rather than "not attached yet".
    pub async fn ready(&self) {
        self.inner.browsers.ready().await
    }

    pub fn runtime_dir(&self) -> &Path {
        self.inner.browsers.runtime_dir()
    }

    /// The attached browsers, oldest first (the last one is the default).
    pub fn browsers(&self) -> Vec<BrowserInfo> {
        self.inner.browsers.browsers()
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
    /// notify`); its id in the queue. The sink a feature registered for `kind` hears of it
    /// first: the workers note a worker's own report, so that the one tabwire makes when that
    /// worker exits is not a second one.
    pub fn receive(&self, kind: &str, data: &Value) -> u64 {
        if let Some(sink) = self.inner.inbox.sink(kind) {
            sink.event(&tabwire_proto::wire::raw(data));
        }
        self.queue().push(SessionEvent::new(kind, None, data))
    }

    /// Become session `record`, whose tab group in the browsers is titled `name`.
    pub fn set_session(&self, record: SessionRecord, name: String) {
        let tag = tabwire_proto::wire::SessionTag {
            id: record.session_id.clone(),
            name,
            parent: record.parent.clone(),
        };
        let _ = self.inner.inbox.caller.set(tag);
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
        self.inner.browsers.pick(selector).await
    }

    /// Let go of the browsers: stop watching for hosts and close every connection (the hosts
    /// cancel what this core still had in flight). Calls made afterwards fail with
    /// `browser_disconnected`.
    pub fn close(&self) {
        self.inner.browsers.close();
    }

    /// The attached browsers, for the parts of the bridge that follow them on their own
    /// (workflows/src/push.rs) and must not keep the core alive.
    pub fn registry(&self) -> &Registry {
        &self.inner.browsers
    }

    pub fn inbox(&self) -> &Inbox {
        &self.inner.inbox
    }
}

/// The page commands the core keeps for every page ([`Core::commands`]).
impl Core {
    /// The declared commands of tab `tab_id`, or of every page on an allowed site, asked of the
    /// browser now (`page.commands`); what it answers also refreshes the registry.
    pub async fn list_commands(
        &self,
        browser: Option<&str>,
        tab_id: Option<i64>,
    ) -> Result<Vec<crate::commands::PageCommands>, CallError> {
        let conn = self.pick(browser).await?;
        let params = methods::ListCommands { tab_id };
        let timeout = methods::PageCommandList::TIMEOUT;
        let listed =
            methods::invoke_on::<methods::PageCommandList>(&conn, &params, timeout).await.0?;
        let key = conn.info().key();
        match tab_id {
            Some(_) => listed.pages.iter().for_each(|p| self.commands().put(&key, p.clone())),
            None => self.commands().replace_browser(&key, &listed.pages),
        }
        Ok(listed.pages)
    }

    /// `invalid_params` unless `payload` fits the `params` schema the page in `tab_id` declared
    /// for `kind` (no payload is `{}` then: the declared parameters are an object). A command
    /// declared without one, or not declared, passes: the page's handler has the last word.
    /// The first call for a browser asks it for every page's commands; the `commands` events
    /// keep them current after that.
    pub async fn check_declared(
        &self,
        browser: Option<&str>,
        tab_id: i64,
        kind: &str,
        payload: &mut Value,
    ) -> Result<(), CallError> {
        let conn = self.pick(browser).await?;
        let key = conn.info().key();
        if !self.commands().was_listed(&key)
            && let Err(e) = self.list_commands(browser, None).await
        {
            tracing::info!(error = %e, "the declared commands could not be listed");
        }
        let Some(page) = self.commands().page(&key, tab_id) else { return Ok(()) };
        let Some(command) = page.commands.iter().find(|c| c.kind == kind) else { return Ok(()) };
        let Some(schema) = &command.params else { return Ok(()) };
        if payload.is_null() {
            *payload = Value::Object(Default::default());
        }
        crate::commands::check::payload(
            schema,
            payload,
            kind,
            page.origin.as_deref().unwrap_or("the page"),
        )
    }
}
