//! The installer's tests, one binary (as ripgrep's `tests/tests.rs`): install, doctor and
//! uninstall against temporary machines, WSL, and the Windows registry under Wine.

mod common;
mod doctor;
mod forged_record;
mod install;
mod windows_registry;
mod wsl;
