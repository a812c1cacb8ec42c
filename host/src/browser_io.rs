//! The browser's end of the host: Native Messaging frames on stdin and stdout, and the fast
//! link (`fast_link`) when the extension opened one.
//!
//! The reader turns frames into [`Input`]s for the relay; the writer takes whole messages from
//! the relay and writes them where the extension reads now: to the fast link once it is up,
//! else to stdout, split into `chunk` messages when over 1 MiB (Chrome disconnects a host that
//! writes a bigger frame). Neither decides anything about routing.
//!
//! Switching keeps each direction in order (specs/protocol.md, "The fast link"): each side,
//! once the link is open, sends the mark event `link` by Native Messaging and everything after
//! it by the link, and takes what comes by the link only once it has read the other side's
//! mark — so nothing sent before the switch is overtaken by what was sent after it.

use futures::StreamExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_util::codec::FramedRead;

use crate::chunk;
use crate::codec::{FrameCodec, FrameError};
use crate::fast_link::{InUse, Link};
use crate::frame_writer::FrameWriter;
use crate::limits;
use crate::relay::{Input, ToBrowser};
use crate::wire::{self, Event, Message};

/// The event each side sends by Native Messaging as its last message there before it uses the
/// fast link; the host's tells the extension where the link is, too (`fast_link`).
pub const MARK: &str = "link";
pub const ADDRESS: &str = "fast_link";

/// Read frames from the browser until it closes the stream or sends something unreadable,
/// then tell the relay how it ended.
pub async fn read_loop<R: AsyncRead + Unpin>(
    input: R,
    relay: mpsc::Sender<Input>,
    marks: mpsc::UnboundedSender<u64>,
) {
    let mut frames = FramedRead::new(input, FrameCodec::host_to_browser());
    let (reason, bad_input) = loop {
        match frames.next().await {
            None => break ("the browser closed the connection (stdin ended)".to_owned(), false),
            Some(Ok(frame)) => match Message::parse(&frame) {
                Ok(Message::Event(e)) if e.event == MARK => match link_number(&e) {
                    Some(n) => {
                        let _ = marks.send(n);
                    }
                    None => tracing::warn!("the extension's mark names no link: {}", e.data),
                },
                Ok(msg) => {
                    if relay.send(Input::FromBrowser(msg)).await.is_err() {
                        return; // The relay is gone; nobody is left to tell.
                    }
                }
                Err(e) => {
                    let start =
                        String::from_utf8_lossy(&frame[..frame.len().min(120)]).into_owned();
                    break (
                        format!(
                            "the browser sent a frame that is not a message: {e} (it began {start:?})"
                        ),
                        true,
                    );
                }
            },
            Some(Err(FrameError::Io(e))) => {
                break (format!("reading from the browser failed: {e}"), false);
            }
            Some(Err(e)) => break (format!("the browser's stream is broken: {e}"), true),
        }
    };
    let _ = relay.send(Input::BrowserEnded { reason, bad_input }).await;
}

/// Write each message the relay hands over — to the fast link while it is up, else to stdout,
/// chunked when over 1 MiB — and pass on what the link brings. Ends when the relay drops its
/// sender, or tells the relay when the browser stops reading.
pub async fn write_loop<W: AsyncWrite + Unpin>(
    output: W,
    mut messages: mpsc::UnboundedReceiver<ToBrowser>,
    relay: mpsc::Sender<Input>,
    mut links: mpsc::Receiver<Link>,
    mut marks: mpsc::UnboundedReceiver<u64>,
    address: Option<String>,
) {
    let mut out = FrameWriter::new(output, limits::MAX_TO_BROWSER);
    let mut next_stream = 0u64;
    let mut fast = InUse::default();
    let result: Result<(), FrameError> = async {
        if let Some(url) = address {
            out.write(&event(ADDRESS, serde_json::json!({ "url": url }))).await?;
            out.flush().await?;
        }
        loop {
            tokio::select! {
                first = messages.recv() => {
                    let Some(first) = first else { return Ok(()) };
                    let mut msg = Some(first);
                    // Take whatever else is ready so a burst goes out in few writes.
                    // Each message's budget credit goes back when `m` is dropped, after its write.
                    while let Some(ToBrowser { payload: m, credit: _credit }) =
                        msg.take().or_else(|| messages.try_recv().ok())
                    {
                        if fast.is_up() {
                            match fast.feed(m.clone()).await {
                                Ok(()) => continue,
                                // Then this message goes by Native Messaging, below.
                                Err(why) => lost(&mut fast, &relay, why).await,
                            }
                        }
                        write_native(&mut out, &m, &mut next_stream).await?;
                    }
                    if let Err(why) = fast.flush().await {
                        lost(&mut fast, &relay, why).await;
                    }
                    out.flush().await?;
                }
                new = links.recv() => {
                    let Some(new) = new else { continue };
                    if fast.is_up() {
                        new.close().await; // one link at a time
                        continue;
                    }
                    // Our mark goes by Native Messaging; everything after it by the link.
                    out.write(&event(MARK, serde_json::json!({ "n": new.n }))).await?;
                    out.flush().await?;
                    fast.take(new);
                    tracing::info!("the extension's fast link is up");
                    let _ = relay.send(Input::FastLink { up: true, reason: String::new() }).await;
                }
                Some(n) = marks.recv() => {
                    for msg in fast.marked(n) {
                        if relay.send(Input::FromBrowser(msg)).await.is_err() {
                            return Ok(());
                        }
                    }
                }
                got = fast.next() => match got {
                    Ok(msg) => {
                        if relay.send(Input::FromBrowser(msg)).await.is_err() {
                            return Ok(());
                        }
                    }
                    Err(why) => lost(&mut fast, &relay, why).await,
                },
            }
        }
    }
    .await;
    if let Err(e) = result {
        let reason = format!("writing to the browser failed: {e}");
        let _ = relay.send(Input::BrowserEnded { reason, bad_input: false }).await;
    }
}

/// One message by Native Messaging: whole, or in `chunk` messages when over 1 MiB.
async fn write_native<W: AsyncWrite + Unpin>(
    out: &mut FrameWriter<W>,
    m: &[u8],
    next_stream: &mut u64,
) -> Result<(), FrameError> {
    if m.len() <= limits::MAX_TO_BROWSER {
        return out.write(m).await;
    }
    *next_stream += 1;
    let text = std::str::from_utf8(m).expect("the relay serializes UTF-8 JSON");
    let pieces = chunk::split(&format!("c{next_stream}"), text, limits::MAX_TO_BROWSER);
    tracing::debug!(bytes = m.len(), chunks = pieces.len(), "chunking a message for the browser");
    for piece in pieces {
        out.write(&piece).await?;
    }
    Ok(())
}

/// The number of the link a mark is for (`{"n": 1}`).
fn link_number(mark: &Event) -> Option<u64> {
    #[derive(serde::Deserialize)]
    struct Mark {
        n: u64,
    }
    serde_json::from_str::<Mark>(mark.data.get()).ok().map(|m| m.n)
}

/// One of the host's own events toward the extension.
fn event(name: &str, data: serde_json::Value) -> Vec<u8> {
    Message::Event(Event::new(name, None, wire::raw(&data))).to_bytes()
}

/// The link is gone: back to Native Messaging both ways, and the relay fails what was asked
/// over it (a request or its answer may have been lost with it).
async fn lost(fast: &mut InUse, relay: &mpsc::Sender<Input>, reason: String) {
    fast.close().await;
    tracing::warn!(
        "the fast link to the extension closed ({reason}); Native Messaging carries everything until it is back"
    );
    let _ = relay.send(Input::FastLink { up: false, reason }).await;
}
