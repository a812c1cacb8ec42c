//! The extension travels inside the `tabwire` binary (`build.rs` embeds every file of
//! `extension/`): `tabwire install` writes it where the user loads it from, so an installed
//! tabwire needs no checkout, and the folder always holds the extension this binary speaks to.
//!
//! Where: `<data dir>/extension/current/` (`~/.local/share/tabwire/extension/current` on Linux),
//! a real folder replaced as a whole by a rename — not a symlink to a versioned folder, because
//! Chrome resolves symlinks when it loads an unpacked extension, which would pin the old
//! version after an upgrade; a plain folder keeps the path the user loaded, and Reload in
//! `chrome://extensions` picks up the new files.
//!
//! Each unpack writes `build.json` `{version, build_id}` beside the files; the extension reads
//! it and reports `build_id` in its hello, so `doctor` can tell the extension Chrome runs from
//! the one this binary carries.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::env::Env;
use crate::error::Error;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/extension_files.rs"));
}

pub use embedded::BUILD_ID;

/// The version of the extension embedded (the workspace's, as in `manifest.json`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The folder the installed extension lives under; `uninstall` removes it whole.
pub fn installed_root(env: &Env) -> PathBuf {
    env.data_dir.join("extension")
}

/// The folder to load in `chrome://extensions` (Load unpacked).
pub fn installed_dir(env: &Env) -> PathBuf {
    installed_root(env).join("current")
}

/// Write the embedded extension to `dir`, replacing what is there: files 0600, folders 0700,
/// plus `build.json`. Written beside `dir` first, then renamed into place, so a reader never
/// sees half of it.
pub fn unpack(dir: &Path) -> Result<(), Error> {
    let parent = dir.parent().ok_or_else(|| Error::io("unpack into", dir)(bad("no parent")))?;
    create_private_dir(parent)?;
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let fresh = parent.join(format!(".{name}.new-{}", std::process::id()));
    let old = parent.join(format!(".{name}.old-{}", std::process::id()));
    let _ = fs::remove_dir_all(&fresh);
    write_all(&fresh)?;
    match fs::rename(dir, &old) {
        // Nothing there, or another install moved it away at the same moment: both fine.
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            let _ = fs::remove_dir_all(&fresh);
            return Err(Error::io("move aside", dir)(e));
        }
        _ => {}
    }
    if let Err(e) = fs::rename(&fresh, dir) {
        let _ = fs::remove_dir_all(&fresh);
        // Another install of this same build put its copy in place meanwhile: that will do.
        if build_of(dir).is_some_and(|b| b.build_id == BUILD_ID) {
            let _ = fs::remove_dir_all(&old);
            return Ok(());
        }
        let _ = fs::rename(&old, dir); // put the old one back
        return Err(Error::io("move into place", dir)(e));
    }
    let _ = fs::remove_dir_all(&old);
    Ok(())
}

/// `tabwire install`'s part: unpack into [`installed_dir`]; returns it.
pub fn install(env: &Env) -> Result<PathBuf, Error> {
    let dir = installed_dir(env);
    unpack(&dir)?;
    Ok(dir)
}

/// `build.json` of an unpacked extension folder: which build it is, if it says.
pub fn build_of(dir: &Path) -> Option<Build> {
    serde_json::from_slice(&fs::read(dir.join("build.json")).ok()?).ok()
}

/// What `build.json` says.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Build {
    pub version: String,
    pub build_id: String,
}

fn write_all(root: &Path) -> Result<(), Error> {
    create_private_dir(root)?;
    for (rel, bytes) in embedded::FILES {
        let path = root.join(rel);
        if let Some(dir) = path.parent() {
            create_private_dir(dir)?;
        }
        write_private(&path, bytes)?;
    }
    let build = Build { version: VERSION.into(), build_id: BUILD_ID.into() };
    let json = serde_json::to_vec_pretty(&build).expect("build.json serializes");
    write_private(&root.join("build.json"), &json)
}

/// The embedded extension as the zip the Chrome Web Store takes, written to `out`: every file,
/// with the manifest's `key` removed — the store refuses a manifest that carries one and gives
/// the published extension its own id (`tabwire_proto::extension_id::STORE_EXTENSION_ID`). No
/// `build.json`: a store build is not one `tabwire install` unpacked.
pub fn pack(out: &Path) -> Result<(), Error> {
    let file = fs::File::create(out).map_err(Error::io("create", out))?;
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .unix_permissions(0o644);
    let failed = |e: zip::result::ZipError| Error::io("write", out)(std::io::Error::other(e));
    for (rel, bytes) in embedded::FILES {
        let stripped;
        let bytes = if *rel == "manifest.json" {
            stripped = without_key(bytes);
            &stripped[..]
        } else {
            *bytes
        };
        zip.start_file(*rel, options).map_err(failed)?;
        zip.write_all(bytes).map_err(Error::io("write", out))?;
    }
    zip.finish().map_err(failed)?;
    Ok(())
}

/// `manifest.json` without its `key`.
fn without_key(manifest: &[u8]) -> Vec<u8> {
    let mut value: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(manifest).expect("the embedded manifest.json is a JSON object");
    value.remove("key");
    let mut text = serde_json::to_vec_pretty(&value).expect("a manifest serializes");
    text.push(b'\n');
    text
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path).and_then(|mut f| f.write_all(bytes)).map_err(Error::io("write", path))
}

fn create_private_dir(dir: &Path) -> Result<(), Error> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(Error::io("create", dir))
}

fn bad(why: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, why.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_the_extension_is_embedded() {
        let names: Vec<&str> = embedded::FILES.iter().map(|(name, _)| *name).collect();
        let musts =
            ["manifest.json", "worker/background.js", "lib/sites.js", "page-world/page-sdk.js"];
        for must in musts {
            assert!(names.contains(&must), "{must} is not embedded: {names:?}");
        }
        assert!(!names.iter().any(|n| n.ends_with(".test.js")), "no unit test ships: {names:?}");
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("../extension/manifest.json");
        let manifest = embedded::FILES.iter().find(|(n, _)| *n == "manifest.json").unwrap().1;
        assert_eq!(manifest, fs::read(checkout).unwrap(), "the embedded files are the checkout's");
    }

    #[cfg(unix)]
    #[test]
    fn unpack_writes_private_files_and_replaces_an_older_copy() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ext").join("current");
        unpack(&dir).unwrap();
        fs::write(dir.join("stale.js"), "old").unwrap();
        unpack(&dir).unwrap();
        assert!(!dir.join("stale.js").exists(), "a second unpack replaces the folder whole");
        assert!(dir.join("isolated/relay.js").is_file());
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join("manifest.json")), 0o600);
        let build = build_of(&dir).unwrap();
        assert_eq!((build.version.as_str(), build.build_id.as_str()), (VERSION, BUILD_ID));
        let left: Vec<_> = fs::read_dir(tmp.path().join("ext")).unwrap().flatten().collect();
        assert_eq!(left.len(), 1, "no temporary folder left behind: {left:?}");
    }
}
