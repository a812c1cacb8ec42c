//! `tabwire install`, `uninstall` and `doctor`: the browser table, the manifests and the static
//! checks live in the `tabwire-install` crate; this file connects them to the terminal and adds
//! what only a running bridge can check (a ping through each live browser).

use std::process::ExitCode;

use anyhow::Result;
use tabwire_install::{DoctorArgs, Env, InstallArgs, UninstallArgs};

pub fn install(args: &InstallArgs) -> Result<()> {
    let env = Env::from_process()?;
    tabwire_install::run_install(args, &env, &mut std::io::stdout())?;
    Ok(())
}

pub fn uninstall(args: &UninstallArgs) -> Result<()> {
    let env = Env::from_process()?;
    tabwire_install::run_uninstall(args, &env, &mut std::io::stdout())?;
    Ok(())
}

/// Exits 1 when a check failed: the report, with the fix for each, is already on stdout.
pub async fn doctor(args: &DoctorArgs) -> Result<ExitCode> {
    let env = Env::from_process()?;
    let findings = crate::doctor::findings(None, args, &env).await?;
    tabwire_install::render(&findings, args.json, &mut std::io::stdout())?;
    let healthy = tabwire_install::all_ok(&findings);
    Ok(if healthy { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
