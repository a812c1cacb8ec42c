//! Every repository path a comment or document names is one a reader can open. Files move (the
//! crate split left a spec and four test files named in comments long after they were gone);
//! this reads the comments of every Rust and JavaScript file and the whole of every document,
//! script, manifest and HTML fixture, and names each path that is missing.
//!
//! A path counts when it starts with a top-level folder of the repository (`specs/tools.md`,
//! `bridge/src/…`, `extension/worker/…`), names a file (it has an extension) or a folder (it
//! ends in `/`), and is not the tail of a longer path, a URL or another project's path
//! ("Chromium's docs/…"). It exists when it does from the repository root, or from the folder
//! of the file that names it or one of that folder's parents (a crate's README may say
//! `tests/properties.rs`). A path that goes on with a pattern (`extension/lib/*.test.js`,
//! `session/fuzz/corpus/<target>/`) is not checked.

use std::path::{Path, PathBuf};

/// The kinds of file read: sources, scripts, documents, manifests, fixtures.
const READ: &[&str] = &["rs", "js", "md", "sh", "toml", "html"];

/// Of these only the comments: their code builds paths of its own (`dir.join("workflows/…")`).
const COMMENTS_ONLY: &[&str] = &["rs", "js"];

/// Folders never read: build output, dependencies, fuzz inputs.
const SKIP: &[&str] = &["target", "node_modules", "corpus", "artifacts"];

/// Characters a path is made of here; anything else ends it.
fn path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-')
}

/// After a path, these say it goes on as a pattern or a placeholder.
fn pattern_char(c: char) -> bool {
    matches!(c, '*' | '<' | '{' | '…' | '$' | '[')
}

/// Before a path, these say it is the tail of something else (a URL, `owner/name@tag`, `~/…`).
fn joined_char(c: char) -> bool {
    matches!(c, '@' | ':' | '~' | '\\')
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the repository root").to_owned()
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let entry = entry.expect("a directory entry");
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type().expect("a file type");
        if name.starts_with('.') || SKIP.contains(&name.as_str()) || kind.is_symlink() {
            continue;
        }
        if kind.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| READ.iter().any(|r| e == *r)) {
            out.push(path);
        }
    }
}

/// The comment on a line of Rust or JavaScript: after `//`, or a line of a `/* … */` block.
fn comment(line: &str) -> Option<&str> {
    let t = line.trim_start();
    if t.starts_with('*') || t.starts_with("/*") {
        return Some(t);
    }
    line.find("//").map(|at| &line[at + 2..])
}

/// The paths `text` names that start with one of `tops` (top-level folders, with their `/`).
fn named<'t>(text: &'t str, tops: &[String]) -> Vec<&'t str> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) = text[at..].find(path_char) {
        let start = at + found;
        let len = text[start..].find(|c| !path_char(c)).unwrap_or(text.len() - start);
        let (before, path, after) =
            (&text[..start], &text[start..start + len], &text[start + len..]);
        at = start + len;
        let joined = before.chars().next_back().is_some_and(joined_char);
        let owned = before.ends_with("'s ");
        if joined || owned || after.chars().next().is_some_and(pattern_char) {
            continue;
        }
        // A sentence may end right after the path.
        let path = path.trim_end_matches('.');
        let last = path.rsplit('/').next().unwrap_or(path);
        if !(path.ends_with('/') || last.contains('.')) {
            continue; // a word pair (`link/button`), not a path
        }
        if tops.iter().any(|t| path.starts_with(t.as_str()) && path.len() > t.len()) {
            out.push(path);
        }
    }
    out
}

fn exists_from(file: &Path, path: &str, root: &Path) -> bool {
    let path = path.trim_end_matches('/');
    root.join(path).exists()
        || file
            .ancestors()
            .skip(1)
            .take_while(|d| d.starts_with(root))
            .any(|d| d.join(path).exists())
}

#[test]
fn every_path_a_comment_or_document_names_exists() {
    let root = root();
    let mut tops: Vec<String> = std::fs::read_dir(&root)
        .expect("the repository root")
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && !SKIP.contains(&n.as_str()))
        .map(|n| format!("{n}/"))
        .collect();
    tops.sort();
    assert!(tops.contains(&"specs/".to_owned()), "the root has specs/: {tops:?}");

    let mut all = Vec::new();
    files(&root, &mut all);
    assert!(all.len() > 300, "read only {} files under {}", all.len(), root.display());

    let mut missing = Vec::new();
    // This file names missing paths on purpose, in its own test of the scan.
    let me = Path::new(file!()).file_name().expect("this file's name");
    for file in all.iter().filter(|f| f.file_name() != Some(me)) {
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        let comments_only = file.extension().is_some_and(|e| COMMENTS_ONLY.iter().any(|c| e == *c));
        for (n, line) in text.lines().enumerate() {
            let Some(said) = (if comments_only { comment(line) } else { Some(line) }) else {
                continue;
            };
            for path in named(said, &tops) {
                if !exists_from(file, path, &root) {
                    let at = file.strip_prefix(&root).unwrap_or(file).display().to_string();
                    missing.push(format!("{at}:{} names {path}", n + 1));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{} named paths do not exist (fix the name, or the comment):\n{}",
        missing.len(),
        missing.join("\n")
    );
}

#[test]
fn the_scan_finds_a_path_where_a_reader_would() {
    let tops = ["specs/".to_owned(), "bridge/".to_owned(), "tests/".to_owned()];
    let line = "see specs/mcp.md. (bridge/src/mcp/jsonrpc.rs:6), https://x.org/specs/a.md, \
                bridge/tests/*.rs, tests/tests/page_commands.rs, Chromium's specs/b.md, \
                link/button, bridge/benches/ and specs/";
    assert_eq!(
        named(line, &tops),
        [
            "specs/mcp.md",
            "bridge/src/mcp/jsonrpc.rs",
            "tests/tests/page_commands.rs",
            "bridge/benches/"
        ]
    );
    assert_eq!(comment("    let f = dir.join(\"specs/x.md\"); // specs/y.md"), Some(" specs/y.md"));
    assert_eq!(comment("let f = dir.join(\"specs/x.md\");"), None);
}
