//! The line that adds tabwire to Claude Code, and running it for `install --claude`.

use std::io::Write;
use std::process::Command;

use crate::env::{Env, shell_quote};
use crate::error::Error;

/// `claude mcp add tabwire -- <absolute path of tabwire> mcp`. The path is absolute because
/// Claude Code starts the server with its own `PATH`.
pub fn mcp_add_line(env: &Env) -> String {
    format!("claude mcp add tabwire -- {} mcp", shell_quote(&env.current_exe))
}

/// Run [`mcp_add_line`] when `claude` is on `PATH`; say what happened either way.
pub fn run_mcp_add(env: &Env, out: &mut dyn Write) -> Result<(), Error> {
    let line = mcp_add_line(env);
    let print = |out: &mut dyn Write, text: String| {
        writeln!(out, "{text}").map_err(Error::io("print to", "stdout"))
    };
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
        .arg(&env.current_exe)
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
