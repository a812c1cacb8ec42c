//! A throwaway machine for the tests: a home, a bin folder with `tabwire` and `tabwire-host`,
//! a config and a runtime folder, all under one temporary directory, passed to the crate as
//! an `Env` (the process environment is never touched).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use clap::Parser;
use tabwire_install::{DoctorArgs, Env, InstallArgs, Os, UninstallArgs};

pub struct World {
    pub dir: tempfile::TempDir,
    pub env: Env,
}

impl World {
    pub fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let home = root.join("home");
        fs::create_dir_all(&home).unwrap();
        let bin = root.join("bin");
        fs::create_dir_all(&bin).unwrap();
        write_exe(&bin.join("tabwire"), "#!/bin/sh\n");
        write_exe(&bin.join("tabwire-host"), "#!/bin/sh\n");
        let env = Env {
            os: Os::Linux,
            home: home.clone(),
            xdg_config_home: None,
            path: vec![],
            config_dir: home.join(".config").join("tabwire"),
            data_dir: home.join(".local").join("share").join("tabwire"),
            runtime_dir: root.join("run").join("tabwire"),
            runtime_dir_note: None,
            current_exe: bin.join("tabwire"),
            extension_dir: None,
            wsl: None,
            npx: false,
            claude_config_dir: None,
        };
        World { dir, env }
    }

    pub fn root(&self) -> PathBuf {
        self.env.home.parent().unwrap().to_path_buf()
    }

    pub fn host(&self) -> PathBuf {
        self.root().join("bin").join("tabwire-host")
    }

    /// Every file and folder under the temporary root, with file contents.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
        let mut out = BTreeMap::new();
        walk(&self.root(), &mut out);
        out
    }

    /// Run `tabwire install ARGS`; returns what it printed.
    pub fn install(&self, args: &[&str]) -> Result<String, tabwire_install::Error> {
        let mut out = Vec::new();
        tabwire_install::run_install(&install_args(args), &self.env, &mut out)?;
        Ok(String::from_utf8(out).unwrap())
    }

    pub fn uninstall(&self, args: &[&str]) -> String {
        let mut out = Vec::new();
        tabwire_install::run_uninstall(&parse::<UninstallArgs>(args), &self.env, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Run `tabwire doctor ARGS`; returns (all ok, what it printed).
    pub fn doctor(&self, args: &[&str]) -> (bool, String) {
        let mut out = Vec::new();
        let ok =
            tabwire_install::run_doctor(&parse::<DoctorArgs>(args), &self.env, &mut out).unwrap();
        (ok, String::from_utf8(out).unwrap())
    }
}

pub fn install_args(args: &[&str]) -> InstallArgs {
    parse::<InstallArgs>(args)
}

/// Parse `args` the way the `tabwire` CLI will: the struct flattened into a command.
pub fn parse<A: clap::Args + clap::FromArgMatches>(args: &[&str]) -> A {
    #[derive(Parser)]
    struct Cli<A: clap::Args> {
        #[command(flatten)]
        inner: A,
    }
    Cli::<A>::try_parse_from(std::iter::once("tabwire").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("{e}"))
        .inner
}

pub fn write_exe(path: &Path, text: &str) {
    fs::write(path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    }
}

fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, Option<Vec<u8>>>) {
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.insert(path.clone(), None);
            walk(&path, out);
        } else {
            out.insert(path.clone(), Some(fs::read(&path).unwrap_or_default()));
        }
    }
}
