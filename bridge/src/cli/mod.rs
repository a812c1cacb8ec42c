//! The command line: one file per command. `main.rs` only parses and dispatches. The arguments
//! of the servers live with them (`mcp::McpArgs`, `serve::ServeArgs`), and `--browser` in
//! `attach.rs`: this module sits on top and imports them.

pub mod call;
pub mod extension;
pub mod notify;
pub mod setup;
pub mod sites;
pub mod status;
pub mod wait;
pub mod workflow;

use std::sync::LazyLock;

use clap::{Parser, Subcommand};

use crate::attach::Attach;
use crate::mcp::McpArgs;
use crate::serve::ServeArgs;

/// Which build this is: `tabwire --version` prints it, e.g. `tabwire 0.1.0 (commit 0123456789ab,
/// extension build 0123456789abcdef)` — the extension's build id is the one `build.json` and
/// `doctor` show.
pub static VERSION: LazyLock<String> = LazyLock::new(|| {
    format!(
        "{} (commit {}, extension build {})",
        env!("CARGO_PKG_VERSION"),
        env!("TABWIRE_COMMIT"),
        tabwire_install::extension::BUILD_ID
    )
});

/// tabwire lets an AI assistant work with your own, logged-in browser.
#[derive(Debug, Parser)]
#[command(name = "tabwire", version = VERSION.as_str(), about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the MCP server on stdin/stdout (what an MCP client starts).
    Mcp(McpArgs),
    /// Run one tool and print what the model would read: `tabwire call <tool> --key value`
    /// (`tabwire call --help` lists the tools). Exit 0 ok, 1 failed, 2 refused.
    Call(call::CallArgs),
    /// Serve MCP over streamable HTTP on loopback, one session per client (for clients that
    /// speak only HTTP). Prints the URL and the bearer token every request needs.
    Serve(ServeArgs),
    /// Show the attached browsers, their tab counts and the runtime directory.
    Status {
        #[command(flatten)]
        attach: Attach,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show or change the sites tabwire may work on (only you can: no assistant tool can).
    Sites(sites::SitesArgs),
    /// Write the native-host manifest for the browsers on this machine (or the ones you name),
    /// so that the extension can start `tabwire-host`.
    Install(tabwire_install::InstallArgs),
    /// Where the extension to load is (`path`), or write it anywhere (`unpack DIR`).
    Extension(extension::ExtensionArgs),
    /// Remove exactly what `tabwire install` wrote.
    Uninstall(tabwire_install::UninstallArgs),
    /// Check every link from the browser to this program, and print how to fix what is broken.
    Doctor(tabwire_install::DoctorArgs),
    /// Print a session's page events as they come, one JSON line each (for scripts).
    Wait(wait::WaitArgs),
    /// Tell a session that a worker finished (for hooks; the twin of notify_completion).
    Notify(notify::NotifyArgs),
    /// Where a workflow session stands (`show`): its state, next skill, items and batches.
    Workflow(workflow::WorkflowArgs),
    /// Start headless Chromium with the extension and a demo page, and drive it through a real
    /// MCP session, printing each step with its latency.
    Demo(crate::demo::DemoArgs),
}
