//! The ask_user tool: hand a tab over to the user for what only they may do (sign in, a
//! CAPTCHA, a payment), the one call that brings a tab to the front.

use std::time::Duration;

use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use tabwire_proto::wire::code;

use crate::mcp::params::Target;
use crate::mcp::reply::{Reply, ToolError};
use crate::mcp::server::TabwireServer;
use tabwire_link::error::CallError;
use tabwire_link::methods::{HandedBack, HandoverArgs, HandoverAsk};

/// The longest `timeout_secs`: 30 minutes.
const MAX_TIMEOUT_SECS: u64 = 1800;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AskUserParams {
    pub tab_id: i64,
    /// What the user should do there (≤ 500 characters), e.g. "Sign in, then press Done".
    pub message: String,
    /// Seconds to wait (10 … 1800; default 300).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    #[serde(flatten)]
    pub target: Target,
}

#[tool_router(router = handover_tools, vis = "pub(super)")]
impl TabwireServer {
    /// Hand a tab to the user for what only they may do (sign-in, CAPTCHA, 2FA, payment): shows
    /// your message and returns when they press Done or Cancel in tabwire's popup. Meanwhile
    /// read_page, click and the rest fail on that tab.
    #[tool(
        output_schema = schema_for_output::<HandedBack>(),
        annotations(
            title = "Ask the user to act in a tab",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn ask_user(
        &self,
        Parameters(p): Parameters<AskUserParams>,
    ) -> Result<Reply<HandedBack>, ToolError> {
        let secs = p.timeout_secs.unwrap_or(300);
        if !(10..=MAX_TIMEOUT_SECS).contains(&secs) {
            return Err(CallError::new(
                code::BAD_REQUEST,
                format!("timeout_secs must be from 10 to {MAX_TIMEOUT_SECS}; got {secs}"),
            )
            .into());
        }
        let args = HandoverArgs { tab_id: p.tab_id, message: p.message, timeout_ms: secs * 1000 };
        let browser = p.target.browser.as_deref();
        let within = Duration::from_secs(secs + 5);
        let mut got = self.core.invoke_within::<HandoverAsk>(browser, &args, within).await?;
        got.tab_id = p.tab_id;
        let now = match (&got.origin, &got.title) {
            (Some(o), Some(t)) => format!("; the tab shows {o}, titled {t:?} (the page's words)"),
            (Some(o), None) => format!("; the tab shows {o}"),
            _ => String::new(),
        };
        let text = match got.answer.as_str() {
            "done" => format!("the user pressed Done in tab {}{now}", p.tab_id),
            "cancel" => {
                format!("the user pressed Cancel in tab {}: do not retry the step{now}", p.tab_id)
            }
            "timeout" => format!("the user did not answer within {secs} s (tab {}){now}", p.tab_id),
            other => format!("the hand-over of tab {} ended: {other}{now}", p.tab_id),
        };
        Ok(Reply::new(text, got))
    }
}
