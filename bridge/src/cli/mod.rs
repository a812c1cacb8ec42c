//! The command line: one file per command. `main.rs` only parses and dispatches.

pub mod call;
pub mod extension;
pub mod notify;
pub mod serve;
pub mod setup;
pub mod sites;
pub mod status;
pub mod wait;
pub mod workflow;

use std::sync::LazyLock;

use clap::{Parser, Subcommand};

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

/// Which running browser to attach to. (`install` and `doctor` have a `--browser` of their own:
/// which browser *kinds* to set up or check.)
#[derive(Debug, Clone, clap::Args)]
pub struct Attach {
    /// Use only this browser: a host pid, a brand (chrome, edge, …) or a profile id, as
    /// `tabwire status` shows. Default: every browser running the tabwire extension.
    #[arg(long, env = "TABWIRE_BROWSER", value_name = "NAME|PID")]
    pub browser: Option<String>,
}

/// `tabwire mcp`.
#[derive(Debug, Clone, clap::Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub attach: Attach,
    /// Also offer each command a page declares (`tabwire.onCommand(type, fn, {description,
    /// params})`) as a tool of its own, named for its site (`<site>_<tag>_<app>__<command>`), and
    /// tell the client when they change.
    #[arg(long, env = "TABWIRE_PAGE_TOOLS", value_parser = clap::builder::BoolishValueParser::new())]
    pub page_tools: bool,
    #[command(flatten)]
    pub tools: Tools,
}

/// Which tools a server offers.
#[derive(Debug, Clone, clap::Args)]
pub struct Tools {
    /// The tool sets to offer, separated by commas: tabs, page (apps built for tabwire), dom
    /// (any page), sessions, workers, chat, workflows; `all`, or `default` (tabs,page,dom) with
    /// others (`default,workers`). Every tool offered is in each of the model's conversations.
    #[arg(long = "tools", env = "TABWIRE_TOOLS", value_name = "SETS",
          default_value = crate::mcp::sets::DEFAULT)]
    set: crate::mcp::sets::ToolSet,
    /// Also give each tool's output schema in tools/list, for clients that check results
    /// against it (no model reads them; 16 KB more for the default sets).
    #[arg(long, env = "TABWIRE_OUTPUT_SCHEMAS", value_parser = clap::builder::BoolishValueParser::new())]
    output_schemas: bool,
}

impl Tools {
    /// The tool sets and what their listing gives.
    pub fn set(&self) -> crate::mcp::sets::ToolSet {
        self.set.clone().with_output_schemas(self.output_schemas)
    }
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
    Serve(serve::ServeArgs),
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
