//! What a tool family is: each family's folder declares one in its `mod.rs` (`tabs/mod.rs`,
//! `dom/mod.rs`, …), and `families.rs` lists them.

use rmcp::handler::server::router::tool::ToolRouter;

use super::server::TabwireServer;

/// One family: its name on the command line, its line in the server's instructions, and its
/// tools. Its tools' names are its router's, so a tool added to a router is served in its
/// family.
pub struct Family {
    pub name: &'static str,
    /// Said after the server's instructions when the family is served (`handler.rs`).
    pub instructions: &'static str,
    /// The family's tools. A tool may be in two routers (wait_for_event: sessions and workers).
    pub router: fn() -> ToolRouter<TabwireServer>,
}
