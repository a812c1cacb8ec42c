//! One HTTP client's MCP session: exactly what `tabwire mcp` is for its stdio client — a core
//! of its own (its own connections to the browsers' hosts, event queue and state cache), a
//! tabwire session of its own (id, socket, record, `/wait`; `notify_completion` from anywhere
//! can target it) and the same [`TabwireServer`].
//!
//! rmcp asks for a handler per HTTP session, and also for throwaway ones to look up a tool's
//! schema; so the handler is cheap to make and becomes a session only at `initialize`. It ends
//! when rmcp drops it: the client sent DELETE, went quiet past the idle timeout, or the server
//! is stopping. Then it does what `tabwire mcp` does at stdin EOF: its workers get SIGTERM,
//! its socket and record go, its operations reach the disk, and its connections close.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorCode, GetPromptRequestParams, GetPromptResponse,
    Implementation, InitializeRequestParams, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, RequestId,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tabwire_proto::wire::code;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::mcp::TabwireServer;
use crate::mcp::sets::ToolSet;
use tabwire_link::core::Core;
use tabwire_session::Session;

/// What every session of one `tabwire serve` shares: where the browsers are, the cap, and the
/// tools' descriptions.
pub struct Sessions {
    runtime_dir: PathBuf,
    /// `--browser`, for every session's core.
    only: Option<String>,
    /// One permit per live session.
    slots: Arc<Semaphore>,
    max: usize,
    /// The tool sets served (`--tools`), and their descriptions.
    set: ToolSet,
    tools: ToolRouter<TabwireServer>,
    /// How each live session is used, by its `Mcp-Session-Id`, as the front sees its requests:
    /// which one to end when a new client needs a place ([`Sessions::reclaimable`]).
    usage: Mutex<HashMap<Arc<str>, Usage>>,
}

/// One session's use.
struct Usage {
    /// When its client last sent a request or got an answer.
    last: Instant,
    /// Whether it ever called a tool.
    called: bool,
    /// The ids of its requests whose answer is still on the way.
    in_flight: HashSet<RequestId>,
    /// Its open GET streams: a client listening for notifications is still there.
    listening: usize,
}

/// A request of a session in progress, or a GET stream open: dropped with its response's body.
pub struct Busy {
    sessions: Arc<Sessions>,
    session: Arc<str>,
    request: Option<RequestId>,
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut usage = self.sessions.usage.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(used) = usage.get_mut(&self.session) {
            used.last = Instant::now();
            match &self.request {
                Some(id) => drop(used.in_flight.remove(id)),
                None => used.listening = used.listening.saturating_sub(1),
            }
        }
    }
}

impl Sessions {
    pub fn new(
        runtime_dir: PathBuf,
        only: Option<String>,
        set: ToolSet,
        max: usize,
    ) -> Arc<Sessions> {
        Arc::new(Sessions {
            runtime_dir,
            only,
            slots: Arc::new(Semaphore::new(max)),
            max,
            tools: TabwireServer::tools(&set),
            set,
            usage: Mutex::default(),
        })
    }

    fn used(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, Usage>> {
        self.usage.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A session rmcp just opened for a client.
    pub fn opened(&self, session: &str) {
        let fresh =
            Usage { last: Instant::now(), called: false, in_flight: HashSet::new(), listening: 0 };
        self.used().insert(session.into(), fresh);
    }

    /// A session that ended (DELETE, reclaimed, idled out).
    pub fn forget(&self, session: &str) {
        self.used().remove(session);
    }

    /// The ids of the sessions known here, to drop those rmcp ended on its own (idle timeout).
    pub fn known(&self) -> Vec<Arc<str>> {
        self.used().keys().cloned().collect()
    }

    /// A message of `session` arrived: a request `id` (a tool call when `call`) is in progress
    /// until the returned [`Busy`] drops; Err when that id is still in progress. None for a
    /// session this server does not know (rmcp answers it 404).
    pub fn request(
        self: &Arc<Self>,
        session: &str,
        id: Option<(&RequestId, bool)>,
    ) -> Result<Option<Busy>, ()> {
        let mut usage = self.used();
        let Some(key) = usage.get_key_value(session).map(|(k, _)| k.clone()) else {
            return Ok(None);
        };
        let used = usage.get_mut(session).expect("found above");
        used.last = Instant::now();
        let Some((id, call)) = id else { return Ok(None) };
        if !used.in_flight.insert(id.clone()) {
            return Err(());
        }
        used.called |= call;
        Ok(Some(Busy { sessions: self.clone(), session: key, request: Some(id.clone()) }))
    }

    /// `session`'s client opened a GET stream, until the returned [`Busy`] drops.
    pub fn listen(self: &Arc<Self>, session: &str) -> Option<Busy> {
        let mut usage = self.used();
        let key = usage.get_key_value(session)?.0.clone();
        let used = usage.get_mut(session)?;
        used.listening += 1;
        used.last = Instant::now();
        Some(Busy { sessions: self.clone(), session: key, request: None })
    }

    /// The sessions to end so that a new client gets a place, best first: those with no
    /// request in progress, first those whose client is not listening, then the longest idle.
    /// A session that is waiting for something (wait_for_event, a chat's answer) is never one.
    pub fn reclaimable(&self) -> Vec<Arc<str>> {
        let usage = self.used();
        let mut idle: Vec<_> = usage
            .iter()
            .filter(|(_, u)| u.in_flight.is_empty())
            .map(|(id, u)| (u.listening > 0, u.last, id.clone()))
            .collect();
        idle.sort();
        idle.into_iter().map(|(_, _, id)| id).collect()
    }

    /// Sessions that never called a tool, have nothing in progress, no client listening, and
    /// heard nothing for `quiet`: a client that looked (initialize, tools/list) and left
    /// without ending its session.
    pub fn unused(&self, quiet: Duration) -> Vec<Arc<str>> {
        let usage = self.used();
        let gone = |u: &Usage| {
            !u.called && u.in_flight.is_empty() && u.listening == 0 && u.last.elapsed() >= quiet
        };
        usage.iter().filter(|(_, u)| gone(u)).map(|(id, _)| id.clone()).collect()
    }

    /// Wait, at most `limit`, until a place is free (an ended session frees its place once its
    /// workers were told and its files are gone).
    pub async fn room(&self, limit: Duration) -> bool {
        tokio::time::timeout(limit, self.slots.acquire()).await.is_ok_and(|p| p.is_ok())
    }

    /// Sessions live now.
    pub fn live(&self) -> usize {
        self.max - self.slots.available_permits()
    }

    /// Whether one more session would be over the cap (checked again, for real, at
    /// `initialize`).
    pub fn full(&self) -> bool {
        self.slots.available_permits() == 0
    }

    /// The message a client gets at the cap.
    pub fn full_message(&self) -> String {
        format!(
            "this tabwire serve holds {} MCP sessions, its limit (--max-sessions): end one \
             (HTTP DELETE with its Mcp-Session-Id, or let it idle out) and try again",
            self.max
        )
    }

    /// Wait until every session has ended and cleaned up, at most `limit`.
    pub async fn drained(&self, limit: Duration) -> bool {
        let all = u32::try_from(self.max).unwrap_or(u32::MAX);
        tokio::time::timeout(limit, self.slots.acquire_many(all)).await.is_ok()
    }

    async fn open(&self) -> Result<Live, ErrorData> {
        let Ok(slot) = self.slots.clone().try_acquire_owned() else {
            return Err(ErrorData::new(
                ErrorCode::INTERNAL_ERROR,
                format!("{}: {}", code::TOO_MANY_CONNECTIONS, self.full_message()),
                None,
            ));
        };
        let failed = |e: &dyn std::fmt::Display| {
            ErrorData::internal_error(format!("cannot start a tabwire session: {e}"), None)
        };
        let core = Core::start_in(&self.runtime_dir, self.only.clone()).map_err(|e| failed(&e))?;
        let session = Session::start_another(&core).await.map_err(|e| failed(&format!("{e:#}")))?;
        tracing::info!(session = %session.record().session_id, "HTTP client's session started");
        let server = TabwireServer::new(core.clone(), self.set.clone());
        Ok(Live { server, core, session: Some(session), slot: Some(slot) })
    }
}

/// The handler rmcp runs for one HTTP session.
pub struct HttpSession {
    sessions: Arc<Sessions>,
    live: tokio::sync::OnceCell<Live>,
}

impl HttpSession {
    pub fn new(sessions: Arc<Sessions>) -> HttpSession {
        HttpSession { sessions, live: tokio::sync::OnceCell::new() }
    }

    fn server(&self) -> Result<&TabwireServer, ErrorData> {
        self.live.get().map(|live| &live.server).ok_or_else(|| {
            ErrorData::invalid_request(
                "tabwire serves tools only within a session: send initialize first (protocol \
                 2025-11-25 or older; the session id comes back in Mcp-Session-Id)",
                None,
            )
        })
    }
}

/// A started session. Dropping it ends the session, as `tabwire mcp` ends at stdin EOF.
struct Live {
    server: TabwireServer,
    core: Core,
    session: Option<Session>,
    slot: Option<OwnedSemaphorePermit>,
}

impl Drop for Live {
    fn drop(&mut self) {
        let (server, core) = (self.server.clone(), self.core.clone());
        let (session, slot) = (self.session.take(), self.slot.take());
        let end = async move {
            let id = session.as_ref().map(|s| s.record().session_id.clone());
            server.stop_workers().await; // SIGTERM; their reports join the queue
            server.flush_operations().await;
            core.close();
            // Last, together: once its record is gone, its place is free for another client.
            drop(session);
            drop(slot);
            tracing::info!(session = ?id, "HTTP client's session ended");
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn(end)),
            Err(_) => tracing::warn!("a session ended outside the runtime; its files may stay"),
        }
    }
}

impl ServerHandler for HttpSession {
    fn get_info(&self) -> ServerConfig {
        match self.live.get() {
            Some(live) => live.server.get_info(),
            None => ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
                .with_server_info(Implementation::new("tabwire", env!("CARGO_PKG_VERSION"))),
        }
    }

    /// Sessions exist up to 2025-11-25; the 2026-07-28 revision has none, and a tabwire session
    /// (its queue, its workers, its waits) cannot be rebuilt for each request.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        self.live.get_or_try_init(|| self.sessions.open()).await?;
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.server()?.list_tools(request, context).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.server()?.call_tool(request, context).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.sessions.tools.get(name).cloned()
    }

    // Resources and prompts: the session's server's (`crate::mcp` resources.rs, prompts.rs).
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let Some(live) = self.live.get() {
            live.server.on_initialized(context).await;
        }
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.server()?.list_resources(request, context).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.server()?.list_resource_templates(request, context).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.server()?.read_resource(request, context).await
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.server()?.subscribe(request, context).await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.server()?.unsubscribe(request, context).await
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.server()?.set_level(request, context).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.server()?.list_prompts(request, context).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.server()?.get_prompt(request, context).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newcomer_takes_the_place_of_an_idle_session_first_one_nobody_listens_to() {
        let sessions = Sessions::new(PathBuf::from("/nonexistent"), None, ToolSet::default(), 4);
        for id in ["old", "listened", "busy", "new"] {
            sessions.opened(id);
            std::thread::sleep(Duration::from_millis(2));
        }
        let _stream = sessions.listen("listened").unwrap();
        let call = RequestId::Number(7);
        let busy = sessions.request("busy", Some((&call, true))).unwrap().unwrap();
        assert!(sessions.request("busy", Some((&call, false))).is_err(), "a reused id");
        let order: Vec<String> = sessions.reclaimable().iter().map(|s| s.to_string()).collect();
        assert_eq!(order, ["old", "new", "listened"]);
        // Only sessions that never called a tool, with no one listening, end early.
        let mut unused = sessions.unused(Duration::ZERO);
        unused.sort();
        assert_eq!(unused, [Arc::from("new"), Arc::from("old")]);
        drop(busy);
        assert!(sessions.reclaimable().iter().any(|s| &**s == "busy"), "answered: idle again");
        assert!(!sessions.unused(Duration::ZERO).iter().any(|s| &**s == "busy"), "it called");
    }
}
