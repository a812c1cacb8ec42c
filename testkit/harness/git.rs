//! Throwaway git repositories for tests that check what a worker changed.

use std::path::Path;

/// Run git in `repo` with a fixed identity and no signing; panics saying what failed.
pub fn git(repo: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(repo)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A new repository at `dir` with `files` (name, content) committed.
pub fn repo_with(dir: &Path, files: &[(&str, &str)]) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q"]);
    for (name, content) in files {
        std::fs::write(dir.join(name), content).unwrap();
        git(dir, &["add", name]);
    }
    git(dir, &["commit", "-q", "-m", "first"]);
}
