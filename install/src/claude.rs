//! The line that adds tabwire to Claude Code, and running it for `install --claude`; and the
//! worker templates file whose `default` runs Claude Code for `spawn_worker`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::env::{Env, shell_quote};
use crate::error::Error;

/// `claude mcp add tabwire -- <absolute path of tabwire> mcp`. The path is absolute because
/// Claude Code starts the server with its own `PATH`.
pub fn mcp_add_line(env: &Env) -> String {
    mcp_add_line_for(&env.current_exe)
}

/// `claude mcp add tabwire -- <server> mcp`, for the tabwire program `server`.
pub fn mcp_add_line_for(server: &Path) -> String {
    format!("claude mcp add tabwire -- {} mcp", shell_quote(server))
}

/// The command a worker runs when `spawn_worker` names no template: Claude Code's
/// non-interactive mode, the prompt as one argument.
pub const DEFAULT_WORKER: [&str; 3] = ["claude", "-p", "{prompt}"];

/// `$TABWIRE_CONFIG_DIR/workers.json`: the command templates of `spawn_worker`.
pub fn workers_file(env: &Env) -> PathBuf {
    env.config_dir.join("workers.json")
}

/// What install writes to [`workers_file`].
pub fn default_worker_templates() -> String {
    format!("{{\n  \"default\": {}\n}}\n", serde_json::json!(DEFAULT_WORKER))
}

/// Write [`workers_file`] with the `default` template, unless there is one (it is the user's
/// to edit: an existing file is never replaced). `tabwire uninstall` removes it only while it
/// is still exactly what install wrote.
pub fn write_worker_templates(env: &Env, out: &mut dyn Write) -> Result<(), Error> {
    let path = workers_file(env);
    if path.exists() {
        return print(out, format!("kept {}: your worker templates", path.display()));
    }
    let text = default_worker_templates();
    std::fs::create_dir_all(&env.config_dir).map_err(Error::io("create", &env.config_dir))?;
    std::fs::write(&path, text).map_err(Error::io("write", &path))?;
    print(
        out,
        format!(
            "wrote {}: spawn_worker runs `claude -p PROMPT` by default; add templates of your own there",
            path.display()
        ),
    )
}

fn print(out: &mut dyn Write, text: String) -> Result<(), Error> {
    writeln!(out, "{text}").map_err(Error::io("print to", "stdout"))
}

/// Write the worker templates ([`write_worker_templates`]), then run [`mcp_add_line`] when
/// `claude` is on `PATH`; say what happened either way.
pub fn run_mcp_add(env: &Env, out: &mut dyn Write) -> Result<(), Error> {
    run_mcp_add_for(&env.current_exe, env, out)
}

/// [`run_mcp_add`] for the tabwire program `server` (inside WSL: the Windows `tabwire.exe`).
pub fn run_mcp_add_for(server: &Path, env: &Env, out: &mut dyn Write) -> Result<(), Error> {
    write_worker_templates(env, out)?;
    let line = mcp_add_line_for(server);
    let Some(claude) = env.find_on_path("claude") else {
        return print(
            out,
            format!(
                "claude is not on PATH, so tabwire was not added to Claude Code; install \
                 Claude Code, then run: {line}"
            ),
        );
    };
    let output = Command::new(&claude)
        .args(["mcp", "add", "tabwire", "--"])
        .arg(server)
        .arg("mcp")
        .output()
        .map_err(Error::io("run", &claude))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.success() {
        return print(out, format!("ran: {line}"));
    }
    if stderr.contains("already exists") {
        return print(
            out,
            format!(
                "Claude Code already has an MCP server called tabwire; to point it at this \
                 tabwire run: claude mcp remove tabwire && {line}"
            ),
        );
    }
    Err(Error::Claude { line, status: output.status.to_string(), stderr: stderr.trim().into() })
}
