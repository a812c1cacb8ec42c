//! `tabwire`: the CLI and the MCP server. `main` parses the command line, sets up logging and
//! the runtime, and prints the error if there is one, once; [`run`] dispatches to the command
//! (each lives in `cli/`, or `mcp/` and `serve/` for the long-running servers) and says how the
//! process exits.

use std::process::ExitCode;

use clap::Parser;
use tabwire_bridge::cli::{self, Cli, Command};
use tabwire_bridge::{mcp, serve};
use tabwire_link::core::Core;
use tabwire_proto::{Shutdown, runtime_dir};
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Logs go to stderr: for `tabwire mcp`, stdout is the MCP channel.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            EnvFilter::try_from_env("TABWIRE_LOG").unwrap_or_else(|_| EnvFilter::new("warn")),
        )
        .init();
    // One thread: an MCP session handles one client, and hopping threads costs more than it
    // gains on the small messages this carries.
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("tabwire: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(run(cli));
    // Do not wait for the thread blocked reading stdin (after SIGTERM it would never return).
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("tabwire: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Run one command. An error is for `main` to print; a command that ran but found something
/// wrong (`doctor`) says so with its exit code.
async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    // Set-up commands must work when the runtime dir is broken: diagnosing that is their job.
    match cli.command {
        Command::Install(args) => cli::setup::install(&args)?,
        Command::Uninstall(args) => cli::setup::uninstall(&args)?,
        Command::Extension(args) => cli::extension::run(&args)?,
        Command::Doctor(args) => return cli::setup::doctor(&args).await,
        Command::Demo(args) => tabwire_bridge::demo::run(args).await?,
        Command::Wait(args) => cli::wait::run(args).await?,
        Command::Notify(args) => cli::notify::run(args).await?,
        Command::Workflow(args) => cli::workflow::run(&args)?,
        // The servers end gracefully on SIGTERM and SIGINT, caught before they write a file.
        Command::Mcp(args) => mcp::run(&args, Shutdown::on_signals()?).await?,
        Command::Call(args) => return cli::call::run(args).await,
        Command::Serve(args) => serve::run(args, Shutdown::on_signals()?).await?,
        Command::Status { attach, json } => {
            let core = Core::probe_in(&runtime_dir::resolve(), attach.browser)?;
            cli::status::run(core, json).await?
        }
        Command::Sites(args) => {
            let core = Core::probe_in(&runtime_dir::resolve(), args.attach.browser.clone())?;
            cli::sites::run(core, args).await?
        }
    }
    Ok(ExitCode::SUCCESS)
}
