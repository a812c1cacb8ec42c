//! The host's socket: where bridges connect.
//!
//! Unix: `hosts/<pid>.sock`, created with mode 0600 inside the 0700 runtime directory, and
//! every accepted peer's uid checked against ours (`SO_PEERCRED`) — the directory mode is the
//! first wall, the uid check the second. Windows: a named pipe whose name is derived from the
//! same place (`runtime_dir::endpoint`), that only this user may open (an explicit DACL),
//! whose name no one can take first, that refuses remote clients, and whose every client's
//! user is checked; `tabwire_proto::socket` keeps these rules for both.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tabwire_proto::limits::MAX_BRIDGES;
use tabwire_proto::socket::{self, AcceptBackoff, bind_private, check_peer};
use tabwire_proto::stream;
use tokio::sync::Semaphore;

use crate::bridge_conn::{self, Shared};
use crate::relay::BridgeId;
use crate::runtime_dir;

/// Where the host of process `pid` listens, for its record in the runtime directory's `hosts/`.
pub fn socket_path(hosts_dir: &Path, pid: u32) -> PathBuf {
    runtime_dir::endpoint(hosts_dir, &pid.to_string())
}

/// A bound socket, ready to accept bridges.
pub struct Listener {
    inner: socket::Listener,
}

/// Bind `path`, private from the first moment. A socket file left there by an earlier process
/// with our pid (pids are reused) is removed first; a pipe goes with its process.
pub fn bind(path: &Path) -> io::Result<Listener> {
    #[cfg(unix)]
    match std::fs::remove_file(path) {
        Ok(()) => tracing::info!(path = %path.display(), "removed a stale socket"),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    Ok(Listener { inner: bind_private(path)? })
}

impl Listener {
    /// Accept bridges forever, starting a connection for each one of our own user, at most
    /// [`MAX_BRIDGES`] at once: one more is closed at once, and its bridge reports that the
    /// host closed the connection before its hello.
    pub async fn accept_loop(self, shared: Shared) {
        let slots = Arc::new(Semaphore::new(MAX_BRIDGES));
        let mut backoff = AcceptBackoff::default();
        let mut next_id: BridgeId = 0;
        loop {
            let stream = match self.inner.accept().await {
                Ok(stream) => stream,
                Err(e) => {
                    backoff.failed("the host socket", &e).await;
                    continue;
                }
            };
            backoff.reset();
            if let Err(e) = check_peer(&stream) {
                tracing::warn!("refused a bridge connection: {e}; only this user may use the host");
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bytes::Bytes;
    use futures::{SinkExt, StreamExt};
    use tokio::sync::mpsc;
    use tokio_util::codec::Framed;

    use super::*;
    use crate::codec::FrameCodec;
    use crate::relay::{Input, Outgoing};
    use crate::wire::{Cancel, Message};

    /// A bridge of this user connects to the host's socket (a named pipe on Windows), and a
    /// frame goes each way.
    #[tokio::test]
    async fn a_frame_goes_each_way_between_a_bridge_and_the_host() {
        let dir = std::env::temp_dir().join(format!("tw-listener-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = socket_path(&dir, 1);
        let listener = bind(&path).unwrap();
        let (relay, mut inputs) = mpsc::channel(8);
        let (alive, _alive) = mpsc::channel(1);
        let budget = Arc::new(Semaphore::new(1 << 20));
        tokio::spawn(listener.accept_loop(Shared { relay, alive, budget }));

        let stream = socket::connect(&path, Duration::from_secs(5)).await.unwrap();
        let mut bridge = Framed::new(stream, FrameCodec::socket());
        let Some(Input::BridgeAttached { link, .. }) = inputs.recv().await else {
            panic!("the bridge was not attached");
        };
        let cancel = Message::Cancel(Cancel { id: "r1".into() });
        bridge.send(Bytes::from(cancel.to_bytes())).await.unwrap();
        match inputs.recv().await {
            Some(Input::FromBridge { msg, .. }) => assert_eq!(msg.to_bytes(), cancel.to_bytes()),
            other => panic!("expected the bridge's message, got {other:?}"),
        }
        let answer = Bytes::from(Message::Cancel(Cancel { id: "r2".into() }).to_bytes());
        link.tx.send(Outgoing::Frame(answer.clone())).await.unwrap();
        let back = bridge.next().await.expect("a frame").expect("a whole frame");
        assert_eq!(&back[..], &answer[..]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
