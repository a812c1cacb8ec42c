//! `tabwire install`, `tabwire uninstall` and the static part of `tabwire doctor`: register the
//! native-messaging host with every Chromium-family browser on the machine, remove exactly
//! that again, and check that it is all in place (specs/install.md). The `tabwire` binary wires
//! the `*Args` structs into its CLI and calls the `run_*` functions with an [`Env`], the
//! machine as these functions see it (tests pass a fake home). Where tabwire keeps its own files
//! is `tabwire_proto::dirs`, shared with the bridge.
//!
//! The modules are private and what others use is re-exported here, except three namespaces of
//! their own: [`extension`], the extension this binary carries (`extension::VERSION`,
//! `extension::unpack`); [`programs`], finding `claude` and other worker programs beyond `PATH`
//! (a browser started by macOS's launchd passes on no shell `PATH`); and [`wsl`], tabwire
//! inside WSL with the browser on Windows.

mod browsers;
mod claude;
mod doctor;
mod env;
mod error;
pub mod extension;
mod finding;
mod install;
mod keep;
mod locate;
mod manifest;
pub mod programs;
mod record;
mod registry;
pub mod skill;
mod targets;
mod uninstall;
pub mod wsl;
mod wsl_doctor;
mod wsl_install;

pub use browsers::{Browser, MANIFEST_FILE, Os};
pub use claude::{DEFAULT_WORKER, NPM_PACKAGE, Server};
pub use doctor::{DoctorArgs, Finding, all_ok, render, run_doctor, static_findings};
pub use env::{Env, is_executable};
pub use error::Error;
pub use install::{ExtensionChange, InstallArgs, InstallReport, install, run_install};
pub use keep::Kept;
pub use locate::{find_extension_dir, locate_host};
pub use manifest::{Change, HostManifest};
pub use record::Record;
pub use targets::{Resolved, Selection, Target, resolve as resolve_targets};
pub use uninstall::{UninstallArgs, UninstallReport, run_uninstall, uninstall};
