//! Locating the real binaries: exactly the ones Cargo built for this test run. The tests and
//! benches are targets of the package that builds both programs (`bridge/`), so Cargo builds
//! `tabwire` and `tabwire-host` before it runs any of them and names each in
//! `CARGO_BIN_EXE_<name>`; a binary left from an earlier build is never used.

use std::path::PathBuf;

/// Path of a workspace binary (`tabwire`, `tabwire-host`), as Cargo built it for this run; or,
/// when this run tests the Windows programs ([`crate::wine`]), the wrapper that runs the
/// Windows one under Wine.
pub fn bin(name: &str) -> PathBuf {
    #[cfg(unix)]
    if let Some(wrapper) = crate::wine::program(name) {
        return wrapper;
    }
    let var = format!("CARGO_BIN_EXE_{name}");
    let path = std::env::var_os(&var).map(PathBuf::from).unwrap_or_else(|| {
        panic!(
            "{var} is not set: run the tests and benches through Cargo (`cargo test -p tabwire`), \
             which builds {name} for them and says where"
        )
    });
    assert!(path.exists(), "{var} names {}, which does not exist", path.display());
    path
}

/// `path` as the programs under test name it, for an argument: itself, or for the Windows
/// programs under Wine ([`crate::wine`]) its Windows path.
pub fn program_path(path: &std::path::Path) -> String {
    #[cfg(unix)]
    if crate::wine::active() {
        return crate::wine::windows_path(path);
    }
    path.display().to_string()
}

/// A path a program under test printed, as this test opens it: the inverse of [`program_path`].
pub fn local_path(printed: &str) -> PathBuf {
    #[cfg(unix)]
    if crate::wine::active() {
        return crate::wine::unix_path(printed);
    }
    PathBuf::from(printed)
}

/// The repository root (where `extension/` lives).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("repo root").to_owned()
}

/// A fresh, private scratch directory, removed when dropped — unless `TABWIRE_KEEP_TEST_DIRS`
/// is set, to look at what a failed test left. On Unix mode 0700 in /tmp rather than $TMPDIR,
/// for a short path (unix socket paths are limited to 108 bytes); on Windows in the user's
/// temporary folder, which only that user may open.
pub fn scratch_dir(tag: &str) -> Scratch {
    let prefix = format!("tw-{tag}-");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    #[cfg(unix)]
    let dir = {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700)).tempdir_in("/tmp")
    };
    #[cfg(windows)]
    let dir = builder.tempdir();
    let dir = dir.expect("create a scratch dir");
    let keep = std::env::var_os("TABWIRE_KEEP_TEST_DIRS").is_some();
    Scratch(Some(dir), keep)
}

/// A scratch directory ([`scratch_dir`]); derefs to its path.
pub struct Scratch(Option<tempfile::TempDir>, bool);

impl Scratch {
    /// The path, handing the removal to whoever takes it (the Chromium launcher removes its
    /// root itself).
    pub fn into_path(mut self) -> PathBuf {
        self.0.take().expect("scratch dir").keep()
    }
}

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        self.0.as_ref().expect("scratch dir").path()
    }
}

impl AsRef<std::path::Path> for Scratch {
    fn as_ref(&self) -> &std::path::Path {
        self
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.as_os_str()
    }
}

impl serde::Serialize for Scratch {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let (Some(dir), true) = (self.0.take(), self.1) {
            eprintln!("kept {}", dir.keep().display());
        }
    }
}
