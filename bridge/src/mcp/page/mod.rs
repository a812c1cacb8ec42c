//! The `page` family: pages built for tabwire (`window.tabwire`, `specs/page-sdk.md`): their
//! state and commands (`state.rs`), the commands they declared, also as tools of their own with
//! `--page-tools` (`commands.rs`), and the events they push (`events.rs`). In the default set.

mod commands;
mod events;
mod state;

pub(super) use commands::announce_changes;
pub use state::PageState;

use crate::mcp::family::Family;
use crate::mcp::server::TabwireServer;

pub const FAMILY: Family = Family {
    name: "page",
    instructions: "\
Pages built for tabwire (window.tabwire): get_state reads a page's state, list_commands shows \
the commands it declared and their parameters, send_command runs one (always name its tab_id), \
and wait_for_state_change returns what the user did in pages since you last looked. With \
--page-tools each declared command is also a tool `<site>_<tag>_<app>__<command>`, named for \
its origin, whose description ends with the page's words.",
    router: || {
        TabwireServer::page_tools()
            + TabwireServer::command_tools()
            + TabwireServer::page_event_tools()
    },
};
