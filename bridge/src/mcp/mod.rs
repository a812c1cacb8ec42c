//! `tabwire mcp`: the MCP server on stdio. stdout is the MCP channel; logs go to stderr.

mod browsers;
mod diagnose;
mod events;
mod operations;
mod page;
mod reply;
mod server;
mod tabs;

use rmcp::ServiceExt;

use crate::core::Core;
pub use server::TabwireServer;

/// Serve MCP on stdin/stdout until the client goes away.
pub async fn serve(core: Core) -> anyhow::Result<()> {
    let server = TabwireServer::new(core);
    let operations = server.operations.clone();
    let service = server.serve(rmcp::transport::stdio()).await?;
    let reason = service.waiting().await?;
    tracing::info!(?reason, "MCP session ended");
    operations.flush().await; // the last milestones reach the disk before the process ends
    Ok(())
}
