//! `tabwire mcp`: the MCP server on stdio. stdout is the MCP channel; logs go to stderr.

mod bench;
mod browsers;
mod commands;
mod diagnose;
mod dom;
mod evaluate;
mod events;
mod logs;
mod operations;
mod page;
mod reply;
mod schema;
mod screenshot;
mod server;
mod sessions;
mod tabs;
mod workers;
mod workflows;

use rmcp::ServiceExt;

use crate::core::Core;
use crate::session::saved::SavedQueue;
pub use server::TabwireServer;

/// Serve MCP on stdin/stdout until the client goes away (stdin ends) or SIGTERM/SIGINT. Meanwhile
/// this process is a session (`crate::session`); its socket and record go when this returns.
/// With `page_tools`, declared page commands are tools too (`--page-tools`).
pub async fn serve(core: Core, page_tools: bool) -> anyhow::Result<()> {
    let mut session = crate::session::Session::start(&core).await?;
    let saved = session.id_was_chosen().then(|| {
        let id = &session.record().session_id;
        SavedQueue::start(core.queue().clone(), &crate::dirs::state_dir(), id)
    });
    let server = TabwireServer::new(core).with_page_tools(page_tools);
    let ending = server.clone();
    let service = tokio::select! {
        service = server.serve(bench::stdio()?) => service?,
        () = session.terminated() => return Ok(()), // before the handshake: nothing to flush
    };
    tokio::select! {
        reason = service.waiting() => tracing::info!(?reason, "MCP session ended"),
        () = session.terminated() => tracing::info!("terminated by a signal"),
    }
    ending.stop_workers().await; // SIGTERM; their reports join the queue
    if let Some(saved) = &saved {
        saved.flush().await; // what no one took waits for this session's next run
    }
    drop(session);
    ending.flush_operations().await; // the last milestones reach the disk before the process ends
    Ok(())
}
