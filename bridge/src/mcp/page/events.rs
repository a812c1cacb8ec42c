//! wait_for_state_change: every event the pages pushed, at once, from this session's queue
//! (`tabwire_link::events`), so an event is returned once, to one waiter.

use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::mcp::reply::{Reply, ToolError};
use crate::mcp::server::TabwireServer;
use crate::mcp::waiting::{describe, seconds, unencodable};
use tabwire_link::events::SessionEvent;

const MAX_STATE_WAIT_SECS: u64 = tabwire_link::limits::MAX_WAIT_SECS;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WaitForStateChangeParams {
    /// Only this tab's events.
    #[serde(default)]
    pub tab_id: Option<i64>,
    /// Seconds to wait, at most 120.
    #[serde(default = "thirty_seconds")]
    pub timeout_secs: u64,
}

/// The page events taken from the queue.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StateChanges {
    /// Every page event that was queued, oldest first (possibly preceded by a `dropped` event).
    pub events: Vec<SessionEvent>,
    /// True when none came within the timeout.
    pub timed_out: bool,
}

fn thirty_seconds() -> u64 {
    30
}

#[tool_router(router = page_event_tools, vis = "pub(super)")]
impl TabwireServer {
    /// Wait until pages push events (tabwire.pushEvent) and return them all, oldest first, or
    /// `timed_out` after timeout_secs: how to follow what the user does in a page. get_state gives
    /// a page's current state.
    #[tool(
        output_schema = schema_for_output::<StateChanges>(),
        annotations(
            title = "Wait for page events",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn wait_for_state_change(
        &self,
        Parameters(p): Parameters<WaitForStateChangeParams>,
    ) -> Result<Reply<Value>, ToolError> {
        let timeout = seconds(p.timeout_secs, MAX_STATE_WAIT_SECS)?;
        // A cancelled call is dropped while it waits (`call_tool`), before it takes anything.
        let events = self.core.wait_page_events(p.tab_id, timeout).await?;
        // Nothing is taken for good before its answer is known to encode: else the events go
        // back to their places in the queue.
        let timed_out = events.is_empty();
        let encoded = match serde_json::to_value(&events) {
            Ok(encoded) => encoded,
            Err(e) => {
                self.core.queue().put_back(events);
                return Err(unencodable(e).into());
            }
        };
        self.core.tell_drained(&events).await;
        let text = match events.len() {
            0 => format!("no page event within {} s", p.timeout_secs),
            n => {
                let lines: Vec<String> = events.iter().map(describe).collect();
                format!("{n} page event{}:\n{}", if n == 1 { "" } else { "s" }, lines.join("\n"))
            }
        };
        Ok(Reply::new(text, serde_json::json!({ "events": encoded, "timed_out": timed_out })))
    }
}
