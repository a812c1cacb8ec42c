//! The tabwire front: what composes the bridge's crates into the `tabwire` program. MCP tools
//! (`mcp/`), the HTTP server (`serve/`), the CLI (`cli/`, on top of them all), `doctor` and the
//! demo; `attach.rs` is the `--browser` they share.
//!
//! Below it, each in a crate of its own and importing only downwards: `tabwire-workflows`,
//! `tabwire-workers`, `tabwire-operations`, `tabwire-session`, and under them all
//! `tabwire-link` (the browsers, the wire methods, the inbox) over `tabwire-proto`.

pub mod attach;
pub mod cli;
pub mod demo;
mod doctor;
pub mod mcp;
pub mod serve;
