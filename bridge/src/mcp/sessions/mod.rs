//! The `sessions` family: one assistant session talks with others (`messages.rs`) and takes
//! its own next event (`events.rs`, which the `workers` family serves too).

mod events;
mod messages;

use crate::mcp::family::Family;
use crate::mcp::server::TabwireServer;

pub const FAMILY: Family = Family {
    name: "sessions",
    instructions: "\
Sessions: get_session, notify_completion, post_message, ask_question and answer_question talk \
with other assistant sessions; wait_for_event returns this session's next event.",
    router: || TabwireServer::session_tools() + TabwireServer::event_tools(),
};
