//! `tabwire serve --http [ADDR]`: the MCP server for clients that speak only HTTP (the server
//! itself is `crate::serve`).

use super::Attach;
use crate::serve::limits;
use crate::serve::listen::DEFAULT_ADDR;

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Serve MCP over streamable HTTP at http://ADDR/mcp. ADDR must be a loopback address
    /// (127.0.0.1:PORT, [::1]:PORT, localhost:PORT); port 0 picks a free one.
    #[arg(
        long,
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = DEFAULT_ADDR,
        required = true
    )]
    pub http: Option<String>,
    /// The most MCP sessions served at once; one more client is refused until one ends.
    #[arg(long, value_name = "N", default_value_t = limits::MAX_SESSIONS,
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub max_sessions: u16,
    /// End a session after this many seconds without a message from its client or to it (its
    /// workers get SIGTERM, its record goes). Keep it above 130: a quiet wait_for_event can
    /// block for 120 s.
    #[arg(long, value_name = "SECS", default_value_t = limits::IDLE_TIMEOUT.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_timeout: u64,
    #[command(flatten)]
    pub attach: Attach,
    #[command(flatten)]
    pub tools: super::Tools,
}
