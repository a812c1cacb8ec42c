//! The Windows registry keys that tell Chromium where the manifest is
//! (`HKEY_CURRENT_USER\<key>`, default value = the manifest's path). Elsewhere these are
//! never called: targets carry no key off Windows.

use std::io;
use std::path::Path;

/// Set the default value of `HKCU\<key>` to `manifest`, creating the key.
#[cfg(windows)]
pub fn set(key: &str, manifest: &Path) -> io::Result<()> {
    use winreg::{RegKey, enums::HKEY_CURRENT_USER};
    let (k, _) = RegKey::predef(HKEY_CURRENT_USER).create_subkey(key)?;
    k.set_value("", &manifest.as_os_str())
}

/// The default value of `HKCU\<key>`, or `None` when the key does not exist.
#[cfg(windows)]
pub fn get(key: &str) -> io::Result<Option<String>> {
    use winreg::{RegKey, enums::HKEY_CURRENT_USER};
    match RegKey::predef(HKEY_CURRENT_USER).open_subkey(key) {
        Ok(k) => k.get_value::<String, _>("").map(Some),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Delete `HKCU\<key>`; a key that is already gone is fine.
#[cfg(windows)]
pub fn delete(key: &str) -> io::Result<()> {
    use winreg::{RegKey, enums::HKEY_CURRENT_USER};
    match RegKey::predef(HKEY_CURRENT_USER).delete_subkey_all(key) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(not(windows))]
pub fn set(_key: &str, _manifest: &Path) -> io::Result<()> {
    Err(unsupported())
}

#[cfg(not(windows))]
pub fn get(_key: &str) -> io::Result<Option<String>> {
    Err(unsupported())
}

#[cfg(not(windows))]
pub fn delete(_key: &str) -> io::Result<()> {
    Err(unsupported())
}

#[cfg(not(windows))]
fn unsupported() -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, "there is no registry on this OS")
}
