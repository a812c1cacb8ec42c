//! `tabwire mcp` driven by an rmcp client that declares MCP elicitation, as Claude Code does:
//! it records every question the server asks the user and gives the answer the test chose
//! (accept, decline, cancel), so a test can check what the user would be shown. Over HTTP
//! (`tabwire serve`) when the test run is (`TABWIRE_TEST_MCP=http`).

use std::path::Path;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, ErrorData, ProtocolVersion,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::bins;
use crate::serve::Serve;

/// The client side: answers every elicitation with `answer`, recording its message.
pub struct Asker {
    answer: Arc<Mutex<ElicitationAction>>,
    asked: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Asker {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.capabilities.elicitation = Some(ElicitationCapability::new());
        // The revisions clients speak today, whose servers may ask the user mid-call.
        info.protocol_version = ProtocolVersion::V_2025_11_25;
        info
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let message = match request {
            ElicitRequestParams::FormElicitationParams { message, .. } => message,
            ElicitRequestParams::UrlElicitationParams { message, .. } => message,
            _ => String::new(),
        };
        self.asked.lock().unwrap().push(message);
        let answer = self.answer.lock().unwrap().clone();
        Ok(match answer {
            ElicitationAction::Accept => ElicitResult::new(answer).with_content(json!({})),
            _ => ElicitResult::new(answer),
        })
    }
}

/// A `tabwire mcp` child whose client answers questions to the user.
pub struct ElicitMcp {
    pub client: RunningService<RoleClient, Asker>,
    answer: Arc<Mutex<ElicitationAction>>,
    asked: Arc<Mutex<Vec<String>>>,
    /// Over HTTP: the server of this session alone, kept running while it is used.
    _serve: Option<Arc<Serve>>,
}

impl ElicitMcp {
    /// Start `tabwire mcp` with extra environment, answering `answer` until told otherwise.
    pub async fn start_with(
        runtime_dir: &Path,
        env: &[(&str, &Path)],
        answer: ElicitationAction,
    ) -> ElicitMcp {
        let answer = Arc::new(Mutex::new(answer));
        let asked = Arc::<Mutex<Vec<String>>>::default();
        let asker = Asker { answer: answer.clone(), asked: asked.clone() };
        if crate::serve::http_wanted() {
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (*k, v.to_str().expect("a UTF-8 value"))).collect();
            let serve = Arc::new(Serve::start_with(runtime_dir, &[], &env));
            let client = serve.client(asker).await;
            return ElicitMcp { client, answer, asked, _serve: Some(serve) };
        }
        let mut cmd = tokio::process::Command::new(bins::bin("tabwire"));
        cmd.arg("mcp")
            .env("TABWIRE_RUNTIME_DIR", runtime_dir)
            .env("TABWIRE_TOOLS", "all") // every tool set, as crate::Mcp has
            .env("TABWIRE_OUTPUT_SCHEMAS", "1") // and their output schemas, which the tests check
            .env_remove("TABWIRE_SESSION_ID")
            .env_remove("TABWIRE_BROWSER");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let transport = TokioChildProcess::new(cmd).expect("spawn tabwire mcp");
        let client = asker.serve(transport).await.expect("MCP handshake with tabwire mcp");
        ElicitMcp { client, answer, asked, _serve: None }
    }

    /// What the client answers from now on.
    pub fn answer(&self, action: ElicitationAction) {
        *self.answer.lock().unwrap() = action;
    }

    /// The questions asked so far, taken.
    pub fn asked(&self) -> Vec<String> {
        std::mem::take(&mut *self.asked.lock().unwrap())
    }

    /// Call a tool; the raw result (errors included).
    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        self.client.call_tool(params).await.unwrap_or_else(|e| panic!("{tool}: MCP error {e}"))
    }
}
