//! Starting a worker process: its program found before anything starts (a missing binary is
//! the `spawn_worker` call's error, not a worker that silently exits), its environment, its
//! directory, one pipe for its stdout and stderr, no stdin.
//!
//! It leads a process group of its own, so that stopping it reaches what it started (a
//! shell's children, Claude Code's tools) and nothing else. On Linux it also gets SIGTERM if
//! this process dies without stopping it (`PR_SET_PDEATHSIG`): a bridge killed by SIGKILL
//! leaves no worker behind.

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use tabwire_install::is_executable;
use tabwire_proto::wire::code;
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};

use crate::error::CallError;

/// A worker that started.
pub struct Started {
    pub child: Child,
    pub pid: u32,
    /// Its stdout and stderr.
    pub output: pipe::Receiver,
}

/// Start `argv` in `cwd` with this process's environment plus `env`. `template` and
/// `templates_file` only name where `argv` came from, for the errors.
///
/// Call it from an async task, not from `spawn_blocking`: the parent-death signal follows the
/// thread that starts the process, and the runtime's blocking threads come and go.
pub fn start(
    argv: &[String],
    cwd: &Path,
    env: &[(String, String)],
    template: &str,
    templates_file: &Path,
) -> Result<Started, CallError> {
    let (program, args) = argv.split_first().expect("templates are never empty");
    let path_var = env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| OsStr::new(v).to_owned());
    let path_var = path_var.or_else(|| std::env::var_os("PATH"));
    let found = find_program(program, cwd, path_var.as_deref()).map_err(|why| {
        CallError::new(
            code::BAD_REQUEST,
            format!(
                "cannot start the worker: {why}. Install it, or change template {template:?} in \
                 {} (the user's file)",
                templates_file.display()
            ),
        )
    })?;
    let (output, write_end) = output_pipe().map_err(|e| cannot(&found, &e))?;
    let stderr = write_end.try_clone().map_err(|e| cannot(&found, &e))?;
    let mut cmd = Command::new(&found);
    cmd.arg0(program)
        .args(args)
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::from(stderr))
        .process_group(0);
    #[cfg(target_os = "linux")]
    {
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: between fork and exec only async-signal-safe calls (prctl, getppid) happen.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    return Err(std::io::Error::other("the session ended while it started"));
                }
                Ok(())
            });
        }
    }
    let child = cmd.spawn().map_err(|e| cannot(&found, &e))?;
    // `cmd` goes here, and with it our copies of the pipe's write end: the pipe ends when the
    // worker and what it started have closed theirs.
    drop(cmd);
    let pid = child.id().expect("a child that was just started has a pid");
    Ok(Started { child, pid, output })
}

/// Send `signal` to the worker whose pid is `pid` and to its process group. Only call it while
/// the worker has not been reaped (its pid cannot have been reused).
pub fn signal(pid: u32, signal: i32) {
    let pid = pid as libc::pid_t;
    // SAFETY: kill(2) on a process this session started and has not reaped, and on the process
    // group it leads (`process_group(0)` made its pgid its pid).
    unsafe {
        libc::kill(-pid, signal);
        libc::kill(pid, signal);
    }
}

fn output_pipe() -> std::io::Result<(pipe::Receiver, OwnedFd)> {
    let (write_end, read_end) = pipe::pipe()?;
    Ok((read_end, write_end.into_blocking_fd()?))
}

fn cannot(program: &Path, e: &std::io::Error) -> CallError {
    CallError::new(
        code::BAD_REQUEST,
        format!("cannot start the worker: running {} failed: {e}", program.display()),
    )
}

/// Where `program` is: a path (relative ones from `cwd`), or a name looked up in `path_var`.
fn find_program(program: &str, cwd: &Path, path_var: Option<&OsStr>) -> Result<PathBuf, String> {
    if program.contains('/') {
        let path = cwd.join(program);
        return match std::fs::metadata(&path) {
            Err(_) => Err(format!("{} does not exist", path.display())),
            Ok(_) if !is_executable(&path) => Err(format!("{} is not executable", path.display())),
            Ok(_) => Ok(path),
        };
    }
    let dirs: Vec<PathBuf> =
        path_var.map(|v| std::env::split_paths(v).collect()).unwrap_or_default();
    dirs.iter()
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| cwd.join(dir).join(program))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| {
            let shown = path_var.map(|v| v.to_string_lossy().into_owned()).unwrap_or_default();
            format!("{program:?} is not on PATH ({shown})")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_found_on_path_or_by_path_and_a_missing_one_is_named() {
        let root = Path::new("/");
        assert_eq!(
            find_program("sh", root, Some(OsStr::new("/nowhere:/bin"))),
            Ok("/bin/sh".into())
        );
        let err = find_program("no-such-tool", root, Some(OsStr::new("/bin"))).unwrap_err();
        assert_eq!(err, "\"no-such-tool\" is not on PATH (/bin)");
        assert_eq!(find_program("bin/sh", root, None), Ok("/bin/sh".into()), "relative to cwd");
        let err = find_program("/etc/passwd", root, None).unwrap_err();
        assert!(err.ends_with("is not executable"), "{err}");
        assert!(find_program("./nope", root, None).unwrap_err().ends_with("does not exist"));
    }
}
