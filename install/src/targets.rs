//! Which manifests to write or check: the browsers found or named, custom profile folders,
//! per-user or system-wide. Shared by install and doctor so both look at the same places.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::browsers::{Browser, MANIFEST_FILE, Os, windows_manifest_dir};
use crate::env::{Env, shell_quote};
use crate::error::Error;
use crate::manifest::check_extension_id;

/// The choice of browsers and extension ids, common to `tabwire install` and `tabwire doctor`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Selection {
    /// Only this browser (repeatable); default: every Chromium-family browser found here
    #[arg(long = "browser", value_name = "NAME")]
    pub browsers: Vec<Browser>,

    /// A browser profile folder (what the browser was started with as --user-data-dir):
    /// uses DIR/NativeMessagingHosts/ (repeatable)
    #[arg(long = "user-data-dir", value_name = "DIR")]
    pub user_data_dirs: Vec<PathBuf>,

    /// The system-wide folders, for every user of the machine (needs root)
    #[arg(long)]
    pub system: bool,

    /// An extension id allowed to start the host, e.g. a store-published or self-built
    /// extension (repeatable); default: tabwire's own id
    #[arg(long = "extension-id", value_name = "ID")]
    pub extension_ids: Vec<String>,
}

impl Selection {
    /// Whether the user chose places, rather than leaving it to detection.
    pub fn is_explicit(&self) -> bool {
        !self.browsers.is_empty() || !self.user_data_dirs.is_empty() || self.system
    }

    /// The extension ids to allow, checked, duplicates dropped; tabwire's own id by default.
    pub fn extension_ids(&self) -> Result<Vec<String>, Error> {
        if self.extension_ids.is_empty() {
            // tabwire's own builds: the development key's id and, once published, the store's.
            let own = tabwire_proto::extension_id::own_ids(
                tabwire_proto::extension_id::STORE_EXTENSION_ID,
            );
            return Ok(own.into_iter().map(str::to_owned).collect());
        }
        let mut ids = Vec::new();
        for id in &self.extension_ids {
            let id = id.trim().to_string();
            check_extension_id(&id)?;
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        Ok(ids)
    }
}

/// One manifest location: a file, and on Windows the registry key that names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// Who reads it: `chromium`, `chrome, chrome-beta`, `profile /tmp/p`.
    pub label: String,
    /// The manifest file.
    pub manifest: PathBuf,
    /// `Software\…\NativeMessagingHosts\dev.tabwire.host` under HKEY_CURRENT_USER (Windows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_key: Option<String>,
    /// The `tabwire install` arguments that (re)write this target, for fix hints.
    pub install_args: String,
}

/// The targets of a selection, and what was left out and why.
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    pub targets: Vec<Target>,
    pub notes: Vec<String>,
}

/// Browsers installed on this machine: their profile folder exists or one of their
/// executables is on `PATH`.
pub fn found_browsers(env: &Env) -> Vec<Browser> {
    Browser::all()
        .filter(|b| {
            let dir = b.user_data_dir(env.os, &env.home, env.xdg_config_home.as_deref());
            dir.is_some_and(|d| d.is_dir())
                || (env.os == Os::Linux
                    && b.binaries().iter().any(|n| env.find_on_path(n).is_some()))
        })
        .collect()
}

/// The manifest locations for `sel` on this machine.
pub fn resolve(sel: &Selection, env: &Env) -> Result<Resolved, Error> {
    let mut out = Resolved::default();
    let browsers = if !sel.browsers.is_empty() {
        for b in &sel.browsers {
            if !b.exists_on(env.os) {
                return Err(Error::NotOnThisOs(b.not_on(env.os)));
            }
        }
        sel.browsers.clone()
    } else if sel.user_data_dirs.is_empty() {
        let found = found_browsers(env);
        if found.is_empty() {
            return Err(Error::NoBrowserFound);
        }
        found
    } else {
        Vec::new()
    };

    if sel.system {
        if env.os == Os::Windows {
            return Err(Error::SystemUnsupported("Windows"));
        }
        for b in &browsers {
            match b.system_manifest_dir(env.os) {
                Some(dir) => out.push(Target {
                    label: b.id().into(),
                    manifest: dir.join(MANIFEST_FILE),
                    registry_key: None,
                    install_args: format!("--system --browser {}", b.id()),
                }),
                None => out.notes.push(format!(
                    "{}: no system-wide folder known for it; skipped (install it for your user \
                     without --system)",
                    b.id()
                )),
            }
        }
        if out.targets.is_empty() && sel.user_data_dirs.is_empty() {
            return Err(Error::NoSystemDir);
        }
    } else {
        for b in &browsers {
            let places: Vec<(PathBuf, Option<String>)> = if env.os == Os::Windows {
                let manifest = env.os.join(&windows_manifest_dir(&env.data_dir), &[MANIFEST_FILE]);
                b.registry_keys().into_iter().map(|key| (manifest.clone(), Some(key))).collect()
            } else {
                let dirs = b.user_manifest_dirs(env.os, &env.home, env.xdg_config_home.as_deref());
                dirs.into_iter().map(|dir| (dir.join(MANIFEST_FILE), None)).collect()
            };
            for (manifest, registry_key) in places {
                out.push(Target {
                    label: b.id().into(),
                    manifest,
                    registry_key,
                    install_args: format!("--browser {}", b.id()),
                });
            }
        }
    }

    for dir in &sel.user_data_dirs {
        let dir = absolute(dir)?;
        let manifest = env.os.join(&dir, &["NativeMessagingHosts", MANIFEST_FILE]);
        let install_args = format!("--user-data-dir {}", shell_quote(&dir));
        let label = format!("profile {}", dir.display());
        if env.os == Os::Windows {
            // Windows reads the registry only, so a custom profile still needs the key of
            // the browser that runs it (Chrome's unless named).
            let keys: Vec<String> = if sel.browsers.is_empty() {
                Browser::Chrome.registry_keys()
            } else {
                sel.browsers.iter().flat_map(|b| b.registry_keys()).collect()
            };
            for key in keys {
                out.push(Target {
                    label: label.clone(),
                    manifest: manifest.clone(),
                    registry_key: Some(key),
                    install_args: install_args.clone(),
                });
            }
        } else {
            out.push(Target { label, manifest, registry_key: None, install_args });
        }
    }
    Ok(out)
}

impl Resolved {
    /// Add `t`, merging it with a target at the same place (Chrome's channels share the
    /// system folder; on Windows several browsers share one key).
    fn push(&mut self, t: Target) {
        match self
            .targets
            .iter_mut()
            .find(|o| o.manifest == t.manifest && o.registry_key == t.registry_key)
        {
            Some(o) => {
                o.label = format!("{}, {}", o.label, t.label);
                let extra = t.install_args.replace("--system ", "");
                o.install_args = format!("{} {extra}", o.install_args);
            }
            None => self.targets.push(t),
        }
    }
}

fn absolute(dir: &Path) -> Result<PathBuf, Error> {
    std::path::absolute(dir).map_err(Error::io("resolve the folder", dir))
}
