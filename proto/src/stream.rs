//! A connected Unix socket as a read half and a write half for the reactor, registered for
//! reading only.
//!
//! Why not tokio's own halves: tokio registers a socket for both directions, and Linux tells a
//! Unix socket's writer that there is room again (EPOLLOUT) each time its peer reads, whether
//! or not the writer ever ran short of it. So every message between a bridge and its host woke
//! the thread that had sent it once more, for nothing, just as the call it passed on was
//! starting its next hop: on two vCPUs, a halted vCPU brought back and taken from Chrome's
//! threads (traced with the browser bench's `-- tail`; docs/performance.md).
//! Here only the read half is registered. The write half writes straight to the socket; only
//! when the kernel has no room does it register for writability, until a write goes through.

use std::io::{self, Write as _};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

/// Split a connected socket. Both halves must go before the socket closes.
pub fn split(stream: tokio::net::UnixStream) -> io::Result<(ReadHalf, WriteHalf)> {
    // `into_std` deregisters it and leaves it non-blocking.
    let socket = stream.into_std()?;
    let write = WriteHalf { waiting: None, socket: socket.try_clone()? };
    // SAFETY: the OwnedFd is open, and the AsyncFd owns it for as long as it is registered.
    let fd = unsafe { AsyncFd::register_with_interest(OwnedFd::from(socket), Interest::READABLE)? };
    Ok((ReadHalf { fd }, write))
}

/// Reads, woken by the reactor when there is something to read or the peer has gone.
#[derive(Debug)]
pub struct ReadHalf {
    fd: AsyncFd<OwnedFd>,
}

impl AsyncRead for ReadHalf {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.fd.poll_read_ready(cx))?;
            // SAFETY: `read` only writes into the unfilled part, at most its length, and the
            // bytes it reports written are then initialised (so the buffer need not be zeroed
            // first: for a large frame's read buffer that would cost more than the read).
            let read = guard.try_io(|fd| unsafe {
                let dst = buf.unfilled_mut();
                let n = libc::read(fd.as_raw_fd(), dst.as_mut_ptr().cast(), dst.len());
                if n < 0 { Err(io::Error::last_os_error()) } else { Ok(n as usize) }
            });
            match read {
                Ok(Ok(n)) => {
                    // SAFETY: the kernel initialised these `n` bytes.
                    unsafe { buf.assume_init(n) };
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                // Nothing to read after all: the readiness is cleared, wait for the next.
                Err(_would_block) => continue,
            }
        }
    }
}

/// Writes straight to the socket; registered with the reactor only while the kernel has no
/// room, from a write that found it full until one that goes through whole. Dropping it shuts
/// the socket down for writing, as tokio's write half does.
#[derive(Debug)]
pub struct WriteHalf {
    /// Set while a write waits for room. Declared first: it is deregistered before the
    /// socket's descriptor closes.
    waiting: Option<AsyncFd<Raw>>,
    socket: UnixStream,
}

/// This half's descriptor, as the reactor's registration sees it (the half keeps it open).
#[derive(Debug)]
struct Raw(RawFd);

impl AsRawFd for Raw {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

impl WriteHalf {
    /// One write attempt (std's `send` on Linux: `MSG_NOSIGNAL`, so a gone peer is EPIPE).
    fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        loop {
            match (&self.socket).write(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => return other,
            }
        }
    }
}

impl AsyncWrite for WriteHalf {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        loop {
            if let Some(waiting) = &this.waiting {
                let mut guard = ready!(waiting.poll_write_ready(cx))?;
                match this.try_write(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        guard.clear_ready();
                        continue;
                    }
                    // A part went: the rest of a large write will find the kernel full again,
                    // so stay registered until a write goes through whole (registering anew
                    // for every part, 512 KiB messages fell from about 1,000 MB/s to 190-330
                    // in some runs of the host's bench).
                    Ok(n) if n < buf.len() => return Poll::Ready(Ok(n)),
                    done => {
                        drop(guard);
                        this.waiting = None;
                        return Poll::Ready(done);
                    }
                }
            }
            match this.try_write(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let fd = Raw(this.socket.as_raw_fd());
                    // SAFETY: `socket` keeps the descriptor open until `waiting` is dropped:
                    // it is dropped first (field order, and `Drop` below).
                    let waiting =
                        unsafe { AsyncFd::register_with_interest(fd, Interest::WRITABLE)? };
                    this.waiting = Some(waiting);
                }
                done => return Poll::Ready(done),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(())) // nothing is buffered here
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.socket.shutdown(std::net::Shutdown::Write))
    }
}

impl Drop for WriteHalf {
    fn drop(&mut self) {
        self.waiting = None;
        let _ = self.socket.shutdown(std::net::Shutdown::Write);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn pair() -> ((ReadHalf, WriteHalf), (ReadHalf, WriteHalf)) {
        let (a, b) = tokio::net::UnixStream::pair().expect("socket pair");
        (split(a).expect("split a"), split(b).expect("split b"))
    }

    #[tokio::test]
    async fn carries_bytes_both_ways_and_the_end() {
        let ((mut ar, mut aw), (mut br, mut bw)) = pair();
        aw.write_all(b"ping").await.unwrap();
        let mut got = [0u8; 4];
        br.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ping");
        bw.write_all(b"pong").await.unwrap();
        ar.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"pong");
        drop(aw);
        let mut rest = Vec::new();
        br.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty(), "the write half's drop ends the stream for the peer");
    }

    /// Far more than the socket's buffer: the writer must wait for room and be woken for it.
    #[tokio::test]
    async fn a_write_larger_than_the_buffer_waits_for_room() {
        let ((_ar, mut aw), (mut br, _bw)) = pair();
        let big: Vec<u8> = (0..8 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
        let sent = big.clone();
        let writer = tokio::spawn(async move {
            aw.write_all(&sent).await.unwrap();
            aw.shutdown().await.unwrap();
        });
        let mut got = Vec::new();
        br.read_to_end(&mut got).await.unwrap();
        writer.await.unwrap();
        assert!(got == big, "{} bytes came of {}", got.len(), big.len());
    }

    #[tokio::test]
    async fn writing_to_a_gone_peer_is_an_error_not_a_signal() {
        let ((_ar, mut aw), b) = pair();
        drop(b);
        let err = aw.write_all(&[0u8; 1024]).await.expect_err("the peer is gone");
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe, "{err}");
    }
}
