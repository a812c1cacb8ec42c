//! Local channels on Windows: named pipes, held to the rules a Unix socket in the private
//! runtime directory keeps.
//!
//! - Only this user may open the pipe: every instance is created with an explicit security
//!   descriptor whose DACL grants this user's SID, and no one else, full access (the default
//!   one would also let SYSTEM and the administrators in, and others read).
//! - No one can squat the name: the first instance is created with
//!   `FILE_FLAG_FIRST_PIPE_INSTANCE`, which fails if any process, of any user, made a pipe of
//!   that name first, instead of joining it (and must be the pipe's only instance: Wine
//!   ignores that flag).
//! - Remote clients (SMB) are refused by the pipe itself.
//! - Each end checks the other: the server asks who the client process runs as, the client who
//!   the server process runs as, and a peer of another user (or one that cannot be told) is
//!   refused — so a bridge never talks to a pipe a stranger made.

use std::io;
use std::os::windows::io::AsRawHandle;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::ptr;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::windows::named_pipe::{
    ClientOptions, NamedPipeClient, NamedPipeServer, ServerOptions,
};
use windows_sys::Win32::Foundation::{ERROR_PIPE_BUSY, HANDLE};
use windows_sys::Win32::System::Pipes::{GetNamedPipeClientProcessId, GetNamedPipeServerProcessId};

use super::{PeerError, User};
use crate::win::{self, SecurityDescriptor};

/// A connected pipe: the server's end of an accepted connection, or a client's.
#[derive(Debug)]
pub enum Stream {
    Server(NamedPipeServer),
    Client(NamedPipeClient),
}

/// A pipe name taken for this user, with the instance that waits for the next client.
pub struct Listener {
    name: PathBuf,
    security: SecurityDescriptor,
    /// A lock so that `accept` takes `&self`, as on Unix; only the accept loop takes it.
    next: tokio::sync::Mutex<NamedPipeServer>,
}

/// Create the pipe `path` (`\\.\pipe\…`) for this user only. A name another process holds
/// already, whoever it belongs to, is `AddrInUse`.
pub fn bind_private(path: &Path) -> io::Result<Listener> {
    let security = SecurityDescriptor::only_for(&win::current_user()?)?;
    let first = create_first(path, &security).map_err(|e| {
        if e.kind() == io::ErrorKind::PermissionDenied {
            let why =
                format!("the pipe {} exists already: another process holds it", path.display());
            io::Error::new(io::ErrorKind::AddrInUse, why)
        } else {
            e
        }
    })?;
    Ok(Listener { name: path.to_owned(), security, next: tokio::sync::Mutex::new(first) })
}

/// The first instance of the pipe `name`, made only if no process made one before: Windows
/// refuses an existing name (`FILE_FLAG_FIRST_PIPE_INSTANCE`: access denied). Wine ignores
/// that flag and quietly joins the existing pipe, so the instances are counted as well: a pipe
/// lives only while one of its instances is open, so ours must be the only one.
fn create_first(name: &Path, security: &SecurityDescriptor) -> io::Result<NamedPipeServer> {
    use windows_sys::Win32::Foundation::ERROR_ACCESS_DENIED;
    use windows_sys::Win32::System::Pipes::GetNamedPipeHandleStateW;

    let mut attributes = security.attributes();
    let mut options = ServerOptions::new();
    options.first_pipe_instance(true).reject_remote_clients(true);
    // SAFETY: `attributes` is a valid SECURITY_ATTRIBUTES whose descriptor (`security`)
    // outlives the call; Windows copies what it needs into the pipe.
    let first =
        unsafe { options.create_with_security_attributes_raw(name, (&raw mut attributes).cast()) }?;
    let mut instances = 0u32;
    // SAFETY: a pipe handle open while `first` lives; only the instance count is asked for.
    let ok = unsafe {
        GetNamedPipeHandleStateW(
            first.as_raw_handle() as HANDLE,
            ptr::null_mut(),
            &mut instances,
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
            0,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    if instances != 1 {
        return Err(io::Error::from_raw_os_error(ERROR_ACCESS_DENIED as i32));
    }
    Ok(first)
}

/// One more instance of the pipe `name`, with `security` as its descriptor.
fn create_next(name: &Path, security: &SecurityDescriptor) -> io::Result<NamedPipeServer> {
    let mut attributes = security.attributes();
    let mut options = ServerOptions::new();
    options.reject_remote_clients(true);
    // SAFETY: `attributes` is a valid SECURITY_ATTRIBUTES whose descriptor (`security`)
    // outlives the call; Windows copies what it needs into the pipe.
    unsafe { options.create_with_security_attributes_raw(name, (&raw mut attributes).cast()) }
}

impl Listener {
    /// The next connection (its peer not yet checked: [`check_peer`]). The connected instance
    /// is handed over and a new one created for the client after it.
    pub async fn accept(&self) -> io::Result<Stream> {
        let mut next = self.next.lock().await;
        if let Err(e) = next.connect().await {
            // A client that came and went before it was seen leaves the instance unusable:
            // make it ready again for the next one.
            let _ = next.disconnect();
            return Err(e);
        }
        let fresh = create_next(&self.name, &self.security)?;
        Ok(Stream::Server(std::mem::replace(&mut *next, fresh)))
    }
}

/// Open the pipe `path`, its peer not yet checked ([`check_peer`]). While every instance is
/// taken (`ERROR_PIPE_BUSY`: the server has not made the next one yet) it tries again; a pipe
/// that does not exist is `NotFound` at once. The caller bounds the wait.
pub async fn open(path: &Path) -> io::Result<Stream> {
    loop {
        match ClientOptions::new().open(path) {
            Ok(client) => return Ok(Stream::Client(client)),
            Err(e) if e.raw_os_error() == Some(ERROR_PIPE_BUSY as i32) => {}
            Err(e) => return Err(e),
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Whether the process at the other end of `stream` runs as this user. Fail closed: a peer
/// that cannot be identified (gone already, or not to be queried) is refused.
pub fn check_peer(stream: &Stream) -> Result<(), PeerError> {
    let mut pid = 0u32;
    // SAFETY: the handle is a connected pipe's, open while `stream` lives; `pid` is an
    // out-parameter.
    let ok = unsafe {
        match stream {
            Stream::Server(s) => GetNamedPipeClientProcessId(s.as_raw_handle() as HANDLE, &mut pid),
            Stream::Client(c) => GetNamedPipeServerProcessId(c.as_raw_handle() as HANDLE, &mut pid),
        }
    };
    if ok == 0 {
        return Err(PeerError::Unknown(io::Error::last_os_error()));
    }
    let peer = win::process_user(pid).map_err(PeerError::Unknown)?;
    let me = win::current_user().map_err(PeerError::Unknown)?;
    if peer == me { Ok(()) } else { Err(PeerError::Foreign { peer: User(peer), me: User(me) }) }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Server(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Client(c) => Pin::new(c).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Server(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Client(c) => Pin::new(c).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Server(s) => Pin::new(s).poll_flush(cx),
            Stream::Client(c) => Pin::new(c).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Server(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Client(c) => Pin::new(c).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime_dir::endpoint;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A pipe name no other test uses.
    fn name(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tw-pipe-{}", std::process::id()));
        endpoint(&dir, tag)
    }

    #[test]
    fn the_descriptor_names_exactly_this_user() {
        let me = win::current_user().unwrap();
        assert!(me.starts_with("S-1-"), "{me}");
        let dacl = SecurityDescriptor::only_for(&me).unwrap().dacl_sddl().unwrap();
        assert_eq!(dacl, format!("D:P(A;;GA;;;{me})"), "one entry, for this user only");
    }

    #[tokio::test]
    async fn the_first_instance_is_exclusive() {
        let path = name("exclusive");
        let listener = bind_private(&path).unwrap();
        let e = bind_private(&path).err().expect("a second server cannot take the name");
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse, "{e}");
        assert!(e.to_string().contains("another process holds it"), "{e}");
        drop(listener);
        bind_private(&path).expect("free again once the holder is gone");
    }

    #[tokio::test]
    async fn both_ends_check_the_peer_and_bytes_go_both_ways() {
        let path = name("peer");
        let listener = bind_private(&path).unwrap();
        let server = tokio::spawn(async move {
            let mut stream = listener.accept().await.unwrap();
            check_peer(&stream).expect("the client is this user");
            let mut got = [0u8; 4];
            stream.read_exact(&mut got).await.unwrap();
            stream.write_all(b"pong").await.unwrap();
            // A second client gets the next instance.
            let second = listener.accept().await.unwrap();
            check_peer(&second).unwrap();
            got
        });
        let mut client = super::super::connect(&path, Duration::from_secs(5)).await.unwrap();
        client.write_all(b"ping").await.unwrap();
        let mut got = [0u8; 4];
        client.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"pong");
        let _second = super::super::connect(&path, Duration::from_secs(5)).await.unwrap();
        assert_eq!(&server.await.unwrap(), b"ping");
    }

    #[tokio::test]
    async fn opening_a_pipe_no_one_made_fails_at_once() {
        let e = open(&name("nothing")).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
    }
}
