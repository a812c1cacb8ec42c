//! Writing frames without copying big payloads.
//!
//! Small frames (the common case: requests, responses, events of a few hundred bytes) are
//! gathered in one buffer so a burst leaves in one `write`; a big payload is written straight
//! from where it lies, header and payload in one vectored write, so an 8 MiB message is not
//! copied into a buffer first.

use bytes::{Buf, BufMut, BytesMut};
use tokio::io::{AsyncWrite, AsyncWriteExt};

use crate::codec::{self, FrameError, HEADER_LEN};

/// Payloads up to this size are copied into the gathering buffer.
const SMALL: usize = 16 * 1024;
/// The gathering buffer is written out once it holds this much.
const GATHER: usize = 64 * 1024;

/// A length-prefixed frame writer over any byte sink.
pub struct FrameWriter<W> {
    inner: W,
    buf: BytesMut,
    max: usize,
}

impl<W: AsyncWrite + Unpin> FrameWriter<W> {
    /// `max` is the largest payload the peer accepts; larger ones are refused, not written.
    pub fn new(inner: W, max: usize) -> Self {
        Self { inner, buf: BytesMut::with_capacity(GATHER), max }
    }

    /// Queue one frame. Small frames may stay buffered until [`flush`](Self::flush).
    pub async fn write(&mut self, payload: &[u8]) -> Result<(), FrameError> {
        if payload.len() > self.max {
            return Err(FrameError::OutgoingTooLarge { len: payload.len(), limit: self.max });
        }
        let header = codec::header(payload.len());
        if payload.len() <= SMALL {
            self.buf.reserve(HEADER_LEN + payload.len());
            self.buf.put_slice(&header);
            self.buf.put_slice(payload);
            if self.buf.len() >= GATHER {
                self.write_buffer().await?;
            }
        } else {
            self.write_buffer().await?;
            let mut both = (&header[..]).chain(payload);
            self.inner.write_all_buf(&mut both).await?;
        }
        Ok(())
    }

    /// Write out everything queued.
    pub async fn flush(&mut self) -> Result<(), FrameError> {
        self.write_buffer().await?;
        self.inner.flush().await?;
        Ok(())
    }

    async fn write_buffer(&mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            self.inner.write_all(&self.buf).await?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Flush, then close the sink's write side.
    pub async fn shutdown(mut self) -> Result<(), FrameError> {
        self.flush().await?;
        self.inner.shutdown().await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::FrameCodec;
    use tokio_util::codec::Decoder;

    #[tokio::test]
    async fn small_and_big_frames_come_out_in_order() {
        let mut out = Vec::new();
        let big = vec![b'b'; SMALL + 1];
        {
            let mut w = FrameWriter::new(&mut out, usize::MAX);
            w.write(b"one").await.unwrap();
            w.write(&big).await.unwrap();
            w.write(b"two").await.unwrap();
            w.flush().await.unwrap();
        }
        let mut buf = BytesMut::from(&out[..]);
        let mut codec = FrameCodec::socket();
        assert_eq!(&codec.decode(&mut buf).unwrap().unwrap()[..], b"one");
        assert_eq!(codec.decode(&mut buf).unwrap().unwrap().len(), SMALL + 1);
        assert_eq!(&codec.decode(&mut buf).unwrap().unwrap()[..], b"two");
        assert!(buf.is_empty());
    }

    #[tokio::test]
    async fn a_frame_over_the_limit_is_refused_and_nothing_is_written() {
        let mut out = Vec::new();
        let mut w = FrameWriter::new(&mut out, 4);
        assert!(matches!(w.write(b"12345").await, Err(FrameError::OutgoingTooLarge { .. })));
        w.flush().await.unwrap();
        assert!(out.is_empty());
    }
}
