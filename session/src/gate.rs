//! Who a connection to tabwire's loopback HTTP servers (`tabwire serve --http`, a session's
//! `GET /wait`) belongs to, and which budget it is served from.
//!
//! Anyone on the machine can open a TCP connection to 127.0.0.1, token or not. Had every
//! connection counted against one cap, another local user re-opening idle connections as each
//! timed out would keep the user's own clients refused (503) for as long as they liked. So:
//! - a connection of another user is closed at once, answered 403: on Linux the kernel is
//!   asked who owns the client's socket ([`owner`]);
//! - every other connection starts among the unauthenticated, a small budget of its own
//!   ([`UNAUTHENTICATED`]): when it is full, a newcomer waits for a place (one freed, or the
//!   oldest's, once that one had [`GRACE`] to send its request and did not: it is closed).
//!   Idle connections cannot hold the door shut, and the user's own clients opening many
//!   connections at once each get their turn within a grace or so. Only past
//!   [`MAX_WAITING`] newcomers, or after [`MAX_WAIT`], is one answered 503: a flood that fast
//!   on Linux no other user can send (the user's own processes can read the token anyway;
//!   what remains is the user's own browser, whose pages send whole requests);
//! - a connection whose request passed the door (the token) moves to the user's own budget,
//!   the server's cap; only past that cap is a client answered 503.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// Connections not yet authenticated, at once, per server.
pub const UNAUTHENTICATED: usize = 16;
/// How long an unauthenticated connection keeps its place against newcomers: time to send a
/// request, which a client does at once.
pub const GRACE: Duration = Duration::from_millis(500);

/// Newcomers waiting for a place among the unauthenticated, at most; one more is answered 503.
pub const MAX_WAITING: usize = 256;
/// How long a newcomer waits for a place before it is answered 503: four graces, time for the
/// oldest sixty-four to have been closed had they sent nothing.
pub const MAX_WAIT: Duration = Duration::from_secs(2);

/// The budgets of one server.
pub struct Gate {
    own: Arc<Semaphore>,
    /// The unauthenticated connections, oldest first, each with what closes it.
    waiting: Mutex<VecDeque<(u64, Instant, CancellationToken)>>,
    /// Told when one of them leaves, for a newcomer waiting for its place.
    left: Notify,
    /// Newcomers waiting for a place.
    queued: AtomicUsize,
    next: AtomicU64,
    me: u32,
}

/// One admitted connection's place: among the unauthenticated, or (once a request of it
/// passed the door) one of the user's own slots.
pub struct Pass {
    gate: Arc<Gate>,
    id: u64,
    closed: CancellationToken,
    slot: Mutex<Option<OwnedSemaphorePermit>>,
}

impl Gate {
    /// A server whose authenticated connections are at most `max`.
    pub fn new(max: usize) -> Arc<Gate> {
        Arc::new(Gate {
            own: Arc::new(Semaphore::new(max)),
            waiting: Mutex::default(),
            left: Notify::new(),
            queued: AtomicUsize::new(0),
            next: AtomicU64::new(0),
            me: tabwire_proto::runtime_dir::current_uid(),
        })
    }

    /// A connection just accepted, in a task of its own: its pass, or None once it was
    /// answered 403 (another user's: [`other_user`]) or 503 (`busy_body`, the server's own
    /// JSON error: no place came in time).
    pub async fn admit(
        self: &Arc<Self>,
        stream: &mut TcpStream,
        server: &str,
        busy_body: &str,
    ) -> Option<Arc<Pass>> {
        if let Some(uid) = self.stranger(stream) {
            tracing::warn!(uid, "refused a {server} connection of another user");
            let _ = stream.write_all(other_user(uid).as_bytes()).await;
            return None;
        }
        let pass = self.enter().await;
        if pass.is_none() {
            tracing::warn!("refused a {server} connection: too many without the token");
            let _ = stream.write_all(busy(busy_body).as_bytes()).await;
        }
        pass
    }

    /// Whether a connection belongs to another user.
    fn stranger(&self, stream: &TcpStream) -> Option<u32> {
        let owner = match (stream.peer_addr(), stream.local_addr()) {
            (Ok(peer), Ok(local)) => owner(peer, local),
            _ => None,
        };
        owner.filter(|uid| *uid != self.me)
    }

    /// A place among the unauthenticated for a connection of this user: at once when there is
    /// one, else once one leaves or the oldest's grace is over; [`Turned::Busy`] past
    /// [`MAX_WAITING`] newcomers or [`MAX_WAIT`].
    async fn enter(self: &Arc<Self>) -> Option<Arc<Pass>> {
        struct Queued<'a>(&'a AtomicUsize);
        impl Drop for Queued<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::Relaxed);
            }
        }
        let _queued = Queued(&self.queued);
        if self.queued.fetch_add(1, Ordering::Relaxed) >= MAX_WAITING {
            return None;
        }
        let deadline = tokio::time::Instant::now() + MAX_WAIT;
        loop {
            let left = self.left.notified();
            tokio::pin!(left);
            left.as_mut().enable();
            let turn = match self.try_enter() {
                Ok(pass) => return Some(pass),
                Err(turn) => turn.min(deadline),
            };
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::select! {
                () = left => {}
                () = tokio::time::sleep_until(turn) => {}
            }
        }
    }

    /// A place now, or when the oldest's grace ends.
    fn try_enter(self: &Arc<Self>) -> Result<Arc<Pass>, tokio::time::Instant> {
        let mut waiting = self.waiting.lock().expect("gate poisoned");
        if waiting.len() >= UNAUTHENTICATED {
            if let Some((_, since, _)) = waiting.front()
                && since.elapsed() < GRACE
            {
                return Err(tokio::time::Instant::from_std(*since + GRACE));
            }
            if let Some((_, _, oldest)) = waiting.pop_front() {
                oldest.cancel();
            }
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let closed = CancellationToken::new();
        waiting.push_back((id, Instant::now(), closed.clone()));
        drop(waiting);
        Ok(Arc::new(Pass { gate: self.clone(), id, closed, slot: Mutex::default() }))
    }

    fn forget(&self, id: u64) {
        let mut waiting = self.waiting.lock().expect("gate poisoned");
        let before = waiting.len();
        waiting.retain(|(i, _, _)| *i != id);
        if waiting.len() < before {
            drop(waiting);
            self.left.notify_waiters();
        }
    }
}

impl Pass {
    /// Fires when a newcomer took this unauthenticated connection's place: close it.
    pub fn evicted(&self) -> CancellationToken {
        self.closed.clone()
    }

    /// A request of this connection passed the door: move it to the user's own budget. False
    /// when that is full (answer 503).
    pub fn authenticated(&self) -> bool {
        let mut slot = self.slot.lock().expect("pass poisoned");
        if slot.is_none() {
            let Ok(permit) = self.gate.own.clone().try_acquire_owned() else { return false };
            *slot = Some(permit);
            self.gate.forget(self.id);
        }
        true
    }
}

impl Drop for Pass {
    fn drop(&mut self) {
        self.gate.forget(self.id);
    }
}

/// The whole 503 answer with this JSON body, before the connection is closed.
fn busy(body: &str) -> String {
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// The whole answer to a connection of another user, before it is closed.
fn other_user(uid: u32) -> String {
    let body = serde_json::json!({ "error": {
        "code": "forbidden",
        "message": format!(
            "this tabwire server serves only the user who started it (uid {}); this connection \
             belongs to uid {uid}",
            tabwire_proto::runtime_dir::current_uid()
        ),
    }})
    .to_string();
    format!(
        "HTTP/1.1 403 Forbidden\r\ncontent-type: application/json\r\nconnection: close\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// The uid that owns the client's end (`peer`) of a loopback connection to `local`, asked of
/// the kernel for that one socket (`NETLINK_SOCK_DIAG`, the interface `ss` uses): constant
/// cost, where reading all of `/proc/net/tcp` would cost each accept the whole table, which a
/// flood fills, and can miss an entry while the table changes. None where that cannot be told.
#[cfg(target_os = "linux")]
pub fn owner(peer: SocketAddr, local: SocketAddr) -> Option<u32> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    /// `struct inet_diag_sockid` (linux/inet_diag.h): ports and addresses in network order.
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct SockId {
        sport: u16,
        dport: u16,
        src: [u8; 16],
        dst: [u8; 16],
        interface: u32,
        cookie: [u32; 2],
    }
    /// `struct nlmsghdr` and `struct inet_diag_req_v2`.
    #[repr(C)]
    struct Request {
        len: u32,
        kind: u16,
        flags: u16,
        seq: u32,
        pid: u32,
        family: u8,
        protocol: u8,
        ext: u8,
        pad: u8,
        states: u32,
        id: SockId,
    }
    const SOCK_DIAG_BY_FAMILY: u16 = 20;
    const INET_DIAG_NOCOOKIE: u32 = !0;
    /// Where `idiag_uid` is in the answer: after the 16-byte `nlmsghdr`, `inet_diag_msg`'s
    /// family, state, timer, retrans (4 bytes), its `SockId` (48), expires, rqueue, wqueue (12).
    const UID_AT: usize = 16 + 4 + 48 + 12;

    let addr = |a: SocketAddr| -> [u8; 16] {
        let mut out = [0u8; 16];
        match a {
            SocketAddr::V4(a) => out[..4].copy_from_slice(&a.ip().octets()),
            SocketAddr::V6(a) => out = a.ip().octets(),
        }
        out
    };
    let family = match (peer, local) {
        (SocketAddr::V4(_), SocketAddr::V4(_)) => libc::AF_INET,
        (SocketAddr::V6(_), SocketAddr::V6(_)) => libc::AF_INET6,
        _ => return None,
    };
    let request = Request {
        len: std::mem::size_of::<Request>() as u32,
        kind: SOCK_DIAG_BY_FAMILY,
        flags: libc::NLM_F_REQUEST as u16,
        seq: 1,
        pid: 0,
        family: family as u8,
        protocol: libc::IPPROTO_TCP as u8,
        ext: 0,
        pad: 0,
        states: !0,
        id: SockId {
            sport: peer.port().to_be(),
            dport: local.port().to_be(),
            src: addr(peer),
            dst: addr(local),
            interface: 0,
            cookie: [INET_DIAG_NOCOOKIE; 2],
        },
    };
    // SAFETY: plain socket call; the fd is checked and owned below.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            libc::NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return None;
    }
    // SAFETY: a fresh descriptor nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: sends `request`'s bytes, which live for the call, to the kernel (the default
    // netlink destination).
    let sent = unsafe {
        libc::send(fd.as_raw_fd(), (&raw const request).cast(), std::mem::size_of::<Request>(), 0)
    };
    if sent < 0 {
        return None;
    }
    let mut answer = [0u8; 512];
    // SAFETY: receives at most answer.len() bytes into `answer`.
    let got = unsafe { libc::recv(fd.as_raw_fd(), answer.as_mut_ptr().cast(), answer.len(), 0) };
    let got = usize::try_from(got).ok()?;
    let kind = u16::from_ne_bytes([answer[4], answer[5]]);
    if kind != SOCK_DIAG_BY_FAMILY || got < UID_AT + 4 {
        return None; // NLMSG_ERROR: no such socket, or not allowed to ask.
    }
    let uid = &answer[UID_AT..UID_AT + 4];
    Some(u32::from_ne_bytes([uid[0], uid[1], uid[2], uid[3]]))
}

#[cfg(not(target_os = "linux"))]
pub fn owner(_peer: SocketAddr, _local: SocketAddr) -> Option<u32> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_owner_of_a_loopback_connection_is_read_from_the_kernel() {
        for at in ["127.0.0.1:0", "[::1]:0"] {
            let Ok(listener) = tokio::net::TcpListener::bind(at).await else { continue };
            let addr = listener.local_addr().unwrap();
            let client = TcpStream::connect(addr).await.unwrap();
            let (server, peer) = listener.accept().await.unwrap();
            assert_eq!(peer, client.local_addr().unwrap());
            let me = tabwire_proto::runtime_dir::current_uid();
            assert_eq!(owner(peer, server.local_addr().unwrap()), Some(me), "{at}");
        }
    }

    #[tokio::test]
    async fn a_newcomer_waits_for_a_place_and_the_authenticated_stay() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let gate = Gate::new(2);
        let mut passes = Vec::new();
        let mut keep = Vec::new();
        for _ in 0..UNAUTHENTICATED + 5 {
            keep.push(TcpStream::connect(addr).await.unwrap());
            let (mut stream, _) = listener.accept().await.unwrap();
            let started = Instant::now();
            let pass = gate.admit(&mut stream, "test", "{}").await.expect("a place");
            if passes.len() < 2 + UNAUTHENTICATED {
                assert!(started.elapsed() < GRACE / 2, "a free place is taken at once");
            }
            if passes.len() < 2 {
                assert!(pass.authenticated(), "room among the user's own");
            }
            passes.push(pass);
        }
        // The two authenticated are never closed for a newcomer; of the rest, the oldest 3,
        // each once it had its grace.
        let evicted: Vec<bool> = passes.iter().map(|p| p.evicted().is_cancelled()).collect();
        assert_eq!(evicted.iter().filter(|e| **e).count(), 3, "{evicted:?}");
        assert!(!evicted[0] && !evicted[1] && evicted[2] && evicted[3] && evicted[4]);
        // The user's own budget full: one more authenticated is refused.
        assert!(!passes.last().unwrap().authenticated());
        drop(passes.remove(0));
        assert!(passes.last().unwrap().authenticated(), "a slot freed is taken");
    }

    #[tokio::test]
    async fn a_place_that_frees_lets_a_waiting_newcomer_in_at_once() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let gate = Gate::new(2);
        let mut keep = Vec::new();
        let mut passes = Vec::new();
        for _ in 0..=UNAUTHENTICATED {
            keep.push(TcpStream::connect(addr).await.unwrap());
            keep.push(listener.accept().await.unwrap().0);
        }
        let mut streams = keep.split_off(2 * UNAUTHENTICATED);
        for stream in keep.iter_mut().skip(1).step_by(2) {
            passes.push(gate.admit(stream, "test", "{}").await.expect("a free place"));
        }
        let mut newcomer = streams.pop().unwrap();
        let waiting = tokio::spawn({
            let gate = gate.clone();
            async move {
                let pass = gate.admit(&mut newcomer, "test", "{}").await;
                (pass, Instant::now())
            }
        });
        tokio::time::sleep(GRACE / 5).await;
        assert!(!waiting.is_finished(), "all sixteen places are taken and new");
        let freed = Instant::now();
        passes[7].authenticated(); // its request passed the door: its place frees
        let (pass, entered) = waiting.await.unwrap();
        assert!(pass.is_some());
        assert!(entered - freed < GRACE / 5, "{:?}", entered - freed);
        assert!(passes.iter().all(|p| !p.evicted().is_cancelled()), "no one was closed for it");
    }
}
