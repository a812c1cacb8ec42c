//! `tabwire mcp`: the MCP server on stdio. stdout is the MCP channel; logs go to stderr.

mod chat;
mod dom;
mod families;
mod family;
mod handler;
pub mod jsonrpc;
mod logging;
mod page;
mod params;
mod prompts;
mod recording;
pub(crate) mod reply;
mod resources;
mod schema;
mod server;
mod sessions;
pub mod sets;
pub mod shell;
mod tabs;
mod waiting;
mod webdev;
mod workers;
mod workflows;

use rmcp::ServiceExt;
use tabwire_proto::Shutdown;

use crate::attach::Attach;
pub use server::TabwireServer;
use sets::ToolSet;
use tabwire_link::core::Core;
use tabwire_session::saved::SavedQueue;

/// `tabwire mcp`.
#[derive(Debug, Clone, clap::Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub attach: Attach,
    /// Also offer each command a page declares (`tabwire.onCommand(type, fn, {description,
    /// params})`) as a tool of its own, named for its site (`<site>_<tag>_<app>__<command>`), and
    /// tell the client when they change.
    #[arg(long, env = "TABWIRE_PAGE_TOOLS", value_parser = clap::builder::BoolishValueParser::new())]
    pub page_tools: bool,
    #[command(flatten)]
    pub tools: Tools,
}

/// Which tools a server offers (`tabwire mcp`, `tabwire serve`).
#[derive(Debug, Clone, clap::Args)]
pub struct Tools {
    /// The tool sets to offer, separated by commas: tabs, page (apps built for tabwire), dom
    /// (any page), sessions, workers, chat, workflows; `all`, or `default` (tabs,page,dom) with
    /// others (`default,workers`). Every tool offered is in each of the model's conversations.
    #[arg(long = "tools", env = "TABWIRE_TOOLS", value_name = "SETS",
          default_value = sets::DEFAULT)]
    set: ToolSet,
    /// Also give each tool's output schema in tools/list, for clients that check results
    /// against it (no model reads them; 16 KB more for the default sets).
    #[arg(long, env = "TABWIRE_OUTPUT_SCHEMAS", value_parser = clap::builder::BoolishValueParser::new())]
    output_schemas: bool,
}

impl Tools {
    /// The tool sets and what their listing gives.
    pub fn set(&self) -> ToolSet {
        self.set.clone().with_output_schemas(self.output_schemas)
    }
}

/// Serve MCP on stdin/stdout until the client goes away (stdin ends) or `shutdown` fires
/// (SIGTERM, SIGINT). Meanwhile this process is a session (`tabwire_session`); its socket and
/// record go when this returns. With `--page-tools`, declared page commands are tools too.
pub async fn run(args: &McpArgs, shutdown: Shutdown) -> anyhow::Result<()> {
    let core = Core::start(args.attach.browser.clone())?;
    let session = tabwire_session::Session::start(&core).await?;
    let saved = session.id_was_chosen().then(|| {
        let id = &session.record().session_id;
        SavedQueue::start(core.queue().clone(), &tabwire_proto::dirs::state_dir(), id)
    });
    let server = TabwireServer::new(core, args.tools.set()).with_page_tools(args.page_tools);
    let ending = server.clone();
    // `tabwire call` from a shell whose TABWIRE_SESSION_ID is this session's id acts as it,
    // with the tools it offers (shell.rs).
    let door = {
        let door = session.record().door.clone().expect("a new session's record names its door");
        let all = server.clone();
        let stop = tokio_util::sync::CancellationToken::new();
        let ended = stop.clone();
        let open = async move {
            if let Err(e) = shell::open_door(all, door, ended, Default::default()).await {
                tracing::warn!("no shell calls for this session: {e:#}");
            }
        };
        tokio::spawn(stop.clone().run_until_cancelled_owned(open));
        stop.drop_guard()
    };
    let service = tokio::select! {
        service = server.serve(jsonrpc::Stdio::new(tabwire_proto::pipes::stdio()?)) => service?,
        _ = shutdown.requested() => return Ok(()), // before the handshake: nothing to flush
    };
    tokio::select! {
        reason = service.waiting() => tracing::info!(?reason, "MCP session ended"),
        why = shutdown.requested() => tracing::info!("ended by {why}"),
    }
    ending.stop_workers().await; // SIGTERM; their reports join the queue
    if let Some(saved) = &saved {
        saved.flush().await; // what no one took waits for this session's next run
    }
    drop(door);
    drop(session);
    ending.flush_operations().await; // the last milestones reach the disk before the process ends
    Ok(())
}
