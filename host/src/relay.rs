//! The routing state of the host, owned by one task.
//!
//! Every reader (the browser's stdin, each bridge's socket, the accept loop, the signal
//! handler) sends what it saw to this actor as an [`Input`]; the actor decides what goes where
//! and hands finished frames to writer tasks through channels. Nothing here does I/O or holds a
//! lock, so routing one message is a few map lookups, and a slow peer can only slow its own
//! writer.
//!
//! What the actor decides (specs/protocol.md, "Routing in the host"):
//! - requests get a host-wide id `h<n>`; the response goes back only to the bridge that asked,
//!   with its own id; unanswered requests time out and are cancelled toward the extension;
//! - events get a `seq` and go to every bridge, or into the [`EventBuffer`] while there is none;
//! - a bridge that leaves has its requests cancelled; a bridge that sends bad input gets one
//!   error and is closed;
//! - when the browser goes, every pending request fails and every bridge is told.

use std::collections::{HashMap, HashSet};
use std::future::poll_fn;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use serde::Serialize;
use tokio::sync::{OwnedSemaphorePermit, mpsc, oneshot, watch};
use tokio_util::time::{DelayQueue, delay_queue};

use crate::event_buffer::{Dropped, EventBuffer};
use crate::limits;
use crate::sites::{self, Sites};
use crate::wire::{self, Cancel, Event, Hello, Message, Request, Response, code};

/// Names one bridge connection for the life of the host.
pub type BridgeId = u64;

/// How many frames may wait for one bridge's writer before that bridge is considered stuck
/// and disconnected. Large, because a burst of events is normal; bounded, because a bridge
/// that stopped reading must not grow the host without end.
pub const BRIDGE_QUEUE: usize = 16_384;

/// What a bridge's writer task is handed: one frame payload, or several to write in order
/// (the replay of buffered events counts as one queue slot).
#[derive(Debug)]
pub enum Outgoing {
    Frame(Bytes),
    Batch(Vec<Bytes>),
}

impl Outgoing {
    /// Payload bytes, for the queue's byte count.
    pub fn len(&self) -> usize {
        match self {
            Outgoing::Frame(f) => f.len(),
            Outgoing::Batch(fs) => fs.iter().map(Bytes::len).sum(),
        }
    }
}

/// The relay's end of one bridge's writer.
#[derive(Debug)]
pub struct BridgeLink {
    /// Feeds the writer; dropping it lets the writer flush and close.
    pub tx: mpsc::Sender<Outgoing>,
    /// Bytes queued and not yet written; the writer subtracts what it wrote.
    pub queued: Arc<AtomicUsize>,
    /// Sending on it makes the writer stop at once, dropping what is queued.
    pub kill: oneshot::Sender<()>,
}

/// Why a frame could not be queued for a bridge.
enum Unsent {
    /// The bridge stopped reading: its queue is over a limit.
    Stuck(String),
    /// The writer is gone.
    Gone,
}

impl BridgeLink {
    fn send(&self, out: Outgoing) -> Result<(), Unsent> {
        let len = out.len();
        let before = self.queued.fetch_add(len, Ordering::Relaxed);
        if before >= limits::BRIDGE_QUEUE_BYTES {
            return Err(Unsent::Stuck(format!("{before} bytes wait for it")));
        }
        self.tx.try_send(out).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => {
                Unsent::Stuck(format!("{BRIDGE_QUEUE} messages wait for it"))
            }
            mpsc::error::TrySendError::Closed(_) => Unsent::Gone,
        })
    }
}

/// Everything the actor reacts to.
#[derive(Debug)]
pub enum Input {
    /// A bridge connected (its peer uid was checked). `tx` feeds its writer.
    BridgeAttached { id: BridgeId, link: BridgeLink },
    /// A bridge sent a well-formed message (of any type: the actor checks which are allowed).
    /// `credit` is the message's share of the byte budget toward the browser, held until the
    /// browser writer has written what the message became.
    FromBridge { id: BridgeId, msg: Message, credit: Option<OwnedSemaphorePermit> },
    /// A bridge sent a frame that is not a message; it gets `error` and is closed.
    BadFromBridge { id: BridgeId, reply_id: String, error: wire::ErrorBody },
    /// A bridge's connection ended (or its writer failed).
    BridgeDetached { id: BridgeId },
    /// The browser sent a well-formed message.
    FromBrowser(Message),
    /// The browser's side ended: stdin closed, stdout broke, or it sent bytes that cannot be
    /// resynchronised (`bad_input`).
    BrowserEnded { reason: String, bad_input: bool },
    /// SIGTERM, SIGINT or Ctrl-C.
    Stop { reason: String },
    /// The fast link to the extension came up, or went (`reason` says why); Native Messaging
    /// carries everything while it is down.
    FastLink { up: bool, reason: String },
}

/// A message for the browser writer, with the budget credit it holds (see
/// [`limits::TO_BROWSER_IN_FLIGHT`]); the credit is returned once the message is written.
#[derive(Debug)]
pub struct ToBrowser {
    pub payload: Bytes,
    pub credit: Option<OwnedSemaphorePermit>,
}

/// How the relay ended.
#[derive(Debug, PartialEq, Eq)]
pub struct Exit {
    /// The process exit code: 0 after a normal end, 1 after bad input from the browser.
    pub code: i32,
    pub reason: String,
}

/// Tabs whose owner the relay remembers to route their events (`Relay::route`); past it, it
/// forgets them all and broadcasts each tab's next event once more: a browser with more tabs
/// than this costs a broadcast now and then, never a missed change of owner.
const ROUTED_TABS: usize = 4096;

struct Bridge {
    link: BridgeLink,
    /// Said `hello {subscribe: true}`: receives events. Until then it only asks questions.
    subscribed: bool,
    /// Host ids of this bridge's requests in flight.
    inflight: HashSet<String>,
    /// The sessions its requests were made for (`request.session`): the extension hears in
    /// `host_status` which sessions are attached, and marks the tab groups of those that went.
    sessions: HashSet<String>,
}

impl Bridge {
    /// Whether events of `owner`'s tabs reach this bridge: its own session's, or it has none.
    fn hears(&self, owner: &str) -> bool {
        self.sessions.is_empty() || self.sessions.contains(owner)
    }
}

struct Pending {
    bridge: BridgeId,
    id: String,
    method: String,
    timeout_ms: u64,
    key: delay_queue::Key,
}

/// The routing state. Build with [`Relay::new`], then `run` it on its own task.
pub struct Relay {
    pid: u32,
    rx: mpsc::Receiver<Input>,
    to_browser: mpsc::UnboundedSender<ToBrowser>,
    hello_seen: watch::Sender<Option<Hello>>,
    bridges: HashMap<BridgeId, Bridge>,
    pending: HashMap<String, Pending>,
    timeouts: DelayQueue<String>,
    next_request: u64,
    next_seq: u64,
    buffer: EventBuffer,
    /// Our hello for bridges (the extension's plus `host_pid`), once the extension sent one.
    hello: Option<Bytes>,
    /// The extension's last `sites` event (without a seq), for each bridge that attaches
    /// after it: a bridge learns the allowed sites without asking.
    sites: Option<Bytes>,
    /// Each tab's owner as its last event named it, to route its events (`route`).
    owners: HashMap<i64, Option<String>>,
}

enum Step {
    Input(Option<Input>),
    Timeout(String),
}

impl Relay {
    /// `to_browser` carries whole message payloads to the browser writer, which chunks them;
    /// `hello_seen` is told each hello the extension sends (the host record is rewritten from
    /// it).
    pub fn new(
        pid: u32,
        rx: mpsc::Receiver<Input>,
        to_browser: mpsc::UnboundedSender<ToBrowser>,
        hello_seen: watch::Sender<Option<Hello>>,
    ) -> Self {
        Self {
            pid,
            rx,
            to_browser,
            hello_seen,
            bridges: HashMap::new(),
            pending: HashMap::new(),
            timeouts: DelayQueue::new(),
            next_request: 0,
            next_seq: 0,
            buffer: EventBuffer::new(
                limits::EVENT_BUFFER_MAX_EVENTS,
                limits::EVENT_BUFFER_MAX_BYTES,
            ),
            hello: None,
            sites: None,
            owners: HashMap::new(),
        }
    }

    /// Route until the browser goes or a signal arrives. On the way out every pending request
    /// fails with `browser_disconnected`, every bridge gets a `browser_disconnected` event, and
    /// all bridge channels are dropped so their writers flush and close.
    pub async fn run(mut self) -> Exit {
        let exit = loop {
            match self.next().await {
                Step::Timeout(host_id) => self.expire(&host_id),
                Step::Input(None) => {
                    break Exit { code: 0, reason: "every input of the host closed".into() };
                }
                Step::Input(Some(input)) => {
                    if let Some(exit) = self.handle(input) {
                        break exit;
                    }
                }
            }
        };
        self.disconnect_all(&exit.reason);
        exit
    }

    async fn next(&mut self) -> Step {
        // Timers first: a steady flood of input must not starve them.
        tokio::select! {
            biased;
            Some(expired) = poll_fn(|cx| self.timeouts.poll_expired(cx)),
                if !self.timeouts.is_empty() => Step::Timeout(expired.into_inner()),
            input = self.rx.recv() => Step::Input(input),
        }
    }

    fn handle(&mut self, input: Input) -> Option<Exit> {
        match input {
            Input::BridgeAttached { id, link } => self.attach(id, link),
            Input::FromBridge { id, msg, credit } => self.on_bridge_message(id, msg, credit),
            Input::BadFromBridge { id, reply_id, error } => self.reject(id, reply_id, error),
            Input::BridgeDetached { id } => drop(self.detach(id)),
            Input::FromBrowser(msg) => self.on_browser_message(msg),
            Input::BrowserEnded { reason, bad_input } => {
                if bad_input {
                    tracing::error!("bad input from the browser, shutting down: {reason}");
                } else {
                    tracing::info!("the browser side ended: {reason}");
                }
                return Some(Exit { code: i32::from(bad_input), reason });
            }
            Input::Stop { reason } => {
                tracing::info!("stopping: {reason}");
                return Some(Exit { code: 0, reason });
            }
            Input::FastLink { up: true, .. } => {}
            Input::FastLink { up: false, reason } => self.link_lost(&reason),
        }
        None
    }

    /// A request or its answer may have gone down with the fast link: fail every request in
    /// flight now, with an error that says to call again, and cancel them in the extension
    /// (by Native Messaging, which carries everything again).
    fn link_lost(&mut self, reason: &str) {
        for (host_id, p) in std::mem::take(&mut self.pending) {
            self.timeouts.try_remove(&p.key);
            let message = format!(
                "the fast link to the browser's extension closed while `{}` was in flight \
                 ({reason}); the browser is still there: call again",
                p.method
            );
            self.give_up(host_id, p, code::BROWSER_DISCONNECTED, message);
        }
    }

    fn attach(&mut self, id: BridgeId, link: BridgeLink) {
        self.bridges.insert(
            id,
            Bridge { link, inflight: HashSet::new(), subscribed: false, sessions: HashSet::new() },
        );
        tracing::info!(bridge = id, bridges = self.bridges.len(), "bridge attached");
        if let Some(hello) = &self.hello {
            self.send_to_bridge(id, Outgoing::Frame(hello.clone()));
        }
        if let Some(sites) = &self.sites {
            self.send_to_bridge(id, Outgoing::Frame(sites.clone()));
        }
        self.host_status();
    }

    /// Bridge `id` asked for events: from now on it gets each one, and if it is the only
    /// subscriber, first the ones kept while nobody was listening.
    fn subscribe(&mut self, id: BridgeId) {
        let first = !self.bridges.values().any(|b| b.subscribed);
        match self.bridges.get_mut(&id) {
            Some(bridge) if !bridge.subscribed => bridge.subscribed = true,
            _ => return,
        }
        tracing::debug!(bridge = id, "bridge subscribed to events");
        if first {
            let (dropped, mut events) = self.buffer.drain();
            if let Some(d) = dropped {
                tracing::warn!(
                    count = d.count,
                    first_seq = d.first_seq,
                    last_seq = d.last_seq,
                    "events were lost while no bridge was attached"
                );
                events.insert(0, dropped_event(d));
            }
            if !events.is_empty() {
                tracing::debug!(bridge = id, events = events.len(), "replaying buffered events");
                self.send_to_bridge(id, Outgoing::Batch(events));
            }
        }
    }

    /// Forget bridge `id`, cancel its requests, and return its link (dropping it closes the
    /// connection once the writer has flushed).
    fn detach(&mut self, id: BridgeId) -> Option<BridgeLink> {
        let bridge = self.bridges.remove(&id)?;
        for host_id in bridge.inflight {
            if let Some(p) = self.pending.remove(&host_id) {
                self.timeouts.try_remove(&p.key);
                tracing::debug!(bridge = id, id = %p.id, %host_id, "bridge left: cancelling its request");
                self.send_to_browser(&Message::Cancel(Cancel { id: host_id }));
            }
        }
        tracing::info!(bridge = id, bridges = self.bridges.len(), "bridge detached");
        self.host_status();
        Some(bridge.link)
    }

    fn on_bridge_message(
        &mut self,
        id: BridgeId,
        msg: Message,
        credit: Option<OwnedSemaphorePermit>,
    ) {
        if !self.bridges.contains_key(&id) {
            return; // Already closed; its reader had frames in flight.
        }
        match msg {
            Message::Request(req) => self.request(id, req, credit),
            Message::Cancel(Cancel { id: their_id }) => self.cancel(id, &their_id),
            Message::Hello(hello) => {
                tracing::debug!(bridge = id, protocol = hello.protocol, "bridge said hello");
                if hello.subscribe == Some(true) {
                    self.subscribe(id);
                }
                let bridge = self.bridges.get_mut(&id).expect("checked above");
                if hello.session.is_some_and(|s| bridge.sessions.insert(s.id.clone())) {
                    self.host_status();
                }
            }
            other => {
                let kind = other.kind();
                let reply_id = match &other {
                    Message::Response(r) => r.id.clone(),
                    Message::Chunk(c) => c.id.clone(),
                    _ => String::new(),
                };
                let error = wire::ErrorBody::new(
                    code::INVALID_MESSAGE,
                    format!(
                        "a bridge may send only `request` and `cancel` messages (and `hello`), \
                         not `{kind}`; the host closed this connection"
                    ),
                );
                self.reject(id, reply_id, error);
            }
        }
    }

    /// Answer a bridge's bad input with one error, then close that bridge.
    fn reject(&mut self, id: BridgeId, reply_id: String, error: wire::ErrorBody) {
        tracing::warn!(bridge = id, code = %error.code, "bad input from a bridge, closing it: {}", error.message);
        let reply = Message::Response(Response { id: reply_id, result: Err(error) });
        self.send_to_bridge(id, Outgoing::Frame(reply.to_bytes().into()));
        drop(self.detach(id));
    }

    fn request(&mut self, bridge_id: BridgeId, req: Request, credit: Option<OwnedSemaphorePermit>) {
        self.next_request += 1;
        let host_id = format!("h{}", self.next_request);
        let timeout_ms = req
            .timeout_ms
            .unwrap_or(limits::DEFAULT_REQUEST_TIMEOUT_MS)
            .min(limits::MAX_REQUEST_TIMEOUT_MS);
        let key = self.timeouts.insert(host_id.clone(), Duration::from_millis(timeout_ms));
        let bridge = self.bridges.get_mut(&bridge_id).expect("checked by on_bridge_message");
        bridge.inflight.insert(host_id.clone());
        let new_session =
            req.session.as_ref().is_some_and(|s| bridge.sessions.insert(s.id.clone()));
        tracing::trace!(bridge = bridge_id, id = %req.id, %host_id, method = %req.method, "request");
        if new_session {
            self.host_status(); // before the request: the extension knows the session is live
        }
        let forwarded = Message::Request(Request {
            id: host_id.clone(),
            method: req.method.clone(),
            params: req.params,
            timeout_ms: req.timeout_ms,
            session: req.session,
        });
        let _ = self.to_browser.send(ToBrowser { payload: forwarded.to_bytes().into(), credit });
        let pending =
            Pending { bridge: bridge_id, id: req.id, method: req.method, timeout_ms, key };
        self.pending.insert(host_id, pending);
    }

    fn cancel(&mut self, bridge_id: BridgeId, their_id: &str) {
        let Some(bridge) = self.bridges.get_mut(&bridge_id) else { return };
        let host_ids: Vec<String> = bridge
            .inflight
            .iter()
            .filter(|h| self.pending.get(*h).is_some_and(|p| p.id == their_id))
            .cloned()
            .collect();
        if host_ids.is_empty() {
            tracing::debug!(bridge = bridge_id, id = their_id, "cancel for no request in flight");
        }
        for host_id in host_ids {
            bridge.inflight.remove(&host_id);
            if let Some(p) = self.pending.remove(&host_id) {
                self.timeouts.try_remove(&p.key);
            }
            let payload = Message::Cancel(Cancel { id: host_id }).to_bytes().into();
            let _ = self.to_browser.send(ToBrowser { payload, credit: None });
        }
    }

    fn expire(&mut self, host_id: &str) {
        let Some(p) = self.pending.remove(host_id) else { return };
        tracing::warn!(bridge = p.bridge, id = %p.id, host_id, method = %p.method, timeout_ms = p.timeout_ms, "request timed out");
        let message = format!(
            "the browser did not answer `{}` within {} ms; the host cancelled it. The tab may be \
             busy or the page slow: retry, or pass a larger timeout_ms",
            p.method, p.timeout_ms
        );
        self.give_up(host_id.to_owned(), p, code::TIMEOUT, message);
    }

    /// End a request the relay no longer waits for (its `pending` entry already taken): its
    /// bridge gets the error, the extension the cancel.
    fn give_up(&mut self, host_id: String, p: Pending, code: &str, message: String) {
        if let Some(bridge) = self.bridges.get_mut(&p.bridge) {
            bridge.inflight.remove(&host_id);
        }
        let reply = Response::err(p.id, code, message);
        self.send_to_bridge(p.bridge, Outgoing::Frame(Message::Response(reply).to_bytes().into()));
        self.send_to_browser(&Message::Cancel(Cancel { id: host_id }));
    }

    fn on_browser_message(&mut self, msg: Message) {
        match msg {
            Message::Response(mut resp) => {
                let Some(p) = self.pending.remove(&resp.id) else {
                    tracing::warn!(id = %resp.id, "dropped a response to no request in flight (it came after a timeout or cancel, or was never asked)");
                    return;
                };
                self.timeouts.try_remove(&p.key);
                if let Some(bridge) = self.bridges.get_mut(&p.bridge) {
                    bridge.inflight.remove(&resp.id);
                }
                tracing::trace!(bridge = p.bridge, id = %p.id, host_id = %resp.id, "response");
                resp.id = p.id;
                let frame = Message::Response(resp).to_bytes().into();
                self.send_to_bridge(p.bridge, Outgoing::Frame(frame));
            }
            Message::Event(mut event) => {
                if event.event == sites::EVENT {
                    self.sites_changed(&event);
                }
                self.next_seq += 1;
                event.seq = Some(self.next_seq);
                let origin = event.from.origin.clone();
                let owner = self.route(&event);
                let frame: Bytes = Message::Event(event).to_bytes().into();
                let ids: Vec<BridgeId> = self
                    .bridges
                    .iter()
                    .filter(|(_, b)| b.subscribed && owner.as_deref().is_none_or(|o| b.hears(o)))
                    .map(|(id, _)| *id)
                    .collect();
                if ids.is_empty() {
                    self.buffer.push(self.next_seq, frame, origin);
                } else {
                    for id in ids {
                        self.send_to_bridge(id, Outgoing::Frame(frame.clone()));
                    }
                }
            }
            Message::Hello(mut hello) => {
                if hello.protocol != wire::PROTOCOL_VERSION {
                    // Refused, not half-spoken: no bridge is introduced to this browser, and the
                    // extension shows why (its popup and toolbar title).
                    let why = format!(
                        "the extension speaks protocol {} but tabwire-host {} speaks {}: install \
                         the same release of both (`tabwire install` writes the extension that \
                         matches this host; then reload it in chrome://extensions)",
                        hello.protocol,
                        env!("CARGO_PKG_VERSION"),
                        wire::PROTOCOL_VERSION
                    );
                    tracing::error!("{why}");
                    self.tell_status(Some(&why));
                    return;
                }
                tracing::info!(browser = ?hello.browser, profile = ?hello.profile, version = ?hello.extension_version, "extension said hello");
                hello.host_pid = Some(self.pid);
                hello.host_version = Some(env!("CARGO_PKG_VERSION").into());
                let frame: Bytes = Message::Hello(hello.clone()).to_bytes().into();
                self.hello = Some(frame.clone());
                let ids: Vec<BridgeId> = self.bridges.keys().copied().collect();
                for id in ids {
                    self.send_to_bridge(id, Outgoing::Frame(frame.clone()));
                }
                self.hello_seen.send_replace(Some(hello));
            }
            other => {
                // Well-formed but not for us (the stream is still in sync): say so and go on.
                tracing::warn!(
                    kind = other.kind(),
                    "ignored a message the browser may not send to the host"
                );
            }
        }
    }

    /// The session whose bridges alone get `event`, or None when every bridge does.
    ///
    /// A tab in a live session's group is that session's, and the other sessions' bridges drop
    /// its events (`link/src/inbox.rs`): sent to every bridge, ten sessions' pages cost each
    /// bridge ten times what its own session needs (docs/performance.md, "Soak"). So an event
    /// of an owned tab goes only to the bridges of its owner's session and those of no session
    /// (the CLI hears every tab). But the first event that names a new owner for a tab still
    /// goes to every bridge: that is how the others learn the tab is no longer theirs to know,
    /// and forget what they kept of its page.
    fn route(&mut self, event: &Event) -> Option<String> {
        let tab = event.tab_id?;
        if self.owners.len() >= ROUTED_TABS && !self.owners.contains_key(&tab) {
            // Forgetting costs a broadcast per tab, never a missed change of owner.
            self.owners.clear();
        }
        let last = self.owners.insert(tab, event.owner.clone());
        match (last, &event.owner) {
            (Some(last), Some(owner)) if last.as_ref() == Some(owner) => Some(owner.clone()),
            _ => None,
        }
    }

    /// The user changed the sites tabwire may use: what pages of a revoked site pushed while no
    /// session listened is forgotten, never replayed to the next one.
    fn sites_changed(&mut self, event: &Event) {
        let Some(sites) = Sites::from_event(&event.data) else {
            tracing::warn!("ignored a `sites` event whose data is not {{\"sites\": [pattern]}}");
            return;
        };
        self.sites = Some(Message::Event(event.clone()).to_bytes().into());
        let gone = self.buffer.forget_origins(|origin| sites.allows(origin));
        if gone > 0 {
            tracing::info!(gone, "forgot buffered events of sites the user no longer allows");
        }
    }

    /// Queue a frame for one bridge. A bridge whose queue is full has stopped reading; it is
    /// disconnected rather than allowed to grow the host without end.
    fn send_to_bridge(&mut self, id: BridgeId, out: Outgoing) {
        let Some(bridge) = self.bridges.get(&id) else { return };
        match bridge.link.send(out) {
            Ok(()) => {}
            Err(Unsent::Stuck(why)) => {
                tracing::warn!(bridge = id, "the bridge stopped reading ({why}); closing it");
                if let Some(link) = self.detach(id) {
                    let _ = link.kill.send(());
                }
            }
            Err(Unsent::Gone) => drop(self.detach(id)),
        }
    }

    fn send_to_browser(&self, msg: &Message) {
        // Fails only once the browser writer is gone, and then the relay is ending anyway.
        let _ = self.to_browser.send(ToBrowser { payload: msg.to_bytes().into(), credit: None });
    }

    fn host_status(&self) {
        self.tell_status(None);
    }

    /// `host_status` toward the extension; `refused` says why the host will not serve it.
    fn tell_status(&self, refused: Option<&str>) {
        #[derive(Serialize)]
        struct Status<'a> {
            host_pid: u32,
            bridges: usize,
            /// So the popup can say which side is older when they differ.
            host_version: &'static str,
            #[serde(skip_serializing_if = "Option::is_none")]
            refused: Option<&'a str>,
            /// The sessions of the attached bridges that made a request.
            sessions: Vec<&'a str>,
        }
        let mut sessions: Vec<&str> =
            self.bridges.values().flat_map(|b| b.sessions.iter().map(String::as_str)).collect();
        sessions.sort_unstable();
        sessions.dedup();
        let data = wire::raw(&Status {
            host_pid: self.pid,
            bridges: self.bridges.len(),
            host_version: env!("CARGO_PKG_VERSION"),
            refused,
            sessions,
        });
        let event = Event::new("host_status", None, data);
        self.send_to_browser(&Message::Event(event));
    }

    fn disconnect_all(&mut self, reason: &str) {
        for (host_id, p) in std::mem::take(&mut self.pending) {
            tracing::debug!(bridge = p.bridge, id = %p.id, %host_id, "failing a pending request");
            let reply = Response::err(
                p.id,
                code::BROWSER_DISCONNECTED,
                format!(
                    "the browser went away while `{}` was in flight ({reason}); reopen the \
                     browser (the extension reconnects by itself) and retry",
                    p.method
                ),
            );
            self.send_to_bridge(
                p.bridge,
                Outgoing::Frame(Message::Response(reply).to_bytes().into()),
            );
        }
        #[derive(Serialize)]
        struct Reason<'a> {
            reason: &'a str,
        }
        let event = Event::new("browser_disconnected", None, wire::raw(&Reason { reason }));
        let frame: Bytes = Message::Event(event).to_bytes().into();
        for bridge in self.bridges.values() {
            let _ = bridge.link.send(Outgoing::Frame(frame.clone()));
        }
        // Dropping the senders lets each writer flush what it has and close its socket.
        self.bridges.clear();
    }
}

fn dropped_event(d: Dropped) -> Bytes {
    let event = Event::new("dropped", None, wire::raw(&d));
    Message::Event(event).to_bytes().into()
}
