//! Property tests of the framing and chunking, and the fuzz targets' bodies run over seeds and
//! random inputs (cargo-fuzz itself needs nightly; see proto/fuzz/README.md).

use crate::fuzz_bodies;

use bytes::BytesMut;
use proptest::prelude::*;
use tabwire_proto::chunk::{Reassembler, split};
use tabwire_proto::codec::FrameCodec;
use tabwire_proto::wire::Message;
use tokio_util::codec::{Decoder, Encoder};

fn encode_all(payloads: &[Vec<u8>]) -> Vec<u8> {
    let mut codec = FrameCodec::socket();
    let mut out = BytesMut::new();
    for p in payloads {
        codec.encode(&p[..], &mut out).unwrap();
    }
    out.to_vec()
}

/// Decode `stream` arriving in pieces that end at `cuts`.
fn decode_in_pieces(stream: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut codec = FrameCodec::socket();
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (stream.len() + 1)).collect();
    bounds.push(stream.len());
    bounds.sort();
    let mut at = 0;
    for end in bounds {
        buf.extend_from_slice(&stream[at..end]);
        at = end;
        while let Some(frame) = codec.decode(&mut buf).unwrap() {
            out.push(frame.to_vec());
        }
    }
    assert!(codec.decode_eof(&mut buf).unwrap().is_none());
    out
}

/// Strings heavy in what makes chunking hard: escapes, control characters, multibyte.
fn nasty_string() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), "[\"\\\\\\x00-\\x1fa-zé€😀]{0,3000}",]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_split_of_the_stream_decodes_the_same_frames(
        payloads in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..600), 0..12),
        cuts in prop::collection::vec(any::<usize>(), 0..40),
    ) {
        let stream = encode_all(&payloads);
        prop_assert_eq!(decode_in_pieces(&stream, &cuts), payloads);
    }

    #[test]
    fn chunking_round_trips_with_every_frame_under_the_limit(
        text in nasty_string(),
        max_frame in 100usize..2048,
    ) {
        let json = Message::Response(tabwire_proto::wire::Response::ok(
            "h1",
            tabwire_proto::wire::raw(&text),
        ))
        .to_bytes();
        let json = String::from_utf8(json).unwrap();
        let frames = split("c42", &json, max_frame);
        let mut r = Reassembler::new(usize::MAX);
        let mut whole = None;
        for (i, f) in frames.iter().enumerate() {
            prop_assert!(f.len() <= max_frame, "frame {} is {} > {}", i, f.len(), max_frame);
            prop_assert!(whole.is_none(), "the stream completed early");
            let Message::Chunk(c) = Message::parse(f).unwrap() else { panic!("not a chunk") };
            whole = r.push(c).unwrap();
        }
        prop_assert_eq!(whole, Some(json));
    }

    #[test]
    fn fuzz_decode_body_holds_on_random_bytes(data in prop::collection::vec(any::<u8>(), 0..512)) {
        fuzz_bodies::decode(&data);
    }

    #[test]
    fn fuzz_parse_body_holds_on_random_messages(
        kind in prop::sample::select(vec!["hello", "request", "response", "event", "cancel", "chunk", "x"]),
        id in nasty_string(),
        payload in nasty_string(),
    ) {
        let v = serde_json::json!({
            "type": kind, "id": id, "method": "m", "params": {"p": payload}, "protocol": 1,
            "event": "e", "data": payload, "index": 0, "count": 1, "result": [payload],
        });
        fuzz_bodies::parse(v.to_string().as_bytes());
    }
}

proptest! {
    #[test]
    fn fuzz_chunks_body_holds_on_chunk_streams_that_lie(
        pieces in prop::collection::vec(
            (0u8..3, any::<u32>(), prop::sample::select(vec![0u32, 1, 2, 3, u32::MAX]), "[a-z\\\\\"]{0,600}"),
            0..12,
        ),
    ) {
        let mut stream = Vec::new();
        for (id, index, count, data) in pieces {
            let chunk = Message::Chunk(tabwire_proto::wire::Chunk {
                id: format!("s{id}"),
                index: index % 4,
                count,
                data,
            });
            stream.extend(encode_all(&[chunk.to_bytes()]));
        }
        fuzz_bodies::chunks(&stream);
    }
}

#[test]
fn fuzz_bodies_hold_on_seed_inputs() {
    let seeds: &[&[u8]] = &[
        b"",
        b"\x01",
        b"\x03\x05\x00\x00\x00hello\x02\x00\x00\x00{}",
        b"\x01\xff\xff\xff\xff",
        b"\x02\x00\x10\x00\x00partial",
        br#"{"type":"request","id":"1","method":"ping"}"#,
        br#"{"type":"response","id":"1","result":null}"#,
        br#"{"type":"response","id":"1","error":{"code":"x","message":"y"}}"#,
        br#"{"type":"event","event":"e","tab_id":-1,"data":{"a":[1,2,"\u0000"]},"seq":18446744073709551615}"#,
        br#"{"type":"chunk","id":"c","index":0,"count":1,"data":"\"\\"}"#,
        br#"{"type":"hello","protocol":1,"browser":"chromium","host_pid":4294967295}"#,
        br#"{"type":"cancel","id":"\ud800"}"#,
        b"{\"type\":\"request\",\"id\":\"1\",\"method\":\"\xc3\x28\"}",
        b"[1,2,3]",
        b"\x00\x00",
    ];
    for seed in seeds {
        fuzz_bodies::decode(seed);
        fuzz_bodies::parse(seed);
        fuzz_bodies::chunks(seed);
    }
}
