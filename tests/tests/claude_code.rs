//! The real Claude Code CLI registers tabwire and connects to it: `tabwire install --claude`
//! runs `claude mcp add tabwire -- <abs>/tabwire mcp` in a throwaway HOME, and
//! `claude mcp list` starts our MCP server and runs the handshake (no model, no network).
//!
//! The CLI comes from the npm registry (`@anthropic-ai/claude-code`), installed once into the
//! target dir and reused; if it cannot be installed, the test fails and says why.

use std::path::PathBuf;
use std::process::Command;

use tabwire_tests::bins;

/// Install the Claude Code CLI with npm into `<target>/claude-code`; its `claude` binary.
fn claude_cli() -> PathBuf {
    let target = bins::bin("tabwire").parent().unwrap().to_owned();
    let dir = target.join("claude-code");
    let package = dir.join("node_modules/@anthropic-ai/claude-code");
    let claude = dir.join("node_modules/.bin/claude");
    if !package.join("package.json").exists() {
        std::fs::create_dir_all(&dir).unwrap();
        let out = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix"])
            .arg(&dir)
            .arg("@anthropic-ai/claude-code")
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run npm (is Node.js installed? `apt-get install nodejs npm`): {e}")
            });
        assert!(
            out.status.success(),
            "`npm install @anthropic-ai/claude-code` failed, so the Claude Code CLI cannot be tested:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // npm 11 does not run the package's postinstall, which puts the native binary in place.
    let out = Command::new("node")
        .arg(package.join("install.cjs"))
        .current_dir(&package)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "claude-code install.cjs failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(claude.exists(), "no claude binary at {}", claude.display());
    claude
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run command");
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

#[test]
fn claude_code_adds_tabwire_and_connects() {
    let claude = claude_cli();
    let root = bins::scratch_dir("claude");
    let home = root.join("home");
    let profile = root.join("profile");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&profile).unwrap();
    let path = format!(
        "{}:{}",
        claude.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = |cmd: &mut Command| {
        cmd.env("HOME", &home)
            .env("PATH", &path)
            .env("TABWIRE_CONFIG_DIR", root.join("config"))
            .env("TABWIRE_RUNTIME_DIR", root.join("run"))
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    };

    let mut install = Command::new(bins::bin("tabwire"));
    install
        .args(["install", "--claude", "--user-data-dir"])
        .arg(&profile)
        .arg("--host-path")
        .arg(bins::bin("tabwire-host"));
    env(&mut install);
    let said = run(&mut install);
    assert!(said.contains("claude mcp add tabwire"), "{said}");

    let config =
        std::fs::read_to_string(home.join(".claude.json")).expect("claude wrote ~/.claude.json");
    assert!(
        config.contains(&bins::bin("tabwire").display().to_string()),
        "registered with the absolute path:\n{config}"
    );

    let mut list = Command::new(&claude);
    list.args(["mcp", "list"]);
    env(&mut list);
    let listed = run(&mut list);
    let line = listed
        .lines()
        .find(|l| l.starts_with("tabwire"))
        .unwrap_or_else(|| panic!("tabwire not listed:\n{listed}"));
    assert!(line.contains("Connected"), "claude could not connect to `tabwire mcp`:\n{listed}");
    let _ = std::fs::remove_dir_all(&root);
}
