//! The host's socket: where bridges connect.
//!
//! Unix: `hosts/<pid>.sock`, created with mode 0600 inside the 0700 runtime directory, and
//! every accepted peer's uid checked against ours (`SO_PEERCRED`) — the directory mode is the
//! first wall, the uid check the second. Windows: a named pipe `\\.\pipe\tabwire-<user>-<pid>`
//! that refuses remote clients (compiled there, tested only on Linux).

use std::io;
use std::path::{Path, PathBuf};

use crate::bridge_conn::{self, Shared};
use crate::relay::BridgeId;

/// Where the host of process `pid` listens, inside the runtime directory's `hosts/`.
pub fn socket_path(hosts_dir: &Path, pid: u32) -> PathBuf {
    #[cfg(unix)]
    {
        hosts_dir.join(format!("{pid}.sock"))
    }
    #[cfg(not(unix))]
    {
        let _ = hosts_dir;
        let user = std::env::var("USERNAME").unwrap_or_else(|_| "user".into());
        PathBuf::from(format!(r"\\.\pipe\tabwire-{user}-{pid}"))
    }
}

#[cfg(unix)]
pub use unix::bind;

#[cfg(unix)]
mod unix {
    use super::*;
    use std::fs;
    use std::sync::Arc;
    use tabwire_proto::limits::MAX_BRIDGES;
    use tabwire_proto::socket::{AcceptBackoff, bind_private, check_peer};
    use tabwire_proto::stream;
    use tokio::net::UnixListener;
    use tokio::sync::Semaphore;

    /// A bound socket, ready to accept bridges.
    pub struct Listener {
        inner: UnixListener,
    }

    /// Bind `path` with mode 0600. A file left there by an earlier process with our pid
    /// (pids are reused) is removed first.
    pub fn bind(path: &Path) -> io::Result<Listener> {
        match fs::remove_file(path) {
            Ok(()) => tracing::info!(path = %path.display(), "removed a stale socket"),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        // 0600 from the first moment, not fixed afterwards.
        Ok(Listener { inner: bind_private(path)? })
    }

    impl Listener {
        /// Accept bridges forever, starting a connection for each one of our own user, at
        /// most [`MAX_BRIDGES`] at once: one more is closed at once, and its bridge reports
        /// that the host closed the connection before its hello.
        pub async fn accept_loop(self, shared: Shared) {
            let slots = Arc::new(Semaphore::new(MAX_BRIDGES));
            let mut backoff = AcceptBackoff::default();
            let mut next_id: BridgeId = 0;
            loop {
                let stream = match self.inner.accept().await {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        backoff.failed("the host socket", &e).await;
                        continue;
                    }
                };
                backoff.reset();
                if let Err(e) = check_peer(&stream) {
                    tracing::warn!(
                        "refused a bridge connection: {e}; only this user may use the host"
                    );
                    continue;
                }
                let Ok(slot) = slots.clone().try_acquire_owned() else {
                    tracing::warn!("refused a bridge: {MAX_BRIDGES} are attached already");
                    continue;
                };
                // Halves that do not wake the host each time the bridge reads.
                let (reader, writer) = match stream::split(stream) {
                    Ok(halves) => halves,
                    Err(e) => {
                        tracing::warn!("cannot take a bridge's connection: {e}");
                        continue;
                    }
                };
                next_id += 1;
                bridge_conn::start(next_id, reader, writer, shared.clone(), slot).await;
            }
        }
    }
}

#[cfg(windows)]
pub use windows::bind;

#[cfg(windows)]
mod windows {
    use super::*;
    use tokio::net::windows::named_pipe::{NamedPipeServer, ServerOptions};

    /// The first instance of the pipe, created at bind time so clients can find it at once.
    ///
    /// Known gap: the pipe keeps Windows' default security descriptor (the user, SYSTEM and
    /// administrators may connect; others only read). An explicit DACL is future work.
    pub struct Listener {
        name: String,
        first: NamedPipeServer,
    }

    pub fn bind(path: &Path) -> io::Result<Listener> {
        let name = path.to_string_lossy().into_owned();
        let first = ServerOptions::new()
            .first_pipe_instance(true)
            .reject_remote_clients(true)
            .create(&name)?;
        Ok(Listener { name, first })
    }

    impl Listener {
        pub async fn accept_loop(self, shared: Shared) {
            let Listener { name, first } = self;
            let mut server = first;
            let mut next_id: BridgeId = 0;
            loop {
                if let Err(e) = server.connect().await {
                    tracing::warn!("accepting a bridge failed: {e}");
                    continue;
                }
                let connected = server;
                server = match ServerOptions::new().reject_remote_clients(true).create(&name) {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::error!(
                            "cannot create the next pipe instance, no more bridges can connect: {e}"
                        );
                        return;
                    }
                };
                next_id += 1;
                let (reader, writer) = tokio::io::split(connected);
                bridge_conn::start(next_id, reader, writer, shared.clone(), ()).await;
            }
        }
    }
}
