//! What one MCP session's server holds: the core it calls, the features it started, and the
//! state its tool families keep (their behaviour is in their own folders; `handler.rs` joins
//! them into the MCP handler). Nothing here imports a tool family, so they can all import it.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use rmcp::handler::server::router::tool::ToolRouter;
#[allow(deprecated)] // logging: see logging.rs
use rmcp::model::LoggingLevel;
use tabwire_link::core::Core;
use tabwire_operations::Operations;
use tabwire_proto::dirs;
use tabwire_session::Peers;
use tabwire_workers::Workers;
use tabwire_workflows::Workflows;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::recording::Recording;
use super::sets::ToolSet;

#[derive(Clone)]
pub struct TabwireServer {
    pub(super) core: Core,
    pub(super) operations: Operations,
    pub(super) workers: Workers,
    pub(super) workflows: Workflows,
    /// Open connections to other sessions (`notify_completion`, `post_message`, …).
    pub(super) peers: Arc<Peers>,
    pub(super) tool_router: ToolRouter<Self>,
    /// The tool sets served (`--tools`).
    pub(super) set: ToolSet,
    /// The resources its client subscribed to (`resources.rs`).
    pub(super) subscriptions: Arc<Subscriptions>,
    /// `--page-tools`: each declared page command as a tool of its own.
    pub(super) page_tools: bool,
    /// This session's network rules' key and holds (`webdev/network.rs`).
    pub(super) holds: Arc<Holds>,
    /// The least severe log message its client wants (`logging.rs`).
    pub(super) log_level: Arc<LogLevel>,
    /// What this session did, for export_test (`recording.rs`).
    pub(super) recording: Arc<Recording>,
}

impl TabwireServer {
    pub fn new(core: Core, set: ToolSet) -> Self {
        // Built once and kept: rmcp's default rebuilds the router on every call.
        let tool_router = Self::tools(&set);
        let operations = Operations::start(core.clone());
        let workers = Workers::start(core.clone(), dirs::state_dir(), dirs::config_dir());
        let workflows = Workflows::start(&core);
        let peers = Arc::default();
        let page_tools = false;
        let subscriptions = Arc::default();
        let holds = Arc::new(Holds::new(core.registry().closing().clone()));
        TabwireServer {
            holds,
            log_level: Arc::default(),
            recording: Arc::default(),
            core,
            operations,
            workers,
            workflows,
            peers,
            tool_router,
            set,
            subscriptions,
            page_tools,
        }
    }

    /// What a session does as it ends, before its record goes: its running workers get
    /// SIGTERM (their reports join the queue).
    pub async fn stop_workers(&self) {
        self.workers.stop_all().await;
    }

    /// …and after: the last operation milestones reach the disk.
    pub async fn flush_operations(&self) {
        self.operations.flush().await;
    }

    /// The same session served to another client (`shell.rs`): what a client asks for itself
    /// (its subscriptions, its log level) starts afresh, so each hears only what it asked;
    /// the session's tabs, operations, workers and record are shared.
    pub fn for_another_client(&self) -> Self {
        TabwireServer { subscriptions: Arc::default(), log_level: Arc::default(), ..self.clone() }
    }

    /// Also serve each command pages declare as a tool of its own (`--page-tools`), and tell
    /// the client when they change (`notifications/tools/list_changed`).
    pub fn with_page_tools(mut self, on: bool) -> Self {
        self.page_tools = on;
        self
    }
}

/// A client session's subscriptions: each URI with the version last told (`None`: it did not
/// exist then). Looked after by `resources.rs`.
#[derive(Default)]
pub struct Subscriptions {
    pub(super) told: Mutex<HashMap<String, Option<String>>>,
    /// A subscription came, or a tool call ended (it may have changed a resource): look at once.
    pub(super) poked: Notify,
}

/// This session's key for its network rules, and the browsers it holds them in
/// (`webdev/network.rs`).
pub struct Holds {
    pub(super) key: String,
    pub(super) held: Arc<Mutex<HashSet<String>>>,
    /// Cancelled when the session's core lets go of its browsers.
    pub(super) closing: CancellationToken,
}

/// The least severe level this client wants, once it said (`logging/setLevel`; `logging.rs`).
#[allow(deprecated)]
#[derive(Default)]
pub struct LogLevel(pub(super) Mutex<Option<LoggingLevel>>);
