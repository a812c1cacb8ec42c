//! `installed.json`: what `tabwire install` wrote, so `tabwire uninstall` removes exactly that
//! — including the folders install had to create — and nothing else.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::env::Env;
use crate::error::Error;
use crate::targets::{Selection, Target};
use crate::wsl::Wsl;

/// The record file's content.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The host the manifests name (the latest install's).
    pub host_path: Option<PathBuf>,
    /// The extension ids the manifests allow (the latest install's).
    #[serde(default)]
    pub extension_ids: Vec<String>,
    /// Every manifest written, oldest first.
    #[serde(default)]
    pub entries: Vec<Entry>,
    /// Folders created to hold this record; removed with it when empty.
    #[serde(default)]
    pub created_dirs: Vec<PathBuf>,
    /// The folder the extension was unpacked under (`extension::installed_root`); removed
    /// whole on uninstall.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension_root: Option<PathBuf>,
    /// Programs install copied to `<data>/bin` because they ran from a folder npm may clear
    /// (`keep`); uninstall removes them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept_programs: Vec<PathBuf>,
    /// Inside WSL: the Windows `tabwire.exe` (a WSL path) that registered the Windows browsers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub windows_exe: Option<PathBuf>,
    /// Inside WSL: the programs install copied to Windows; uninstall removes them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows_copies: Vec<PathBuf>,
}

/// One manifest (and registry key) install wrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    #[serde(flatten)]
    pub target: Target,
    /// Folders install created for it, outermost first; removed on uninstall when empty.
    #[serde(default)]
    pub created_dirs: Vec<PathBuf>,
}

impl Record {
    /// The record at `path`; an empty one when there is none.
    pub fn load(path: &Path) -> Result<Record, Error> {
        match fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|source| Error::BadRecord { path: path.to_owned(), source }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Record::default()),
            Err(e) => Err(Error::io("read", path)(e)),
        }
    }

    /// Write the record to `path` (mode 0600, atomically), creating its folder if needed.
    pub fn save(&mut self, path: &Path) -> Result<(), Error> {
        if let Some(dir) = path.parent() {
            let created = create_dirs(dir)?;
            self.created_dirs.extend(created);
        }
        tabwire_proto::runtime_dir::write_record(path, self).map_err(Error::io("write", path))
    }

    /// Add or refresh the entry for `target`, keeping the folders an earlier install created.
    pub fn add(&mut self, target: Target, created_dirs: Vec<PathBuf>) {
        let same = |e: &&mut Entry| {
            e.target.manifest == target.manifest && e.target.registry_key == target.registry_key
        };
        match self.entries.iter_mut().find(same) {
            Some(entry) => {
                entry.target = target;
                entry.created_dirs.extend(created_dirs);
            }
            None => self.entries.push(Entry { target, created_dirs }),
        }
    }
}

/// Create `dir` and any missing parents; returns the folders it created, outermost first.
pub fn create_dirs(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut missing = Vec::new();
    let mut cur = Some(dir);
    while let Some(d) = cur {
        if d.exists() || d.as_os_str().is_empty() {
            break;
        }
        missing.push(d.to_path_buf());
        cur = d.parent();
    }
    missing.reverse();
    for d in &missing {
        match fs::create_dir(d) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io("create the folder", d)(e)),
        }
    }
    Ok(missing)
}

/// Remove those of the `created` folders that are empty, deepest first (so a folder emptied
/// by removing its children goes too). A folder that holds anything stays.
pub fn remove_empty_dirs<'a>(created: impl IntoIterator<Item = &'a PathBuf>) {
    let mut dirs: Vec<&PathBuf> = created.into_iter().collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for d in dirs {
        let _ = fs::remove_dir(d);
    }
}
/// Whether install and doctor work on the Windows side from inside WSL: in WSL, unless the
/// user named a place (`--browser`, `--user-data-dir`, `--system`: a Linux browser in WSL) or
/// an earlier install did that.
pub(crate) fn wsl_mode<'a>(env: &'a Env, sel: &Selection, record: &Record) -> Option<&'a Wsl> {
    let linux_before = record.windows_exe.is_none() && !record.entries.is_empty();
    env.wsl.as_ref().filter(|_| !sel.is_explicit() && !linux_before)
}
