//! A session's untaken events on disk, so that they survive a restart of its bridge:
//! `<state dir>/sessions/<id>.queue.json`.
//!
//! Only for a session whose id the user chose (`TABWIRE_SESSION_ID` set, and no live session
//! had it): a random id is never started again, so its file would only be litter. Only the
//! lasting events are kept ([`SessionEvent::lasting`]: workers' reports, messages, questions,
//! answers, operation milestones); a restarted bridge hears its browsers anew.
//!
//! A thread of its own, at a lower CPU priority, writes the file a few milliseconds after the
//! queue's session lane changes (a burst is one write), whole (temp file + rename), mode 0600. On start the file is
//! read back into the queue, in order, with the events' own times and new ids. What was taken
//! but not yet written when the bridge was killed is given again: an event may come twice
//! after a crash, never be lost by one.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;
use tabwire_proto::runtime_dir::now_ms;

use tabwire_link::events::{EventQueue, SessionEvent, kind};
use tabwire_proto::dirs;

/// Events kept in the file: the newest this many…
pub const MAX_SAVED_EVENTS: usize = 1_000;
/// …and this many bytes of event data. A session that lets more pile up loses the oldest on a
/// restart, and is told so by a `dropped` event.
pub const MAX_SAVED_BYTES: usize = 8 * 1024 * 1024;
/// How long the writer lets a burst of changes gather before it writes.
const GATHER: Duration = Duration::from_millis(20);
const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Contents {
    format: u32,
    session_id: String,
    saved_at_ms: u64,
    /// Events lost and not yet told when the file was written (told on replay).
    lost: u64,
    events: Vec<SessionEvent>,
}

/// Keeps one session's lasting events on disk. Cheap to clone.
#[derive(Clone)]
pub struct SavedQueue {
    queue: EventQueue,
    path: PathBuf,
    session_id: String,
    /// Held while a snapshot is taken and written: the last write is of the newest snapshot.
    /// True once the session's last write was made ([`SavedQueue::flush`]): a writer that wakes
    /// late (it runs at a low priority) must not put back a file the session's next run has
    /// since taken from and emptied.
    writing: Arc<Mutex<bool>>,
}

impl SavedQueue {
    /// Where session `id` keeps its events in `state_dir`.
    pub fn path(state_dir: &Path, id: &str) -> PathBuf {
        state_dir.join("sessions").join(format!("{id}.queue.json"))
    }

    /// Put what the previous run of session `id` left into `queue`, then keep the file up to
    /// date from a thread of its own.
    pub fn start(queue: EventQueue, state_dir: &Path, id: &str) -> SavedQueue {
        let saved = SavedQueue {
            queue,
            path: Self::path(state_dir, id),
            session_id: id.to_owned(),
            writing: Arc::default(),
        };
        saved.replay();
        let writer = saved.clone();
        let spawned = std::thread::Builder::new()
            .name("tabwire-saved-queue".into())
            .spawn(move || writer.follow());
        if let Err(e) = spawned {
            tracing::warn!(
                "cannot start the queue writer ({e}); this session's events are not saved"
            );
        }
        saved
    }

    /// Write the queue as it is now, the last write of this run (at the session's end).
    pub async fn flush(&self) {
        let saved = self.clone();
        let _ = tokio::task::spawn_blocking(move || saved.write_now(true)).await;
    }

    fn follow(&self) {
        tabwire_proto::dirs::lower_priority();
        loop {
            futures::executor::block_on(self.queue.lasting_changed());
            std::thread::sleep(GATHER);
            if !self.write_now(false) {
                return;
            }
        }
    }

    /// Write unless the last write was made; `last` makes this one the last. False once it was.
    fn write_now(&self, last: bool) -> bool {
        let mut ended = self.writing.lock().expect("queue writer poisoned");
        if *ended {
            return false;
        }
        *ended = last;
        let (events, lost) = self.queue.lasting();
        if let Err(e) = self.write(events, lost) {
            tracing::warn!(
                file = %self.path.display(),
                "cannot save this session's events ({e}); a restarted session will not have \
                 them. Check TABWIRE_STATE_DIR"
            );
        }
        true
    }

    /// The newest events within the bounds, the others counted as lost. No events: no file.
    fn write(&self, mut events: Vec<SessionEvent>, mut lost: u64) -> io::Result<()> {
        if events.is_empty() && lost == 0 {
            return match std::fs::remove_file(&self.path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            };
        }
        let mut bytes = 0;
        let keep = events
            .iter()
            .rev()
            .take(MAX_SAVED_EVENTS)
            .take_while(|e| {
                bytes += e.data.get().len();
                bytes <= MAX_SAVED_BYTES
            })
            .count();
        lost += (events.len() - keep) as u64;
        events.drain(..events.len() - keep);
        let contents = Contents {
            format: FORMAT,
            session_id: self.session_id.clone(),
            saved_at_ms: now_ms(),
            lost,
            events,
        };
        let dir = self.path.parent().expect("a file in sessions/");
        dirs::private_dir(dir)?;
        dirs::write_private(&self.path, &serde_json::to_vec(&contents).map_err(io::Error::other)?)
    }

    /// Queue what the file holds. A file that cannot be read is moved aside with a warning.
    fn replay(&self) {
        let bytes = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return,
            Err(e) => {
                tracing::warn!(file = %self.path.display(), "cannot read the saved events ({e})");
                return;
            }
        };
        let contents = match serde_json::from_slice::<Contents>(&bytes) {
            Ok(contents) if contents.format == FORMAT => contents,
            Ok(contents) => {
                return self.set_aside(&format!("it has format {}", contents.format));
            }
            Err(e) => return self.set_aside(&e.to_string()),
        };
        let restored = contents.events.len();
        self.queue.restore(contents.events);
        if contents.lost > 0 {
            let reason = format!(
                "{} events of this session were lost before it restarted (its queue or its saved \
                 file, which keeps the newest {MAX_SAVED_EVENTS}, was full)",
                contents.lost
            );
            let marker = json!({ "count": contents.lost, "reason": reason });
            self.queue.push(SessionEvent::new(kind::DROPPED, None, &marker));
        }
        tracing::info!(restored, lost = contents.lost, "replayed this session's saved events");
    }

    fn set_aside(&self, why: &str) {
        let aside = self.path.with_extension(format!("json.corrupt-{}", now_ms()));
        let _ = std::fs::rename(&self.path, &aside);
        tracing::warn!(
            file = %self.path.display(),
            moved_to = %aside.display(),
            "the saved events are not readable ({why}); moved aside, this session starts empty"
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use tabwire_link::events::Filter;

    fn scratch() -> PathBuf {
        std::env::temp_dir().join(format!("tabwire-saved-{}", uuid::Uuid::new_v4()))
    }

    fn report(n: u64) -> SessionEvent {
        SessionEvent::new(kind::WORKER_COMPLETE, None, &json!({ "worker_id": format!("w{n}") }))
    }

    #[tokio::test]
    async fn untaken_lasting_events_come_back_in_order_with_their_times() {
        let dir = scratch();
        let first = EventQueue::new();
        let saved = SavedQueue::start(first.clone(), &dir, "keep-1");
        for n in 0..3 {
            first.push(report(n));
        }
        first.push(SessionEvent::new(kind::BROWSER, None, &json!({ "kind": "connected" })));
        let taken = first.take_one(&Filter::default(), Duration::ZERO).await.unwrap();
        assert_eq!(taken.data_value()["worker_id"], "w0");
        saved.flush().await;
        let (kept, _) = first.lasting();

        let second = EventQueue::new();
        SavedQueue::start(second.clone(), &dir, "keep-1");
        let back = second.drain(&Filter::default(), Duration::ZERO).await;
        let ids: Vec<_> = back.iter().map(|e| e.data_value()["worker_id"].clone()).collect();
        assert_eq!(ids, [json!("w1"), json!("w2")], "the browser event is not kept");
        assert_eq!(back[0].at_ms, kept[0].at_ms, "an event keeps its time");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn the_file_is_bounded_and_the_loss_is_told_on_replay() {
        let dir = scratch();
        let saved = SavedQueue::start(EventQueue::new(), &dir, "b");
        let events: Vec<_> = (0..MAX_SAVED_EVENTS as u64 + 5).map(report).collect();
        saved.write(events, 2).unwrap();
        let again = EventQueue::new();
        SavedQueue::start(again.clone(), &dir, "b");
        let back = again.drain(&Filter::default(), Duration::ZERO).await;
        assert_eq!(back.len(), MAX_SAVED_EVENTS + 1);
        assert_eq!(back[0].data_value()["worker_id"], "w5", "the oldest went");
        let marker = back.last().unwrap();
        assert_eq!(
            (marker.kind.as_str(), marker.data_value()["count"].clone()),
            (kind::DROPPED, json!(7))
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn a_drained_queue_leaves_no_file_and_a_corrupt_one_is_set_aside() {
        let dir = scratch();
        let saved = SavedQueue::start(EventQueue::new(), &dir, "c");
        saved.write(vec![report(1)], 0).unwrap();
        assert!(saved.path.exists());
        saved.write(Vec::new(), 0).unwrap();
        assert!(!saved.path.exists());
        std::fs::write(&saved.path, b"{not json").unwrap();
        let queue = EventQueue::new();
        SavedQueue::start(queue.clone(), &dir, "c");
        assert!(queue.is_empty());
        assert!(!saved.path.exists(), "moved aside");
        let _ = std::fs::remove_dir_all(dir);
    }
}
