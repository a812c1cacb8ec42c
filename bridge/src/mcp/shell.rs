//! Every tool as a terminal command (`tabwire call`, `bridge/src/cli/call.rs`): the same server,
//! reached without an MCP client. [`in_process`] runs a [`TabwireServer`] over an in-process
//! duplex pipe with rmcp's own client on the other end, so a call goes through exactly what an
//! MCP client's would (the router, the sets, the replies). [`open_door`] lets the commands of one
//! shell share one session: a socket beside the session's own (`<runtime>/sessions/<id>.call.sock`,
//! 0600, the peer's uid checked), one tool call per connection, served by the session that holds
//! the id — a `tabwire mcp`, or the background session `tabwire call` starts for a shell whose
//! `TABWIRE_SESSION_ID` names no live one — so its tab group and its tabs stay its own between
//! commands.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tabwire_proto::socket::{Listener, bind_private, check_peer};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use super::TabwireServer;

/// A request's largest size (a tool's arguments: an upload's files are paths, not bytes). One
/// JSON value each way, ending at a newline (serialized JSON has none of its own) or at the end
/// of the stream — not at a half-close, which a named pipe has not: one call per connection.
const MAX_REQUEST: u64 = 1 << 20;

/// An MCP client of `server`, in this process.
pub async fn in_process(server: TabwireServer) -> anyhow::Result<RunningService<RoleClient, ()>> {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let serving = tokio::spawn(async move {
        if let Ok(running) = server.for_another_client().serve(theirs).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(ours).await?;
    drop(serving); // it runs on until the client goes
    Ok(client)
}

/// What a shell command asks the door.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DoorRequest {
    /// A tool call, as MCP's `tools/call` params.
    Call { tool: String, arguments: Option<serde_json::Map<String, Value>> },
    /// End the session (`tabwire call --end`): its tab group is left to the user.
    End,
}

/// The door's answer: the tool's result as MCP gives it, or the error MCP would answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DoorAnswer {
    Result(Value),
    Error { code: i32, message: String },
    Ended,
}

/// The door of the live session `id`, from its record (none when no session holds the id).
pub fn door_path(runtime_dir: &Path, id: &str) -> Option<PathBuf> {
    let record = tabwire_proto::sessions::find(runtime_dir, id)?;
    Some(
        record.door.unwrap_or_else(|| runtime_dir.join("sessions").join(format!("{id}.call.sock"))),
    )
}

/// Serve shell calls at `path` (the session record's `door`) until `ended` is cancelled; a call
/// to `End` cancels it.
/// `last_call` is stamped (ms since the door opened) at each call, for an idle timeout.
pub async fn open_door(
    server: TabwireServer,
    path: PathBuf,
    ended: CancellationToken,
    last_call: Arc<AtomicU64>,
) -> anyhow::Result<()> {
    let listener = bind_private(&path)?;
    let client = Arc::new(in_process(server).await?);
    let opened = std::time::Instant::now();
    let _gone = RemoveOnDrop(path);
    tokio::select! {
        () = ended.cancelled() => {}
        () = accept(listener, client, ended.clone(), last_call, opened) => {}
    }
    Ok(())
}

async fn accept(
    listener: Listener,
    client: Arc<RunningService<RoleClient, ()>>,
    ended: CancellationToken,
    last_call: Arc<AtomicU64>,
    opened: std::time::Instant,
) {
    loop {
        let Ok(stream) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        // The directory is private, but this is a door to the user's browser: check.
        if let Err(e) = check_peer(&stream) {
            tracing::warn!("refused a shell call: {e}");
            continue;
        }
        let (client, ended, last_call) = (client.clone(), ended.clone(), last_call.clone());
        tokio::spawn(async move {
            let (reading, mut writing) = tokio::io::split(stream);
            let mut frame = Vec::new();
            let mut reading = tokio::io::BufReader::new(reading.take(MAX_REQUEST));
            let read = reading.read_until(b'\n', &mut frame);
            if tokio::time::timeout(Duration::from_secs(5), read).await.is_err() {
                return; // a request must come whole at once
            }
            last_call.store(opened.elapsed().as_millis() as u64, Ordering::Relaxed);
            let answer = match serde_json::from_slice::<DoorRequest>(&frame) {
                Err(e) => DoorAnswer::Error { code: -32600, message: format!("not a call: {e}") },
                Ok(DoorRequest::End) => {
                    ended.cancel();
                    DoorAnswer::Ended
                }
                Ok(DoorRequest::Call { tool, arguments }) => {
                    let mut params = CallToolRequestParams::new(tool);
                    if let Some(arguments) = arguments {
                        params = params.with_arguments(arguments);
                    }
                    match client.call_tool(params).await {
                        Ok(result) => DoorAnswer::Result(serde_json::to_value(result).unwrap()),
                        Err(rmcp::ServiceError::McpError(e)) => {
                            DoorAnswer::Error { code: e.code.0, message: e.message.to_string() }
                        }
                        Err(e) => DoorAnswer::Error { code: -32603, message: e.to_string() },
                    }
                }
            };
            let mut bytes = serde_json::to_vec(&answer).unwrap();
            bytes.push(b'\n');
            let _ = writing.write_all(&bytes).await;
            let _ = writing.shutdown().await;
        });
    }
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
