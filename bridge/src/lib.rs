//! The tabwire bridge: attaches to the browsers' hosts and offers them to MCP clients and the
//! CLI. [`core::Core`] is the one entry point; `mcp` and `cli` are thin layers over it.
//!
//! Public are the modules the `tabwire` binary, the cross-process tests and the fuzz targets
//! use (`cli`, `core`, `demo`, `events`, `mcp`, `methods`, `operations`, `serve`, `session`);
//! the rest is how those work and stays inside the crate.

mod browser;
pub mod cli;
mod commands;
pub mod core;
pub mod demo;
mod dirs;
mod doctor;
mod door;
mod error;
pub mod events;
mod inbox;
mod limits;
pub mod mcp;
pub mod methods;
pub mod operations;
mod page;
mod self_reports;
pub mod serve;
pub mod session;
mod state_cache;
mod workers;
mod workflows;
