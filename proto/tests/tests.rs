//! The wire's tests, one binary (as ripgrep's `tests/tests.rs`): error codes and constants
//! as the extension has them, properties of framing and chunking, the fuzzers' corpora
//! replayed, and every path a comment or document names.

#[path = "../fuzz/src/lib.rs"]
mod fuzz_bodies;
#[path = "../fuzz/src/replay.rs"]
mod replay;

mod error_codes;
mod extension_constants;
mod fuzz_corpus;
mod named_paths;
mod properties;
