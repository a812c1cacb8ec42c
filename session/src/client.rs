//! Talking to a session from another process: `notify_completion` and friends in a worker's own
//! `tabwire mcp`, `tabwire notify` in a hook, `tabwire wait` in a script.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use serde_json::Value;
use tabwire_proto::codec::FrameCodec;
use tabwire_proto::limits::{
    CONNECT_TIMEOUT, MAX_SESSION_REQUEST, MAX_SOCKET_FRAME, SESSION_REPLY_TIMEOUT,
};
use tabwire_proto::socket::{self, Stream};
use tabwire_proto::wire::code;
use tokio_util::codec::Framed;

use super::SessionRecord;
use super::messages::{FromSession, Pushed, ToSession};
use tabwire_link::error::CallError;
use tabwire_proto::sessions as record;

/// A connection to one session.
pub struct SessionClient {
    pub record: SessionRecord,
    frames: Framed<Stream, FrameCodec>,
}

impl SessionClient {
    /// Connect to the live session `id` in `runtime_dir`.
    pub async fn connect(runtime_dir: &Path, id: &str) -> Result<SessionClient, CallError> {
        record::check_id(id).map_err(|e| CallError::new(code::BAD_REQUEST, e))?;
        let Some(record) = record::find(runtime_dir, id) else {
            return Err(no_such_session(runtime_dir, id));
        };
        let stream = match socket::connect(&record.socket, CONNECT_TIMEOUT).await {
            Ok(stream) => stream,
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                return Err(CallError::new(
                    code::BAD_REQUEST,
                    format!("the socket of session {id} is not yours ({e}): refused"),
                ));
            }
            Err(e) => {
                return Err(CallError::new(
                    code::NO_SUCH_SESSION,
                    format!(
                        "session {id} (pid {}) does not answer on {} ({e}); it may have just \
                         ended, or be stopped",
                        record.pid,
                        record.socket.display()
                    ),
                ));
            }
        };
        let codec = FrameCodec::new(MAX_SOCKET_FRAME, MAX_SESSION_REQUEST);
        Ok(SessionClient { record, frames: Framed::new(stream, codec) })
    }

    /// The session named by `id`, else the only live one.
    pub async fn connect_default(
        runtime_dir: &Path,
        id: Option<&str>,
    ) -> Result<SessionClient, CallError> {
        if let Some(id) = id.filter(|s| !s.is_empty()) {
            return Self::connect(runtime_dir, id).await;
        }
        match record::live_sessions(runtime_dir).as_slice() {
            [one] => Self::connect(runtime_dir, &one.session_id).await,
            [] => Err(CallError::new(
                code::NO_SUCH_SESSION,
                "no tabwire session is running (a session is a `tabwire mcp` started by your \
                 assistant); start one, or pass --session",
            )),
            many => Err(CallError::new(
                code::BAD_REQUEST,
                format!(
                    "{} sessions are running ({}); pass --session ID or set TABWIRE_SESSION_ID",
                    many.len(),
                    ids(many)
                ),
            )),
        }
    }

    /// Put an event into the session's queue; its id there. A session that does not answer
    /// within [`SESSION_REPLY_TIMEOUT`] is reported by id and pid (it is stopped or stuck).
    pub async fn push(&mut self, kind: &str, data: Value) -> Result<u64, CallError> {
        let push = ToSession::Push { event: Pushed { kind: kind.into(), data } };
        let answer = self.ask(&push, SESSION_REPLY_TIMEOUT).await?;
        match answer {
            FromSession::Queued { id } => Ok(id),
            _ => Err(unexpected(&self.record.session_id)),
        }
    }

    /// Take the page events queued in the session, waiting up to `timeout_secs` for one.
    pub async fn wait(&mut self, timeout_secs: u64) -> Result<Vec<Value>, CallError> {
        let within = Duration::from_secs(timeout_secs) + SESSION_REPLY_TIMEOUT;
        let answer = self.ask(&ToSession::Wait { timeout_secs }, within).await?;
        match answer {
            FromSession::Events { events, .. } => Ok(events),
            _ => Err(unexpected(&self.record.session_id)),
        }
    }

    async fn ask(
        &mut self,
        request: &ToSession,
        within: Duration,
    ) -> Result<FromSession<Value>, CallError> {
        let record = &self.record;
        match tokio::time::timeout(within, Self::exchange(&mut self.frames, record, request)).await
        {
            Ok(answer) => answer,
            Err(_) => Err(CallError::new(
                code::TIMEOUT,
                format!(
                    "session {} (pid {}) did not answer within {within:?}: it is stopped or \
                     stuck; nothing was taken from its queue, and a push may or may not have \
                     landed",
                    record.session_id, record.pid
                ),
            )),
        }
    }

    async fn exchange(
        frames: &mut Framed<Stream, FrameCodec>,
        record: &SessionRecord,
        request: &ToSession,
    ) -> Result<FromSession<Value>, CallError> {
        let id = &record.session_id;
        let gone = |e: &dyn std::fmt::Display| {
            CallError::new(code::NO_SUCH_SESSION, format!("session {id} went away ({e})"))
        };
        let bytes = serde_json::to_vec(request).expect("session messages serialize");
        // Read an answer even when the send failed: a session that refuses a connection (too
        // many open) says why before it closes, and that is the error to report.
        let sent = frames.send(Bytes::from(bytes)).await;
        let frame = match (frames.next().await, sent) {
            (Some(Ok(frame)), _) => frame,
            (_, Err(e)) => return Err(gone(&e)),
            (Some(Err(e)), Ok(())) => return Err(gone(&e)),
            (None, Ok(())) => return Err(gone(&"it closed the connection")),
        };
        let answer: FromSession<Value> =
            serde_json::from_slice(&frame).map_err(|_| unexpected(id))?;
        match answer {
            FromSession::Error { error } => Err(CallError::from(error)),
            answer => Ok(answer),
        }
    }
}

/// Connections to other sessions, kept open between calls: a report then costs one frame each
/// way instead of a directory scan, a connect and a peer check.
///
/// One slot per target, each with a lock of its own, and the map's lock held only to find a
/// slot: a stopped session blocks only the pushes to itself (each for at most
/// [`SESSION_REPLY_TIMEOUT`]), never a push from this session to any other.
#[derive(Default)]
pub struct Peers {
    open: std::sync::Mutex<HashMap<(PathBuf, String), Slot>>,
}

/// One target's kept connection, if any. Its lock orders this session's pushes to that target.
type Slot = Arc<tokio::sync::Mutex<Option<SessionClient>>>;

impl Peers {
    /// Put an event into session `target`'s queue; its id there. A kept connection that broke
    /// (the session ended, restarted under the same id, or closed it as idle) is replaced once;
    /// one that timed out is dropped (its answer may still come, and must not be read as the
    /// next one's).
    pub async fn push(
        &self,
        runtime_dir: &Path,
        target: &str,
        kind: &str,
        data: Value,
    ) -> Result<u64, CallError> {
        let key = (runtime_dir.to_owned(), target.to_owned());
        let slot = self.open.lock().expect("peers poisoned").entry(key).or_default().clone();
        let mut kept = slot.lock().await;
        // Out of the slot while in use: a push cancelled or timed out halfway drops its
        // connection rather than leave an answer unread for the next push.
        if let Some(mut client) = kept.take() {
            match client.push(kind, data.clone()).await {
                Err(e) if e.is(code::NO_SUCH_SESSION) => {}
                Err(e) if e.is(code::TIMEOUT) => return Err(e),
                done => {
                    *kept = Some(client);
                    return done;
                }
            }
        }
        let mut client = SessionClient::connect(runtime_dir, target).await?;
        let id = client.push(kind, data).await?;
        *kept = Some(client);
        Ok(id)
    }
}

fn no_such_session(runtime_dir: &Path, id: &str) -> CallError {
    let live = record::live_sessions(runtime_dir);
    let known = if live.is_empty() {
        "none is running".to_owned()
    } else {
        format!("running: {}", ids(&live))
    };
    CallError::new(
        code::NO_SUCH_SESSION,
        format!(
            "no session has id {id} (it ended, or never existed; {known}); get_session in the \
             assistant you want to reach shows its id"
        ),
    )
}

fn ids(records: &[SessionRecord]) -> String {
    records.iter().map(|r| r.session_id.as_str()).collect::<Vec<_>>().join(", ")
}

fn unexpected(id: &str) -> CallError {
    CallError::new(
        code::INTERNAL,
        format!(
            "session {id} answered something this tabwire does not understand; are both the same version?"
        ),
    )
}
