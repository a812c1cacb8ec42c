//! Locating the real binaries. Cargo builds every workspace binary before it runs any test
//! (`cargo test --workspace`), into the target dir that holds this test executable.

use std::path::PathBuf;

/// Path of a workspace binary (`tabwire`, `tabwire-host`).
pub fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test> → target/<profile>/<name>
    let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: build every binary first with `cargo build --workspace --bins` \
         (scripts/test.sh does this)",
        path.display()
    );
    path
}

/// The repository root (where `extension/` lives).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("repo root").to_owned()
}

/// A fresh, private (0700) scratch directory with a short path: unix socket paths are limited
/// to 108 bytes.
pub fn scratch_dir(tag: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("tw-{tag}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).expect("chmod 700");
    dir
}
