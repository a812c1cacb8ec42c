//! One run of the host, from binding its socket to removing it.
//!
//! Wires the tasks together — browser reader and writer, the accept loop, the signal handler,
//! the record keeper — around the [`Relay`] actor, then cleans up after it: bridges get their
//! last frames (bounded wait), the socket and record are removed, and the exit code is
//! returned. specs/protocol.md, "Lifecycle of the host".

use std::path::{Path, PathBuf};
use std::time::Duration;

use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc, watch};

use crate::Shutdown;
use crate::bridge_conn::Shared;
use crate::browser_io;
use crate::fast_link::FastLink;
use crate::limits;
use crate::listener;
use crate::relay::{Input, Relay};
use crate::runtime_dir::{self, HostRecord};
use crate::wire::{self, Hello};

/// How long the host waits for bridges to take their last frames before it exits anyway. Part
/// of the 100 ms the spec allows between stdin closing and the process ending.
const FLUSH_GRACE: Duration = Duration::from_millis(60);

/// How many inputs may wait for the relay before readers pause (backpressure on the peers).
const RELAY_QUEUE: usize = 1024;

/// Who is running: from the command line and the environment.
pub struct Config {
    /// The prepared runtime directory.
    pub root: PathBuf,
    /// The extension that started us (from argv[1]), until its hello says more.
    pub extension_id: String,
}

/// Run the host until the browser goes or `shutdown` fires (SIGTERM, SIGINT); returns the exit
/// code.
pub async fn run(config: Config, shutdown: Shutdown) -> i32 {
    let pid = std::process::id();
    let hosts = runtime_dir::hosts_dir(&config.root);
    // Listing cleans up the sockets and records of hosts that died without doing it.
    let others = runtime_dir::live_hosts(&config.root);
    tracing::debug!(other_hosts = others.len(), "runtime directory checked");

    let (stdin, stdout) = match tabwire_proto::pipes::stdio() {
        Ok(io) => io,
        Err(e) => {
            tracing::error!("cannot open the browser's stdin/stdout: {e}");
            return 1;
        }
    };
    let socket = listener::socket_path(&hosts, pid);
    let listener = match listener::bind(&socket) {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(path = %socket.display(), "cannot listen for bridges: {e}; check that the runtime directory is writable");
            return 1;
        }
    };
    let record_path = hosts.join(format!("{pid}.json"));
    let record = HostRecord {
        pid,
        socket: socket.clone(),
        browser: String::new(),
        profile: String::new(),
        extension_id: config.extension_id.clone(),
        extension_version: String::new(),
        protocol: wire::PROTOCOL_VERSION,
        started_at: runtime_dir::now_ms(),
    };
    if let Err(e) = runtime_dir::write_record(&record_path, &record) {
        tracing::error!(path = %record_path.display(), "cannot write the host record: {e}");
        #[cfg(unix)]
        remove(&[&socket]);
        return 1;
    }
    // The fast link's listener (fast_link.rs); without it, Native Messaging carries everything.
    let fast = match FastLink::bind().await {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!(
                "no fast link (cannot listen on 127.0.0.1: {e}); Native Messaging carries everything"
            );
            None
        }
    };
    let extension_id = config.extension_id;
    tracing::info!(pid, socket = %socket.display(), "tabwire-host ready");

    let (relay_tx, relay_rx) = mpsc::channel(RELAY_QUEUE);
    let (browser_tx, browser_rx) = mpsc::unbounded_channel();
    let (hello_tx, hello_rx) = watch::channel(None);
    let (alive_tx, mut alive_rx) = mpsc::channel::<()>(1);

    let (marks_tx, marks_rx) = mpsc::unbounded_channel();
    let (links_tx, links_rx) = mpsc::channel(1);
    let address = fast.as_ref().map(FastLink::url);
    let linking = fast.map(|f| tokio::spawn(f.accept_loop(extension_id, links_tx)));
    tokio::spawn(browser_io::read_loop(stdin, relay_tx.clone(), marks_tx));
    tokio::spawn(browser_io::write_loop(
        stdout,
        browser_rx,
        relay_tx.clone(),
        links_rx,
        marks_rx,
        address,
    ));
    let shared = Shared {
        relay: relay_tx.clone(),
        alive: alive_tx.clone(),
        budget: Arc::new(Semaphore::new(limits::TO_BROWSER_IN_FLIGHT)),
    };
    let accepting = tokio::spawn(listener.accept_loop(shared));
    let records = tokio::spawn(keep_record(record, record_path.clone(), hello_rx));
    let stop_tx = relay_tx;
    tokio::spawn(async move {
        let why = shutdown.requested().await;
        let _ = stop_tx.send(Input::Stop { reason: format!("the host received {why}") }).await;
    });

    let exit = Relay::new(pid, relay_rx, browser_tx, hello_tx).run().await;

    // No new bridges; let the attached ones take their last frames, within bounds.
    accepting.abort();
    let _ = accepting.await;
    if let Some(linking) = linking {
        linking.abort();
    }
    records.abort();
    drop(alive_tx);
    let flushed = tokio::time::timeout(FLUSH_GRACE, alive_rx.recv()).await.is_ok();
    if !flushed {
        tracing::warn!("a bridge did not take its last frames within {FLUSH_GRACE:?}");
    }
    remove(&[&record_path]);
    // A named pipe (Windows) goes with the process; a unix socket file stays unless removed.
    #[cfg(unix)]
    remove(&[&socket]);
    tracing::info!(code = exit.code, "tabwire-host exiting: {}", exit.reason);
    exit.code
}

/// Rewrite the host record each time the extension says hello, so `tabwire status` can name
/// the browser and profile behind this socket.
async fn keep_record(
    mut record: HostRecord,
    path: PathBuf,
    mut hello: watch::Receiver<Option<Hello>>,
) {
    while hello.changed().await.is_ok() {
        let Some(h) = hello.borrow_and_update().clone() else { continue };
        record.browser = h.browser.unwrap_or_default();
        record.profile = h.profile.unwrap_or_default();
        if let Some(id) = h.extension_id {
            record.extension_id = id;
        }
        record.extension_version = h.extension_version.unwrap_or_default();
        record.protocol = h.protocol;
        if let Err(e) = runtime_dir::write_record(&path, &record) {
            tracing::warn!(path = %path.display(), "cannot update the host record: {e}");
        }
    }
}

/// Remove what this host created.
fn remove(paths: &[&Path]) {
    for path in paths {
        if let Err(e) = std::fs::remove_file(path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(path = %path.display(), "cannot remove: {e}");
        }
    }
}
