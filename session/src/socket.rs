//! The session's socket (a named pipe on Windows): other processes of the same user (a worker's own `tabwire mcp`,
//! `tabwire notify` in a hook, `tabwire wait` in a script) put events into this session's queue
//! or take its page events. Each connection may send several requests, one at a time.
//!
//! Limits (`tabwire_proto::limits`): at most `MAX_SESSION_CONNECTIONS` at once (one more gets
//! a `too_many_connections` error frame and is closed); a frame begun must be whole within
//! `SOCKET_FRAME_TIMEOUT`; a connection with no request for `SESSION_IDLE_TIMEOUT` is closed.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use tabwire_proto::codec::{FrameCodec, FrameError};
use tabwire_proto::limits::{
    MAX_SESSION_CONNECTIONS, MAX_SESSION_REQUEST, MAX_SOCKET_FRAME, SESSION_IDLE_TIMEOUT,
    SOCKET_FRAME_TIMEOUT,
};
use tabwire_proto::socket::{AcceptBackoff, Listener, Stream, check_peer, next_frame};
use tabwire_proto::wire::{ErrorBody, code};
use tokio::sync::Semaphore;
use tokio_util::codec::Framed;

use super::messages::{FromSession, Pushed, ToSession};
use tabwire_link::core::Core;
use tabwire_link::error::CallError;
use tabwire_link::events::{SessionEvent, kind};

/// The event kinds another process may put into a session's queue.
pub const PUSHABLE: [&str; 4] =
    [kind::WORKER_COMPLETE, kind::MESSAGE, kind::QUESTION, kind::ANSWER];
pub use tabwire_link::limits::MAX_WAIT_SECS;

/// Accept connections until the process ends.
pub async fn serve(listener: Listener, core: Core) {
    let slots = Arc::new(Semaphore::new(MAX_SESSION_CONNECTIONS));
    let mut backoff = AcceptBackoff::default();
    loop {
        let stream = match listener.accept().await {
            Ok(stream) => stream,
            Err(e) => {
                backoff.failed("the session socket", &e).await;
                continue;
            }
        };
        backoff.reset();
        // The directory is private, but a socket is the door to the user's browser: check.
        if let Err(e) = check_peer(&stream) {
            tracing::warn!("refused a session connection: {e}");
            continue;
        }
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tracing::warn!("refused a session connection: {MAX_SESSION_CONNECTIONS} are open");
            tokio::spawn(async move {
                let mut frames = Framed::new(stream, codec());
                let busy = ErrorBody::new(
                    code::TOO_MANY_CONNECTIONS,
                    format!(
                        "this session serves {MAX_SESSION_CONNECTIONS} connections at once; \
                         close some and try again"
                    ),
                );
                let _ = tokio::time::timeout(
                    SOCKET_FRAME_TIMEOUT,
                    send(&mut frames, &FromSession::<SessionEvent>::Error { error: busy }),
                )
                .await;
            });
            continue;
        };
        let core = core.clone();
        tokio::spawn(async move {
            connection(stream, core).await;
            drop(slot);
        });
    }
}

async fn connection(stream: Stream, core: Core) {
    let mut frames = Framed::new(stream, codec());
    loop {
        let partial = |f: &Framed<Stream, FrameCodec>| !f.read_buffer().is_empty();
        let frame = match next_frame(&mut frames, partial, Some(SESSION_IDLE_TIMEOUT)).await {
            Ok(Some(Ok(frame))) => frame,
            Ok(Some(Err(e @ FrameError::TooLarge { .. }))) => {
                let error = ErrorBody::new(code::TOO_LARGE, e.to_string());
                let _ = send(&mut frames, &FromSession::<SessionEvent>::Error { error }).await;
                return;
            }
            Ok(_) => return,
            Err(stalled) => {
                tracing::debug!("closed a session connection: {stalled}");
                return;
            }
        };
        let request = match parse_request(&frame) {
            Ok(request) => request,
            Err(error) => {
                let _ = send(&mut frames, &FromSession::<SessionEvent>::Error { error }).await;
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
        // A client that stops reading gets as long as a trickled frame before it counts as gone.
        let sent =
            match tokio::time::timeout(SOCKET_FRAME_TIMEOUT, send(&mut frames, &answer)).await {
                Ok(sent) => sent,
                Err(_) => Err(std::io::ErrorKind::TimedOut.into()),
            };
        // Events taken for an answer that did not go out go back to their places; the pages
        // hear they were drained only once it did.
        if let FromSession::Events { events, .. } = answer {
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

/// The session socket's framing: requests up to [`MAX_SESSION_REQUEST`], answers (page events)
/// up to a socket frame.
pub(super) fn codec() -> FrameCodec {
    FrameCodec::new(MAX_SESSION_REQUEST, MAX_SOCKET_FRAME)
}

/// One frame read as a request, or the error that answers it (the connection then closes).
pub(super) fn parse_request(frame: &[u8]) -> Result<ToSession, ErrorBody> {
    serde_json::from_slice::<ToSession>(frame).map_err(|e| {
        ErrorBody::new(
            code::INVALID_MESSAGE,
            format!("not a session message ({e}); see specs/protocol.md, Session sockets"),
        )
    })
}

fn push(core: &Core, event: Pushed) -> FromSession<SessionEvent> {
    if !PUSHABLE.contains(&event.kind.as_str()) {
        let error = ErrorBody::new(
            code::BAD_REQUEST,
            format!("a session accepts only {} events; got {:?}", PUSHABLE.join(", "), event.kind),
        );
        return FromSession::Error { error };
    }
    FromSession::Queued { id: core.receive(&event.kind, &event.data) }
}

async fn wait(core: &Core, timeout_secs: u64) -> FromSession<SessionEvent> {
    if timeout_secs > MAX_WAIT_SECS {
        let error = ErrorBody::new(
            code::BAD_REQUEST,
            format!("timeout_secs must be at most {MAX_WAIT_SECS}; got {timeout_secs}"),
        );
        return FromSession::Error { error };
    }
    match core.wait_page_events(None, Duration::from_secs(timeout_secs)).await {
        Ok(events) => FromSession::events(events),
        Err(e) => FromSession::Error { error: body(e) },
    }
}

fn body(e: CallError) -> ErrorBody {
    ErrorBody::new(e.code(), e.message())
}

async fn send(
    frames: &mut Framed<Stream, FrameCodec>,
    answer: &FromSession<SessionEvent>,
) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(answer).map_err(std::io::Error::other)?;
    frames.send(Bytes::from(bytes)).await.map_err(std::io::Error::other)
}
