//! A worker's output: its stdout and stderr through one pipe (so their lines keep the order the
//! worker wrote them in) into `<state dir>/workers/<worker_id>.log`, mode 0600.
//!
//! Bounded: the log keeps the first [`MAX_LOG_BYTES`]; past that, only the last
//! [`TAIL_BYTES`] are kept, in memory, and written at the end after a line saying how much was
//! left out. The pipe is always read to its end, so a chatty worker never blocks on a full pipe.
//! The same tail gives the `message` of the worker's report: its last lines.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::path::Path;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::oneshot;

use tabwire_proto::dirs;

/// The first bytes of output kept in the log file.
pub const MAX_LOG_BYTES: u64 = 8 * 1024 * 1024;
/// The last bytes of output always kept (and written after a truncated log).
pub const TAIL_BYTES: usize = 64 * 1024;
/// The report's `message`: at most this many of the last lines…
pub const MESSAGE_LINES: usize = 20;
/// …and this many bytes.
pub const MESSAGE_BYTES: usize = 4 * 1024;

/// Where output goes while the worker runs.
pub struct Log {
    file: Option<File>,
    written: u64,
    skipped: u64,
    tail: VecDeque<u8>,
}

/// What the worker printed, once its output ended.
#[derive(Debug, Default)]
pub struct Output {
    /// The last [`TAIL_BYTES`] of it.
    pub tail: Vec<u8>,
}

impl Log {
    /// Create (or empty) the log at `path`.
    pub fn create(path: &Path) -> std::io::Result<Log> {
        let file = dirs::open_private(path)?;
        file.set_len(0)?;
        Ok(Log { file: Some(file), written: 0, skipped: 0, tail: VecDeque::new() })
    }

    fn write(&mut self, chunk: &[u8]) {
        let room = MAX_LOG_BYTES.saturating_sub(self.written) as usize;
        let (logged, past) = chunk.split_at(room.min(chunk.len()));
        if let Some(file) = &mut self.file
            && !logged.is_empty()
            && let Err(e) = file.write_all(logged)
        {
            tracing::warn!("cannot write a worker's log ({e}); its output is no longer kept");
            self.file = None;
        }
        self.written += logged.len() as u64;
        self.skipped += past.len() as u64;
        self.tail.extend(chunk);
        let over = self.tail.len().saturating_sub(TAIL_BYTES);
        self.tail.drain(..over);
    }

    fn finish(mut self) -> Output {
        let tail: Vec<u8> = self.tail.into_iter().collect();
        if self.skipped > 0
            && let Some(file) = &mut self.file
        {
            let shown = (tail.len() as u64).min(self.skipped);
            let note = format!(
                "\n[tabwire: the log keeps the first {MAX_LOG_BYTES} bytes; {} more were left \
                 out, the last {shown} follow]\n",
                self.skipped - shown
            );
            let start = tail.len() - shown as usize;
            let _ = file.write_all(note.as_bytes()).and_then(|()| file.write_all(&tail[start..]));
        }
        Output { tail }
    }
}

/// Read the worker's pipe into `log` until it ends, or until `stop` fires (the worker exited
/// but something it started still holds the pipe open).
pub async fn collect(
    mut pipe: impl AsyncRead + Unpin,
    mut log: Log,
    stop: oneshot::Receiver<()>,
) -> Output {
    let mut buf = vec![0u8; 16 * 1024];
    tokio::pin!(stop);
    loop {
        tokio::select! {
            read = pipe.read(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => log.write(&buf[..n]),
            },
            _ = &mut stop => break,
        }
    }
    log.finish()
}

impl Output {
    /// Its last lines: at most [`MESSAGE_LINES`] and [`MESSAGE_BYTES`], trimmed; invalid UTF-8
    /// replaced.
    pub fn last_lines(&self) -> String {
        let text = String::from_utf8_lossy(&self.tail);
        let mut kept: Vec<&str> = Vec::new();
        let mut size = 0;
        for line in text.trim_end().rsplit('\n').take(MESSAGE_LINES) {
            if !kept.is_empty() && size + line.len() + 1 > MESSAGE_BYTES {
                break;
            }
            size += line.len() + 1;
            kept.push(line);
        }
        kept.reverse();
        let last = kept.join("\n");
        // One line longer than the bound: its end.
        let mut cut = last.len().saturating_sub(MESSAGE_BYTES);
        while !last.is_char_boundary(cut) {
            cut += 1;
        }
        last[cut..].to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(text: &str) -> Output {
        Output { tail: text.as_bytes().to_vec() }
    }

    #[test]
    fn the_message_is_the_last_lines() {
        assert_eq!(output("").last_lines(), "");
        assert_eq!(output("one line\n").last_lines(), "one line");
        let many: String = (0..50).map(|i| format!("line {i}\n")).collect();
        let last = output(&many).last_lines();
        assert_eq!(last.lines().count(), MESSAGE_LINES);
        assert!(last.starts_with("line 30\n") && last.ends_with("line 49"), "{last}");
        let long = format!("start\n{}\nend\n", "é".repeat(MESSAGE_BYTES));
        let last = output(&long).last_lines();
        assert!(last.len() <= MESSAGE_BYTES && last.ends_with("end"), "{}", last.len());
    }

    #[test]
    fn a_long_log_keeps_its_head_and_its_tail() {
        let path = std::env::temp_dir().join(format!("tabwire-log-{}", uuid::Uuid::new_v4()));
        let mut log = Log::create(&path).unwrap();
        let chunk = vec![b'a'; 1024 * 1024];
        for _ in 0..MAX_LOG_BYTES / chunk.len() as u64 {
            log.write(&chunk);
        }
        log.write(&vec![b'b'; 3 * TAIL_BYTES]);
        log.write(b"\nthe end\n");
        let out = log.finish();
        assert_eq!(out.last_lines(), "the end");
        let kept = std::fs::read(&path).unwrap();
        assert!(kept.len() < (MAX_LOG_BYTES as usize) + TAIL_BYTES + 200, "{}", kept.len());
        let text = String::from_utf8_lossy(&kept[MAX_LOG_BYTES as usize..]);
        assert!(
            text.contains(&format!("{} more were left out", 2 * TAIL_BYTES + 9)),
            "{text:.200}"
        );
        assert!(text.ends_with("the end\n"));
        let _ = std::fs::remove_file(path);
    }
}
