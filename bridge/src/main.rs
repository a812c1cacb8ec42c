//! `tabwire`: the CLI and the MCP server. This file parses the command line, sets up logging
//! and dispatches; each command lives in `cli/` (or `mcp/` for the server).

use clap::Parser;
use tabwire_bridge::cli::{self, Cli, Command};
use tabwire_bridge::core::Core;
use tabwire_bridge::mcp;
use tabwire_proto::runtime_dir;
use tracing_subscriber::EnvFilter;

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    // Logs go to stderr: for `tabwire mcp`, stdout is the MCP channel.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            EnvFilter::try_from_env("TABWIRE_LOG").unwrap_or_else(|_| EnvFilter::new("warn")),
        )
        .init();
    // One thread: an MCP session handles one client, and hopping threads costs more than it
    // gains on the small messages this carries (see /work/shared/notes/rmcp-3.9.md).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("cannot start the tokio runtime");
    let result = runtime.block_on(run(cli));
    // Do not wait for the thread blocked reading stdin (after SIGTERM it would never return).
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tabwire: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    // Set-up commands must work when the runtime dir is broken: diagnosing that is their job.
    match cli.command {
        Command::Install(args) => return cli::setup::install(&args),
        Command::Uninstall(args) => return cli::setup::uninstall(&args),
        Command::Extension(args) => return cli::extension::run(&args),
        Command::Doctor(args) => return cli::setup::doctor(&args).await,
        Command::Demo(args) => return tabwire_bridge::demo::run(args).await,
        Command::Wait(args) => return cli::wait::run(args).await,
        Command::Notify(args) => return cli::notify::run(args).await,
        Command::Workflow(args) => return cli::workflow::run(&args),
        Command::Serve(args) => return tabwire_bridge::serve::run(args).await,
        _ => {}
    }
    match cli.command {
        Command::Mcp(args) => mcp::serve(Core::start(args.attach.browser)?, args.page_tools).await,
        Command::Status { attach, json } => {
            cli::status::run(Core::probe_in(&runtime_dir::resolve(), attach.browser)?, json).await
        }
        Command::Sites(args) => {
            let core = Core::probe_in(&runtime_dir::resolve(), args.attach.browser.clone())?;
            cli::sites::run(core, args).await
        }
        _ => unreachable!("handled above"),
    }
}
