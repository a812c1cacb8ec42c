//! The fast link: a loopback WebSocket the extension's service worker opens to this host, over
//! which both sides then send what they would send by Native Messaging (specs/protocol.md,
//! "The fast link").
//!
//! Why: Chrome reads a native host's stdout on a thread-pool worker that its I/O thread wakes,
//! and the I/O thread keeps polling the still-readable pipe until that worker has run. When the
//! worker is queued behind it on the same CPU, it waits for the next scheduler tick — 2.5–4 ms
//! on the 2-vCPU CI machine, in 2–5 % of the requests (`cargo bench … -- tail` traces it). A
//! socket is read by Chrome's network service on its own I/O thread, with no such hand-off.
//! Native Messaging stays: it starts the host, carries the link's address, and carries
//! everything whenever the link is down.
//!
//! Who may connect (specs/security.md): the listener is on 127.0.0.1 only, on a port the kernel
//! picks; the handshake must name a 256-bit token that only this host and, over Native
//! Messaging, the extension know, and carry the `Origin` of the extension that started the
//! host. Anything else is refused at the handshake, before a byte of it is read as a message.
//! At most [`MAX_HANDSHAKES`] handshakes run at once, each within [`HANDSHAKE_TIMEOUT`]; one
//! link is used at a time (the browser side decides, `browser_io`).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::StatusCode;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Message as WsMessage, Utf8Bytes};

use crate::wire::Message;
use crate::{limits, secret};

/// An accepted, checked link and its number: the extension numbers each link it opens (`?n=`
/// in the URL, counting from 1) and names that number in its mark, so a mark that comes late
/// for an earlier link cannot release what a later one brought (specs/protocol.md).
pub struct Link {
    pub n: u64,
    ws: WebSocketStream<TcpStream>,
}

impl Link {
    /// Close a link that will not be used.
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }
}

/// Messages the link may bring before the extension's mark has come by Native Messaging; more
/// means the extension is not following the protocol, and the link is closed.
pub const MAX_HELD: usize = 4096;

/// How long a connection may take to complete its handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(2);
/// Handshakes in progress at once; a connection beyond them is closed unanswered, so a flood
/// of connections costs the host no more than this many small tasks.
pub const MAX_HANDSHAKES: usize = 4;

/// `TABWIRE_FAST_LINK=off` keeps everything on Native Messaging (the benchmark compares both).
pub const ENV: &str = "TABWIRE_FAST_LINK";

/// The listener, its address and its token.
pub struct FastLink {
    listener: TcpListener,
    token: String,
    port: u16,
}

impl FastLink {
    /// Listen on a loopback port the kernel picks, with a fresh token; None when turned off.
    pub async fn bind() -> std::io::Result<Option<FastLink>> {
        if std::env::var_os(ENV).is_some_and(|v| v == "off") {
            return Ok(None);
        }
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        // Two v4 UUIDs: 244 random bits from the OS.
        let token = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
        Ok(Some(FastLink { listener, token, port }))
    }

    /// Where the extension connects: told to it over Native Messaging only.
    pub fn url(&self) -> String {
        format!("ws://127.0.0.1:{}/{}", self.port, self.token)
    }

    /// Accept connections until the host ends; each one that passes the checks goes to `links`.
    #[allow(clippy::result_large_err)] // the handshake callback's signature is tungstenite's
    pub async fn accept_loop(self, extension_id: String, links: mpsc::Sender<Link>) {
        let gate = Arc::new(Semaphore::new(MAX_HANDSHAKES));
        let check = Arc::new(Check {
            path: format!("/{}", self.token),
            origin: format!("chrome-extension://{extension_id}"),
        });
        loop {
            let (stream, _) = match self.listener.accept().await {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!("fast link: accept failed: {e}");
                    tokio::time::sleep(limits::ACCEPT_BACKOFF_MIN).await;
                    continue;
                }
            };
            let Ok(permit) = gate.clone().try_acquire_owned() else {
                tracing::debug!(
                    "fast link: {MAX_HANDSHAKES} handshakes already running; closed a connection"
                );
                continue;
            };
            let (check, links) = (check.clone(), links.clone());
            tokio::spawn(async move {
                let _permit = permit;
                let _ = stream.set_nodelay(true);
                let mut n = 0;
                let shake = tokio_tungstenite::accept_hdr_async_with_config(
                    stream,
                    |req: &Request, resp: Response| {
                        n = number(req.uri().query()).unwrap_or(0);
                        check.judge(req, resp)
                    },
                    Some(config()),
                );
                match tokio::time::timeout(HANDSHAKE_TIMEOUT, shake).await {
                    Ok(Ok(ws)) => {
                        let _ = links.send(Link { n, ws }).await;
                    }
                    Ok(Err(e)) => tracing::warn!("fast link: refused a connection: {e}"),
                    Err(_) => tracing::warn!(
                        "fast link: a connection did not finish its handshake within {HANDSHAKE_TIMEOUT:?}"
                    ),
                }
            });
        }
    }
}

/// The link in use, if any, and what keeps each direction in order across the switch
/// (specs/protocol.md, "The fast link"): what the link brings is passed on only once the
/// extension's mark for that link has come by Native Messaging, so it cannot overtake what the
/// extension sent there before.
#[derive(Default)]
pub struct InUse {
    link: Option<Link>,
    /// What the link brought before the extension's mark.
    held: Vec<Message>,
    /// The number of the newest link the extension marked; it may mark a link before the host
    /// has taken it, and a late mark for an earlier link matches none.
    marked: u64,
}

impl InUse {
    pub fn is_up(&self) -> bool {
        self.link.is_some()
    }

    /// Use `link` from now on (none is in use); the caller has sent the host's mark by Native
    /// Messaging.
    pub fn take(&mut self, link: Link) {
        debug_assert!(self.link.is_none(), "one link at a time");
        self.held.clear();
        self.link = Some(link);
    }

    /// The extension's mark for the link in use has come: what the link brings goes on.
    fn is_marked(&self) -> bool {
        self.link.as_ref().is_some_and(|l| l.n == self.marked)
    }

    /// Queue one message (the relay's UTF-8 JSON, shared, not copied) on the link; `flush`
    /// sends what is queued. An error means the link is lost (the caller then calls
    /// [`InUse::close`]).
    pub async fn feed(&mut self, json: Bytes) -> Result<(), String> {
        let link = self.link.as_mut().expect("feed only while up");
        let text = Utf8Bytes::try_from(json).expect("the relay serializes UTF-8 JSON");
        link.ws.feed(WsMessage::Text(text)).await.map_err(|e| format!("writing to it failed: {e}"))
    }

    pub async fn flush(&mut self) -> Result<(), String> {
        match self.link.as_mut() {
            Some(link) => link.ws.flush().await.map_err(|e| format!("writing to it failed: {e}")),
            None => Ok(()),
        }
    }

    /// The extension's mark for link `n` came by Native Messaging: what the link brought before
    /// it, in order, when `n` is the link in use; nothing for a mark of another link.
    pub fn marked(&mut self, n: u64) -> Vec<Message> {
        self.marked = self.marked.max(n);
        if self.is_marked() { std::mem::take(&mut self.held) } else { Vec::new() }
    }

    /// The next message to pass on from the link; Err(why) when the link is lost. Pending
    /// forever while there is no link. Cancel-safe: what was read is kept in `self`.
    pub async fn next(&mut self) -> Result<Message, String> {
        let Some(link) = self.link.as_mut() else { return std::future::pending().await };
        loop {
            let msg = match link.ws.next().await {
                Some(Ok(WsMessage::Text(text))) => Message::parse(text.as_bytes())
                    .map_err(|e| format!("it sent something that is not a message: {e}"))?,
                Some(Ok(WsMessage::Close(_))) | None => {
                    return Err("the extension closed it".into());
                }
                Some(Ok(_)) => continue, // pings, pongs, binary frames: no messages
                Some(Err(e)) => return Err(format!("reading from it failed: {e}")),
            };
            if link.n == self.marked {
                return Ok(msg);
            }
            if self.held.len() >= MAX_HELD {
                return Err(format!(
                    "it sent {MAX_HELD} messages before its mark by Native Messaging"
                ));
            }
            self.held.push(msg);
        }
    }

    /// Stop using the link (closing it, if it is still open) and forget what it held.
    pub async fn close(&mut self) {
        self.held.clear();
        if let Some(mut link) = self.link.take() {
            let _ = link.ws.close(None).await;
        }
    }
}

/// What a handshake must show.
struct Check {
    path: String,
    origin: String,
}

impl Check {
    /// Allow the handshake only with the token and the extension's origin. A pure function of
    /// the request head, so the tests can table it.
    #[allow(clippy::result_large_err)] // the signature tungstenite asks for
    fn judge(&self, req: &Request, resp: Response) -> Result<Response, ErrorResponse> {
        let origin = req.headers().get("origin").and_then(|o| o.to_str().ok()).unwrap_or("");
        // A stranger (no token, or not the extension's Origin) gets a bare 403: nothing that
        // names the product or says which check failed. The host's own log says why.
        if !secret::matches(req.uri().path().as_bytes(), self.path.as_bytes()) {
            tracing::debug!("fast link: refused a handshake without this host's token");
            return Err(refuse(None));
        }
        if origin != self.origin {
            tracing::debug!("fast link: refused a handshake from Origin {origin:?}");
            return Err(refuse(None));
        }
        // Only the extension that holds the token gets this far: it may hear why.
        if number(req.uri().query()).is_none() {
            return Err(refuse(Some(
                "tabwire-host: the link's number is missing: connect to the URL with ?n=1, 2, …\n",
            )));
        }
        Ok(resp)
    }
}

/// The link's number from the URL's query, `n=<1 or more>`.
fn number(query: Option<&str>) -> Option<u64> {
    let n = query?.split('&').find_map(|pair| pair.strip_prefix("n="))?.parse().ok()?;
    (n > 0).then_some(n)
}

/// A 403, with a body only for the extension itself.
fn refuse(why: Option<&str>) -> ErrorResponse {
    let mut resp = ErrorResponse::new(why.map(str::to_owned));
    *resp.status_mut() = StatusCode::FORBIDDEN;
    resp
}

/// How much the link reads at once (see [`config`]).
const READ_BUFFER: usize = 16 * 1024;

/// The same limits as Native Messaging from the browser: one message up to 64 MiB.
///
/// Reads of at most 16 KiB: tungstenite zeroes the part of its buffer it reads into before
/// each read, and each message takes two reads (the last one finds nothing). At its default
/// 128 KiB that zeroing was the host's busiest function while relaying small messages (2 % of
/// all the host's and bridge's samples in `perf`, evicting the caches the next hop needed);
/// a 64 MiB message now takes 4,096 reads instead of 512.
pub fn config() -> WebSocketConfig {
    let mut c = WebSocketConfig::default();
    c.read_buffer_size = READ_BUFFER;
    c.max_message_size = Some(limits::MAX_FROM_BROWSER);
    c.max_frame_size = Some(limits::MAX_FROM_BROWSER);
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(path: &str, origin: Option<&str>) -> Result<(), StatusCode> {
        let check = Check { path: "/abc".into(), origin: "chrome-extension://ext".into() };
        let mut req = Request::builder().uri(path);
        if let Some(o) = origin {
            req = req.header("Origin", o);
        }
        check.judge(&req.body(()).unwrap(), Response::new(())).map(|_| ()).map_err(|e| e.status())
    }

    #[test]
    fn only_the_token_and_the_extensions_origin_pass() {
        assert_eq!(judge("/abc?n=1", Some("chrome-extension://ext")), Ok(()));
        assert_eq!(judge("/abc?n=27", Some("chrome-extension://ext")), Ok(()));
        for (path, origin) in [
            ("/abd?n=1", Some("chrome-extension://ext")),
            ("/ab?n=1", Some("chrome-extension://ext")),
            ("/abc/?n=1", Some("chrome-extension://ext")),
            ("/?n=1", Some("chrome-extension://ext")),
            ("/abc?n=1", Some("https://evil.example")),
            ("/abc?n=1", Some("chrome-extension://other")),
            ("/abc?n=1", Some("null")),
            ("/abc?n=1", None),
            // Every link is numbered, from 1.
            ("/abc", Some("chrome-extension://ext")),
            ("/abc?n=0", Some("chrome-extension://ext")),
            ("/abc?n=x", Some("chrome-extension://ext")),
        ] {
            assert_eq!(judge(path, origin), Err(StatusCode::FORBIDDEN), "{path} {origin:?}");
        }
    }
}
