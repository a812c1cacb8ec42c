#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tabwire_session::fuzz::session_frames(data));
