//! The browser's end of the host: Native Messaging frames on stdin and stdout.
//!
//! The reader turns frames into [`Input`]s for the relay; the writer takes whole messages from
//! the relay and splits any over 1 MiB into `chunk` messages (Chrome disconnects a host that
//! writes a bigger frame). Neither decides anything about routing.

use futures::StreamExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_util::codec::FramedRead;

use crate::chunk;
use crate::codec::{FrameCodec, FrameError};
use crate::frame_writer::FrameWriter;
use crate::limits;
use crate::relay::{Input, ToBrowser};
use crate::wire::Message;

/// Read frames from the browser until it closes the stream or sends something unreadable,
/// then tell the relay how it ended.
pub async fn read_loop<R: AsyncRead + Unpin>(input: R, relay: mpsc::Sender<Input>) {
    let mut frames = FramedRead::new(input, FrameCodec::host_to_browser());
    let (reason, bad_input) = loop {
        match frames.next().await {
            None => break ("the browser closed the connection (stdin ended)".to_owned(), false),
            Some(Ok(frame)) => match Message::parse(&frame) {
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

/// Write each message the relay hands over, chunked when over 1 MiB. Ends when the relay drops
/// its sender, or tells the relay when the browser stops reading.
pub async fn write_loop<W: AsyncWrite + Unpin>(
    output: W,
    mut messages: mpsc::UnboundedReceiver<ToBrowser>,
    relay: mpsc::Sender<Input>,
) {
    let mut out = FrameWriter::new(output, limits::MAX_TO_BROWSER);
    let mut next_stream = 0u64;
    let result: Result<(), FrameError> = async {
        while let Some(first) = messages.recv().await {
            let mut msg = Some(first);
            // Take whatever else is ready so a burst goes out in few writes.
            // Each message's budget credit goes back when `m` is dropped, after its write.
            while let Some(ToBrowser { payload: m, credit: _credit }) =
                msg.take().or_else(|| messages.try_recv().ok())
            {
                if m.len() <= limits::MAX_TO_BROWSER {
                    out.write(&m).await?;
                    continue;
                }
                next_stream += 1;
                let text = std::str::from_utf8(&m).expect("the relay serializes UTF-8 JSON");
                let pieces = chunk::split(&format!("c{next_stream}"), text, limits::MAX_TO_BROWSER);
                tracing::debug!(
                    bytes = m.len(),
                    chunks = pieces.len(),
                    "chunking a message for the browser"
                );
                for piece in pieces {
                    out.write(&piece).await?;
                }
            }
            out.flush().await?;
        }
        Ok(())
    }
    .await;
    if let Err(e) = result {
        let reason = format!("writing to the browser failed: {e}");
        let _ = relay.send(Input::BrowserEnded { reason, bad_input: false }).await;
    }
}
