//! Splitting a message too large for one frame toward the browser, and putting it back
//! together.
//!
//! Chrome disconnects a native host that writes a frame over 1 MiB. The host therefore sends a
//! larger message as `chunk` messages whose `data` strings, joined in order, are the JSON text
//! of the original; the extension joins them and parses the result. Pieces are cut on UTF-8
//! character boundaries and sized by their *escaped* length, so every chunk frame — envelope
//! included — fits the limit whatever the text holds (quotes, backslashes, control characters).

use std::collections::HashMap;

use crate::wire::Chunk;

/// Bytes a chunk's JSON envelope takes besides its id and its escaped data, with room for the
/// largest `index` and `count`: `{"type":"chunk","id":"","index":4294967295,"count":4294967295,"data":""}`.
const ENVELOPE: usize = 72;

/// How many bytes `b` takes once escaped inside a JSON string by serde_json.
fn escaped_len(b: u8) -> usize {
    match b {
        b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
        0x00..=0x1f => 6,
        _ => 1,
    }
}

/// Whether some byte of `bytes` needs escaping in a JSON string. Branch-free over the slice so
/// the compiler vectorizes it: the common case, plain text, is checked at memory speed.
fn needs_escaping(bytes: &[u8]) -> bool {
    bytes.iter().fold(false, |any, &b| any | (b < 0x20) | (b == b'"') | (b == b'\\'))
}

/// Split `json` (the UTF-8 text of one message) into chunk messages whose frames are at most
/// `max_frame` bytes each. `id` names the chunk stream and must be unique among streams in
/// flight. Returns the payloads of the chunk frames, in order.
pub fn split(id: &str, json: &str, max_frame: usize) -> Vec<Vec<u8>> {
    // The id is escaped too; be safe with its worst case.
    let budget = max_frame
        .checked_sub(ENVELOPE + id.len() * 6)
        .filter(|b| *b >= 6)
        .expect("frame limit too small for a chunk envelope");
    let pieces = cut(json, budget);
    let count = pieces.len();
    let id_json = serde_json::to_string(id).expect("a string serializes");
    pieces
        .into_iter()
        .enumerate()
        .map(|(index, (data, clean))| {
            // The same text `Message::Chunk(..).to_bytes()` makes, without copying `data` into
            // an owned message first.
            let mut out = Vec::with_capacity(ENVELOPE + id_json.len() + data.len() + 16);
            out.extend_from_slice(br#"{"type":"chunk","id":"#);
            out.extend_from_slice(id_json.as_bytes());
            out.extend_from_slice(
                format!(r#","index":{index},"count":{count},"data":"#).as_bytes(),
            );
            if clean {
                out.push(b'"');
                out.extend_from_slice(data.as_bytes());
                out.push(b'"');
            } else {
                serde_json::to_writer(&mut out, data).expect("a string serializes");
            }
            out.push(b'}');
            out
        })
        .collect()
}

/// Cut `json` into pieces whose escaped length is at most `budget`, on character boundaries.
/// Each piece comes with whether it is clean (needs no escaping, so it can be copied as is).
fn cut(json: &str, budget: usize) -> Vec<(&str, bool)> {
    let bytes = json.as_bytes();
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let mut end = (start + budget).min(bytes.len());
        let clean = !needs_escaping(&bytes[start..end]);
        if !clean {
            // Walk byte by byte, counting escaped lengths, to where the budget runs out.
            let mut used = 0;
            end = start;
            while end < bytes.len() && used + escaped_len(bytes[end]) <= budget {
                used += escaped_len(bytes[end]);
                end += 1;
            }
        }
        while !json.is_char_boundary(end) {
            end -= 1;
        }
        pieces.push((&json[start..end], clean));
        start = end;
    }
    if pieces.is_empty() {
        pieces.push(("", true));
    }
    pieces
}

/// Why a chunk stream could not be put back together.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ChunkError {
    #[error("chunk {index} of stream {id:?} is out of range (count {count})")]
    OutOfRange { id: String, index: u32, count: u32 },
    #[error("chunk stream {id:?} changed its count from {was} to {now}")]
    CountChanged { id: String, was: u32, now: u32 },
    #[error("chunk {index} of stream {id:?} arrived twice")]
    Duplicate { id: String, index: u32 },
    #[error("chunk stream {id:?} is over the {limit}-byte limit for one message")]
    TooLarge { id: String, limit: usize },
    #[error("chunk stream {id:?} has a count of zero")]
    Empty { id: String },
}

/// A stream's pieces so far, by index. A map rather than a vector of `count` slots: `count`
/// comes from the peer, and a claimed count of four billion must not cost memory up front.
struct Partial {
    count: u32,
    parts: std::collections::BTreeMap<u32, String>,
    bytes: usize,
}

/// Joins chunk streams back into messages. Streams may interleave.
pub struct Reassembler {
    limit: usize,
    streams: HashMap<String, Partial>,
}

impl Reassembler {
    pub fn new(limit: usize) -> Self {
        Self { limit, streams: HashMap::new() }
    }

    /// Take one chunk; returns the whole JSON text once its last piece arrived. A stream that
    /// errs is forgotten.
    pub fn push(&mut self, chunk: Chunk) -> Result<Option<String>, ChunkError> {
        let Chunk { id, index, count, data } = chunk;
        if count == 0 {
            return Err(ChunkError::Empty { id });
        }
        if index >= count {
            self.streams.remove(&id);
            return Err(ChunkError::OutOfRange { id, index, count });
        }
        let partial = self.streams.entry(id.clone()).or_insert_with(|| Partial {
            count,
            parts: Default::default(),
            bytes: 0,
        });
        if partial.count != count {
            let was = partial.count;
            self.streams.remove(&id);
            return Err(ChunkError::CountChanged { id, was, now: count });
        }
        if partial.parts.contains_key(&index) {
            self.streams.remove(&id);
            return Err(ChunkError::Duplicate { id, index });
        }
        partial.bytes += data.len();
        if partial.bytes > self.limit {
            self.streams.remove(&id);
            return Err(ChunkError::TooLarge { id, limit: self.limit });
        }
        partial.parts.insert(index, data);
        if partial.parts.len() < count as usize {
            return Ok(None);
        }
        // Every index below `count` arrived once: the map's order is the stream's.
        let partial = self.streams.remove(&id).expect("stream present");
        let mut whole = String::with_capacity(partial.bytes);
        for part in partial.parts.into_values() {
            whole.push_str(&part);
        }
        Ok(Some(whole))
    }

    /// Streams still waiting for pieces.
    pub fn pending(&self) -> usize {
        self.streams.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::MAX_TO_BROWSER;
    use crate::wire::Message;

    fn reassemble(frames: &[Vec<u8>]) -> String {
        let mut r = Reassembler::new(usize::MAX);
        let mut out = None;
        for f in frames {
            let Message::Chunk(c) = Message::parse(f).unwrap() else { panic!("not a chunk") };
            out = r.push(c).unwrap();
        }
        out.expect("stream complete")
    }

    #[test]
    fn small_message_is_one_chunk() {
        let frames = split("c1", r#"{"a":1}"#, MAX_TO_BROWSER);
        assert_eq!(frames.len(), 1);
        assert_eq!(reassemble(&frames), r#"{"a":1}"#);
    }

    #[test]
    fn worst_case_escapes_stay_under_the_limit() {
        // Control characters escape to six bytes each, quotes to two, and multibyte characters
        // must not be cut in half.
        let text: String = "\u{1}\"\\é😀\n".repeat(200_000);
        let json = serde_json::to_string(&serde_json::json!({ "s": text })).unwrap();
        let frames = split("stream-x", &json, MAX_TO_BROWSER);
        assert!(frames.len() > 1);
        for f in &frames {
            assert!(f.len() <= MAX_TO_BROWSER, "frame of {} bytes", f.len());
        }
        assert_eq!(reassemble(&frames), json);
    }

    #[test]
    fn frames_are_the_text_of_chunk_messages() {
        let json = "{\"a\":\"\u{1}\\\"é😀\"}".repeat(50);
        for (index, frame) in split("c\"1", &json, 120).iter().enumerate() {
            let Message::Chunk(c) = Message::parse(frame).unwrap() else { panic!() };
            assert_eq!(c.index as usize, index);
            assert_eq!(Message::Chunk(c).to_bytes(), *frame);
        }
    }

    #[test]
    fn interleaved_streams_and_errors() {
        let a = split("a", &"x".repeat(300), 200);
        let b = split("b", &"y".repeat(300), 200);
        let mut r = Reassembler::new(usize::MAX);
        let parse = |f: &Vec<u8>| match Message::parse(f).unwrap() {
            Message::Chunk(c) => c,
            _ => panic!(),
        };
        let mut done = vec![];
        for (fa, fb) in a.iter().zip(b.iter()) {
            done.extend(r.push(parse(fa)).unwrap());
            done.extend(r.push(parse(fb)).unwrap());
        }
        for f in a.iter().skip(b.len()).chain(b.iter().skip(a.len())) {
            done.extend(r.push(parse(f)).unwrap());
        }
        assert_eq!(done.len(), 2);
        assert_eq!(r.pending(), 0);

        let c = Chunk { id: "z".into(), index: 0, count: 2, data: "ab".into() };
        r.push(c.clone()).unwrap();
        assert_eq!(r.push(c), Err(ChunkError::Duplicate { id: "z".into(), index: 0 }));
        let c = Chunk { id: "z".into(), index: 2, count: 2, data: "ab".into() };
        assert!(matches!(r.push(c), Err(ChunkError::OutOfRange { .. })));
        let mut small = Reassembler::new(3);
        let c = Chunk { id: "q".into(), index: 0, count: 2, data: "abcd".into() };
        assert!(matches!(small.push(c), Err(ChunkError::TooLarge { .. })));
    }
}
