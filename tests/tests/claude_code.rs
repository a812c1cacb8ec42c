//! The real Claude Code CLI registers tabwire and connects to it: `tabwire install --claude`
//! runs `claude mcp add tabwire -- <abs>/tabwire mcp` in a throwaway HOME, and
//! `claude mcp list` starts our MCP server and runs the handshake (no model, no network).
//!
//! The CLI comes from the npm registry (`@anthropic-ai/claude-code`), installed once into the
//! target dir and reused; if it cannot be installed, the test fails and says why.

use std::process::Command;

use tabwire_tests::bins;
use tabwire_tests::claude::claude_cli;

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
