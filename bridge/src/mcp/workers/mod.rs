//! The `workers` family: a lead starts, follows and stops worker processes (`lead.rs`), and
//! hears each end with wait_for_event, which is the `sessions` family's tool
//! (`sessions/events.rs`) served here too.

mod lead;

use crate::mcp::family::Family;
use crate::mcp::server::TabwireServer;

pub const FAMILY: Family = Family {
    name: "workers",
    instructions: "\
Workers: spawn_worker starts one (by default `claude -p PROMPT`) and returns at once; \
wait_for_event returns its worker_complete (status, changed files, last output) as it ends; \
list_workers and stop_worker follow and stop them; running ones get SIGTERM when this session \
ends.",
    router: || TabwireServer::worker_tools() + TabwireServer::event_tools(),
};
