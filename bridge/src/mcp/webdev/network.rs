//! The `network_rules` tool: block a tab's fetch and XHR to allowed sites, or answer them with
//! a given body, in the page itself (`extension/worker/network.js`; no debugger, no browser-wide
//! permission). The rules are this MCP session's: it alone lists and removes them, and they go
//! when it ends — while it has rules it holds a `webdev.network_hold` call open in that browser,
//! which the host cancels when the session's connection closes, and the extension then removes
//! them ([`Holds`]).

use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::mcp::params::Target;
use crate::mcp::reply::{Reply, ToolError};
use crate::mcp::server::{Holds, TabwireServer};
use tabwire_link::browser::Connection;
use tabwire_link::methods::{
    HoldArgs, Method as _, NetworkRuleArgs, NetworkRules, WebdevNetwork, WebdevNetworkHold,
    invoke_on,
};

/// How long one hold lasts; the extension answers it ≈ 20 s before, and the next one follows.
const HOLD: Duration = Duration::from_secs(600);

impl Holds {
    pub fn new(closing: CancellationToken) -> Self {
        Holds { key: uuid::Uuid::new_v4().to_string(), held: Arc::default(), closing }
    }

    /// Keep a hold open in `conn`'s browser from now until the session ends (or the browser goes,
    /// or Stop ends it: the rules are gone then, and the next rule starts a new hold).
    fn keep(&self, conn: Arc<Connection>) {
        let browser = conn.info().key();
        if !self.held.lock().expect("holds poisoned").insert(browser.clone()) {
            return;
        }
        let (held, closing) = (self.held.clone(), self.closing.clone());
        let args = HoldArgs { session: self.key.clone() };
        tokio::spawn(async move {
            loop {
                // Dropping the call (the session closing) cancels it in the browser.
                let ended = tokio::select! {
                    r = invoke_on::<WebdevNetworkHold>(&conn, &args, HOLD) => r.0,
                    () = closing.cancelled() => break,
                    () = conn.closed() => break,
                };
                if ended.is_err() {
                    break;
                }
            }
            held.lock().expect("holds poisoned").remove(&browser);
        });
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct NetworkParams {
    /// block, mock, offline, online, list or remove.
    pub action: String,
    /// block, mock, offline, online: the tab; list, remove: only its rules.
    #[serde(default)]
    pub tab_id: Option<i64>,
    /// block, mock: the URLs, starting with an allowed origin and `/`; `*` is any characters
    /// (`http://localhost:5173/api/*`).
    #[serde(default)]
    pub url_pattern: Option<String>,
    /// mock: the body the page gets.
    #[serde(default)]
    pub body: Option<String>,
    /// mock: its Content-Type (default application/json).
    #[serde(default)]
    pub content_type: Option<String>,
    /// remove: which rule (else all of this session's).
    #[serde(default)]
    pub rule_id: Option<i64>,
    #[serde(default)]
    pub expected_origin: Option<String>,
    #[serde(flatten)]
    pub target: Target,
}

#[tool_router(router = network_tools, vis = "pub(super)")]
impl TabwireServer {
    /// Block a tab's fetch/XHR to an allowed site, answer them with your body (status 200 and
    /// your Content-Type only), or take the tab's origin offline; list and remove this session's
    /// rules, which go when it ends. navigate applies them from the page's first request, and
    /// page_timing shows how it then loads.
    #[tool(
        output_schema = schema_for_output::<NetworkRules>(),
        annotations(
            title = "Block or mock a tab's requests",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn network_rules(
        &self,
        Parameters(p): Parameters<NetworkParams>,
    ) -> Result<Reply<NetworkRules>, ToolError> {
        let conn = self.core.pick(p.target.browser.as_deref()).await?;
        let makes = matches!(p.action.as_str(), "block" | "mock" | "offline");
        if makes {
            self.holds.keep(conn.clone());
        }
        let args = NetworkRuleArgs {
            session: self.holds.key.clone(),
            action: p.action.clone(),
            tab_id: p.tab_id,
            url_pattern: p.url_pattern,
            body: p.body,
            content_type: p.content_type,
            rule_id: p.rule_id,
            expected_origin: p.expected_origin,
        };
        let mut got = invoke_on::<WebdevNetwork>(&conn, &args, WebdevNetwork::TIMEOUT).await.0?;
        got.action = p.action;
        let list = |rules: &[tabwire_link::methods::NetworkRule]| {
            rules
                .iter()
                .map(|r| {
                    format!("rule {}: {} {} (tab {})", r.id, r.action, r.url_pattern, r.tab_id)
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        let text = match (got.action.as_str(), got.removed) {
            (_, Some(n)) => format!(
                "removed {n} rule(s); this session has {} left{}{}",
                got.rules.len(),
                if got.rules.is_empty() { "" } else { ": " },
                list(&got.rules)
            ),
            ("list", None) if got.rules.is_empty() => "this session has no network rules".into(),
            ("list", None) => format!("this session's network rules: {}", list(&got.rules)),
            _ => format!(
                "{} — it lasts until removed (network_rules action remove), the tab closes or \
                 this session ends",
                list(&got.rules)
            ),
        };
        Ok(Reply::new(text, got))
    }
}
