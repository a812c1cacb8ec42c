//! Finding a program such as `claude` when this process's `PATH` is not the user's.
//!
//! A browser started from the Dock or Finder on macOS is started by `launchd` with a minimal
//! environment (`PATH=/usr/bin:/bin:/usr/sbin:/sbin`), and so is the host it starts and any
//! worker started from there: `claude` installed with npm, Homebrew, nvm or Claude Code's own
//! installer is not on that `PATH`. So after `PATH`, look where those installers put programs,
//! then ask the user's login shell once, and when all fail say where we looked.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::browsers::Os;
use crate::env::{Env, exe_name, is_executable};

/// Where a program was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// In a directory of `PATH`.
    Path(PathBuf),
    /// In a directory installers use, not on `PATH` ([`usual_dirs`]).
    UsualDir(PathBuf),
    /// By the user's login shell (`$SHELL -lc 'command -v NAME'`).
    LoginShell(PathBuf),
}

impl Found {
    pub fn path(&self) -> &Path {
        match self {
            Found::Path(p) | Found::UsualDir(p) | Found::LoginShell(p) => p,
        }
    }
}

/// The program is nowhere we looked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotFound {
    pub name: String,
    /// Every directory looked in, `PATH` first.
    pub searched: Vec<PathBuf>,
    /// The login shell asked, when one was.
    pub shell: Option<PathBuf>,
}

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dirs: Vec<String> = self.searched.iter().map(|d| d.display().to_string()).collect();
        write!(f, "{:?} was not found in {}", self.name, dirs.join(", "))?;
        if let Some(shell) = &self.shell {
            write!(
                f,
                ", nor by your login shell (`{} -lc 'command -v {}'`)",
                shell.display(),
                self.name
            )?;
        }
        write!(
            f,
            ". A browser started from the Dock or a desktop menu passes on no PATH from your \
             shell: give the program's full path (`command -v {}` in your terminal prints it) in \
             the worker template, or link it into one of those folders",
            self.name
        )
    }
}

/// What the search needs to know of the machine.
#[derive(Debug, Clone)]
pub struct Search {
    pub os: Os,
    pub home: PathBuf,
    /// The directories of this process's `PATH`.
    pub path: Vec<PathBuf>,
    /// `$SHELL`, when set.
    pub shell: Option<PathBuf>,
}

impl Search {
    /// The search for this [`Env`]'s machine.
    pub fn from_env(env: &Env) -> Search {
        let shell = std::env::var_os("SHELL").filter(|s| !s.is_empty()).map(PathBuf::from);
        Search { os: env.os, home: env.home.clone(), path: env.path.clone(), shell }
    }

    /// The login shell to ask: `$SHELL`, else the system's default one.
    fn login_shell(&self) -> Option<PathBuf> {
        match (&self.shell, self.os) {
            (Some(shell), _) => Some(shell.clone()),
            (None, Os::MacOs) => Some(PathBuf::from("/bin/zsh")),
            (None, Os::Linux) => Some(PathBuf::from("/bin/sh")),
            (None, Os::Windows) => None,
        }
    }
}

/// Folders where installers of command-line programs put them, for `home` on `os`, in the
/// order they are tried: Claude Code's own installer, npm's and pip's user folders, bun,
/// volta, cargo, every node version of nvm (newest first), then Homebrew's and the local
/// system folders.
pub fn usual_dirs(os: Os, home: &Path) -> Vec<PathBuf> {
    if os == Os::Windows {
        return Vec::new();
    }
    let at = |parts: &[&str]| os.join(home, parts);
    let mut dirs = vec![
        at(&[".local", "bin"]),
        at(&[".claude", "local"]),
        at(&[".npm-global", "bin"]),
        at(&[".bun", "bin"]),
        at(&[".volta", "bin"]),
        at(&[".cargo", "bin"]),
    ];
    dirs.extend(nvm_bins(&at(&[".nvm", "versions", "node"])));
    if os == Os::MacOs {
        dirs.push(PathBuf::from("/opt/homebrew/bin"));
    }
    dirs.push(PathBuf::from("/usr/local/bin"));
    dirs
}

/// `<versions>/<v>/bin` for each node version nvm installed, newest first.
fn nvm_bins(versions: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(versions) else { return Vec::new() };
    let mut found: Vec<(Vec<u64>, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let version = name
                .trim_start_matches('v')
                .split('.')
                .map(|n| n.parse().ok())
                .collect::<Option<Vec<u64>>>()?;
            Some((version, e.path().join("bin")))
        })
        .collect();
    found.sort_by(|a, b| b.0.cmp(&a.0));
    found.into_iter().map(|(_, dir)| dir).collect()
}

/// Find `name`: on `PATH`, else in [`usual_dirs`], else by asking `login_shell` (called at most
/// once, with the shell and the name; [`ask_login_shell`] in production).
pub fn find(
    name: &str,
    search: &Search,
    login_shell: impl FnOnce(&Path, &str) -> Option<PathBuf>,
) -> Result<Found, NotFound> {
    let file = exe_name(search.os, name);
    let in_dir = |dir: &PathBuf| Some(dir.join(&file)).filter(|p| is_executable(p));
    if let Some(p) = search.path.iter().find_map(in_dir) {
        return Ok(Found::Path(p));
    }
    let usual: Vec<PathBuf> = usual_dirs(search.os, &search.home)
        .into_iter()
        .filter(|d| !search.path.contains(d))
        .collect();
    if let Some(p) = usual.iter().find_map(in_dir) {
        return Ok(Found::UsualDir(p));
    }
    let shell = search.login_shell();
    if let Some(shell) = &shell {
        if let Some(p) = login_shell(shell, name).filter(|p| p.is_absolute() && is_executable(p)) {
            return Ok(Found::LoginShell(p));
        }
    }
    let mut searched = search.path.clone();
    searched.extend(usual);
    Err(NotFound { name: name.to_string(), searched, shell })
}

/// Ask `shell` as a login shell where `name` is: `shell -lc 'command -v -- "$1"' sh NAME` (the
/// name is an argument, never shell text). The last line of its output that is an absolute
/// path, if any: a profile may print greetings first. Gives up after 5 seconds.
pub fn ask_login_shell(shell: &Path, name: &str) -> Option<PathBuf> {
    let mut child = Command::new(shell)
        .args(["-lc", r#"command -v -- "$1""#, "sh", name])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take()?, &mut out).ok()?;
    out.lines().rev().map(str::trim).find(|l| l.starts_with('/')).map(PathBuf::from)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn exe(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// What a browser started by launchd on a Mac passes on: no PATH of the user's shell.
    fn launchd(home: &Path) -> Search {
        let path = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"].map(PathBuf::from).to_vec();
        Search { os: Os::MacOs, home: home.to_path_buf(), path, shell: Some("/bin/zsh".into()) }
    }

    fn never(_: &Path, _: &str) -> Option<PathBuf> {
        None
    }

    #[test]
    fn usual_dirs_on_a_mac() {
        let dirs = usual_dirs(Os::MacOs, Path::new("/Users/u"));
        let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        assert_eq!(
            shown,
            [
                "/Users/u/.local/bin",
                "/Users/u/.claude/local",
                "/Users/u/.npm-global/bin",
                "/Users/u/.bun/bin",
                "/Users/u/.volta/bin",
                "/Users/u/.cargo/bin",
                "/opt/homebrew/bin",
                "/usr/local/bin",
            ]
        );
    }

    #[test]
    fn claude_of_nvm_is_found_without_the_shells_path_newest_node_first() {
        let home = tempfile::tempdir().unwrap();
        let versions = home.path().join(".nvm/versions/node");
        exe(&versions.join("v18.20.4/bin/claude"));
        exe(&versions.join("v22.3.0/bin/claude"));
        exe(&versions.join("v9.11.2/bin/claude"));
        let found = find("claude", &launchd(home.path()), never).unwrap();
        assert_eq!(found, Found::UsualDir(versions.join("v22.3.0/bin/claude")));
    }

    #[test]
    fn claude_codes_own_installer_wins_over_nvm() {
        let home = tempfile::tempdir().unwrap();
        exe(&home.path().join(".nvm/versions/node/v22.3.0/bin/claude"));
        exe(&home.path().join(".local/bin/claude"));
        let found = find("claude", &launchd(home.path()), never).unwrap();
        assert_eq!(found, Found::UsualDir(home.path().join(".local/bin/claude")));
    }

    #[test]
    fn path_comes_first_and_the_shell_is_not_asked() {
        let home = tempfile::tempdir().unwrap();
        let bin = home.path().join("bin");
        exe(&bin.join("claude"));
        exe(&home.path().join(".local/bin/claude"));
        let mut search = launchd(home.path());
        search.path.insert(0, bin.clone());
        let found = find("claude", &search, |_, _| panic!("asked the shell")).unwrap();
        assert_eq!(found, Found::Path(bin.join("claude")));
    }

    #[test]
    fn the_login_shell_is_asked_last_and_once() {
        let home = tempfile::tempdir().unwrap();
        let elsewhere = home.path().join("opt/asdf/shims/claude");
        exe(&elsewhere);
        let mut asked = Vec::new();
        let found = find("claude", &launchd(home.path()), |shell, name| {
            asked.push((shell.to_path_buf(), name.to_string()));
            Some(elsewhere.clone())
        })
        .unwrap();
        assert_eq!(found, Found::LoginShell(elsewhere));
        assert_eq!(asked, [(PathBuf::from("/bin/zsh"), "claude".to_string())]);
    }

    #[test]
    fn not_found_says_where_it_looked_and_what_to_do() {
        let home = tempfile::tempdir().unwrap();
        let err = find("claude", &launchd(home.path()), never).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("\"claude\" was not found in /usr/bin, /bin, /usr/sbin, /sbin, "),
            "{text}"
        );
        assert!(text.contains(&format!("{}/.local/bin", home.path().display())), "{text}");
        assert!(text.contains("/opt/homebrew/bin"), "{text}");
        assert!(
            text.contains("nor by your login shell (`/bin/zsh -lc 'command -v claude'`)"),
            "{text}"
        );
        assert!(text.contains("full path"), "{text}");
    }

    #[test]
    fn a_real_login_shell_answers() {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("tw-tool");
        exe(&tool);
        // A shell whose profile puts the tool's folder on PATH, as a user's .zprofile does.
        let shell = dir.path().join("shell");
        let script = format!(
            "#!/bin/sh\n[ \"$1\" = -lc ] || exit 9\nshift\nPATH={}:$PATH; export PATH\necho 'welcome back'\nexec /bin/sh -c \"$@\"\n",
            dir.path().display()
        );
        std::fs::write(&shell, script).unwrap();
        std::fs::set_permissions(&shell, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(ask_login_shell(&shell, "tw-tool"), Some(tool));
        assert_eq!(ask_login_shell(&shell, "tw-no-such-tool"), None);
    }
}
