//! Replays the session fuzzers' committed corpora (`session/fuzz/corpus/<target>.pack`, made and
//! shrunk by `scripts/fuzz.sh`) through the bodies the fuzz targets run, on stable, in every
//! test run.

#[path = "../../proto/fuzz/src/replay.rs"]
mod replay;

use tabwire_session::fuzz;

fn replay(target: &str, body: fn(&[u8])) {
    let fuzz_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let n = replay::replay(&fuzz_dir, target, body);
    println!("{target}: {n} inputs");
}

#[test]
fn the_session_socket_parser_holds_on_its_corpus() {
    replay("session", fuzz::session_frames);
}

#[test]
fn the_wait_request_policy_holds_on_its_corpus() {
    replay("wait", fuzz::wait_head);
}
