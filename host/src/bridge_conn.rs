//! One bridge's connection: a reader that turns frames into [`Input`]s and a writer that sends
//! what the relay queued for this bridge.
//!
//! The two halves live and die together: when the writer stops (the relay dropped the bridge,
//! or the peer stopped reading) the reader stops too, and when the reader sees the end of the
//! stream it tells the relay, which drops the writer's channel.

use serde::Deserialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncRead, AsyncWrite};

use tokio::sync::{Semaphore, mpsc, oneshot};
use tokio_util::codec::FramedRead;

use crate::codec::{FrameCodec, FrameError};
use crate::frame_writer::FrameWriter;
use crate::limits;
use crate::relay::{BRIDGE_QUEUE, BridgeId, BridgeLink, Input, Outgoing};
use crate::wire::{ErrorBody, Message, code};
use tabwire_proto::socket::next_frame;

/// What every bridge connection shares with the rest of the host.
#[derive(Clone)]
pub struct Shared {
    /// Where readers send what they saw.
    pub relay: mpsc::Sender<Input>,
    /// Held by each writer until it has flushed, so shutdown can wait for them.
    pub alive: mpsc::Sender<()>,
    /// Bytes the bridges may have on their way to the browser
    /// ([`limits::TO_BROWSER_IN_FLIGHT`]).
    pub budget: Arc<Semaphore>,
}

/// Start the reader and writer tasks of bridge `id` and register it with the relay. `slot` is
/// held until both have ended (the listener's connection cap).
pub async fn start<R, W, G>(id: BridgeId, reader: R, writer: W, shared: Shared, slot: G)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
    G: Send + 'static,
{
    let Shared { relay, alive, budget } = shared;
    let (tx, rx) = mpsc::channel(BRIDGE_QUEUE);
    let (kill, killed) = oneshot::channel();
    let queued = Arc::new(AtomicUsize::new(0));
    let link = BridgeLink { tx, queued: queued.clone(), kill };
    if relay.send(Input::BridgeAttached { id, link }).await.is_err() {
        return;
    }
    let (writer_done, writer_gone) = oneshot::channel::<()>();
    tokio::spawn(async move {
        tokio::select! {
            result = write_loop(writer, rx, &queued) => {
                if let Err(e) = result {
                    tracing::debug!(bridge = id, "writing to the bridge failed: {e}");
                }
            }
            // Killed (it stopped reading): drop the socket and the queue now.
            Ok(()) = killed => {}
        }
        drop(writer_done);
        drop(alive);
    });
    tokio::spawn(async move {
        tokio::select! {
            last = read_loop(id, reader, &relay, budget) => {
                let _ = relay.send(last).await;
            }
            // The writer ended: the relay dropped this bridge, or the peer stopped reading.
            _ = writer_gone => {
                let _ = relay.send(Input::BridgeDetached { id }).await;
            }
        }
        drop(slot);
    });
}

/// Forward this bridge's messages to the relay until its stream ends or goes bad. Returns the
/// connection's last word for the relay.
async fn read_loop<R: AsyncRead + Unpin>(
    id: BridgeId,
    reader: R,
    relay: &mpsc::Sender<Input>,
    budget: Arc<Semaphore>,
) -> Input {
    let mut frames = FramedRead::new(reader, FrameCodec::socket());
    loop {
        let next = next_frame(&mut frames, |f| !f.read_buffer().is_empty(), None).await;
        let next = match next {
            Ok(next) => next,
            Err(stalled) => {
                let error = ErrorBody::new(
                    code::TIMEOUT,
                    format!("{stalled}; the host closed this connection"),
                );
                return Input::BadFromBridge { id, reply_id: String::new(), error };
            }
        };
        match next {
            None => return Input::BridgeDetached { id },
            Some(Ok(frame)) => match Message::parse(&frame) {
                Ok(msg) => {
                    let credit = budget
                        .clone()
                        .acquire_many_owned(frame.len().min(limits::TO_BROWSER_IN_FLIGHT) as u32)
                        .await
                        .ok();
                    if relay.send(Input::FromBridge { id, msg, credit }).await.is_err() {
                        return Input::BridgeDetached { id };
                    }
                }
                Err(e) => {
                    let error = ErrorBody::new(
                        code::INVALID_MESSAGE,
                        format!("{e}; the host closed this connection"),
                    );
                    return Input::BadFromBridge { id, reply_id: id_of(&frame), error };
                }
            },
            Some(Err(e @ FrameError::TooLarge { .. })) => {
                let error = ErrorBody::new(code::TOO_LARGE, e.to_string());
                return Input::BadFromBridge { id, reply_id: String::new(), error };
            }
            Some(Err(e)) => {
                tracing::debug!(bridge = id, "bridge connection ended: {e}");
                return Input::BridgeDetached { id };
            }
        }
    }
}

/// The `id` of a frame that is JSON but not a valid message, so the error can name the
/// request it answers; empty when there is none.
fn id_of(frame: &[u8]) -> String {
    #[derive(Deserialize)]
    struct JustId {
        id: Option<String>,
    }
    serde_json::from_slice::<JustId>(frame).ok().and_then(|j| j.id).unwrap_or_default()
}

async fn write_loop<W: AsyncWrite + Unpin>(
    writer: W,
    mut rx: mpsc::Receiver<Outgoing>,
    queued: &AtomicUsize,
) -> Result<(), FrameError> {
    let mut out = FrameWriter::new(writer, limits::MAX_SOCKET_FRAME);
    while let Some(first) = rx.recv().await {
        let mut next = Some(first);
        while let Some(item) = next.take().or_else(|| rx.try_recv().ok()) {
            let len = item.len();
            match item {
                Outgoing::Frame(frame) => out.write(&frame).await?,
                Outgoing::Batch(frames) => {
                    for frame in &frames {
                        out.write(frame).await?;
                    }
                }
            }
            queued.fetch_sub(len, Ordering::Relaxed);
        }
        out.flush().await?;
    }
    out.shutdown().await
}
