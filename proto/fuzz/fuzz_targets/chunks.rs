#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tabwire_proto_fuzz::chunks(data));
