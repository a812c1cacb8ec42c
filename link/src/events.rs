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
//! Two lanes, each bounded on its own ([`MAX_EVENTS`] events, [`MAX_BYTES`] of data): what the
//! pages and tabs say (`page_event`, `state_update`, `tab`, the browser's `dropped`) and what
//! the session's own world says (`worker_complete`, `message`, `question`, `operation`,
//! `browser`). A page that floods can fill only the page lane, and there it loses only its own
//! events: on overflow the oldest event of the tab holding the most goes. Every loss is told
//! by a `dropped {count}` event (one per tab, or for the session lane) handed to the next wait
//! whatever that wait filters on. Waits take from both lanes in arrival order.
//!
//! A wait whose reply cannot be delivered (it did not encode, the client left) gives its
//! events back with [`EventQueue::put_back`]: they return to their places, in order.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use tabwire_proto::runtime_dir::now_ms;
use tabwire_proto::wire::Provenance;
use tokio::sync::Notify;

/// Events kept in each lane before the oldest are dropped. 10,000 is 50 s of the fastest page
/// the extension lets through (200 events a second), with no waiter taking any.
pub const MAX_EVENTS: usize = 10_000;
/// Bytes of event data kept in each lane before the oldest are dropped.
pub const MAX_BYTES: usize = 32 * 1024 * 1024;
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
    /// A session answered a question this one asked (`answer_question`).
    pub const ANSWER: &str = "answer";
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

    /// Every kind a queue holds (and wait_for_event can wait for): all of the above but
    /// [`TIMEOUT`].
    pub const ALL: [&str; 10] = [
        WORKER_COMPLETE,
        MESSAGE,
        QUESTION,
        ANSWER,
        PAGE_EVENT,
        STATE_UPDATE,
        TAB,
        BROWSER,
        OPERATION,
        DROPPED,
    ];
}

/// How a worker finished (`worker_complete`'s `status`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CompletionStatus {
    Success,
    Error,
}

/// One event in a session's queue, as the session's waits, its socket and `GET /wait` show it.
/// A browser's event keeps what the wire said ([`tabwire_proto::wire::Event`]: its tab, the
/// page that produced it, the host's `seq`, its data) and adds which host sent it; the session's
/// own events (a worker's report, a message) have a kind and data only. Everything but `data`
/// is the envelope ([`SessionEvent::ENVELOPE`]): wait_for_event shows an event's own fields
/// beside it (`bridge/src/mcp/sessions/events.rs`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SessionEvent {
    /// Position in this session's queue: 1, 2, … in arrival order (0 until queued).
    pub id: u64,
    /// What happened: one of [`kind::ALL`].
    #[serde(rename = "type")]
    pub kind: String,
    /// The tab it is about, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab_id: Option<i64>,
    /// The page that produced it: page events, states, operations, tab events of allowed sites.
    #[serde(flatten)]
    pub from: Provenance,
    /// Host pid of the browser it came from, for browser events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_pid: Option<u32>,
    /// The host's `seq`, for browser events.
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
    /// The names of the envelope, every field but `data`; a test holds the list to the type.
    pub const ENVELOPE: [&str; 8] =
        ["id", "type", "tab_id", "origin", "url", "host_pid", "seq", "at_ms"];

    /// An event to [`EventQueue::push`]. `data` is any JSON value.
    pub fn new(kind: &str, tab_id: Option<i64>, data: &impl Serialize) -> SessionEvent {
        Self::from_raw(kind, tab_id, Arc::from(tabwire_proto::wire::raw(data)))
    }

    /// An event whose data is already JSON text.
    pub fn from_raw(kind: &str, tab_id: Option<i64>, data: Arc<RawValue>) -> SessionEvent {
        SessionEvent {
            id: 0,
            kind: kind.to_owned(),
            tab_id,
            from: Provenance::default(),
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

    /// The same event, from the page `from`.
    pub fn from_page(mut self, from: Provenance) -> SessionEvent {
        self.from = from;
        self
    }

    /// Whether it is worth keeping across a restart of the session's bridge
    /// (`crate::session::saved`): what workers and sessions said, and operation milestones.
    /// Browser and page events describe a browser as it was, and a new bridge hears it anew.
    pub fn lasting(&self) -> bool {
        [kind::WORKER_COMPLETE, kind::MESSAGE, kind::QUESTION, kind::ANSWER, kind::OPERATION]
            .contains(&self.kind.as_str())
    }

    /// Whether it waits in the pages' lane: its data is what a page or a tab said.
    pub fn from_pages(&self) -> bool {
        self.lane() == PAGE_LANE
    }

    /// Which lane of the queue it waits in.
    fn lane(&self) -> usize {
        match self.kind.as_str() {
            kind::PAGE_EVENT | kind::STATE_UPDATE | kind::TAB => PAGE_LANE,
            kind::DROPPED if self.host_pid.is_some() => PAGE_LANE,
            _ => SESSION_LANE,
        }
    }

    /// The data as a JSON value.
    pub fn data_value(&self) -> serde_json::Value {
        serde_json::from_str(self.data.get()).unwrap_or(serde_json::Value::Null)
    }

    fn cost(&self) -> usize {
        self.data.get().len()
            + self.kind.len()
            + self.from.origin.as_ref().map_or(0, String::len)
            + self.from.url.as_ref().map_or(0, String::len)
            + OVERHEAD
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
    /// Only events whose data has this field with this string value (the answer to one
    /// question). Such a wait is for one event and is not told of losses.
    pub field: Option<(&'static str, String)>,
}

impl Filter {
    pub fn kinds(kinds: &[&str]) -> Filter {
        Filter { kinds: kinds.iter().map(|k| (*k).to_owned()).collect(), ..Filter::default() }
    }

    /// Whether `event` passes.
    fn passes(&self, event: &SessionEvent) -> bool {
        (self.kinds.is_empty() || self.kinds.contains(&event.kind))
            && self.passes_tab(event.tab_id)
            && self.field.as_ref().is_none_or(|(name, want)| event.data_value()[*name] == *want)
    }

    /// Whether a wait with this filter is told of losses in `lane`: a loss of the session's own
    /// events is told to any wait; a loss of page events to any wait that takes page events
    /// (so a lead waiting for `worker_complete` is not handed a page's overflow).
    fn hears_losses_of(&self, lane: usize) -> bool {
        if self.field.is_some() {
            return false;
        }
        lane == SESSION_LANE
            || self.kinds.is_empty()
            || self.kinds.iter().any(|k| {
                [kind::PAGE_EVENT, kind::STATE_UPDATE, kind::TAB, kind::DROPPED]
                    .contains(&k.as_str())
            })
    }

    fn passes_tab(&self, tab: Option<i64>) -> bool {
        self.tab_id.is_none_or(|want| tab == Some(want))
    }
}

const PAGE_LANE: usize = 0;
const SESSION_LANE: usize = 1;

/// A session's queue. Cheap to clone; clones share the queue.
#[derive(Clone)]
pub struct EventQueue {
    inner: Arc<Inner>,
}

struct Inner {
    state: Mutex<State>,
    /// Woken on every push; waiters re-check the queue.
    arrived: Notify,
    /// Holds a permit once the session lane changed: what [`EventQueue::lasting_changed`]
    /// waits for.
    session_changed: Notify,
    max_events: usize,
    max_bytes: usize,
}

#[derive(Default)]
struct State {
    lanes: [Lane; 2],
    last_id: u64,
}

/// One lane: its events in id order, what they weigh, and what was lost and not yet told.
#[derive(Default)]
struct Lane {
    events: VecDeque<SessionEvent>,
    bytes: usize,
    /// Events per tab (`None`: not about a tab), to find who floods.
    per_tab: HashMap<Option<i64>, usize>,
    /// Lost and not yet told, per tab.
    lost: BTreeMap<Option<i64>, u64>,
    /// The id of each tab's `state_update` waiting here: a page's state supersedes the one
    /// before it, so a tab has at most one. Else a page that publishes its state after every
    /// command (`provideState`) fills the lane with states no wait takes, and every push and
    /// every wait then walks ten thousand of them.
    states: HashMap<i64, u64>,
}

impl Lane {
    fn insert(&mut self, event: SessionEvent) {
        if let Some(tab) = event.tab_id.filter(|_| event.kind == kind::STATE_UPDATE) {
            match self.states.get(&tab) {
                // One given back after a newer one came: the newer stays.
                Some(&queued) if queued > event.id => return,
                Some(&queued) => {
                    let at = self.events.partition_point(|e| e.id < queued);
                    if self.events.get(at).is_some_and(|e| e.id == queued) {
                        self.remove(at);
                    }
                }
                None => {}
            }
            self.states.insert(tab, event.id);
        }
        self.bytes += event.cost();
        *self.per_tab.entry(event.tab_id).or_default() += 1;
        // Ids grow, so a new event goes last; one put back goes where its id says.
        let at = self.events.partition_point(|e| e.id < event.id);
        self.events.insert(at, event);
    }

    fn remove(&mut self, at: usize) -> Option<SessionEvent> {
        let event = self.events.remove(at)?;
        self.bytes -= event.cost();
        if let Some(tab) = event.tab_id
            && self.states.get(&tab) == Some(&event.id)
        {
            self.states.remove(&tab);
        }
        if let Some(n) = self.per_tab.get_mut(&event.tab_id) {
            *n -= 1;
            if *n == 0 {
                self.per_tab.remove(&event.tab_id);
            }
        }
        Some(event)
    }

    /// Drop events until within bounds: the oldest of the tab that holds the most.
    fn make_room(&mut self, max_events: usize, max_bytes: usize) {
        while self.events.len() > max_events || self.bytes > max_bytes && self.events.len() > 1 {
            let Some((&victim, _)) =
                self.per_tab.iter().max_by_key(|&(tab, n)| (*n, tab.is_none()))
            else {
                break;
            };
            let Some(at) = self.events.iter().position(|e| e.tab_id == victim) else { break };
            self.remove(at);
            *self.lost.entry(victim).or_default() += 1;
        }
    }

    /// The loss markers a wait with `filter` is to be told, taken out of `lost`.
    fn take_markers(
        &mut self,
        filter: &Filter,
        last_id: &mut u64,
        lane: usize,
    ) -> Vec<SessionEvent> {
        if !filter.hears_losses_of(lane) {
            return Vec::new();
        }
        let told: Vec<Option<i64>> =
            self.lost.keys().copied().filter(|tab| filter.passes_tab(*tab)).collect();
        told.into_iter()
            .filter_map(|tab| self.lost.remove(&tab).map(|count| (tab, count)))
            .map(|(tab, count)| {
                *last_id += 1;
                marker(*last_id, tab, count, lane)
            })
            .collect()
    }
}

/// The event that tells `count` events were lost.
fn marker(id: u64, tab: Option<i64>, count: u64, lane: usize) -> SessionEvent {
    let reason = match (lane, tab) {
        (PAGE_LANE, Some(tab)) => format!(
            "this session's queue of page events was full and tab {tab} held the most; its \
             {count} oldest were dropped (wait for events more often, or ask the page to push fewer)"
        ),
        (PAGE_LANE, None) => {
            format!("this session's queue of page events was full; {count} were dropped")
        }
        _ => format!(
            "this session's queue was full; its {count} oldest events (workers, messages, \
             operations) were dropped"
        ),
    };
    let mut marker = SessionEvent::new(
        kind::DROPPED,
        tab,
        &serde_json::json!({ "count": count, "reason": reason }),
    );
    marker.id = id;
    marker.at_ms = now_ms();
    marker.marker = true;
    marker
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

    /// A queue with other bounds for each lane (tests).
    pub fn with_limits(max_events: usize, max_bytes: usize) -> EventQueue {
        EventQueue {
            inner: Arc::new(Inner {
                state: Mutex::new(State::default()),
                arrived: Notify::new(),
                session_changed: Notify::new(),
                max_events: max_events.max(1),
                max_bytes,
            }),
        }
    }

    /// Append an event; returns its id in this queue. Never blocks for long and never fails:
    /// when its lane is full, the oldest events of whoever holds the most make room.
    pub fn push(&self, mut event: SessionEvent) -> u64 {
        event.at_ms = now_ms();
        self.append(event)
    }

    /// Queue again events a previous run of this session left untaken
    /// (`crate::session::saved`): new ids, their own times, in the order given.
    pub fn restore(&self, events: Vec<SessionEvent>) {
        for mut event in events {
            event.marker = false;
            self.append(event);
        }
    }

    fn append(&self, mut event: SessionEvent) -> u64 {
        let session = event.lane() == SESSION_LANE;
        let id = {
            let mut state = self.lock();
            state.last_id += 1;
            event.id = state.last_id;
            let lane = &mut state.lanes[event.lane()];
            lane.insert(event);
            lane.make_room(self.inner.max_events, self.inner.max_bytes);
            state.last_id
        };
        self.inner.arrived.notify_waiters();
        if session {
            self.inner.session_changed.notify_one();
        }
        id
    }

    /// Resolves at the next push. Call `enable()` on it (pinned) before looking at what the
    /// pushes change, so that one landing in between still wakes it (`crate::mcp` resources).
    pub fn arrivals(&self) -> tokio::sync::futures::Notified<'_> {
        self.inner.arrived.notified()
    }

    /// The lasting events waiting now (see [`SessionEvent::lasting`]), in order, and how many
    /// of the session lane's were lost and not yet told.
    pub fn lasting(&self) -> (Vec<SessionEvent>, u64) {
        let state = self.lock();
        let lane = &state.lanes[SESSION_LANE];
        let events = lane.events.iter().filter(|e| e.lasting()).cloned().collect();
        (events, lane.lost.values().sum())
    }

    /// Resolves once the session lane changed since the last call returned (at once if it
    /// did meanwhile): an event was queued there, taken, given back or dropped.
    pub async fn lasting_changed(&self) {
        self.inner.session_changed.notified().await;
    }

    /// A take or a give-back touched the session lane: tell whoever keeps it on disk.
    fn touched(&self, events: &[SessionEvent]) {
        if events.iter().any(|e| e.lane() == SESSION_LANE) {
            self.inner.session_changed.notify_one();
        }
    }

    /// Give back events a wait took but could not deliver: each returns to its place (by id),
    /// loss markers to their counts. Bounds apply as on push.
    pub fn put_back(&self, events: Vec<SessionEvent>) {
        if events.is_empty() {
            return;
        }
        self.touched(&events);
        {
            let mut state = self.lock();
            for event in events {
                if event.marker {
                    let lane = if event.tab_id.is_some() { PAGE_LANE } else { SESSION_LANE };
                    let count = marker_count(&event);
                    *state.lanes[lane].lost.entry(event.tab_id).or_default() += count;
                    continue;
                }
                state.lanes[event.lane()].insert(event);
            }
            for lane in &mut state.lanes {
                lane.make_room(self.inner.max_events, self.inner.max_bytes);
            }
        }
        self.inner.arrived.notify_waiters();
    }

    /// Forget queued events of the origins `allowed` refuses (the user revoked their site);
    /// returns how many went.
    pub fn forget_origins(&self, allowed: impl Fn(&str) -> bool) -> usize {
        let mut state = self.lock();
        let lane = &mut state.lanes[PAGE_LANE];
        let mut gone = 0;
        let mut at = 0;
        while at < lane.events.len() {
            if lane.events[at].from.origin.as_deref().is_some_and(|o| !allowed(o)) {
                lane.remove(at);
                gone += 1;
            } else {
                at += 1;
            }
        }
        gone
    }

    /// Events waiting now (loss markers not counted).
    pub fn len(&self) -> usize {
        self.lock().lanes.iter().map(|l| l.events.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Take the first event `filter` passes, waiting up to `timeout` for one. Events before it
    /// that it does not pass stay queued, in order. `None` on timeout. A loss comes first.
    pub async fn take_one(&self, filter: &Filter, timeout: Duration) -> Option<SessionEvent> {
        let taken = self.take_one_quietly(filter, timeout).await;
        self.touched(taken.as_slice());
        taken
    }

    /// Take every event `filter` passes, at once, waiting up to `timeout` for at least one.
    /// Loss markers first, then the events in arrival order. Empty on timeout.
    pub async fn drain(&self, filter: &Filter, timeout: Duration) -> Vec<SessionEvent> {
        let taken = self.drain_quietly(filter, timeout).await;
        self.touched(&taken);
        taken
    }

    /// [`EventQueue::take_one`], without telling whoever keeps the session lane on disk.
    async fn take_one_quietly(&self, filter: &Filter, timeout: Duration) -> Option<SessionEvent> {
        self.wait(timeout, |state| {
            let State { lanes, last_id } = state;
            for (i, lane) in lanes.iter_mut().enumerate() {
                let mut markers = lane.take_markers(filter, last_id, i);
                if let Some(first) = markers.pop() {
                    // One at a time: the others are told by the next waits.
                    for m in markers {
                        *lane.lost.entry(m.tab_id).or_default() += marker_count(&m);
                    }
                    return Some(first);
                }
            }
            let found: Vec<Option<usize>> =
                lanes.iter().map(|l| l.events.iter().position(|e| filter.passes(e))).collect();
            let (lane, at) = found
                .iter()
                .enumerate()
                .filter_map(|(lane, at)| at.map(|at| (lane, at)))
                .min_by_key(|&(lane, at)| lanes[lane].events[at].id)?;
            lanes[lane].remove(at)
        })
        .await
    }

    /// [`EventQueue::drain`], without telling whoever keeps the session lane on disk.
    async fn drain_quietly(&self, filter: &Filter, timeout: Duration) -> Vec<SessionEvent> {
        self.wait(timeout, |state| {
            let State { lanes, last_id } = state;
            let mut taken = Vec::new();
            for (i, lane) in lanes.iter_mut().enumerate() {
                taken.extend(lane.take_markers(filter, last_id, i));
            }
            let markers = taken.len();
            for lane in lanes.iter_mut() {
                let mut at = 0;
                while at < lane.events.len() {
                    if filter.passes(&lane.events[at]) {
                        taken.extend(lane.remove(at));
                    } else {
                        at += 1;
                    }
                }
            }
            taken[markers..].sort_by_key(|e| e.id);
            (!taken.is_empty()).then_some(taken)
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
        page_of(1, i)
    }

    fn page_of(tab: i64, i: u64) -> SessionEvent {
        let from = Provenance { origin: Some(format!("http://tab{tab}.test")), url: None };
        SessionEvent::new(kind::PAGE_EVENT, Some(tab), &json!({ "i": i })).from_page(from)
    }

    fn worker(name: &str) -> SessionEvent {
        SessionEvent::new(kind::WORKER_COMPLETE, None, &json!({ "worker_id": name }))
    }

    #[test]
    fn a_queued_event_reads_as_the_spec_shows_it_and_back() {
        let data = Arc::from(tabwire_proto::wire::raw(&json!({ "k": 1 })));
        let mut event = SessionEvent::from_raw(kind::PAGE_EVENT, Some(5), data)
            .from_host(42, Some(7))
            .from_page(Provenance {
                origin: Some("http://a.test".into()),
                url: Some("http://a.test/x".into()),
            });
        (event.id, event.at_ms) = (3, 9);
        let text = serde_json::to_string(&event).unwrap();
        assert_eq!(
            text,
            r#"{"id":3,"type":"page_event","tab_id":5,"origin":"http://a.test","url":"http://a.test/x","host_pid":42,"seq":7,"at_ms":9,"data":{"k":1}}"#
        );
        let back: SessionEvent = serde_json::from_str(&text).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
        let named: HashSet<String> =
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&text)
                .unwrap()
                .into_iter()
                .map(|(k, _)| k)
                .filter(|k| k != "data")
                .collect();
        assert_eq!(named, HashSet::from(SessionEvent::ENVELOPE.map(String::from)), "the envelope");
    }

    #[tokio::test]
    async fn a_flooding_tab_loses_only_its_own_events() {
        let q = EventQueue::with_limits(100, usize::MAX);
        q.push(worker("w1"));
        q.push(page_of(2, 0));
        for i in 0..100_000 {
            q.push(page_of(1, i));
        }
        q.push(page_of(2, 1));
        let done = q.take_one(&Filter::kinds(&[kind::WORKER_COMPLETE]), NOW).await.unwrap();
        assert_eq!(done.data_value()["worker_id"], "w1", "the worker's report survives");

        let got = q.drain(&Filter::kinds(&[kind::PAGE_EVENT]), NOW).await;
        let markers: Vec<_> = got.iter().filter(|e| e.kind == kind::DROPPED).collect();
        assert_eq!(markers.len(), 1);
        assert_eq!(markers[0].tab_id, Some(1), "only the flooding tab lost events");
        let tab2: Vec<u64> = got
            .iter()
            .filter(|e| e.tab_id == Some(2) && e.kind == kind::PAGE_EVENT)
            .map(|e| e.data_value()["i"].as_u64().unwrap())
            .collect();
        assert_eq!(tab2, [0, 1], "the quiet tab keeps every event");
        let tab1 = got.iter().filter(|e| e.tab_id == Some(1) && e.kind == kind::PAGE_EVENT).count();
        assert_eq!(markers[0].data_value()["count"].as_u64().unwrap() + tab1 as u64, 100_000);
    }

    #[tokio::test]
    async fn events_put_back_return_to_their_places_in_order() {
        let q = EventQueue::new();
        for i in 0..3 {
            q.push(page(i));
        }
        q.push(worker("w"));
        let taken = q.drain(&Filter::kinds(&[kind::PAGE_EVENT]), NOW).await;
        assert_eq!(taken.len(), 3);
        q.push(page(3));
        q.put_back(taken);
        let all = q.drain(&Filter::default(), NOW).await;
        let order: Vec<String> = all
            .iter()
            .map(|e| match e.kind.as_str() {
                kind::PAGE_EVENT => e.data_value()["i"].to_string(),
                other => other.to_owned(),
            })
            .collect();
        assert_eq!(order, ["0", "1", "2", kind::WORKER_COMPLETE, "3"]);
    }

    #[tokio::test]
    async fn a_revoked_origins_events_are_forgotten() {
        let q = EventQueue::new();
        q.push(page_of(1, 0));
        q.push(page_of(2, 0));
        q.push(worker("w"));
        assert_eq!(q.forget_origins(|o| o != "http://tab1.test"), 1);
        let left: Vec<Option<i64>> =
            q.drain(&Filter::default(), NOW).await.iter().map(|e| e.tab_id).collect();
        assert_eq!(left, [Some(2), None]);
    }

    #[tokio::test]
    async fn a_tabs_newer_state_supersedes_the_one_waiting_and_nothing_counts_as_lost() {
        let q = EventQueue::with_limits(100, usize::MAX);
        let state =
            |tab: i64, n: u64| SessionEvent::new(kind::STATE_UPDATE, Some(tab), &json!({ "n": n }));
        q.push(state(2, 0));
        for n in 0..10_000 {
            q.push(state(1, n));
            q.push(page_of(1, n).clone());
            let _ = q.drain(&Filter::kinds(&[kind::PAGE_EVENT]), NOW).await;
        }
        assert_eq!(q.len(), 2, "one state per tab waits");
        let states = q.drain(&Filter::kinds(&[kind::STATE_UPDATE]), NOW).await;
        let seen: Vec<(Option<i64>, u64)> =
            states.iter().map(|e| (e.tab_id, e.data_value()["n"].as_u64().unwrap())).collect();
        assert_eq!(seen, [(Some(2), 0), (Some(1), 9_999)], "each tab's newest, in arrival order");
        assert!(states.iter().all(|e| e.kind != kind::DROPPED), "superseded is not lost");

        // Given back after a newer one came, an older state is dropped; the newer stays.
        q.push(state(1, 1));
        let old = q.drain(&Filter::default(), NOW).await;
        q.push(state(1, 2));
        q.put_back(old);
        let left = q.drain(&Filter::default(), NOW).await;
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].data_value()["n"], 2);
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
        assert_eq!(got[0].tab_id, Some(1), "it names the tab that lost them");
        assert_eq!(got[0].data_value()["count"], 15);
        let kept: Vec<u64> =
            got[1..].iter().map(|e| e.data_value()["i"].as_u64().unwrap()).collect();
        assert_eq!(kept, (15..25).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn overflow_by_bytes() {
        let q = EventQueue::with_limits(usize::MAX, 2000);
        for i in 0..100 {
            q.push(page(i));
        }
        let got = q.drain(&Filter::default(), NOW).await;
        assert_eq!(got[0].kind, kind::DROPPED);
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
