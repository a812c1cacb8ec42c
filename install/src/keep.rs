//! Programs that run from a folder npm may clear or replace — npx's cache (`_npx/<hash>/`),
//! any `node_modules` — are copied by install to `<data>/bin/`, a folder of tabwire's own, and
//! the manifests name that copy: a browser starts the host long after `npx -y tabwire install`
//! returned, when npx's copy may be gone.

use std::fs;
use std::path::{Path, PathBuf};

use crate::env::{Env, exe_name};
use crate::error::Error;
use crate::manifest::Change;

/// `<data>/bin`: where install keeps its copies (`~/.local/share/tabwire/bin` on Linux,
/// `%LOCALAPPDATA%\tabwire\bin` on Windows).
pub fn bin_dir(env: &Env) -> PathBuf {
    env.data_dir.join("bin")
}

/// One program copied (or, in a dry run, to be copied) to [`bin_dir`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    pub from: PathBuf,
    pub to: PathBuf,
    pub change: Change,
}

/// Whether `path` is a copy install keeps: a `tabwire` or `tabwire-host` in [`bin_dir`]. What
/// uninstall removes, so a record edited to name another file is not followed.
pub fn is_kept_copy(path: &Path, env: &Env) -> bool {
    let names = [exe_name(env.os, "tabwire"), exe_name(env.os, "tabwire-host")];
    path.parent() == Some(bin_dir(env).as_path())
        && path.file_name().is_some_and(|n| names.iter().any(|m| n == m.as_str()))
}

/// Copy the program `from` to [`bin_dir`] under its own name, unless the copy there already
/// has the same bytes. Written beside and renamed into place, so a browser starting the host
/// meanwhile gets the old file or the new one, and a host still running keeps its file.
pub fn copy(from: &Path, env: &Env, dry_run: bool) -> Result<Kept, Error> {
    let name = from.file_name().ok_or_else(|| Error::HostPathMissing(from.to_owned()))?;
    let to = bin_dir(env).join(name);
    let bytes = fs::read(from).map_err(Error::io("read", from))?;
    let change = match fs::read(&to) {
        Ok(old) if old == bytes => Change::Unchanged,
        Ok(_) => Change::Updated,
        Err(_) => Change::Created,
    };
    if !dry_run && change != Change::Unchanged {
        write_program(&to, &bytes)?;
    }
    Ok(Kept { from: from.to_owned(), to, change })
}

fn write_program(to: &Path, bytes: &[u8]) -> Result<(), Error> {
    let tmp = to.with_file_name(format!(
        ".{}.new-{}",
        to.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    fs::write(&tmp, bytes).map_err(Error::io("write", &tmp))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&tmp, fs::Permissions::from_mode(0o755))
            .map_err(Error::io("make executable", &tmp))?;
    }
    if fs::rename(&tmp, to).is_ok() {
        return Ok(());
    }
    // Windows does not replace a program that is running (a browser's host), but lets it be
    // renamed: move it aside, put the new one in place, remove the old one when it can.
    let old = to.with_file_name(format!(
        ".{}.old-{}",
        to.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let moved = fs::rename(to, &old);
    let result = fs::rename(&tmp, to).map_err(Error::io("write", to));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        if moved.is_ok() {
            let _ = fs::rename(&old, to);
        }
    } else {
        let _ = fs::remove_file(&old);
    }
    result
}
