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
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorCode, Implementation, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tabwire_proto::wire::code;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::core::Core;
use crate::mcp::TabwireServer;
use crate::session::Session;

/// What every session of one `tabwire serve` shares: where the browsers are, the cap, and the
/// tools' descriptions.
pub struct Sessions {
    runtime_dir: PathBuf,
    /// `--browser`, for every session's core.
    only: Option<String>,
    /// One permit per live session.
    slots: Arc<Semaphore>,
    max: usize,
    tools: ToolRouter<TabwireServer>,
}

impl Sessions {
    pub fn new(runtime_dir: PathBuf, only: Option<String>, max: usize) -> Arc<Sessions> {
        Arc::new(Sessions {
            runtime_dir,
            only,
            slots: Arc::new(Semaphore::new(max)),
            max,
            tools: TabwireServer::tools(),
        })
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
        let server = TabwireServer::new(core.clone());
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
}
