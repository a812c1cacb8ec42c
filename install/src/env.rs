//! What install, uninstall and doctor read from the machine, gathered in one value.
//!
//! The functions of this crate take an [`Env`] instead of reading `$HOME` or `$PATH`
//! themselves, so tests run them against a temporary home in parallel without touching the
//! process environment. tabwire's own directories (`TABWIRE_CONFIG_DIR`, `TABWIRE_DATA_DIR`,
//! `TABWIRE_STATE_DIR`) are resolved by `tabwire_proto::dirs`, as the bridge and its features
//! resolve them; the runtime directory of the sockets by `tabwire_proto::runtime_dir`, shared
//! with the host.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use tabwire_proto::dirs::{Dirs, var};

use crate::browsers::Os;
use crate::error::Error;

/// The npm package tabwire ships in (`npx -y tabwire`).
pub const NPM_PACKAGE: &str = "tabwire";

/// The machine as install, uninstall and doctor see it.
#[derive(Clone, Debug)]
pub struct Env {
    pub os: Os,
    /// The user's home directory.
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME`, when set (Linux browsers keep their profiles there).
    pub xdg_config_home: Option<PathBuf>,
    /// The directories of `$PATH`, in order.
    pub path: Vec<PathBuf>,
    /// tabwire's own configuration directory, where `installed.json` is kept:
    /// `$TABWIRE_CONFIG_DIR`, else the OS's (`~/.config/tabwire` on Linux).
    pub config_dir: PathBuf,
    /// tabwire's data directory: `$TABWIRE_DATA_DIR`, else the OS's (`~/.local/share/tabwire`
    /// on Linux). `install` writes the extension under it.
    pub data_dir: PathBuf,
    /// The runtime directory of the sockets (`tabwire_proto::runtime_dir::resolve`).
    pub runtime_dir: PathBuf,
    /// Why the runtime directory is not the usual one, when it is not (another user took the
    /// shared one first; `runtime_dir::resolve_explained`).
    pub runtime_dir_note: Option<String>,
    /// The running `tabwire` executable: the host binary is looked for next to it, and the
    /// `claude mcp add` line names it.
    pub current_exe: PathBuf,
    /// `$CLAUDE_CONFIG_DIR`, when set: Claude Code's folder instead of `~/.claude` (its skills).
    pub claude_config_dir: Option<PathBuf>,
    /// `$TABWIRE_EXTENSION_DIR`, when set: the extension folder to load unpacked.
    pub extension_dir: Option<PathBuf>,
    /// Set when this Linux runs inside WSL ([`crate::wsl::detect`]).
    pub wsl: Option<crate::wsl::Wsl>,
    /// Started by `npx` (`npm exec`) from an npm package's folder ([`started_by_npx`]): the
    /// printed commands say `npx -y tabwire …`, and Claude Code gets `npx -y tabwire mcp`.
    pub npx: bool,
}

impl Env {
    /// The environment of this process.
    pub fn from_process() -> Result<Env, Error> {
        let base = directories::BaseDirs::new().ok_or(Error::NoHome)?;
        let Dirs { config: config_dir, data: data_dir, .. } = Dirs::resolve(var, Some(&base));
        let (runtime_dir, runtime_dir_note) = tabwire_proto::runtime_dir::resolve_explained();
        let current_exe = std::env::current_exe().map_err(|source| Error::Io {
            what: "find the running executable",
            path: PathBuf::from("tabwire"),
            source,
        })?;
        Ok(Env {
            os: Os::current(),
            home: base.home_dir().to_path_buf(),
            xdg_config_home: var("XDG_CONFIG_HOME").map(PathBuf::from),
            path: split_path(var("PATH")),
            config_dir,
            data_dir,
            runtime_dir,
            runtime_dir_note,
            current_exe: current_exe.clone(),
            claude_config_dir: var("CLAUDE_CONFIG_DIR").map(PathBuf::from),
            extension_dir: var("TABWIRE_EXTENSION_DIR").map(PathBuf::from),
            wsl: crate::wsl::detect(&crate::wsl::Signs::from_process()),
            npx: started_by_npx(var, &current_exe),
        })
    }

    /// The file that records what `tabwire install` wrote.
    pub fn record_path(&self) -> PathBuf {
        self.config_dir.join("installed.json")
    }

    /// The first executable called `name` in `$PATH` (with `.exe` on Windows).
    pub fn find_on_path(&self, name: &str) -> Option<PathBuf> {
        let file = exe_name(self.os, name);
        self.path.iter().map(|dir| dir.join(&file)).find(|p| is_executable(p))
    }

    /// How the user runs this program: `npx -y tabwire` when npx started it, `tabwire` when
    /// that name on `PATH` is this executable, else its full path — so every printed command
    /// works when pasted.
    pub fn self_command(&self) -> String {
        if self.npx {
            return format!("npx -y {}", NPM_PACKAGE);
        }
        let name = self.current_exe.file_stem().map(|s| s.to_string_lossy().into_owned());
        let name = name.unwrap_or_else(|| "tabwire".into());
        match self.find_on_path(&name) {
            Some(found) if same_file(&found, &self.current_exe) => name,
            _ => shell_quote(&self.current_exe),
        }
    }
}

/// Whether npm started this program: `npx` and `npm exec` set `npm_command=exec` (and
/// `npm_lifecycle_event=npx`) for what they run, and the program is inside a `node_modules`
/// folder (npm's own, or npx's cache `_npx/<hash>/node_modules`).
pub fn started_by_npx(var: impl Fn(&str) -> Option<OsString>, exe: &Path) -> bool {
    let exec = var("npm_command").is_some_and(|v| v == "exec")
        || var("npm_lifecycle_event").is_some_and(|v| v == "npx");
    exec && exe.components().any(|c| c.as_os_str() == "node_modules")
}

/// Whether `program` lives where it may vanish or move under the browser: in npx's cache
/// (`_npx`, which npm clears and re-creates under another hash) or in any `node_modules`
/// (a project's, a temporary prefix's; `npm uninstall` and `npm update` replace it).
pub fn is_volatile(program: &Path) -> bool {
    program.components().any(|c| c.as_os_str() == "node_modules" || c.as_os_str() == "_npx")
}

/// `name` as an executable file name on `os`.
pub fn exe_name(os: Os, name: &str) -> String {
    if os == Os::Windows { format!("{name}.exe") } else { name.to_string() }
}

fn split_path(value: Option<OsString>) -> Vec<PathBuf> {
    value.map(|v| std::env::split_paths(&v).collect()).unwrap_or_default()
}

/// Whether `path` is a file this user may execute.
pub fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else { return false };
    if !meta.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    true
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// `path` as a shell word: unchanged when it has no special characters, else single-quoted.
pub fn shell_quote(path: &Path) -> String {
    let text = path.to_string_lossy();
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:,=@%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.into_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npx_is_recognised_by_npm_exec_and_node_modules() {
        let npx = |name: &str| match name {
            "npm_command" => Some(OsString::from("exec")),
            _ => None,
        };
        let cache = Path::new("/h/.npm/_npx/e1d9c0ef/node_modules/@tabwire/linux-x64/bin/tabwire");
        assert!(started_by_npx(npx, cache));
        assert!(!started_by_npx(|_| None, cache), "not run by npm");
        assert!(!started_by_npx(npx, Path::new("/h/.cargo/bin/tabwire")), "npm ran another tool");
        assert!(is_volatile(cache));
        assert!(is_volatile(Path::new("/tmp/p/node_modules/@tabwire/linux-x64/bin/tabwire-host")));
        assert!(!is_volatile(Path::new("/h/.local/share/tabwire/bin/tabwire-host")));
        assert!(!is_volatile(Path::new("/h/.cargo/bin/tabwire-host")));
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote(Path::new("/usr/bin/tabwire")), "/usr/bin/tabwire");
        assert_eq!(shell_quote(Path::new("/a b/it's")), r"'/a b/it'\''s'");
    }
}
