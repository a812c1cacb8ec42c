//! This `tabwire mcp` process as a session that other processes can reach: workers report to
//! it, scripts wait on it.
//!
//! Its id comes from `TABWIRE_SESSION_ID`, else a new UUID. When that variable names a session
//! that is alive already — this process is a worker started by that session's assistant, with
//! the variable inherited — this one takes a new id and remembers the other as its *parent*,
//! where `notify_completion` reports by default.
//!
//! It listens on `<runtime>/sessions/<id>.sock` (0600) and on 127.0.0.1 for `GET /wait`, and
//! writes `<id>.json` beside the socket (0600: it holds the HTTP token). Both files go when the
//! [`Session`] is dropped: on stdin EOF and on SIGTERM/SIGINT (`main` catches them before any
//! session starts and hands `mcp::run` the shutdown).
//!
//! One process may hold several sessions (`tabwire serve --http`: one per HTTP client), each
//! with its own core, socket, record and `/wait` port: [`Session::start_another`] makes one
//! without reading the environment, and dropping it stops its listeners.

pub mod client;
pub mod door;
#[doc(hidden)]
pub mod fuzz;
pub mod gate;
mod http;
pub mod messages;
pub mod saved;
mod socket;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use tabwire_proto::runtime_dir::{self, now_ms};
use tabwire_proto::sessions as record;
use tabwire_proto::socket::Listener;
use tokio::net::TcpListener;
use tokio_util::sync::{CancellationToken, DropGuard};

pub use client::{Peers, SessionClient};
pub use socket::PUSHABLE;
pub use tabwire_proto::runtime_dir::SessionRecord;
pub use tabwire_proto::sessions::{SESSION_ENV, WORKER_ENV};

use tabwire_link::core::Core;

/// A running session. Dropping it removes its socket and record.
pub struct Session {
    record: SessionRecord,
    record_path: PathBuf,
    /// Its id came from `TABWIRE_SESSION_ID`: a later run may be the same session again.
    chosen_id: bool,
    /// Stops the socket and `/wait` listeners when the session goes (several sessions may
    /// live in one process, so the process ending is not enough).
    _listening: DropGuard,
}

impl Session {
    /// Become a session: bind the socket and the HTTP port, write the record, and start
    /// answering. The core learns who it is (`Core::session`). The id comes from
    /// `TABWIRE_SESSION_ID` (see the module doc).
    pub async fn start(core: &Core) -> anyhow::Result<Session> {
        let runtime_dir = core.runtime_dir().to_owned();
        runtime_dir::prepare(&runtime_dir)?;
        let wanted = std::env::var(SESSION_ENV).ok().filter(|s| !s.trim().is_empty());
        let named = wanted.is_some();
        let (id, parent) = match wanted {
            None => (new_id(), None),
            Some(id) => {
                record::check_id(&id).map_err(anyhow::Error::msg).context(SESSION_ENV)?;
                match record::find(&runtime_dir, &id) {
                    Some(other) if other.pid != std::process::id() => {
                        tracing::info!(parent = %id, "{SESSION_ENV} names a running session: this one reports to it");
                        (new_id(), Some(id))
                    }
                    _ => (id, None),
                }
            }
        };
        let chosen_id = named && parent.is_none();
        let name = group_name(&id, chosen_id, parent.is_some());
        Self::open(core, id, parent, chosen_id, name).await
    }

    /// One more session in this process, with a new id and no parent, for a core of its own
    /// (`tabwire serve --http` makes one per client).
    pub async fn start_another(core: &Core) -> anyhow::Result<Session> {
        runtime_dir::prepare(core.runtime_dir())?;
        let id = new_id();
        let name = group_name(&id, false, false);
        Self::open(core, id, None, false, name).await
    }

    async fn open(
        core: &Core,
        id: String,
        parent: Option<String>,
        chosen_id: bool,
        name: String,
    ) -> anyhow::Result<Session> {
        let (socket_path, record_path) = record::paths(core.runtime_dir(), &id);
        let door = runtime_dir::endpoint(
            &runtime_dir::sessions_dir(core.runtime_dir()),
            &format!("{id}.call"),
        );
        let listener = bind(&socket_path)?;
        let http = TcpListener::bind("127.0.0.1:0").await.context("binding 127.0.0.1 for /wait")?;
        let http_port = http.local_addr()?.port();
        let token: Arc<str> = Arc::from(new_token());
        let record = SessionRecord {
            session_id: id,
            pid: std::process::id(),
            socket: socket_path,
            http_port,
            token: token.to_string(),
            parent,
            started_at: now_ms(),
            door: Some(door),
        };
        runtime_dir::write_record(&record_path, &record)
            .with_context(|| format!("writing {}", record_path.display()))?;
        core.set_session(record.clone(), name);
        let stop = CancellationToken::new();
        tokio::spawn(stop.clone().run_until_cancelled_owned(socket::serve(listener, core.clone())));
        tokio::spawn(stop.clone().run_until_cancelled_owned(http::serve(
            http,
            token,
            core.clone(),
        )));
        tracing::info!(session = %record.session_id, "session started");
        Ok(Session { record, record_path, chosen_id, _listening: stop.drop_guard() })
    }

    pub fn record(&self) -> &SessionRecord {
        &self.record
    }

    /// Whether its id was chosen (`TABWIRE_SESSION_ID`) rather than made up: only then can a
    /// later run be the same session, so only then are its events kept across runs
    /// ([`saved::SavedQueue`]).
    pub fn id_was_chosen(&self) -> bool {
        self.chosen_id
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // A named pipe (Windows) goes with its listener; a unix socket file stays unless removed.
        #[cfg(unix)]
        let _ = std::fs::remove_file(&self.record.socket);
        let _ = std::fs::remove_file(&self.record_path);
    }
}

/// Bind the session socket, mode 0600 from the start (`socket::bind_private`). A socket file
/// left by a session that died is replaced; one a live session holds is not (`record::find`
/// found no live owner, so none does). A pipe (Windows) cannot be replaced: a name any
/// process holds is refused by `bind_private` itself.
fn bind(path: &Path) -> anyhow::Result<Listener> {
    let in_use = || {
        format!(
            "{} is in use by another session; unset {SESSION_ENV} or pick another id",
            path.display()
        )
    };
    #[cfg(unix)]
    if std::os::unix::net::UnixStream::connect(path).is_ok() {
        anyhow::bail!(in_use());
    }
    match tabwire_proto::socket::bind_private(path) {
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Err(e).context(in_use()),
        bound => bound.with_context(|| format!("binding {}", path.display())),
    }
}

/// The title of the session's tab group in the browser: a worker's name (its
/// `TABWIRE_WORKER_ID` without the random suffix `spawn_worker` adds), an id the user chose,
/// else `session` and the first 8 characters of the new id.
fn group_name(id: &str, chosen_id: bool, worker: bool) -> String {
    let worker_id = std::env::var(WORKER_ENV).ok().filter(|_| worker);
    if let Some(worker_id) = worker_id.filter(|w| !w.trim().is_empty()) {
        return match worker_id.rsplit_once('-') {
            Some((name, tail)) if tail.len() == 8 && !name.is_empty() => name.to_owned(),
            _ => worker_id,
        };
    }
    if chosen_id {
        return id.to_owned();
    }
    format!("session {}", id.get(..8).unwrap_or(id))
}

fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// 244 random bits from the OS (two v4 UUIDs), as 64 hex digits.
pub fn new_token() -> String {
    format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple())
}
