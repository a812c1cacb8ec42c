//! The real Claude Code CLI (`@anthropic-ai/claude-code` from npm), installed once into the
//! target dir and reused. Offline it can register and connect to MCP servers (`claude mcp …`),
//! and `claude -p` runs whole conversations against a stand-in model on loopback
//! ([`crate::model`]); with no such model it fails saying it is not logged in.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{bins, npm};

/// Install the Claude Code CLI with npm into `<target>/claude-code`; its `claude` binary. If it
/// cannot be installed, this panics saying why.
pub fn claude_cli() -> PathBuf {
    let target = bins::bin("tabwire").parent().unwrap().to_owned();
    let dir = target.join("claude-code");
    let package = dir.join("node_modules/@anthropic-ai/claude-code");
    let claude = dir.join("node_modules/.bin/claude");
    let lock = npm::lock(&dir);
    if !package.join("package.json").exists() {
        npm::install(&dir, &["@anthropic-ai/claude-code"], &[])
            .unwrap_or_else(|e| panic!("{e}\nso the Claude Code CLI cannot be tested"));
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
    drop(lock); // unlocks
    claude
}

/// The variables that keep the CLI from updating itself or calling home during a test.
pub const QUIET_ENV: [(&str, &str); 2] =
    [("DISABLE_AUTOUPDATER", "1"), ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")];

/// `claude -p` connects its MCP servers in the background by default and may send its first
/// turn while tabwire is still `pending` (its tools missing: a CI run saw this under load). Its
/// own switch makes it wait for them first, here up to 30 s (its default bound is 5 s).
pub const WAIT_FOR_MCP_ENV: [(&str, &str); 2] =
    [("MCP_CONNECTION_NONBLOCKING", "0"), ("MCP_CONNECT_TIMEOUT_MS", "30000")];

/// `claude -p PROMPT` (`claude` from [`claude_cli`]), headless, as a user runs it with one MCP config (`--strict-mcp-config`,
/// stream-json output): its home is `<root>/home`, its model the stand-in at `model_url` that
/// takes `key`, and it inherits no tabwire session or browser from the environment the tests
/// run in (a test run inside a tabwire session must not join it, nor pick the user's browser).
pub fn print_mode(
    claude: &Path,
    prompt: &str,
    config: &Path,
    root: &Path,
    model_url: &str,
    key: &str,
) -> tokio::process::Command {
    let home = root.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut cmd = tokio::process::Command::new(claude);
    cmd.args(["-p", prompt])
        .arg("--mcp-config")
        .arg(config)
        .args(["--strict-mcp-config", "--output-format", "stream-json", "--verbose"])
        .current_dir(root)
        .env("HOME", &home)
        .env("ANTHROPIC_BASE_URL", model_url)
        .env("ANTHROPIC_API_KEY", key)
        .envs(QUIET_ENV)
        .envs(WAIT_FOR_MCP_ENV)
        .env_remove("TABWIRE_SESSION_ID")
        .env_remove("TABWIRE_BROWSER")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    cmd
}
