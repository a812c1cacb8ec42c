//! `tabwire mcp` driven by an rmcp client that records every progress notification, with the
//! wall-clock time it arrived — for the operations tests and the milestone-latency benchmark.
//! Also knows the child's pid, so a test can kill the bridge mid-operation.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest,
    ProgressNotificationParam, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestHandle, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::bins;
use crate::serve::Serve;

/// One progress notification as the client received it.
#[derive(Debug, Clone)]
pub struct Received {
    pub param: ProgressNotificationParam,
    /// Wall-clock arrival, in ms since the Unix epoch (fractional).
    pub at_ms: f64,
}

/// The client side: records progress notifications into a channel, synchronously. rmcp runs
/// each notification callback on a task of its own: on a multi-thread runtime two of them may
/// run in either order, so a test of the order runs its client on a current-thread runtime.
pub struct Recorder {
    tx: mpsc::UnboundedSender<Received>,
}

impl ClientHandler for Recorder {
    fn on_progress(
        &self,
        param: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        let _ = self.tx.send(Received { param, at_ms: now_ms() });
        std::future::ready(())
    }
}

/// A `tabwire mcp` child with a recording client.
pub struct ProgressMcp {
    pub client: RunningService<RoleClient, Recorder>,
    pub progress: mpsc::UnboundedReceiver<Received>,
    /// The child's pid (`tabwire mcp`, or over HTTP the `tabwire serve` that holds the session).
    pub pid: u32,
    /// Over HTTP (`TABWIRE_TEST_MCP=http`): the server of this session alone.
    pub serve: Option<Arc<Serve>>,
}

impl ProgressMcp {
    pub async fn start_with(runtime_dir: &Path, env: &[(&str, &std::ffi::OsStr)]) -> ProgressMcp {
        if crate::serve::http_wanted() {
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (*k, v.to_str().expect("a UTF-8 value"))).collect();
            let serve = Arc::new(Serve::start_with(runtime_dir, &[], &env));
            let (tx, progress) = mpsc::unbounded_channel();
            let client = serve.client(Recorder { tx }).await;
            return ProgressMcp { client, progress, pid: serve.pid(), serve: Some(serve) };
        }
        let mut cmd = tokio::process::Command::new(bins::bin("tabwire"));
        cmd.arg("mcp").env("TABWIRE_RUNTIME_DIR", runtime_dir).env("TABWIRE_TOOLS", "all");
        cmd.env("TABWIRE_OUTPUT_SCHEMAS", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let transport = TokioChildProcess::new(cmd).expect("spawn tabwire mcp");
        let pid = transport.id().expect("the child's pid");
        let (tx, progress) = mpsc::unbounded_channel();
        let client = Recorder { tx }.serve(transport).await.expect("MCP handshake");
        ProgressMcp { client, progress, pid, serve: None }
    }

    /// Start a tool call; the handle carries the progressToken the client chose.
    pub async fn start_call(&self, tool: &str, args: Value) -> RequestHandle<RoleClient> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        self.client
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .unwrap_or_else(|e| panic!("{tool}: cannot send: {e}"))
    }

    /// Call a tool; the raw result.
    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        let handle = self.start_call(tool, args).await;
        result(handle.await_response().await.unwrap_or_else(|e| panic!("{tool}: MCP error {e}")))
    }

    /// Call a tool that must succeed; its structured content.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let r = self.call(tool, args).await;
        assert_ne!(r.is_error, Some(true), "{tool} failed: {}", crate::mcp::text(&r));
        r.structured_content.expect("structured content")
    }

    /// Call a tool that must fail; its error text.
    pub async fn err(&self, tool: &str, args: Value) -> String {
        let r = self.call(tool, args).await;
        assert_eq!(r.is_error, Some(true), "{tool} should have failed: {r:?}");
        crate::mcp::text(&r)
    }

    /// The next progress notification, or a panic after `within`.
    pub async fn next_progress(&mut self, within: Duration) -> Received {
        tokio::time::timeout(within, self.progress.recv())
            .await
            .expect("no progress notification in time")
            .expect("the client is gone")
    }

    /// Kill the child at once, as a crash would ([`crate::process::kill`]).
    pub fn kill(&self) {
        if let Some(serve) = &self.serve {
            return serve.kill();
        }
        let _ = crate::process::kill(self.pid);
    }
}

/// The tool result in a response.
pub fn result(response: ServerResult) -> CallToolResult {
    match response {
        ServerResult::CallToolResult(r) => r,
        other => panic!("not a tool result: {other:?}"),
    }
}

pub fn now_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64() * 1000.0
}
