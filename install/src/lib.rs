//! `tabwire install`, `tabwire uninstall` and the static part of `tabwire doctor`: register the
//! native-messaging host with every Chromium-family browser on the machine, remove exactly
//! that again, and check that it is all in place. The `tabwire` binary wires the `*Args`
//! structs into its CLI and calls the `run_*` functions; see specs/install.md.

pub mod browsers;
pub mod claude;
pub mod doctor;
pub mod env;
pub mod error;
pub mod extension;
pub mod install;
pub mod locate;
pub mod manifest;
pub mod record;
mod registry;
pub mod targets;
pub mod uninstall;

pub use browsers::{Browser, Os};
pub use doctor::{DoctorArgs, Finding, all_ok, render, run_doctor, static_findings};
pub use env::Env;
pub use error::Error;
pub use install::{InstallArgs, InstallReport, install, run_install};
pub use targets::Selection;
pub use uninstall::{UninstallArgs, UninstallReport, run_uninstall, uninstall};
