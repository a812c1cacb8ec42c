//! The line that adds tabwire to Claude Code, and running it for `install --claude`; and the
//! worker templates file whose `default` runs Claude Code for `spawn_worker`.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::browsers::Os;
use crate::env::{Env, shell_quote};
use crate::error::Error;

pub use crate::env::NPM_PACKAGE;

/// How Claude Code starts tabwire's MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Server {
    /// `npx -y tabwire mcp`: what a user who ran `npx -y tabwire install` has, and what keeps
    /// working after npm clears npx's cache (npx fetches the package again). On Windows
    /// `cmd /c npx …`, since `npx` is a `.cmd` there and Claude Code does not run those itself.
    Npx { windows: bool },
    /// `<absolute path of tabwire> mcp`. Absolute because Claude Code starts the server with
    /// its own `PATH`.
    Program(PathBuf),
}

impl Server {
    /// The server of the running tabwire: npx's when npx started it, else this program.
    pub fn of(env: &Env) -> Server {
        if env.npx {
            Server::Npx { windows: env.os == Os::Windows }
        } else {
            Server::Program(env.current_exe.clone())
        }
    }

    /// The command and its arguments, `mcp` last.
    pub fn argv(&self) -> Vec<OsString> {
        let mut argv: Vec<OsString> = match self {
            Server::Npx { windows } => {
                let npx = ["npx", "-y", NPM_PACKAGE];
                let cmd = if *windows { &["cmd", "/c"][..] } else { &[][..] };
                cmd.iter().chain(&npx).map(OsString::from).collect()
            }
            Server::Program(path) => vec![path.clone().into_os_string()],
        };
        argv.push("mcp".into());
        argv
    }
}

/// `claude mcp add tabwire -- <server> mcp`.
pub fn mcp_add_line(server: &Server) -> String {
    let words: Vec<String> = server.argv().iter().map(|w| shell_quote(Path::new(w))).collect();
    format!("claude mcp add tabwire -- {}", words.join(" "))
}

/// `claude mcp add tabwire -- <server> mcp`, for the tabwire program `server`.
pub fn mcp_add_line_for(server: &Path) -> String {
    mcp_add_line(&Server::Program(server.to_owned()))
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
pub fn run_mcp_add(server: &Server, env: &Env, out: &mut dyn Write) -> Result<(), Error> {
    write_worker_templates(env, out)?;
    let line = mcp_add_line(server);
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
        .args(server.argv())
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

/// [`run_mcp_add`] for the tabwire program `server` (inside WSL: the Windows `tabwire.exe`).
pub fn run_mcp_add_for(server: &Path, env: &Env, out: &mut dyn Write) -> Result<(), Error> {
    run_mcp_add(&Server::Program(server.to_owned()), env, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_claude_code_gets() {
        let program = Server::Program(PathBuf::from("/home/u/.cargo/bin/tabwire"));
        assert_eq!(
            mcp_add_line(&program),
            "claude mcp add tabwire -- /home/u/.cargo/bin/tabwire mcp"
        );
        let npx = Server::Npx { windows: false };
        assert_eq!(mcp_add_line(&npx), "claude mcp add tabwire -- npx -y tabwire mcp");
        let windows = Server::Npx { windows: true };
        assert_eq!(mcp_add_line(&windows), "claude mcp add tabwire -- cmd /c npx -y tabwire mcp");
    }
}
