//! The tabwire bridge: attaches to the browsers' hosts and offers them to MCP clients and the
//! CLI. [`core::Core`] is the one entry point; `mcp` and `cli` are thin layers over it.

pub mod browser;
pub mod cli;
pub mod commands;
pub mod core;
pub mod demo;
pub mod dirs;
pub mod doctor;
pub mod error;
pub mod events;
mod inbox;
pub mod limits;
pub mod mcp;
pub mod methods;
pub mod operations;
pub mod page;
pub mod serve;
pub mod session;
pub mod state_cache;
pub mod workers;
pub mod workflows;
