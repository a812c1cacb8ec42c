//! One connection to one browser's host: send requests, match responses to them, pass events on.
//!
//! Three pieces share the socket. `call` registers a pending request and hands the frame to the
//! writer task; the reader task resolves the pending request when its response arrives and
//! hands events to the [`Inbox`]. When the socket ends, the reader fails every pending call at once with
//! `browser_disconnected` — a caller never waits for its timeout to learn the browser is gone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use serde_json::value::RawValue;
use tabwire_proto::codec::FrameCodec;
use tabwire_proto::limits::CONNECT_TIMEOUT;
use tabwire_proto::runtime_dir::{HostRecord, now_ms};
use tabwire_proto::socket::{self, PeerError, User, check_peer};
use tabwire_proto::stream;
use tabwire_proto::wire::{Cancel, Hello, Message, PROTOCOL_VERSION, Request, SessionTag, code};
use tokio::sync::{mpsc, oneshot};
use tokio_util::codec::{FramedRead, FramedWrite};
use tokio_util::sync::CancellationToken;

use super::BrowserInfo;
use super::refusals::{Refusals, tab_of};
use crate::error::CallError;
use crate::inbox::Inbox;

/// The host answers a timed-out request itself; wait this much longer before giving up on it
/// locally, so the caller sees the host's `timeout` error rather than ours.
const GRACE: Duration = Duration::from_millis(500);

type Reply = Result<Box<RawValue>, CallError>;

/// Who waits for the answer to a request, and gets it with its arrival number
/// ([`Inbox::arrival`]).
type Waiter = oneshot::Sender<(Reply, u64)>;

/// An attached browser. Dropping the last handle closes the socket, which tells the host to
/// cancel whatever this bridge still had in flight.
pub struct Connection {
    outgoing: mpsc::UnboundedSender<Message>,
    link: Arc<Link>,
    /// The session the requests are made for, once the core is one.
    caller: Arc<OnceLock<SessionTag>>,
}

/// What the callers and the reader of one connection share.
struct Link {
    info: BrowserInfo,
    state: Mutex<State>,
    /// The browser's last `tab_owned_by_other_session` refusals, repeated for a moment.
    refusals: Refusals,
    /// Fired when the socket ends (or the [`Connection`] is dropped, which ends the reader).
    closed: CancellationToken,
}

/// Calls in flight by request id while the connection is open; why it ended once it has, so
/// that a call arriving after that fails at once instead of waiting for a response that
/// cannot come.
enum State {
    Open(HashMap<String, Waiter>),
    Closed(String),
}

impl Link {
    /// Take the waiter of request `id`, if it still waits.
    fn take(&self, id: &str) -> Option<Waiter> {
        match &mut *self.state.lock().expect("connection state poisoned") {
            State::Open(pending) => pending.remove(id),
            State::Closed(_) => None,
        }
    }

    /// The connection ended: remember why and fail every call still waiting.
    fn close(&self, reason: String) {
        let state = std::mem::replace(
            &mut *self.state.lock().expect("connection state poisoned"),
            State::Closed(reason),
        );
        if let State::Open(pending) = state {
            for (_, tx) in pending {
                let _ = tx.send((Err(CallError::disconnected(&self.info.label())), 0));
            }
        }
        self.closed.cancel();
    }
}

/// Why a host could not be attached.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error("cannot connect to {socket}: {source}")]
    Connect { socket: String, source: std::io::Error },
    #[error("the socket {socket} belongs to {peer}, not to you: refusing to talk to it")]
    ForeignPeer { socket: String, peer: User },
    #[error(
        "cannot tell who listens on {socket} ({source}): refusing to talk to it. \
         `tabwire doctor` checks the runtime directory"
    )]
    UnknownPeer { socket: String, source: std::io::Error },
    #[error("the host closed the connection before introducing its browser")]
    ClosedBeforeHello,
    #[error("the host's first message was not a hello: {0}")]
    BadHello(String),
    #[error(
        "the extension speaks protocol {0}, this tabwire speaks {PROTOCOL_VERSION}: \
         update the older of the two"
    )]
    Protocol(u32),
}

impl Connection {
    /// Connect to a host's socket and wait for its hello. Waits as long as the host takes: the
    /// host sends hello only once its extension has said hello. With `subscribe`, the host
    /// sends events too, and they go to `inbox`.
    pub(crate) async fn open(
        record: &HostRecord,
        inbox: Inbox,
        subscribe: bool,
    ) -> Result<Arc<Connection>, AttachError> {
        let socket = record.socket.display().to_string();
        let connect = tokio::time::timeout(CONNECT_TIMEOUT, socket::open(&record.socket));
        let stream = match connect.await {
            Ok(Ok(stream)) => stream,
            Ok(Err(source)) => return Err(AttachError::Connect { socket, source }),
            Err(_) => {
                let source = std::io::ErrorKind::TimedOut.into();
                return Err(AttachError::Connect { socket, source });
            }
        };
        // The runtime directory is private, but check anyway: whoever listens on this socket
        // receives everything the assistant asks of the browser.
        match check_peer(&stream) {
            Ok(()) => {}
            Err(PeerError::Foreign { peer, .. }) => {
                return Err(AttachError::ForeignPeer { socket, peer });
            }
            Err(PeerError::Unknown(source)) => {
                return Err(AttachError::UnknownPeer { socket, source });
            }
        }
        // Halves that do not wake this thread each time the host reads (proto's `stream`).
        let (read, write) = match stream::split(stream) {
            Ok(halves) => halves,
            Err(source) => return Err(AttachError::Connect { socket, source }),
        };
        let mut frames = FramedRead::new(read, FrameCodec::socket());

        let hello = match frames.next().await {
            None => return Err(AttachError::ClosedBeforeHello),
            Some(Err(e)) => return Err(AttachError::BadHello(e.to_string())),
            Some(Ok(frame)) => match Message::parse(&frame) {
                Ok(Message::Hello(hello)) => hello,
                Ok(other) => return Err(AttachError::BadHello(format!("a {}", other.kind()))),
                Err(e) => return Err(AttachError::BadHello(e.to_string())),
            },
        };
        if hello.protocol != PROTOCOL_VERSION {
            return Err(AttachError::Protocol(hello.protocol));
        }
        let info = BrowserInfo::new(&hello, record, now_ms());

        let (outgoing, to_write) = mpsc::unbounded_channel();
        if subscribe {
            // Ask for events (and the ones the host kept while nobody listened), and say which
            // session this is: a host that started after the session (a browser or extension
            // restart) then lists it as attached before its next request (specs/protocol.md).
            let session = inbox.caller.get().cloned().map(Box::new);
            let hello = Hello {
                protocol: PROTOCOL_VERSION,
                subscribe: Some(true),
                session,
                ..Hello::default()
            };
            let _ = outgoing.send(Message::Hello(hello));
        }
        let link = Arc::new(Link {
            info,
            state: Mutex::new(State::Open(HashMap::new())),
            refusals: Refusals::default(),
            closed: CancellationToken::new(),
        });
        tokio::spawn(write_loop(FramedWrite::new(write, FrameCodec::socket()), to_write));
        let caller = inbox.caller.clone();
        tokio::spawn(read_loop(frames, link.clone(), inbox));
        Ok(Arc::new(Connection { outgoing, link, caller }))
    }

    pub fn info(&self) -> &BrowserInfo {
        &self.link.info
    }

    /// Resolves once the connection has ended.
    pub async fn closed(&self) {
        self.link.closed.cancelled().await
    }

    /// Why the connection ended (empty while it is open).
    pub fn close_reason(&self) -> String {
        match &*self.link.state.lock().expect("connection state poisoned") {
            State::Open(_) => String::new(),
            State::Closed(reason) => reason.clone(),
        }
    }

    /// Send one request and wait for its answer, and the arrival number of the answer (0 for
    /// an error made here). `timeout` goes to the host, which answers `timeout` and cancels the
    /// work in the browser; if even that answer does not come, the call gives up shortly after.
    /// Dropping the future cancels the request in the browser. Each request gets a fresh UUID
    /// as its id: unique without coordination, and a late answer can never be mistaken for
    /// another call's.
    pub async fn call_stamped(
        &self,
        method: &str,
        params: Box<RawValue>,
        timeout: Duration,
    ) -> (Reply, u64) {
        let tab = tab_of(&params);
        if let Some((refused, until)) = self.link.refusals.repeat(method, tab) {
            // Given when the hold ends, never after the call's own timeout (refusals.rs).
            let until = until.min(std::time::Instant::now() + timeout);
            tokio::time::sleep_until(until.into()).await;
            return (Err(refused), 0);
        }
        let id = uuid::Uuid::new_v4().to_string();
        let (tx, rx) = oneshot::channel();
        match &mut *self.link.state.lock().expect("connection state poisoned") {
            State::Open(pending) => pending.insert(id.clone(), tx),
            State::Closed(_) => return (Err(CallError::disconnected(&self.info().label())), 0),
        };
        let in_flight = InFlight { conn: self, id: id.clone() };
        let request = Request {
            id,
            method: method.to_owned(),
            params,
            timeout_ms: Some(timeout.as_millis() as u64),
            session: self.caller.get().cloned(),
        };
        if self.outgoing.send(Message::Request(request)).is_err() {
            return (Err(CallError::disconnected(&self.info().label())), 0);
        }
        let reply = match tokio::time::timeout(timeout + GRACE, rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => (Err(CallError::disconnected(&self.info().label())), 0),
            Err(_) => (
                Err(CallError::new(
                    code::TIMEOUT,
                    format!(
                        "{} did not answer {method} within {} ms; the browser may be busy or \
                     stuck, try again",
                        self.info().label(),
                        timeout.as_millis()
                    ),
                )),
                0,
            ),
        };
        drop(in_flight);
        if let Err(e) = &reply.0 {
            self.link.refusals.note(method, tab, e);
        }
        reply
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // Stops the reader; the writer stops with `outgoing`. Both halves dropped = socket closed.
        self.link.closed.cancel();
    }
}

/// A request that may still be pending. If the caller stops waiting (timeout, or the MCP
/// client cancelled the tool call and the future was dropped), tell the browser to stop too.
struct InFlight<'a> {
    conn: &'a Connection,
    id: String,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if self.conn.link.take(&self.id).is_some() {
            let cancel = Message::Cancel(Cancel { id: std::mem::take(&mut self.id) });
            let _ = self.conn.outgoing.send(cancel);
        }
    }
}

async fn write_loop(
    mut sink: FramedWrite<stream::WriteHalf, FrameCodec>,
    mut to_write: mpsc::UnboundedReceiver<Message>,
) {
    while let Some(message) = to_write.recv().await {
        if let Err(e) = sink.send(Bytes::from(message.to_bytes())).await {
            tracing::warn!(error = %e, "cannot write to the host; the connection is ending");
            return;
        }
    }
}

/// Read frames until the socket ends: answers go to their callers, events to `inbox`.
async fn read_loop(
    mut frames: FramedRead<stream::ReadHalf, FrameCodec>,
    link: Arc<Link>,
    inbox: Inbox,
) {
    let host_pid = link.info.host_pid;
    let mut said_reason = None;
    let reason = loop {
        let frame = tokio::select! {
            frame = frames.next() => frame,
            () = link.closed.cancelled() => break "this bridge let go of it".to_owned(),
        };
        let frame = match frame {
            None => break "the host closed the connection".to_owned(),
            Some(Err(e)) => break e.to_string(),
            Some(Ok(frame)) => frame,
        };
        let arrival = inbox.arrival();
        match Message::parse(&frame) {
            Ok(Message::Response(response)) => match link.take(&response.id) {
                Some(tx) => {
                    let _ = tx.send((response.result.map_err(CallError::from), arrival));
                }
                // A caller that gave up (cancelled, timed out) removed its entry.
                None => {
                    tracing::info!(id = %response.id, "dropping a response to no pending request")
                }
            },
            Ok(Message::Event(event)) => {
                if let Some(reason) = inbox.event(&link.info, arrival, event) {
                    said_reason = Some(reason);
                }
            }
            Ok(other) => tracing::debug!(kind = other.kind(), "ignoring a message from the host"),
            Err(e) => tracing::warn!(host_pid, error = %e, "the host sent a bad message"),
        }
    };
    let reason = said_reason.unwrap_or(reason);
    tracing::info!(host_pid, %reason, "browser detached");
    link.close(reason);
}
