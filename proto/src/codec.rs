//! Chrome Native Messaging framing: a 4-byte native-endian length, then that many bytes of
//! UTF-8 JSON.
//!
//! This file cuts and joins frames and nothing else: it never looks inside a payload (that is
//! [`crate::wire`]'s job) and never decides what to do with one that is too big toward the
//! browser (that is [`crate::chunk`]'s). The same codec frames the host ⇄ bridge socket.

use byteorder::{ByteOrder, NativeEndian};
use bytes::{BufMut, Bytes, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use crate::limits;

/// Size of the length prefix.
pub const HEADER_LEN: usize = 4;

/// What can go wrong while cutting or joining frames.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The length prefix announces more than the peer may send. Raised before a single byte is
    /// reserved for the frame; the stream cannot be resynchronised after it.
    #[error(
        "a frame announced {declared} bytes, over the limit of {limit} bytes for this stream; \
         the stream cannot be resynchronised and is closed"
    )]
    TooLarge { declared: usize, limit: usize },
    /// We were asked to write a frame the peer would refuse. Callers split such messages first.
    #[error(
        "refusing to write a frame of {len} bytes: the peer accepts at most {limit} bytes \
         (split the message into chunks first)"
    )]
    OutgoingTooLarge { len: usize, limit: usize },
    /// The stream ended in the middle of a frame.
    #[error("the stream ended in the middle of a frame: {have} of {need} bytes arrived")]
    Truncated { have: usize, need: usize },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// A length-prefixed frame codec. Decoding yields each payload as [`Bytes`] split off the read
/// buffer (no copy); encoding writes the prefix and the payload.
#[derive(Debug, Clone, Copy)]
pub struct FrameCodec {
    max_in: usize,
    max_out: usize,
}

impl FrameCodec {
    pub fn new(max_in: usize, max_out: usize) -> Self {
        Self { max_in, max_out }
    }

    /// The host's side of the browser's stdio: up to 64 MiB in, at most 1 MiB out.
    pub fn host_to_browser() -> Self {
        Self::new(limits::MAX_FROM_BROWSER, limits::MAX_TO_BROWSER)
    }

    /// Either side of the host ⇄ bridge socket.
    pub fn socket() -> Self {
        Self::new(limits::MAX_SOCKET_FRAME, limits::MAX_SOCKET_FRAME)
    }

    pub fn max_in(&self) -> usize {
        self.max_in
    }

    pub fn max_out(&self) -> usize {
        self.max_out
    }
}

impl Decoder for FrameCodec {
    type Item = Bytes;
    type Error = FrameError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
        if src.len() < HEADER_LEN {
            return Ok(None);
        }
        let len = NativeEndian::read_u32(&src[..HEADER_LEN]) as usize;
        if len > self.max_in {
            return Err(FrameError::TooLarge { declared: len, limit: self.max_in });
        }
        let need = HEADER_LEN + len;
        if src.len() < need {
            // Reserve once for the whole frame so a large one is not read in many regrowths.
            src.reserve(need - src.len());
            return Ok(None);
        }
        let mut frame = src.split_to(need);
        let _ = frame.split_to(HEADER_LEN);
        Ok(Some(frame.freeze()))
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
        match self.decode(src)? {
            Some(frame) => Ok(Some(frame)),
            None if src.is_empty() => Ok(None),
            None => {
                let need = if src.len() >= HEADER_LEN {
                    HEADER_LEN + NativeEndian::read_u32(&src[..HEADER_LEN]) as usize
                } else {
                    HEADER_LEN
                };
                Err(FrameError::Truncated { have: src.len(), need })
            }
        }
    }
}

impl Encoder<&[u8]> for FrameCodec {
    type Error = FrameError;

    fn encode(&mut self, payload: &[u8], dst: &mut BytesMut) -> Result<(), FrameError> {
        if payload.len() > self.max_out {
            return Err(FrameError::OutgoingTooLarge { len: payload.len(), limit: self.max_out });
        }
        dst.reserve(HEADER_LEN + payload.len());
        let mut header = [0u8; HEADER_LEN];
        NativeEndian::write_u32(&mut header, payload.len() as u32);
        dst.put_slice(&header);
        dst.put_slice(payload);
        Ok(())
    }
}

impl Encoder<Bytes> for FrameCodec {
    type Error = FrameError;

    fn encode(&mut self, payload: Bytes, dst: &mut BytesMut) -> Result<(), FrameError> {
        self.encode(&payload[..], dst)
    }
}

/// The 4-byte prefix for a payload of `len` bytes, for writers that send header and payload
/// with two writes instead of copying the payload into a buffer.
pub fn header(len: usize) -> [u8; HEADER_LEN] {
    let mut header = [0u8; HEADER_LEN];
    NativeEndian::write_u32(&mut header, len as u32);
    header
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(payload: &[u8]) -> BytesMut {
        let mut buf = BytesMut::new();
        FrameCodec::new(usize::MAX, usize::MAX).encode(payload, &mut buf).unwrap();
        buf
    }

    #[test]
    fn decodes_one_frame_and_leaves_the_rest() {
        let mut buf = framed(b"{\"a\":1}");
        buf.extend_from_slice(&framed(b"[]"));
        let mut codec = FrameCodec::socket();
        assert_eq!(&codec.decode(&mut buf).unwrap().unwrap()[..], b"{\"a\":1}");
        assert_eq!(&codec.decode(&mut buf).unwrap().unwrap()[..], b"[]");
        assert!(codec.decode(&mut buf).unwrap().is_none());
    }

    #[test]
    fn partial_header_and_partial_body_wait_for_more() {
        let whole = framed(b"hello");
        let mut codec = FrameCodec::socket();
        let mut buf = BytesMut::from(&whole[..2]);
        assert!(codec.decode(&mut buf).unwrap().is_none());
        buf.extend_from_slice(&whole[2..6]);
        assert!(codec.decode(&mut buf).unwrap().is_none());
        buf.extend_from_slice(&whole[6..]);
        assert_eq!(&codec.decode(&mut buf).unwrap().unwrap()[..], b"hello");
    }

    #[test]
    fn lying_length_prefix_is_refused_before_allocation() {
        let mut codec = FrameCodec::host_to_browser();
        let mut buf = BytesMut::new();
        buf.put_slice(&header(u32::MAX as usize));
        let cap_before = buf.capacity();
        let err = codec.decode(&mut buf).unwrap_err();
        assert!(matches!(err, FrameError::TooLarge { declared, limit }
            if declared == u32::MAX as usize && limit == limits::MAX_FROM_BROWSER));
        assert_eq!(buf.capacity(), cap_before, "nothing was reserved for the lying frame");
        assert!(err.to_string().contains("cannot be resynchronised"));
    }

    #[test]
    fn exactly_one_mebibyte_goes_to_the_browser_one_byte_more_does_not() {
        let mut codec = FrameCodec::host_to_browser();
        let mut out = BytesMut::new();
        let ok = vec![b'x'; limits::MAX_TO_BROWSER];
        codec.encode(&ok[..], &mut out).unwrap();
        assert_eq!(out.len(), HEADER_LEN + limits::MAX_TO_BROWSER);
        let too_big = vec![b'x'; limits::MAX_TO_BROWSER + 1];
        let err = codec.encode(&too_big[..], &mut BytesMut::new()).unwrap_err();
        assert!(
            matches!(err, FrameError::OutgoingTooLarge { len, .. } if len == limits::MAX_TO_BROWSER + 1)
        );
    }

    #[test]
    fn a_64_mib_frame_from_the_browser_is_accepted_one_byte_more_is_not() {
        let mut codec = FrameCodec::host_to_browser();
        let mut buf = BytesMut::new();
        buf.put_slice(&header(limits::MAX_FROM_BROWSER));
        buf.resize(HEADER_LEN + limits::MAX_FROM_BROWSER, b' ');
        let frame = codec.decode(&mut buf).unwrap().unwrap();
        assert_eq!(frame.len(), limits::MAX_FROM_BROWSER);

        let mut buf = BytesMut::new();
        buf.put_slice(&header(limits::MAX_FROM_BROWSER + 1));
        assert!(matches!(codec.decode(&mut buf), Err(FrameError::TooLarge { .. })));
    }

    #[test]
    fn eof_inside_a_frame_is_reported() {
        let whole = framed(b"abcdef");
        let mut buf = BytesMut::from(&whole[..7]);
        let err = FrameCodec::socket().decode_eof(&mut buf).unwrap_err();
        assert!(matches!(err, FrameError::Truncated { have: 7, need: 10 }));
    }

    #[test]
    fn decoded_frame_shares_the_read_buffer() {
        // Splitting, not copying: the payload points into the buffer the bytes were read into.
        let mut buf = framed(&vec![b'z'; 4096]);
        let start = buf.as_ptr() as usize;
        let frame = FrameCodec::socket().decode(&mut buf).unwrap().unwrap();
        assert_eq!(frame.as_ptr() as usize, start + HEADER_LEN);
    }
}
