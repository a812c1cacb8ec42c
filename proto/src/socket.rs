//! The helpers every tabwire process uses for its local sockets, so that each rule is written
//! once: a socket is created private (never world-reachable, not even for an instant), a peer
//! of another user is refused, a client never waits for ever to connect, and an accept loop
//! that runs out of file descriptors backs off instead of spinning.
//!
//! A local channel is a Unix socket on Unix and a named pipe on Windows (`pipe`, with the same
//! rules in Windows' terms); [`Stream`], [`Listener`], [`bind_private`], [`open`],
//! [`check_peer`] and [`connect`] are the same calls on both.

use std::io;
use std::path::Path;
use std::time::Duration;

use crate::limits::{ACCEPT_BACKOFF_MAX, ACCEPT_BACKOFF_MIN};

#[cfg(windows)]
mod pipe;
#[cfg(windows)]
pub use pipe::{Listener, Stream, bind_private, check_peer, open};

/// A connected local channel.
#[cfg(unix)]
pub type Stream = tokio::net::UnixStream;

/// A bound local channel, accepting connections.
#[cfg(unix)]
#[derive(Debug)]
pub struct Listener(tokio::net::UnixListener);

#[cfg(unix)]
impl Listener {
    /// The next connection (its peer not yet checked: [`check_peer`]).
    pub async fn accept(&self) -> io::Result<Stream> {
        self.0.accept().await.map(|(stream, _)| stream)
    }
}

/// Who a process runs as: its uid on Unix, its user's SID on Windows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User(#[cfg(unix)] pub u32, #[cfg(windows)] pub String);

impl std::fmt::Display for User {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        #[cfg(unix)]
        return write!(f, "uid {}", self.0);
        #[cfg(windows)]
        return write!(f, "user {}", self.0);
    }
}

/// Bind a unix socket at `path` with mode 0600 from its first moment. `bind` creates the file
/// with the process umask's mode, and `chmod` after it leaves a window where another user
/// could connect; so the socket is bound inside a fresh 0700 directory beside `path`, made
/// 0600 there, and renamed into place (replacing a stale file of that name, which the caller
/// checked no live process holds).
#[cfg(unix)]
pub fn bind_private(path: &Path) -> io::Result<Listener> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);

    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    // Short: a socket path has room for about 100 bytes, and this one is `dir` + 16 more.
    let nest =
        dir.join(format!(".b{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
    std::fs::DirBuilder::new().mode(0o700).create(&nest)?;
    let inside = nest.join("s");
    let bound = (|| {
        let listener = std::os::unix::net::UnixListener::bind(&inside)?;
        std::fs::set_permissions(&inside, std::fs::Permissions::from_mode(0o600))?;
        std::fs::rename(&inside, path)?;
        listener.set_nonblocking(true)?;
        tokio::net::UnixListener::from_std(listener).map(Listener)
    })();
    let _ = std::fs::remove_file(&inside);
    let _ = std::fs::remove_dir(&nest);
    bound
}

/// Why a socket's peer is refused.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    #[error("its peer is {peer}, not you ({me})")]
    Foreign { peer: User, me: User },
    #[error("its peer cannot be identified ({0})")]
    Unknown(#[source] io::Error),
}

/// Whether the process at the other end of `stream` runs as this user. Fail closed: a peer
/// that cannot be identified is refused. Whoever is at the other end of a tabwire socket
/// either drives the user's browser or receives what the assistant asks of it.
#[cfg(unix)]
pub fn check_peer(stream: &Stream) -> Result<(), PeerError> {
    let me = crate::runtime_dir::current_uid();
    match stream.peer_cred() {
        Ok(cred) if cred.uid() == me => Ok(()),
        Ok(cred) => Err(PeerError::Foreign { peer: User(cred.uid()), me: User(me) }),
        Err(e) => Err(PeerError::Unknown(e)),
    }
}

/// Connect to the unix socket at `path`, its peer not yet checked ([`check_peer`]).
#[cfg(unix)]
pub async fn open(path: &Path) -> io::Result<Stream> {
    tokio::net::UnixStream::connect(path).await
}

/// Connect to the local channel at `path` within `timeout`, and check that its owner is this
/// user ([`check_peer`]); a foreign peer comes back as `PermissionDenied`, the timeout as
/// `TimedOut`.
pub async fn connect(path: &Path, timeout: Duration) -> io::Result<Stream> {
    let stream = tokio::time::timeout(timeout, open(path)).await.map_err(|_| {
        io::Error::new(io::ErrorKind::TimedOut, format!("no answer within {timeout:?}"))
    })??;
    check_peer(&stream).map_err(|e| io::Error::new(io::ErrorKind::PermissionDenied, e))?;
    Ok(stream)
}

/// How long an accept loop pauses after a failed `accept`: [`ACCEPT_BACKOFF_MIN`], doubling
/// while failures follow each other, at most [`ACCEPT_BACKOFF_MAX`]; back to the minimum after
/// a success.
#[derive(Debug)]
pub struct AcceptBackoff {
    next: Duration,
}

impl Default for AcceptBackoff {
    fn default() -> Self {
        AcceptBackoff { next: ACCEPT_BACKOFF_MIN }
    }
}

impl AcceptBackoff {
    /// An accept succeeded.
    pub fn reset(&mut self) {
        self.next = ACCEPT_BACKOFF_MIN;
    }

    /// An accept failed with `error` on the listener named `what`: log it and wait.
    pub async fn failed(&mut self, what: &str, error: &io::Error) {
        tracing::warn!(
            %error,
            pause_ms = self.next.as_millis() as u64,
            "{what} cannot accept (out of file descriptors?); pausing"
        );
        tokio::time::sleep(self.next).await;
        self.next = (self.next * 2).min(ACCEPT_BACKOFF_MAX);
    }
}

/// Why [`next_frame`] gave up on a connection.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum Stalled {
    #[error("a frame began but was not whole within {0:?}")]
    Trickle(Duration),
    #[error("no request came within {0:?}")]
    Idle(Duration),
}

/// How often [`next_frame`] looks at a connection that sends nothing whole.
const TICK: Duration = Duration::from_millis(500);

/// The next item of `frames` (a `Framed`/`FramedRead` over a socket), unless the peer trickles:
/// a frame whose first bytes arrived must be whole within
/// [`SOCKET_FRAME_TIMEOUT`](crate::limits::SOCKET_FRAME_TIMEOUT), and with `idle` set the
/// connection must send a whole frame within that time at all. `partial` tells whether bytes
/// of an unfinished frame wait in the reader's buffer (`|f| !f.read_buffer().is_empty()`).
/// Cancel-safe as the stream is: nothing read is lost on a tick.
pub async fn next_frame<S, F>(
    frames: &mut S,
    partial: F,
    idle: Option<Duration>,
) -> Result<Option<S::Item>, Stalled>
where
    S: futures_core::Stream + Unpin,
    F: Fn(&S) -> bool,
{
    use std::future::poll_fn;
    use std::pin::Pin;
    use tokio::time::Instant;

    let limit = crate::limits::SOCKET_FRAME_TIMEOUT;
    let start = Instant::now();
    let mut partial_since: Option<Instant> = None;
    loop {
        let next = poll_fn(|cx| Pin::new(&mut *frames).poll_next(cx));
        if let Ok(item) = tokio::time::timeout(TICK, next).await {
            return Ok(item);
        }
        let now = Instant::now();
        if partial(frames) {
            if now.duration_since(*partial_since.get_or_insert(now)) + TICK > limit {
                return Err(Stalled::Trickle(limit));
            }
        } else if let Some(idle) = idle
            && now.duration_since(start) >= idle
        {
            return Err(Stalled::Idle(idle));
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[tokio::test]
    async fn a_private_socket_is_0600_and_replaces_a_stale_file() {
        let dir = std::env::temp_dir().join(format!("tabwire-bind-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.sock");
        std::fs::write(&path, b"stale").unwrap();
        let listener = bind_private(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let client = connect(&path, Duration::from_secs(1)).await.unwrap();
        let server = listener.accept().await.unwrap();
        check_peer(&server).unwrap();
        drop(client);
        let left: Vec<_> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, vec![std::ffi::OsString::from("x.sock")], "no temporary left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn connecting_to_nothing_fails_at_once() {
        let missing = std::env::temp_dir().join("tabwire-no-such.sock");
        let e = connect(&missing, Duration::from_secs(1)).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }
}
