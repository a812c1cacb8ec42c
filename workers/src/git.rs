//! What a worker changed in its git work tree: the whole tree (tracked files and untracked ones
//! git does not ignore) is photographed before the worker starts and after it ends, and the two
//! are compared with `git diff --numstat` — so the report counts only the worker's changes,
//! not those the user had made before.
//!
//! A photograph is a tree object written through a temporary index, a copy of the real one (so
//! unchanged files are not hashed again). The user's index, work tree, branches and stash are
//! left alone; git only gains blob objects, as with `git stash create`, which its gc removes.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;

/// The longest one git command may take; a slower one is stopped and the changes are not
/// reported (the report says why).
pub const GIT_TIMEOUT: Duration = Duration::from_secs(30);
/// Changed files listed at most; the report says how many more there were.
pub const MAX_CHANGED_FILES: usize = 1_000;

/// The work tree as it was at one moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The work tree's top directory.
    pub top: PathBuf,
    /// The tree object that holds it.
    tree: String,
}

/// One changed file, as `git diff --numstat` counts it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FileChange {
    /// Relative to the work tree's top directory.
    pub path: String,
    /// Lines added (`null` for a binary file).
    pub added: Option<u64>,
    /// Lines removed (`null` for a binary file).
    pub removed: Option<u64>,
}

/// The work tree that holds `cwd`, photographed now; `None` when `cwd` is in none (or git is
/// not installed). `scratch` is a free path for the temporary index.
pub async fn snapshot(cwd: &Path, scratch: &Path) -> Option<Result<Snapshot, String>> {
    let ask = ["rev-parse", "--show-toplevel", "--path-format=absolute", "--git-path", "index"];
    let Ok(found) = git(cwd, &ask, None).await else { return None };
    let mut lines = found.lines();
    let (Some(top), Some(index)) = (lines.next(), lines.next()) else { return None };
    let top = PathBuf::from(top);
    Some(photograph(&top, Path::new(index), scratch).await.map(|tree| Snapshot { top, tree }))
}

/// What changed in `before`'s work tree since it was taken, oldest path first, and how many
/// changed files were left out of the list ([`MAX_CHANGED_FILES`]).
pub async fn changes_since(
    before: &Snapshot,
    scratch: &Path,
) -> Result<(Vec<FileChange>, usize), String> {
    let Some(after) = snapshot(&before.top, scratch).await else {
        return Err(format!("{} is no longer a git work tree", before.top.display()));
    };
    let after = after?;
    let diff = git(
        &before.top,
        &["diff", "--numstat", "-z", "--no-renames", "--no-ext-diff", &before.tree, &after.tree],
        None,
    )
    .await?;
    let mut changes = parse_numstat(&diff);
    let more = changes.len().saturating_sub(MAX_CHANGED_FILES);
    changes.truncate(MAX_CHANGED_FILES);
    Ok((changes, more))
}

/// Write the work tree at `top` as a tree object, through a copy of `index` at `scratch`.
async fn photograph(top: &Path, index: &Path, scratch: &Path) -> Result<String, String> {
    let _ = std::fs::remove_file(scratch);
    if index.exists() {
        std::fs::copy(index, scratch).map_err(|e| format!("cannot copy the git index: {e}"))?;
    }
    let tree = async {
        git(top, &["add", "--all", "--", "."], Some(scratch)).await?;
        git(top, &["write-tree"], Some(scratch)).await
    }
    .await;
    let _ = std::fs::remove_file(scratch);
    Ok(tree?.trim().to_owned())
}

/// Run git in `dir` (with `index` as its index file); its stdout, or what went wrong.
async fn git(dir: &Path, args: &[&str], index: Option<&Path>) -> Result<String, String> {
    let mut cmd = tokio::process::Command::new("git");
    cmd.arg("--no-optional-locks")
        .args(args)
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    if let Some(index) = index {
        cmd.env("GIT_INDEX_FILE", index);
    }
    let shown = || format!("git {}", args.join(" "));
    let out = match tokio::time::timeout(GIT_TIMEOUT, cmd.output()).await {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => return Err(format!("cannot run git: {e}")),
        Err(_) => return Err(format!("`{}` took longer than {GIT_TIMEOUT:?}", shown())),
    };
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        return Err(format!("`{}` failed: {}", shown(), said.trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `added\tremoved\tpath\0` records (`-` counts for binary files).
fn parse_numstat(text: &str) -> Vec<FileChange> {
    text.split('\0')
        .filter_map(|record| {
            let mut fields = record.splitn(3, '\t');
            let added = fields.next()?.trim_start_matches('\n');
            let (removed, path) = (fields.next()?, fields.next()?);
            Some(FileChange {
                path: path.to_owned(),
                added: added.parse().ok(),
                removed: removed.parse().ok(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numstat_records_are_read_with_binary_files_uncounted() {
        let text = "3\t1\tsrc/a b.rs\0-\t-\timg.png\x0012\t0\tnew\tfile.txt\0";
        assert_eq!(
            parse_numstat(text),
            [
                FileChange { path: "src/a b.rs".into(), added: Some(3), removed: Some(1) },
                FileChange { path: "img.png".into(), added: None, removed: None },
                FileChange { path: "new\tfile.txt".into(), added: Some(12), removed: Some(0) },
            ]
        );
        assert!(parse_numstat("").is_empty());
    }
}
