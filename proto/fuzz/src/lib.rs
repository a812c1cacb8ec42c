//! The bodies of the fuzz targets. Plain functions over bytes, so the host's ordinary tests
//! can run them too (proto/tests/properties.rs includes this file) without nightly.

use bytes::BytesMut;
use tabwire_proto::chunk::{ChunkError, Reassembler, split};
use tabwire_proto::codec::FrameCodec;
use tabwire_proto::wire::Message;
use tokio_util::codec::Decoder;

/// The frame decoder never panics, never hands out a frame over its limit, and cuts the same
/// frames whether the bytes arrive at once or in pieces. The first byte picks the piece size.
pub fn decode(data: &[u8]) {
    let Some((&step, stream)) = data.split_first() else { return };
    let step = usize::from(step).max(1);
    let limit = 4096;
    let whole = decode_all(stream, stream.len().max(1), limit);
    let pieces = decode_all(stream, step, limit);
    assert_eq!(whole, pieces, "the same frames whatever the reads");
}

/// Frames (or the first error, as text) from `stream` fed `step` bytes at a time.
fn decode_all(stream: &[u8], step: usize, limit: usize) -> Vec<Result<Vec<u8>, String>> {
    let mut codec = FrameCodec::new(limit, limit);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for piece in stream.chunks(step) {
        buf.extend_from_slice(piece);
        loop {
            match codec.decode(&mut buf) {
                Ok(Some(frame)) => {
                    assert!(frame.len() <= limit);
                    out.push(Ok(frame.to_vec()));
                }
                Ok(None) => break,
                Err(e) => {
                    out.push(Err(e.to_string()));
                    return out;
                }
            }
        }
    }
    match codec.decode_eof(&mut buf) {
        Ok(Some(frame)) => out.push(Ok(frame.to_vec())),
        Ok(None) => {}
        Err(e) => out.push(Err(e.to_string())),
    }
    out
}

/// `Message::parse` never panics; whatever it accepts serializes to text that parses to the
/// same message, and survives chunking into small frames.
pub fn parse(data: &[u8]) {
    let Ok(msg) = Message::parse(data) else { return };
    let bytes = msg.to_bytes();
    let again = Message::parse(&bytes).expect("what the host writes parses");
    assert_eq!(again.to_bytes(), bytes, "serialization is stable");
    let text = std::str::from_utf8(&bytes).expect("JSON text is UTF-8");
    let frames = split("c1", text, 256);
    let mut r = Reassembler::new(usize::MAX);
    let mut whole = None;
    for f in &frames {
        assert!(f.len() <= 256, "chunk frame of {} bytes", f.len());
        let Message::Chunk(c) = Message::parse(f).expect("chunks parse") else {
            panic!("split made something other than a chunk")
        };
        whole = r.push(c).expect("our own chunks reassemble");
    }
    assert_eq!(whole.as_deref(), Some(text));
}

/// Chunk reassembly over whatever a peer sends: the bytes are cut into frames as a socket
/// would, each frame that parses as a chunk goes to one [`Reassembler`]. It never panics,
/// never allocates for pieces that did not arrive (a claimed `count` of four billion costs
/// nothing), and never hands back a message over its limit or one it did not receive whole.
pub fn chunks(data: &[u8]) {
    const LIMIT: usize = 1024;
    let mut codec = FrameCodec::new(4096, 4096);
    let mut buf = BytesMut::from(data);
    let mut r = Reassembler::new(LIMIT);
    let mut received: std::collections::HashMap<String, usize> = Default::default();
    while let Ok(Some(frame)) = codec.decode(&mut buf) {
        let Ok(Message::Chunk(c)) = Message::parse(&frame) else { continue };
        let id = c.id.clone();
        *received.entry(id.clone()).or_default() += c.data.len();
        match r.push(c) {
            Ok(Some(whole)) => {
                assert!(whole.len() <= LIMIT, "a {}-byte message past the limit", whole.len());
                assert!(whole.len() <= received[&id], "more text out than came in");
                received.remove(&id);
            }
            Ok(None) => {}
            // A zero count is refused before the stream is looked at; any other error ends it.
            Err(ChunkError::Empty { .. }) => {}
            Err(_) => {
                received.remove(&id);
            }
        }
        assert!(r.pending() <= received.len(), "a stream kept after it ended");
    }
}
