//! Replays the fuzzers' committed corpora (`proto/fuzz/corpus/<target>.pack`, made and shrunk by
//! `scripts/fuzz.sh`) through the same bodies the fuzz targets run, on stable, in every test
//! run: what the fuzzers once found interesting keeps holding.

use crate::fuzz_bodies;
use crate::replay;

fn replay(target: &str, body: fn(&[u8])) {
    let fuzz_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let n = replay::replay(&fuzz_dir, target, body);
    println!("{target}: {n} inputs");
}

#[test]
fn the_frame_decoder_holds_on_its_corpus() {
    replay("decode", fuzz_bodies::decode);
}

#[test]
fn the_wire_parser_holds_on_its_corpus() {
    replay("parse", fuzz_bodies::parse);
}

#[test]
fn chunk_reassembly_holds_on_its_corpus() {
    replay("chunks", fuzz_bodies::chunks);
}
