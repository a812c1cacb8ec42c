//! The session's unix socket: other processes of the same user (a worker's own `tabwire mcp`,
//! `tabwire notify` in a hook, `tabwire wait` in a script) put events into this session's queue
//! or take its page events. Each connection may send several requests, one at a time.

use std::time::Duration;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use tabwire_proto::codec::FrameCodec;
use tabwire_proto::runtime_dir::current_uid;
use tabwire_proto::wire::{ErrorBody, code};
use tokio::net::{UnixListener, UnixStream};
use tokio_util::codec::Framed;

use super::messages::{FromSession, Pushed, ToSession};
use crate::core::Core;
use crate::error::CallError;
use crate::events::{SessionEvent, kind};

/// The event kinds another process may put into a session's queue.
pub const PUSHABLE: [&str; 4] =
    [kind::WORKER_COMPLETE, kind::MESSAGE, kind::QUESTION, kind::ANSWER];
/// The longest wait a client may ask for, in seconds.
pub const MAX_WAIT_SECS: u64 = 120;

/// Accept connections until the process ends.
pub async fn serve(listener: UnixListener, core: Core) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!(error = %e, "the session socket cannot accept; retrying");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        // The directory is private, but a socket is the door to the user's browser: check.
        match stream.peer_cred() {
            Ok(cred) if cred.uid() == current_uid() => {}
            Ok(cred) => {
                tracing::warn!(uid = cred.uid(), "refused a session connection from another user");
                continue;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot tell who connected to the session; refused");
                continue;
            }
        }
        tokio::spawn(connection(stream, core.clone()));
    }
}

async fn connection(stream: UnixStream, core: Core) {
    let mut frames = Framed::new(stream, FrameCodec::socket());
    while let Some(frame) = frames.next().await {
        let Ok(frame) = frame else { return };
        let request = match serde_json::from_slice::<ToSession>(&frame) {
            Ok(request) => request,
            Err(e) => {
                let error = ErrorBody::new(
                    code::INVALID_MESSAGE,
                    format!("not a session message ({e}); see specs/protocol.md, Session sockets"),
                );
                let _ = send(&mut frames, &FromSession::<SessionEvent>::error(error)).await;
                return;
            }
        };
        let answer = match request {
            ToSession::Push { event } => push(&core, event),
            ToSession::Wait { timeout_secs } => {
                // A client that hangs up mid-wait must not take events with it: stop waiting
                // as soon as its side closes (or it sends anything else, which it must not).
                let waited = tokio::select! {
                    answer = wait(&core, timeout_secs) => answer,
                    _ = frames.next() => return,
                };
                waited
            }
        };
        let sent = send(&mut frames, &answer).await;
        // Events taken for an answer that did not go out go back to their places; the pages
        // hear they were drained only once it did.
        if let Some(events) = answer.events {
            if sent.is_err() {
                core.queue().put_back(events);
                return;
            }
            core.tell_drained(&events).await;
        }
        if sent.is_err() {
            return;
        }
    }
}

fn push(core: &Core, event: Pushed) -> FromSession<SessionEvent> {
    if !PUSHABLE.contains(&event.kind.as_str()) {
        return FromSession::error(ErrorBody::new(
            code::BAD_REQUEST,
            format!("a session accepts only {} events; got {:?}", PUSHABLE.join(", "), event.kind),
        ));
    }
    FromSession::queued(core.receive(&event.kind, &event.data))
}

async fn wait(core: &Core, timeout_secs: u64) -> FromSession<SessionEvent> {
    if timeout_secs > MAX_WAIT_SECS {
        return FromSession::error(ErrorBody::new(
            code::BAD_REQUEST,
            format!("timeout_secs must be at most {MAX_WAIT_SECS}; got {timeout_secs}"),
        ));
    }
    match core.wait_page_events(None, Duration::from_secs(timeout_secs)).await {
        Ok(events) => FromSession::events(events),
        Err(e) => FromSession::error(body(e)),
    }
}

fn body(e: CallError) -> ErrorBody {
    ErrorBody::new(e.code(), e.message())
}

async fn send(
    frames: &mut Framed<UnixStream, FrameCodec>,
    answer: &FromSession<SessionEvent>,
) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(answer).map_err(std::io::Error::other)?;
    frames.send(Bytes::from(bytes)).await.map_err(std::io::Error::other)
}
