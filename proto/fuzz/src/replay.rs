//! Replaying a fuzz corpus on stable: shared by the corpus tests of proto and session
//! (`proto/tests/fuzz_corpus.rs`, `session/tests/fuzz_corpus.rs`, which include this file).

use std::path::Path;

/// Feed every file of `<fuzz_dir>/corpus/<target>/` to `body`, which must not panic; the
/// number of files. A corpus of a handful of files means the fuzzer never ran: that fails too.
pub fn replay(fuzz_dir: &Path, target: &str, body: fn(&[u8])) -> usize {
    let dir = fuzz_dir.join("corpus").join(target);
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}; scripts/fuzz.sh makes it", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    for file in &files {
        let data = std::fs::read(file).unwrap();
        let run = std::panic::catch_unwind(|| body(&data));
        assert!(run.is_ok(), "{target} fails on {}", file.display());
    }
    assert!(files.len() > 10, "{target}'s corpus has only {} inputs", files.len());
    files.len()
}
