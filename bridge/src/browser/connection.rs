//! One connection to one browser's host: send requests, match responses to them, pass events on.
//!
//! Three pieces share the socket. `call` registers a pending request and hands the frame to the
//! writer task; the reader task resolves the pending request when its response arrives and
//! hands events to the [`Inbox`]. When the socket ends, the reader fails every pending call at once with
//! `browser_disconnected` — a caller never waits for its timeout to learn the browser is gone.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use serde_json::value::RawValue;
use tabwire_proto::codec::FrameCodec;
use tabwire_proto::limits::CONNECT_TIMEOUT;
use tabwire_proto::runtime_dir::{HostRecord, now_ms};
use tabwire_proto::socket::{PeerError, check_peer};
use tabwire_proto::wire::{Cancel, Event, Hello, Message, PROTOCOL_VERSION, Request, code};
use tokio::net::UnixStream;
use tokio::net::unix::OwnedReadHalf;
use tokio::sync::{mpsc, oneshot};
use tokio_util::codec::{FramedRead, FramedWrite};
use tokio_util::sync::CancellationToken;

use super::BrowserInfo;
use crate::error::CallError;
use crate::inbox::Inbox;

/// The host answers a timed-out request itself; wait this much longer before giving up on it
/// locally, so the caller sees the host's `timeout` error rather than ours.
const GRACE: Duration = Duration::from_millis(500);

/// An event from one browser, as every subscriber receives it.
#[derive(Debug, Clone)]
pub struct BrowserEvent {
    /// Host pid of the browser that sent it.
    pub host_pid: u32,
    pub event: Arc<Event>,
}

type Reply = Result<Box<RawValue>, CallError>;

/// Calls in flight, by request id. `None` once the connection has ended: a call that arrives
/// after that fails at once instead of waiting for a response that cannot come. A reply carries
/// its arrival number (see [`next_arrival`]).
type Pending = Arc<Mutex<Option<HashMap<String, oneshot::Sender<(Reply, u64)>>>>>;

/// Every frame any connection of this process reads gets the next number: what arrived later
/// has the larger one. The state cache uses it to keep an older answer from replacing a newer
/// update that the reader stored while the answer was on its way to its caller.
static ARRIVALS: AtomicU64 = AtomicU64::new(1);

fn next_arrival() -> u64 {
    ARRIVALS.fetch_add(1, Ordering::Relaxed)
}

/// An attached browser. Dropping the last handle closes the socket, which tells the host to
/// cancel whatever this bridge still had in flight.
pub struct Connection {
    info: BrowserInfo,
    outgoing: mpsc::UnboundedSender<Message>,
    pending: Pending,
    /// Fired when the socket ends (or this handle is dropped, which ends the reader).
    closed: CancellationToken,
    /// Why the connection ended, once it has.
    close_reason: Arc<OnceLock<String>>,
}

/// Why a host could not be attached.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error("cannot connect to {socket}: {source}")]
    Connect { socket: String, source: std::io::Error },
    #[error("the socket {socket} belongs to uid {uid}, not to you: refusing to talk to it")]
    ForeignPeer { socket: String, uid: u32 },
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
        let connect = tokio::time::timeout(CONNECT_TIMEOUT, UnixStream::connect(&record.socket));
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
            Err(PeerError::Foreign { uid, .. }) => {
                return Err(AttachError::ForeignPeer { socket, uid });
            }
            Err(PeerError::Unknown(source)) => {
                return Err(AttachError::UnknownPeer { socket, source });
            }
        }
        let (read, write) = stream.into_split();
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
            // Ask for events (and the ones the host kept while nobody listened).
            let hello =
                Hello { protocol: PROTOCOL_VERSION, subscribe: Some(true), ..Hello::default() };
            let _ = outgoing.send(Message::Hello(hello));
        }
        let conn = Arc::new(Connection {
            info,
            outgoing,
            pending: Arc::new(Mutex::new(Some(HashMap::new()))),
            closed: CancellationToken::new(),
            close_reason: Arc::new(OnceLock::new()),
        });
        tokio::spawn(write_loop(FramedWrite::new(write, FrameCodec::socket()), to_write));
        tokio::spawn(read_loop(
            frames,
            conn.pending.clone(),
            inbox,
            conn.info.clone(),
            conn.closed.clone(),
            conn.close_reason.clone(),
        ));
        Ok(conn)
    }

    pub fn info(&self) -> &BrowserInfo {
        &self.info
    }

    /// Resolves once the connection has ended.
    pub async fn closed(&self) {
        self.closed.cancelled().await
    }

    /// Why the connection ended (empty while it is open).
    pub fn close_reason(&self) -> &str {
        self.close_reason.get().map_or("", String::as_str)
    }

    /// Send one request and wait for its answer. `timeout` goes to the host, which answers
    /// `timeout` and cancels the work in the browser; if even that answer does not come, the
    /// call gives up shortly after. Dropping the future cancels the request in the browser.
    pub async fn call(&self, method: &str, params: Box<RawValue>, timeout: Duration) -> Reply {
        self.call_stamped(method, params, timeout).await.0
    }

    /// [`Connection::call`], and the arrival number of the answer (0 for an error made here).
    /// Each request gets a fresh UUID as its id: unique without coordination, and a late answer
    /// can never be mistaken for another call's.
    pub async fn call_stamped(
        &self,
        method: &str,
        params: Box<RawValue>,
        timeout: Duration,
    ) -> (Reply, u64) {
        let id = uuid::Uuid::new_v4().to_string();
        let (tx, rx) = oneshot::channel();
        match self.pending.lock().expect("pending map poisoned").as_mut() {
            Some(map) => map.insert(id.clone(), tx),
            None => return (Err(CallError::disconnected(&self.info.label())), 0),
        };
        let in_flight = InFlight { conn: self, id: id.clone() };
        let request = Request {
            id,
            method: method.to_owned(),
            params,
            timeout_ms: Some(timeout.as_millis() as u64),
        };
        if self.outgoing.send(Message::Request(request)).is_err() {
            return (Err(CallError::disconnected(&self.info.label())), 0);
        }
        let reply = match tokio::time::timeout(timeout + GRACE, rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => (Err(CallError::disconnected(&self.info.label())), 0),
            Err(_) => (
                Err(CallError::new(
                    code::TIMEOUT,
                    format!(
                        "{} did not answer {method} within {} ms; the browser may be busy or \
                     stuck, try again",
                        self.info.label(),
                        timeout.as_millis()
                    ),
                )),
                0,
            ),
        };
        drop(in_flight);
        reply
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // Stops the reader; the writer stops with `outgoing`. Both halves dropped = socket closed.
        self.closed.cancel();
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
        let mut pending = self.conn.pending.lock().expect("pending map poisoned");
        let still_pending = pending.as_mut().is_some_and(|map| map.remove(&self.id).is_some());
        drop(pending);
        if still_pending {
            let cancel = Message::Cancel(Cancel { id: std::mem::take(&mut self.id) });
            let _ = self.conn.outgoing.send(cancel);
        }
    }
}

async fn write_loop(
    mut sink: FramedWrite<tokio::net::unix::OwnedWriteHalf, FrameCodec>,
    mut to_write: mpsc::UnboundedReceiver<Message>,
) {
    while let Some(message) = to_write.recv().await {
        if let Err(e) = sink.send(Bytes::from(message.to_bytes())).await {
            tracing::warn!(error = %e, "cannot write to the host; the connection is ending");
            return;
        }
    }
}

async fn read_loop(
    mut frames: FramedRead<OwnedReadHalf, FrameCodec>,
    pending: Pending,
    inbox: Inbox,
    info: BrowserInfo,
    closed: CancellationToken,
    close_reason: Arc<OnceLock<String>>,
) {
    let host_pid = info.host_pid;
    let mut said_reason = None;
    let reason = loop {
        let frame = tokio::select! {
            frame = frames.next() => frame,
            () = closed.cancelled() => break "this bridge let go of it".to_owned(),
        };
        let frame = match frame {
            None => break "the host closed the connection".to_owned(),
            Some(Err(e)) => break e.to_string(),
            Some(Ok(frame)) => frame,
        };
        let arrival = next_arrival();
        match Message::parse(&frame) {
            Ok(Message::Response(response)) => {
                let waiter = pending
                    .lock()
                    .expect("pending map poisoned")
                    .as_mut()
                    .and_then(|map| map.remove(&response.id));
                match waiter {
                    Some(tx) => {
                        let _ = tx.send((response.result.map_err(CallError::from), arrival));
                    }
                    // A caller that gave up (cancelled, timed out) removed its entry.
                    None => {
                        tracing::info!(id = %response.id, "dropping a response to no pending request")
                    }
                }
            }
            Ok(Message::Event(event)) => {
                if let Some(reason) = inbox.event(&info, arrival, event) {
                    said_reason = Some(reason);
                }
            }
            Ok(other) => tracing::debug!(kind = other.kind(), "ignoring a message from the host"),
            Err(e) => tracing::warn!(host_pid, error = %e, "the host sent a bad message"),
        }
    };
    let reason = said_reason.unwrap_or(reason);
    tracing::info!(host_pid, %reason, "browser detached");
    let _ = close_reason.set(reason);
    let waiters = pending.lock().expect("pending map poisoned").take();
    for (_, tx) in waiters.into_iter().flatten() {
        let _ = tx.send((Err(CallError::disconnected(&info.label())), 0));
    }
    closed.cancel();
}
