//! The JavaScript side of MCP: the official TypeScript SDK client and Ajv (a strict JSON Schema
//! validator), from npm at the versions `testkit/js/package.json` pins, installed once into the
//! target dir, with `testkit/js/tools-list.mjs` beside them (the schema check and the
//! `tools/list` benchmark).

use std::path::PathBuf;
use std::process::{Command, Output};

use crate::{bins, npm};

/// Install (once) and return the directory that holds `node_modules` and `tools-list.mjs`.
/// Panics saying why if npm cannot install them.
pub fn tools_dir() -> PathBuf {
    let target = bins::bin("tabwire").parent().unwrap().to_owned();
    let dir = target.join("js-tools");
    let source = bins::repo_root().join("testkit/js");
    let _lock = npm::lock(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = std::fs::read(source.join("package.json")).unwrap();
    let installed = std::fs::read(dir.join("package.json")).ok();
    if installed.as_ref() != Some(&manifest) || !dir.join("node_modules/ajv").exists() {
        std::fs::write(dir.join("package.json"), &manifest).unwrap();
        npm::install(&dir, &[], &[]).unwrap_or_else(|e| panic!("{e}"));
    }
    for script in ["tools-list.mjs", "floor-server.mjs"] {
        std::fs::copy(source.join(script), dir.join(script)).unwrap();
    }
    dir
}

/// `node tools-list.mjs MODE ARGS… -- SERVER…`, with `env`.
pub fn tools_list(mode: &[&str], server: &[&str], env: &[(&str, &std::path::Path)]) -> Output {
    let dir = tools_dir();
    let mut cmd = Command::new("node");
    cmd.arg("tools-list.mjs").args(mode).arg("--").args(server).current_dir(&dir);
    cmd.env_remove("TABWIRE_SESSION_ID");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run node")
}
