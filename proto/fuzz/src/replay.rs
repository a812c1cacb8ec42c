//! Replaying a fuzz corpus on stable: shared by the corpus tests of proto and session
//! (`proto/tests/fuzz_corpus.rs`, `session/tests/fuzz_corpus.rs`, which include this file).
//!
//! A corpus is committed as one file per target, `<fuzz_dir>/corpus/<target>.pack`: each input
//! as its length (4 bytes, little-endian) and then its bytes, in byte order. Thousands of tiny
//! files cost every clone and checkout more than the inputs themselves; `scripts/fuzz.sh`
//! unpacks a pack into the folder the fuzzer works in, and packs it again after minimizing.

use std::path::Path;

/// The inputs of a pack, or where it is cut short.
pub fn unpack(pack: &[u8]) -> Result<Vec<&[u8]>, String> {
    let mut inputs = Vec::new();
    let mut rest = pack;
    while !rest.is_empty() {
        let Some((len, after)) = rest.split_first_chunk::<4>() else {
            return Err(format!("{} bytes after input {} are no length", rest.len(), inputs.len()));
        };
        let len = u32::from_le_bytes(*len) as usize;
        if after.len() < len {
            return Err(format!(
                "input {} says {len} bytes, {} are left",
                inputs.len(),
                after.len()
            ));
        }
        let (input, next) = after.split_at(len);
        inputs.push(input);
        rest = next;
    }
    Ok(inputs)
}

/// Feed every input of `<fuzz_dir>/corpus/<target>.pack` to `body`, which must not panic; the
/// number of inputs. A corpus of a handful of inputs means the fuzzer never ran: that fails too.
/// An input that fails is written beside the test's other output, to run again by hand.
pub fn replay(fuzz_dir: &Path, target: &str, body: fn(&[u8])) -> usize {
    let path = fuzz_dir.join("corpus").join(format!("{target}.pack"));
    let pack = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; scripts/fuzz.sh makes it", path.display()));
    let inputs = unpack(&pack).unwrap_or_else(|e| panic!("{} is damaged: {e}", path.display()));
    for (i, data) in inputs.iter().enumerate() {
        if std::panic::catch_unwind(|| body(data)).is_err() {
            let kept = std::env::temp_dir().join(format!("tabwire-fuzz-{target}-{i}"));
            let _ = std::fs::write(&kept, data);
            panic!("{target} fails on input {i} of {}, kept in {}", path.display(), kept.display());
        }
    }
    assert!(inputs.len() > 10, "{target}'s corpus has only {} inputs", inputs.len());
    inputs.len()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_pack_splits_into_its_inputs_and_a_cut_one_is_named() {
        let pack =
            [&3u32.to_le_bytes()[..], b"abc", &0u32.to_le_bytes(), &2u32.to_le_bytes(), b"z"]
                .concat();
        let err = super::unpack(&pack).unwrap_err();
        assert!(err.contains("input 2 says 2 bytes, 1 are left"), "{err}");
        let whole = &pack[..pack.len() - 5];
        assert_eq!(super::unpack(whole).unwrap(), [&b"abc"[..], b""]);
    }
}
