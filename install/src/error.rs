//! What can stop install or uninstall, each said with what to do about it.

use std::io;
use std::path::PathBuf;

/// Why install or uninstall could not do its work.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot tell your home directory: set $HOME and run it again")]
    NoHome,

    #[error(
        "no Chromium-family browser found (none of their profile folders exists and none is on \
         PATH); name one with `--browser chromium` (see `--help` for the list) or give the \
         profile folder it runs with: `--user-data-dir DIR`"
    )]
    NoBrowserFound,

    #[error("{0}; pick another with --browser (see `--help` for the list)")]
    NotOnThisOs(String),

    #[error(
        "cannot find the tabwire-host binary: it is neither next to {exe} nor on PATH. Build it \
         (`cargo build --bins` in the checkout, or `cargo install --path bridge`), or \
         name it: `--host-path /path/to/tabwire-host`"
    )]
    HostNotFound { exe: PathBuf },

    #[error("--host-path {0}: no such file; give the path of the tabwire-host executable")]
    HostPathMissing(PathBuf),

    #[error("--host-path {0}: not executable; fix it with `chmod +x {0}`")]
    HostNotExecutable(PathBuf),

    #[error(
        "--extension-id {0:?} is not an extension id: an id is 32 letters a to p, as shown on \
         chrome://extensions under the extension's name (Developer mode on)"
    )]
    BadExtensionId(String),

    #[error(
        "--system: {0} keeps system-wide native-messaging hosts in HKEY_LOCAL_MACHINE, which \
         tabwire does not write; run `tabwire install` without --system"
    )]
    SystemUnsupported(&'static str),

    #[error(
        "--system: none of the chosen browsers has a system-wide manifest folder on this OS; \
         run it without --system to install for your user"
    )]
    NoSystemDir,

    #[error("cannot {what} {path}: {source}{hint}", hint = permission_hint(source))]
    Io { what: &'static str, path: PathBuf, source: io::Error },

    #[error("the record {path} is not valid JSON ({source}); move it away and run install again")]
    BadRecord { path: PathBuf, source: serde_json::Error },

    #[error("cannot {what} the registry key HKCU\\{key}: {source}")]
    Registry { what: &'static str, key: String, source: io::Error },

    #[error(
        "inside WSL, tabwire registers the Windows tabwire.exe for the browsers on Windows, but \
         there is no tabwire.exe with tabwire-host.exe beside it at {}; build them for Windows \
         (`cargo build --release --target x86_64-pc-windows-gnu --bins`) and name the first: \
         `--windows-exe PATH/tabwire.exe` (or register a browser inside WSL with --browser NAME)",
        looked.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" or ")
    )]
    NoWindowsExe { looked: Vec<PathBuf> },

    #[error("{0}")]
    Wsl(String),

    #[error("`{line}` failed ({status}): {stderr}")]
    Claude { line: String, status: String, stderr: String },
}

fn permission_hint(err: &io::Error) -> &'static str {
    if err.kind() == io::ErrorKind::PermissionDenied {
        "; system-wide folders need root: run the same command with sudo"
    } else {
        ""
    }
}

impl Error {
    pub(crate) fn io(
        what: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { what, path, source }
    }
}
