//! `tabwire mcp`: the MCP server on stdio. stdout is the MCP channel; logs go to stderr.

mod chat;
mod dom;
mod handler;
pub mod jsonrpc;
mod logging;
mod page;
mod params;
mod prompts;
mod reply;
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

use crate::cli::McpArgs;
pub use server::TabwireServer;
use tabwire_link::core::Core;
use tabwire_session::saved::SavedQueue;

/// Serve MCP on stdin/stdout until the client goes away (stdin ends) or `shutdown` fires
/// (SIGTERM, SIGINT). Meanwhile this process is a session (`tabwire_session`); its socket and
/// record go when this returns. With `--page-tools`, declared page commands are tools too.
pub async fn run(args: &McpArgs, shutdown: Shutdown) -> anyhow::Result<()> {
    let core = Core::start(args.attach.browser.clone())?;
    let session = tabwire_session::Session::start(&core).await?;
    let saved = session.id_was_chosen().then(|| {
        let id = &session.record().session_id;
        SavedQueue::start(core.queue().clone(), &tabwire_link::dirs::state_dir(), id)
    });
    let server = TabwireServer::new(core, args.tools.set()).with_page_tools(args.page_tools);
    let ending = server.clone();
    // `tabwire call` from a shell whose TABWIRE_SESSION_ID is this session's id acts as it,
    // with the tools it offers (shell.rs).
    let door = {
        let id = session.record().session_id.clone();
        let dir = server.core.runtime_dir().to_owned();
        let all = server.clone();
        let stop = tokio_util::sync::CancellationToken::new();
        let ended = stop.clone();
        let open = async move {
            if let Err(e) = shell::open_door(all, &dir, &id, ended, Default::default()).await {
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
