//! The commit this `tabwire` was built from, for `tabwire --version`: `.cargo_vcs_info.json`,
//! which `cargo package` writes into a published crate (built where no checkout is), else git
//! in a checkout, else "unknown".

use std::path::Path;
use std::process::Command;

fn main() {
    let packaged = std::fs::read_to_string(".cargo_vcs_info.json").ok().and_then(|json| {
        let at = json.find("\"sha1\"")?;
        let sha = json[at + 6..].split('"').nth(1)?;
        Some(sha.chars().take(12).collect::<String>())
    });
    let commit = packaged.or_else(|| {
        // A new commit changes the branch HEAD names (or HEAD itself, detached).
        for path in ["HEAD", "packed-refs"] {
            rerun_if_changed(git(&["rev-parse", "--git-path", path]));
        }
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            rerun_if_changed(git(&["rev-parse", "--git-path", &branch]));
        }
        git(&["rev-parse", "--short=12", "HEAD"])
    });
    println!("cargo:rustc-env=TABWIRE_COMMIT={}", commit.as_deref().unwrap_or("unknown"));
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

fn rerun_if_changed(path: Option<String>) {
    if let Some(path) = path.filter(|p| Path::new(p).exists()) {
        println!("cargo:rerun-if-changed={path}");
    }
}
