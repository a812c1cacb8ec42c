//! This session's event queue: every event that reaches the session, in the order it arrived,
//! until a wait takes it.
//!
//! Why a queue of our own instead of a broadcast: a waiting assistant must not lose events in a
//! burst (a page pushing 1,000 events while the model is thinking), and several waiters at once
//! must each get different events. So events are appended here directly by whoever receives them
//! (the browser connection's reader, the session socket, other parts of the bridge), and taking
//! them happens under the same lock as appending: an event is returned exactly once, and one
//! pushed while a drain is under way is left for the next wait, never lost.
//!
//! Bounded: at most [`MAX_EVENTS`] events and [`MAX_BYTES`] of data. On overflow the oldest go
//! and a `dropped {count}` event at the front of the queue says how many; it is handed to the
//! next wait whatever that wait filters on, so the loss is always seen.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use tabwire_host::runtime_dir::now_ms;
use tokio::sync::Notify;

/// Events kept before the oldest are dropped.
pub const MAX_EVENTS: usize = 100_000;
/// Bytes of event data kept before the oldest are dropped.
pub const MAX_BYTES: usize = 64 * 1024 * 1024;
/// What an event costs besides its data, for the byte bound (the struct, its strings).
const OVERHEAD: usize = 96;

/// The kinds of events a queue holds (the `type` of a [`SessionEvent`]).
pub mod kind {
    /// A worker reported that it finished (`notify_completion`, `tabwire notify`).
    pub const WORKER_COMPLETE: &str = "worker_complete";
    /// Another session posted a message (`post_message`).
    pub const MESSAGE: &str = "message";
    /// Another session asked a question (`ask_question`).
    pub const QUESTION: &str = "question";
    /// A page called `tabwire.pushEvent`.
    pub const PAGE_EVENT: &str = "page_event";
    /// A page published its state (`tabwire.setState`, or after a command).
    pub const STATE_UPDATE: &str = "state_update";
    /// A tab was created, updated, activated or removed.
    pub const TAB: &str = "tab";
    /// A browser was attached or went away.
    pub const BROWSER: &str = "browser";
    /// A milestone of an operation.
    pub const OPERATION: &str = "operation";
    /// Events were lost: the queue overflowed, or the host's buffer did while no bridge listened.
    pub const DROPPED: &str = "dropped";
    /// Not queued: what a wait returns when nothing came in time.
    pub const TIMEOUT: &str = "timeout";
}

/// One event in a session's queue.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SessionEvent {
    /// Position in this session's queue: 1, 2, … in arrival order (0 until queued).
    pub id: u64,
    /// What happened: `page_event`, `state_update`, `tab`, `browser`, `worker_complete`,
    /// `message`, `question`, `operation` or `dropped`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The tab it is about, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab_id: Option<i64>,
    /// Host pid of the browser it came from, for browser events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_pid: Option<u32>,
    /// The host's sequence number, for browser events: one counter per host run, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// When it was queued, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// The event itself, as its sender gave it (page events: what the page pushed).
    #[serde(serialize_with = "raw_json", deserialize_with = "raw_json_in")]
    #[schemars(with = "serde_json::Value")]
    pub data: Arc<RawValue>,
    /// The queue's own overflow marker (not the host's `dropped`).
    #[serde(skip)]
    marker: bool,
}

impl SessionEvent {
    /// An event to [`EventQueue::push`]. `data` is any JSON value.
    pub fn new(kind: &str, tab_id: Option<i64>, data: &impl Serialize) -> SessionEvent {
        Self::from_raw(kind, tab_id, Arc::from(tabwire_host::wire::raw(data)))
    }

    /// An event whose data is already JSON text.
    pub fn from_raw(kind: &str, tab_id: Option<i64>, data: Arc<RawValue>) -> SessionEvent {
        SessionEvent {
            id: 0,
            kind: kind.to_owned(),
            tab_id,
            host_pid: None,
            seq: None,
            at_ms: 0,
            data,
            marker: false,
        }
    }

    /// The same event, marked as coming from a browser's host.
    pub fn from_host(mut self, host_pid: u32, seq: Option<u64>) -> SessionEvent {
        self.host_pid = Some(host_pid);
        self.seq = seq;
        self
    }

    /// The data as a JSON value.
    pub fn data_value(&self) -> serde_json::Value {
        serde_json::from_str(self.data.get()).unwrap_or(serde_json::Value::Null)
    }

    fn cost(&self) -> usize {
        self.data.get().len() + self.kind.len() + OVERHEAD
    }
}

fn raw_json<S: Serializer>(value: &Arc<RawValue>, s: S) -> Result<S::Ok, S::Error> {
    (**value).serialize(s)
}

fn raw_json_in<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Arc<RawValue>, D::Error> {
    Box::<RawValue>::deserialize(d).map(Arc::from)
}

/// Which events a wait takes.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only these kinds; empty: every kind.
    pub kinds: Vec<String>,
    /// Only events about this tab.
    pub tab_id: Option<i64>,
}

impl Filter {
    pub fn kinds(kinds: &[&str]) -> Filter {
        Filter { kinds: kinds.iter().map(|k| (*k).to_owned()).collect(), tab_id: None }
    }

    /// Whether `event` passes. The overflow marker passes every filter: a loss is always told.
    fn passes(&self, event: &SessionEvent) -> bool {
        event.marker
            || (self.kinds.is_empty() || self.kinds.contains(&event.kind))
                && self.tab_id.is_none_or(|tab| event.tab_id == Some(tab))
    }
}

/// A session's queue. Cheap to clone; clones share the queue.
#[derive(Clone)]
pub struct EventQueue {
    inner: Arc<Inner>,
}

struct Inner {
    state: Mutex<State>,
    /// Woken on every push; waiters re-check the queue.
    arrived: Notify,
    max_events: usize,
    max_bytes: usize,
}

#[derive(Default)]
struct State {
    events: VecDeque<SessionEvent>,
    bytes: usize,
    last_id: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::with_limits(MAX_EVENTS, MAX_BYTES)
    }
}

impl EventQueue {
    pub fn new() -> EventQueue {
        Self::default()
    }

    /// A queue with other bounds (tests).
    pub fn with_limits(max_events: usize, max_bytes: usize) -> EventQueue {
        EventQueue {
            inner: Arc::new(Inner {
                state: Mutex::new(State::default()),
                arrived: Notify::new(),
                max_events: max_events.max(2),
                max_bytes,
            }),
        }
    }

    /// Append an event; returns its id in this queue. Never blocks for long and never fails:
    /// when the queue is full, the oldest events make room.
    pub fn push(&self, mut event: SessionEvent) -> u64 {
        let id = {
            let mut state = self.lock();
            state.last_id += 1;
            event.id = state.last_id;
            event.at_ms = now_ms();
            state.bytes += event.cost();
            state.events.push_back(event);
            self.make_room(&mut state);
            state.last_id
        };
        self.inner.arrived.notify_waiters();
        id
    }

    /// Events waiting now.
    pub fn len(&self) -> usize {
        self.lock().events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Take the first event `filter` passes, waiting up to `timeout` for one. Events before it
    /// that it does not pass stay queued, in order. `None` on timeout.
    pub async fn take_one(&self, filter: &Filter, timeout: Duration) -> Option<SessionEvent> {
        self.wait(timeout, |state| {
            let at = state.events.iter().position(|e| filter.passes(e))?;
            let event = state.events.remove(at)?;
            state.bytes -= event.cost();
            Some(event)
        })
        .await
    }

    /// Take every event `filter` passes, at once, waiting up to `timeout` for at least one.
    /// Empty on timeout.
    pub async fn drain(&self, filter: &Filter, timeout: Duration) -> Vec<SessionEvent> {
        self.wait(timeout, |state| {
            let (taken, kept): (VecDeque<_>, VecDeque<_>) =
                std::mem::take(&mut state.events).into_iter().partition(|e| filter.passes(e));
            state.events = kept;
            state.bytes -= taken.iter().map(SessionEvent::cost).sum::<usize>();
            (!taken.is_empty()).then(|| taken.into())
        })
        .await
        .unwrap_or_default()
    }

    /// Run `take` under the lock until it finds something or `timeout` passes. The wake-up is
    /// registered before looking, so a push between looking and sleeping is not missed.
    async fn wait<T>(
        &self,
        timeout: Duration,
        mut take: impl FnMut(&mut State) -> Option<T>,
    ) -> Option<T> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let arrived = self.inner.arrived.notified();
            tokio::pin!(arrived);
            arrived.as_mut().enable();
            if let Some(found) = take(&mut self.lock()) {
                return Some(found);
            }
            tokio::select! {
                () = arrived => {}
                () = tokio::time::sleep_until(deadline) => return take(&mut self.lock()),
            }
        }
    }

    /// Drop the oldest events until the queue is within its bounds, counting them in the
    /// marker at the front.
    fn make_room(&self, state: &mut State) {
        let mut lost = 0u64;
        while state.events.len() > self.inner.max_events
            || state.bytes > self.inner.max_bytes && state.events.len() > 1
        {
            let oldest = match state.events.front() {
                Some(front) if front.marker => 1,
                _ => 0,
            };
            let Some(gone) = state.events.remove(oldest) else { break };
            state.bytes -= gone.cost();
            lost += if gone.marker { marker_count(&gone) } else { 1 };
        }
        if lost == 0 {
            return;
        }
        let before = match state.events.front() {
            Some(front) if front.marker => {
                let front = state.events.pop_front().expect("front exists");
                state.bytes -= front.cost();
                marker_count(&front)
            }
            _ => 0,
        };
        let count = before + lost;
        tracing::warn!(
            count,
            "the session's event queue overflowed: the oldest events were dropped"
        );
        let mut marker = SessionEvent::new(
            kind::DROPPED,
            None,
            &serde_json::json!({
                "count": count,
                "reason": "the session's event queue was full; the oldest events were dropped",
            }),
        );
        marker.marker = true;
        marker.at_ms = now_ms();
        state.bytes += marker.cost();
        state.events.push_front(marker);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.state.lock().expect("event queue poisoned")
    }
}

fn marker_count(marker: &SessionEvent) -> u64 {
    marker.data_value()["count"].as_u64().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use serde_json::json;

    use super::*;

    const NOW: Duration = Duration::ZERO;

    fn page(i: u64) -> SessionEvent {
        SessionEvent::new(kind::PAGE_EVENT, Some(1), &json!({ "i": i }))
    }

    #[tokio::test]
    async fn take_one_skips_what_the_filter_refuses_and_keeps_it_in_order() {
        let q = EventQueue::new();
        q.push(SessionEvent::new(kind::TAB, Some(1), &json!({ "kind": "updated" })));
        q.push(page(1));
        q.push(SessionEvent::new(kind::MESSAGE, None, &json!({ "body": "hi" })));
        q.push(page(2));

        let got = q.take_one(&Filter::kinds(&[kind::PAGE_EVENT]), NOW).await.unwrap();
        assert_eq!(got.data_value(), json!({ "i": 1 }));
        let got = q.take_one(&Filter::kinds(&[kind::MESSAGE]), NOW).await.unwrap();
        assert_eq!(got.kind, kind::MESSAGE);
        let rest: Vec<String> =
            q.drain(&Filter::default(), NOW).await.into_iter().map(|e| e.kind).collect();
        assert_eq!(rest, [kind::TAB, kind::PAGE_EVENT]);
        assert!(q.take_one(&Filter::default(), NOW).await.is_none());
    }

    #[tokio::test]
    async fn a_wait_wakes_when_an_event_arrives() {
        let q = EventQueue::new();
        let pusher = q.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            pusher.push(page(7));
        });
        let got = q.drain(&Filter::default(), Duration::from_secs(5)).await;
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].data_value(), json!({ "i": 7 }));
    }

    #[tokio::test]
    async fn overflow_drops_the_oldest_and_says_how_many() {
        let q = EventQueue::with_limits(10, usize::MAX);
        for i in 0..25 {
            q.push(page(i));
        }
        let got = q.drain(&Filter::kinds(&[kind::PAGE_EVENT]), NOW).await;
        assert_eq!(got[0].kind, kind::DROPPED, "the marker passes any filter");
        assert_eq!(got[0].data_value()["count"], 16);
        let kept: Vec<u64> =
            got[1..].iter().map(|e| e.data_value()["i"].as_u64().unwrap()).collect();
        assert_eq!(kept, (16..25).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn overflow_by_bytes() {
        let q = EventQueue::with_limits(usize::MAX, 2000);
        for i in 0..100 {
            q.push(page(i));
        }
        let got = q.drain(&Filter::default(), NOW).await;
        let lost = got[0].data_value()["count"].as_u64().unwrap();
        assert_eq!(lost as usize + got.len() - 1, 100, "every event is kept or counted");
        assert!(got.len() < 100);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_drains_get_each_event_exactly_once() {
        let q = EventQueue::new();
        let waiters: Vec<_> = (0..4)
            .map(|_| {
                let q = q.clone();
                tokio::spawn(async move {
                    let mut got = Vec::new();
                    loop {
                        let batch = q.drain(&Filter::default(), Duration::from_millis(200)).await;
                        if batch.is_empty() {
                            return got;
                        }
                        got.extend(
                            batch.into_iter().map(|e| e.data_value()["i"].as_u64().unwrap()),
                        );
                    }
                })
            })
            .collect();
        for i in 0..10_000 {
            q.push(page(i));
            if i % 100 == 0 {
                tokio::task::yield_now().await;
            }
        }
        let mut seen = HashSet::new();
        let mut total = 0;
        for w in waiters {
            let got = w.await.unwrap();
            assert!(got.windows(2).all(|w| w[0] < w[1]), "each waiter sees its share in order");
            total += got.len();
            seen.extend(got);
        }
        assert_eq!(total, 10_000, "no event twice");
        assert_eq!(seen.len(), 10_000, "no event lost");
    }
}
