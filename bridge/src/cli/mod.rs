//! The command line: one file per command. `main.rs` only parses and dispatches.

pub mod status;

use clap::{Parser, Subcommand};

/// tabwire lets an AI assistant work with your own, logged-in browser.
#[derive(Debug, Parser)]
#[command(name = "tabwire", version, about)]
pub struct Cli {
    /// Use only this browser: a host pid, a brand (chrome, edge, …) or a profile id, as
    /// `tabwire status` shows. Default: every browser running the tabwire extension.
    #[arg(long, global = true, env = "TABWIRE_BROWSER", value_name = "NAME|PID")]
    pub browser: Option<String>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the MCP server on stdin/stdout (what an MCP client starts).
    Mcp,
    /// Show the attached browsers, their tab counts and the runtime directory.
    Status {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}
