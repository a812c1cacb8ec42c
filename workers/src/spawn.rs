//! Starting a worker process: its program found before anything starts (a missing binary is
//! the `spawn_worker` call's error, not a worker that silently exits), its environment, its
//! directory, one pipe for its stdout and stderr, no stdin.
//!
//! The program is found with this server's own `PATH` and started by its absolute path: the
//! worker's environment (`env.rs`) and its `cwd`, both the caller's choice, never decide which
//! program runs.
//!
//! It leads a process group of its own, so that stopping it reaches what it started (a
//! shell's children, Claude Code's tools) and nothing else. On Linux it also gets SIGTERM if
//! this process dies without stopping it (`PR_SET_PDEATHSIG`): a bridge killed by SIGKILL
//! leaves no worker behind. On Windows a job object does both (`os_windows.rs`).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use tabwire_install::is_executable;
use tabwire_proto::wire::code;
use tokio::process::{Child, Command};

use super::os;
use tabwire_link::error::CallError;

/// A worker that started.
pub struct Started {
    pub child: Child,
    pub pid: u32,
    /// It and what it starts, to stop them.
    pub job: os::Job,
    /// Its stdout and stderr.
    pub output: os::OutputReader,
}

/// Start `argv` in `cwd` with this process's environment plus `env` (already checked against
/// the template). `template` and `templates_file` only name where `argv` came from, for the
/// errors.
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
    let here = std::env::current_dir().unwrap_or_else(|_| cwd.to_owned());
    let path_var = std::env::var_os("PATH");
    let pathext = cfg!(windows).then(|| {
        let var = std::env::var("PATHEXT").ok().filter(|v| !v.is_empty());
        var.unwrap_or_else(|| DEFAULT_PATHEXT.to_owned())
    });
    let names = file_names(program, pathext.as_deref());
    let found = find_program(program, &names, cwd, &here, path_var.as_deref()).map_err(|why| {
        CallError::new(
            code::BAD_REQUEST,
            format!(
                "cannot start the worker: {why}. Install it, or change template {template:?} in \
                 {} (the user's file)",
                templates_file.display()
            ),
        )
    })?;
    let (output, write_end) = os::output_pipe().map_err(|e| cannot(&found, &e))?;
    let stderr = write_end.try_clone().map_err(|e| cannot(&found, &e))?;
    let mut cmd = Command::new(&found);
    cmd.args(args)
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::from(stderr));
    os::prepare(&mut cmd, program);
    let mut child = cmd.spawn().map_err(|e| cannot(&found, &e))?;
    // `cmd` goes here, and with it our copies of the pipe's write end: the pipe ends when the
    // worker and what it started have closed theirs.
    drop(cmd);
    let pid = child.id().expect("a child that was just started has a pid");
    let job = match os::adopt(&child) {
        Ok(job) => job,
        Err(e) => {
            let _ = child.start_kill();
            return Err(cannot(&found, &e));
        }
    };
    Ok(Started { child, pid, job, output })
}

fn cannot(program: &Path, e: &std::io::Error) -> CallError {
    CallError::new(
        code::BAD_REQUEST,
        format!("cannot start the worker: running {} failed: {e}", program.display()),
    )
}

/// What Windows tries when `PATHEXT` is not set.
const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// The file names `program` may have. Windows finds a name without an extension with each of
/// `PATHEXT`'s (`cmd` is `cmd.exe`, an npm-installed `claude` is `claude.cmd`), as its shell
/// does; `pathext` is `None` elsewhere, where a name is only itself.
fn file_names(program: &str, pathext: Option<&str>) -> Vec<String> {
    match pathext {
        Some(exts) if Path::new(program).extension().is_none() => exts
            .split(';')
            .filter(|ext| ext.starts_with('.'))
            .map(|ext| format!("{program}{}", ext.to_ascii_lowercase()))
            .collect(),
        _ => vec![program.to_owned()],
    }
}

/// Where `program` (whose file may be any of `names`) is: a path (relative ones from `cwd`, as
/// the user's template says), or a name looked up in `path_var`, whose relative directories are
/// from `here`, this server's directory (not `cwd`, which the caller picks: a `.` in PATH would
/// run a file the caller put there).
fn find_program(
    program: &str,
    names: &[String],
    cwd: &Path,
    here: &Path,
    path_var: Option<&OsStr>,
) -> Result<PathBuf, String> {
    if program.contains('/') || (cfg!(windows) && program.contains('\\')) {
        let path = cwd.join(program);
        let file = names.iter().map(|name| cwd.join(name)).find(|p| p.exists());
        return match file {
            None => Err(format!("{} does not exist", path.display())),
            Some(file) if !is_executable(&file) => {
                Err(format!("{} is not executable", file.display()))
            }
            Some(file) => Ok(file),
        };
    }
    let dirs: Vec<PathBuf> =
        path_var.map(|v| std::env::split_paths(v).collect()).unwrap_or_default();
    dirs.iter()
        .filter(|dir| !dir.as_os_str().is_empty())
        .flat_map(|dir| names.iter().map(move |name| here.join(dir).join(name)))
        .find(|candidate| is_executable(candidate))
        .map_or_else(|| not_on_path(program, here, &dirs, path_var), Ok)
}

/// A bare program name not on the server's PATH. On macOS a server started by launchd (a
/// desktop app, not a terminal) has no PATH from the user's shell, so the folders installers
/// use and the user's login shell are asked too (`tabwire_install::programs`); elsewhere
/// the PATH is the user's and the answer is that it is not there.
fn not_on_path(
    program: &str,
    here: &Path,
    dirs: &[PathBuf],
    path_var: Option<&OsStr>,
) -> Result<PathBuf, String> {
    use tabwire_install::Os;
    use tabwire_install::programs::{self, Found, Search};
    let home = std::env::var_os("HOME").map(PathBuf::from);
    if let (Os::MacOs, Some(home)) = (Os::current(), home) {
        let search = Search {
            os: Os::MacOs,
            home,
            path: dirs.iter().map(|d| here.join(d)).collect(),
            shell: std::env::var_os("SHELL").map(PathBuf::from),
        };
        return match programs::find(program, &search, programs::ask_login_shell) {
            Ok(Found::Path(p) | Found::UsualDir(p) | Found::LoginShell(p)) => Ok(p),
            Err(not_found) => Err(not_found.to_string()),
        };
    }
    let shown = path_var.map(|v| v.to_string_lossy().into_owned()).unwrap_or_default();
    Err(format!("{program:?} is not on PATH ({shown})"))
}

// Unix-only: Unix paths and PATH's `:` (Windows's PATH has `;`, and PATHEXT).
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn find(
        program: &str,
        cwd: &Path,
        here: &Path,
        path: Option<&OsStr>,
    ) -> Result<PathBuf, String> {
        find_program(program, &file_names(program, None), cwd, here, path)
    }

    #[test]
    fn on_windows_a_bare_name_is_tried_with_each_pathext_extension() {
        let names = file_names("cmd", Some(DEFAULT_PATHEXT));
        assert_eq!(names, ["cmd.com", "cmd.exe", "cmd.bat", "cmd.cmd"]);
        assert_eq!(file_names("claude.exe", Some(DEFAULT_PATHEXT)), ["claude.exe"]);
        assert_eq!(file_names("cmd", None), ["cmd"], "elsewhere a name is itself");
    }

    #[test]
    fn programs_are_found_on_path_or_by_path_and_a_missing_one_is_named() {
        let (root, nowhere) = (Path::new("/"), Path::new("/nowhere"));
        assert_eq!(find("sh", root, root, Some(OsStr::new("/nowhere:/bin"))), Ok("/bin/sh".into()));
        let err = find("no-such-tool", root, root, Some(OsStr::new("/bin"))).unwrap_err();
        assert_eq!(err, "\"no-such-tool\" is not on PATH (/bin)");
        let relative = find("bin/sh", root, nowhere, None);
        assert_eq!(relative, Ok("/bin/sh".into()), "a program's relative path is from cwd");
        let err = find("/etc/passwd", root, root, None).unwrap_err();
        assert!(err.ends_with("is not executable"), "{err}");
        assert!(find("./nope", root, root, None).unwrap_err().ends_with("does not exist"));
    }

    #[test]
    fn relative_path_entries_are_from_the_servers_directory_not_the_workers() {
        let (root, nowhere) = (Path::new("/"), Path::new("/nowhere"));
        let on_path = |cwd, here| find("sh", cwd, here, Some(OsStr::new("bin")));
        assert_eq!(on_path(nowhere, root), Ok("/bin/sh".into()));
        assert!(on_path(root, nowhere).is_err(), "the worker's cwd does not count");
    }
}
