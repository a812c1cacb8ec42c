//! Events kept while no bridge is attached, so the next bridge sees what happened meanwhile.
//!
//! Bounded by count and by bytes (limits.rs); over either, the oldest go first and are
//! counted, so the replay can start with one `dropped` event that says which `seq`s are lost.
//! Each event keeps the origin that produced it, so that when the user revokes a site the
//! events its pages pushed meanwhile are forgotten instead of replayed.

use std::collections::VecDeque;

use bytes::Bytes;

/// Which events were thrown away since the buffer was last drained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Dropped {
    pub count: u64,
    pub first_seq: u64,
    pub last_seq: u64,
}

/// One kept event: its `seq`, its frame, and the origin of the page that produced it.
#[derive(Debug)]
struct Kept {
    seq: u64,
    frame: Bytes,
    origin: Option<String>,
}

/// A FIFO of serialized event frames with their `seq`.
#[derive(Debug)]
pub struct EventBuffer {
    events: VecDeque<Kept>,
    bytes: usize,
    max_events: usize,
    max_bytes: usize,
    dropped: Option<Dropped>,
}

impl EventBuffer {
    pub fn new(max_events: usize, max_bytes: usize) -> Self {
        Self { events: VecDeque::new(), bytes: 0, max_events, max_bytes, dropped: None }
    }

    /// Keep `frame` (event number `seq`, produced by a page of `origin`), dropping the oldest
    /// while over a limit. An event larger than the byte limit on its own is dropped too.
    pub fn push(&mut self, seq: u64, frame: Bytes, origin: Option<String>) {
        self.bytes += frame.len();
        self.events.push_back(Kept { seq, frame, origin });
        while self.events.len() > self.max_events || self.bytes > self.max_bytes {
            let Some(Kept { seq: old_seq, frame: old, .. }) = self.events.pop_front() else {
                break;
            };
            self.bytes -= old.len();
            let d = self.dropped.get_or_insert(Dropped {
                count: 0,
                first_seq: old_seq,
                last_seq: old_seq,
            });
            d.count += 1;
            d.last_seq = old_seq;
        }
    }

    /// Everything kept, oldest first, and what was lost before it; the buffer is empty after.
    pub fn drain(&mut self) -> (Option<Dropped>, Vec<Bytes>) {
        self.bytes = 0;
        (self.dropped.take(), self.events.drain(..).map(|k| k.frame).collect())
    }

    /// Forget the events whose origin `allowed` refuses (events without an origin stay);
    /// returns how many went. Not a loss to report: the user withdrew those sites.
    pub fn forget_origins(&mut self, allowed: impl Fn(&str) -> bool) -> usize {
        let before = self.events.len();
        self.events.retain(|k| k.origin.as_deref().is_none_or(&allowed));
        self.bytes = self.events.iter().map(|k| k.frame.len()).sum();
        before - self.events.len()
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.events.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(n: usize) -> Bytes {
        Bytes::from(vec![b'x'; n])
    }

    #[test]
    fn keeps_everything_under_the_limits() {
        let mut b = EventBuffer::new(3, 100);
        b.push(1, frame(10), None);
        b.push(2, frame(10), None);
        let (dropped, events) = b.drain();
        assert_eq!(dropped, None);
        assert_eq!(events.len(), 2);
        assert!(b.is_empty());
    }

    #[test]
    fn drops_the_oldest_over_the_count() {
        let mut b = EventBuffer::new(3, 1000);
        for seq in 1..=5 {
            b.push(seq, Bytes::from(seq.to_string()), None);
        }
        let (dropped, events) = b.drain();
        assert_eq!(dropped, Some(Dropped { count: 2, first_seq: 1, last_seq: 2 }));
        assert_eq!(events, vec![Bytes::from("3"), Bytes::from("4"), Bytes::from("5")]);
        // The next round starts clean.
        b.push(6, frame(1), None);
        assert_eq!(b.drain().0, None);
    }

    #[test]
    fn drops_the_oldest_over_the_bytes_and_an_event_too_big_alone() {
        let mut b = EventBuffer::new(100, 25);
        b.push(1, frame(10), None);
        b.push(2, frame(10), None);
        b.push(3, frame(10), None);
        assert_eq!(b.len(), 2);
        b.push(4, frame(30), None);
        assert_eq!(b.len(), 0);
        let (dropped, events) = b.drain();
        assert_eq!(dropped, Some(Dropped { count: 4, first_seq: 1, last_seq: 4 }));
        assert!(events.is_empty());
    }

    #[test]
    fn a_revoked_sites_events_are_forgotten_and_others_kept_in_order() {
        let mut b = EventBuffer::new(100, 1000);
        let from = |o: &str| Some(o.to_owned());
        b.push(1, Bytes::from("a1"), from("http://a.test"));
        b.push(2, Bytes::from("b2"), from("http://b.test"));
        b.push(3, Bytes::from("tab"), None);
        b.push(4, Bytes::from("a4"), from("http://a.test"));
        assert_eq!(b.forget_origins(|o| o != "http://a.test"), 2);
        let (dropped, events) = b.drain();
        assert_eq!(dropped, None, "forgetting is not a loss");
        assert_eq!(events, vec![Bytes::from("b2"), Bytes::from("tab")]);
    }
}
