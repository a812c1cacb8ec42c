//! Finding what install points at: the `tabwire-host` binary and the extension folder, both
//! for a checkout build (`target/debug/`) and for `cargo install` (`~/.cargo/bin/`).

use std::fmt;
use std::path::{Path, PathBuf};

use crate::env::{Env, exe_name, is_executable};
use crate::error::Error;

/// The host binary install registers, and how it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostChoice {
    pub path: PathBuf,
    pub source: HostSource,
}

/// How the host binary was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostSource {
    /// `--host-path`.
    Flag,
    /// In the same folder as the running `tabwire`.
    NextTo(PathBuf),
    /// On `PATH`.
    Path,
    /// A copy, in tabwire's own folder, of this program, which ran from a folder npm may clear
    /// (npx's cache, a `node_modules`).
    Kept(PathBuf),
}

impl fmt::Display for HostChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            HostSource::Flag => write!(f, "{} (from --host-path)", self.path.display()),
            HostSource::NextTo(exe) => {
                write!(f, "{} (next to {})", self.path.display(), exe.display())
            }
            HostSource::Path => write!(f, "{} (found on PATH)", self.path.display()),
            HostSource::Kept(from) => {
                write!(f, "{} (a copy of {})", self.path.display(), from.display())
            }
        }
    }
}

/// The host binary: `flag` when given, else `tabwire-host` next to the running executable,
/// else on `PATH`. The path is absolute (Chrome requires it) but symlinks are kept, so a
/// later `cargo install` that replaces the file keeps the manifest valid.
pub fn locate_host(flag: Option<&Path>, env: &Env) -> Result<HostChoice, Error> {
    if let Some(path) = flag {
        let path = std::path::absolute(path).map_err(Error::io("resolve", path))?;
        if !path.is_file() {
            return Err(Error::HostPathMissing(path));
        }
        if !is_executable(&path) {
            return Err(Error::HostNotExecutable(path));
        }
        return Ok(HostChoice { path, source: HostSource::Flag });
    }
    let name = exe_name(env.os, "tabwire-host");
    if let Some(dir) = env.current_exe.parent() {
        let beside = dir.join(&name);
        if is_executable(&beside) {
            let path = std::path::absolute(&beside).unwrap_or(beside);
            return Ok(HostChoice { path, source: HostSource::NextTo(env.current_exe.clone()) });
        }
    }
    if let Some(found) = env.find_on_path("tabwire-host") {
        let path = std::path::absolute(&found).unwrap_or(found);
        return Ok(HostChoice { path, source: HostSource::Path });
    }
    Err(Error::HostNotFound { exe: env.current_exe.clone() })
}

/// The extension folder to load unpacked: `$TABWIRE_EXTENSION_DIR`, else the first folder
/// above the running executable that holds `extension/manifest.json` (a checkout) or
/// `share/tabwire/extension/manifest.json` (an installed tree).
pub fn find_extension_dir(env: &Env) -> Option<PathBuf> {
    if let Some(dir) = &env.extension_dir {
        return dir.join("manifest.json").is_file().then(|| dir.clone());
    }
    let exe = env.current_exe.canonicalize().unwrap_or_else(|_| env.current_exe.clone());
    exe.ancestors().skip(1).find_map(|dir| {
        [dir.join("extension"), dir.join("share").join("tabwire").join("extension")]
            .into_iter()
            .find(|candidate| candidate.join("manifest.json").is_file())
    })
}
