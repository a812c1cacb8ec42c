//! Error codes are strings that cross every hop: one table in `specs/protocol.md`, one list in
//! `wire::code::ALL`. This keeps them equal, and checks that every code the extension throws is
//! one of them.

use std::collections::BTreeSet;
use std::path::PathBuf;

use tabwire_proto::wire::code;

fn repo_file(path: &str) -> String {
    let full = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("read {}: {e}", full.display()))
}

/// The first column of the table under `## Error codes`.
fn spec_codes() -> Vec<String> {
    let spec = repo_file("specs/protocol.md");
    let table = spec.split("## Error codes").nth(1).expect("an Error codes section");
    table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| l.split('`').nth(1).map(str::to_owned))
        .collect()
}

#[test]
fn the_spec_table_lists_exactly_the_codes_in_order() {
    assert_eq!(spec_codes(), code::ALL, "specs/protocol.md's error table and wire::code::ALL");
}

#[test]
fn every_code_the_extension_throws_is_in_the_table() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../extension");
    let mut thrown = BTreeSet::new();
    let mut dirs = vec![dir];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            let name = path.to_string_lossy();
            if path.is_dir() {
                dirs.push(path);
            } else if name.ends_with(".js") && !name.ends_with(".test.js") {
                let text = std::fs::read_to_string(&path).unwrap();
                for call in ["fail('", "TabwireError('"] {
                    for piece in text.split(call).skip(1) {
                        thrown.insert(piece.split('\'').next().unwrap().to_owned());
                    }
                }
            }
        }
    }
    assert!(thrown.len() > 5, "found the extension's codes: {thrown:?}");
    let unknown: Vec<_> = thrown.iter().filter(|c| !code::ALL.contains(&c.as_str())).collect();
    assert!(
        unknown.is_empty(),
        "codes the extension throws that specs/protocol.md lacks: {unknown:?}"
    );
}
