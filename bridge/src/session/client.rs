//! Talking to a session from another process: `notify_completion` and friends in a worker's own
//! `tabwire mcp`, `tabwire notify` in a hook, `tabwire wait` in a script.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use serde_json::Value;
use tabwire_proto::codec::FrameCodec;
use tabwire_proto::runtime_dir::current_uid;
use tabwire_proto::wire::code;
use tokio::net::UnixStream;
use tokio_util::codec::Framed;

use super::messages::{FromSession, Pushed, ToSession};
use super::record::{self, SessionRecord};
use crate::error::CallError;

/// The error code for a session id that names no live session.
pub const NO_SUCH_SESSION: &str = tabwire_proto::wire::code::NO_SUCH_SESSION;

/// A connection to one session.
pub struct SessionClient {
    pub record: SessionRecord,
    frames: Framed<UnixStream, FrameCodec>,
}

impl SessionClient {
    /// Connect to the live session `id` in `runtime_dir`.
    pub async fn connect(runtime_dir: &Path, id: &str) -> Result<SessionClient, CallError> {
        record::check_id(id).map_err(|e| CallError::new(code::BAD_REQUEST, e))?;
        let Some(record) = record::find(runtime_dir, id) else {
            return Err(no_such_session(runtime_dir, id));
        };
        let stream = UnixStream::connect(&record.socket).await.map_err(|e| {
            CallError::new(
                NO_SUCH_SESSION,
                format!(
                    "session {id} does not answer on {} ({e}); it may have just ended",
                    record.socket.display()
                ),
            )
        })?;
        if let Ok(cred) = stream.peer_cred()
            && cred.uid() != current_uid()
        {
            return Err(CallError::new(
                code::BAD_REQUEST,
                format!(
                    "the socket of session {id} belongs to uid {}, not to you: refused",
                    cred.uid()
                ),
            ));
        }
        Ok(SessionClient { record, frames: Framed::new(stream, FrameCodec::socket()) })
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
                NO_SUCH_SESSION,
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

    /// Put an event into the session's queue; its id there.
    pub async fn push(&mut self, kind: &str, data: Value) -> Result<u64, CallError> {
        let answer =
            self.ask(&ToSession::Push { event: Pushed { kind: kind.into(), data } }).await?;
        answer.id.ok_or_else(|| unexpected(&self.record.session_id))
    }

    /// Take the page events queued in the session, waiting up to `timeout_secs` for one.
    pub async fn wait(&mut self, timeout_secs: u64) -> Result<Vec<Value>, CallError> {
        let answer = self.ask(&ToSession::Wait { timeout_secs }).await?;
        answer.events.ok_or_else(|| unexpected(&self.record.session_id))
    }

    async fn ask(&mut self, request: &ToSession) -> Result<FromSession<Value>, CallError> {
        let id = self.record.session_id.clone();
        let gone = |e: &dyn std::fmt::Display| {
            CallError::new(NO_SUCH_SESSION, format!("session {id} went away ({e})"))
        };
        let bytes = serde_json::to_vec(request).expect("session messages serialize");
        self.frames.send(Bytes::from(bytes)).await.map_err(|e| gone(&e))?;
        let frame = match self.frames.next().await {
            Some(Ok(frame)) => frame,
            Some(Err(e)) => return Err(gone(&e)),
            None => return Err(gone(&"it closed the connection")),
        };
        let answer: FromSession<Value> =
            serde_json::from_slice(&frame).map_err(|_| unexpected(&self.record.session_id))?;
        match answer.error {
            Some(error) => Err(CallError::from(error)),
            None => Ok(answer),
        }
    }
}

/// Connections to other sessions, kept open between calls: a report then costs one frame each
/// way instead of a directory scan, a connect and a peer check.
#[derive(Default)]
pub struct Peers {
    open: tokio::sync::Mutex<HashMap<(PathBuf, String), SessionClient>>,
}

impl Peers {
    /// Put an event into session `target`'s queue; its id there. A kept connection that broke
    /// (the session ended, or restarted under the same id) is replaced once.
    pub async fn push(
        &self,
        runtime_dir: &Path,
        target: &str,
        kind: &str,
        data: Value,
    ) -> Result<u64, CallError> {
        let key = (runtime_dir.to_owned(), target.to_owned());
        let mut open = self.open.lock().await;
        if let Some(client) = open.get_mut(&key) {
            match client.push(kind, data.clone()).await {
                Err(e) if e.code() == NO_SUCH_SESSION => {
                    open.remove(&key);
                }
                done => return done,
            }
        }
        let mut client = SessionClient::connect(runtime_dir, target).await?;
        let id = client.push(kind, data).await?;
        open.insert(key, client);
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
        NO_SUCH_SESSION,
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
