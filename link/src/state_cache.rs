//! The last known state of each page, so `get_state` can answer without asking the page.
//!
//! Fed by the pages' `state_update` events and by the answers to `page.get_state`. Both travel
//! on one connection, but an answer is written here by the task that asked, a moment after the
//! connection's reader handed it over — by then the reader may have stored a newer
//! `state_update`. So every write carries its *arrival* number (the reader numbers each frame it
//! receives, process-wide), and a write older than what a tab already has is ignored.
//!
//! An entry belongs to one document: when the tab is closed or starts loading another document
//! it is forgotten, and the arrival number of that moment is kept so a late answer from the old
//! document cannot bring it back.
//!
//! Keyed by the browser's profile id (stable while the browser runs, unlike its host's pid, which
//! changes when the host restarts) and the tab id.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::value::RawValue;
use tabwire_proto::wire::Provenance;

/// One tab's cached state.
#[derive(Debug, Clone)]
pub struct Cached {
    /// The state as JSON text, shared with the event that carried it.
    pub state: Arc<RawValue>,
    /// The page that published it.
    pub from: Provenance,
    /// When it arrived, in milliseconds since the Unix epoch.
    pub fetched_at_ms: u64,
    /// When it arrived, for its age.
    pub at: Instant,
}

#[derive(Default)]
struct Slot {
    /// Arrival number of the last write or forget.
    arrival: u64,
    entry: Option<Cached>,
    /// The tab's document, as far as tab events told: its url and load status.
    url: Option<String>,
    loading: bool,
}

/// Cheap to clone; clones share the cache.
#[derive(Clone, Default)]
pub struct StateCache {
    slots: Arc<Mutex<HashMap<(String, i64), Slot>>>,
}

impl StateCache {
    /// The cached state of a tab, if any.
    pub fn get(&self, browser: &str, tab_id: i64) -> Option<Cached> {
        let slots = self.slots.lock().expect("state cache poisoned");
        slots.get(&(browser.to_owned(), tab_id)).and_then(|s| s.entry.clone())
    }

    /// Every tab of `browser` that has a state now, with when it arrived, in tab order.
    pub fn tabs(&self, browser: &str) -> Vec<(i64, Cached)> {
        let slots = self.slots.lock().expect("state cache poisoned");
        let mut tabs: Vec<(i64, Cached)> = slots
            .iter()
            .filter(|((b, _), _)| b == browser)
            .filter_map(|((_, tab), slot)| slot.entry.clone().map(|c| (*tab, c)))
            .collect();
        tabs.sort_by_key(|(tab, _)| *tab);
        tabs
    }

    /// Store a state that arrived as frame number `arrival`; the time it is stored as having
    /// arrived (milliseconds since the Unix epoch), which a fresh read reports too, so that the
    /// cache's copy and the read say the same. None (and nothing stored) when the tab already
    /// has something that arrived later.
    pub fn put(
        &self,
        browser: &str,
        tab_id: i64,
        state: Arc<RawValue>,
        from: Provenance,
        arrival: u64,
    ) -> Option<u64> {
        let mut slots = self.slots.lock().expect("state cache poisoned");
        let slot = slots.entry((browser.to_owned(), tab_id)).or_default();
        if arrival < slot.arrival {
            return None;
        }
        slot.arrival = arrival;
        let fetched_at_ms = tabwire_proto::runtime_dir::now_ms();
        slot.entry = Some(Cached { state, from, fetched_at_ms, at: Instant::now() });
        Some(fetched_at_ms)
    }

    /// The tab was closed: forget it.
    pub fn tab_removed(&self, browser: &str, tab_id: i64, arrival: u64) {
        let mut slots = self.slots.lock().expect("state cache poisoned");
        // Kept as a tombstone (a few bytes per closed tab) so a late answer stays out.
        let slot = slots.entry((browser.to_owned(), tab_id)).or_default();
        slot.arrival = slot.arrival.max(arrival);
        slot.entry = None;
        slot.url = None;
        slot.loading = false;
    }

    /// A tab event told the tab's url and status. The state is forgotten when the tab starts
    /// loading (a new document) or its url changes to another document (not just its `#…`).
    pub fn tab_updated(
        &self,
        browser: &str,
        tab_id: i64,
        url: Option<&str>,
        status: Option<&str>,
        arrival: u64,
    ) {
        let mut slots = self.slots.lock().expect("state cache poisoned");
        let slot = slots.entry((browser.to_owned(), tab_id)).or_default();
        let loading = status == Some("loading");
        let started_loading = loading && !slot.loading;
        let new_document = match (url, slot.url.as_deref()) {
            (Some(new), Some(old)) => document(new) != document(old),
            _ => false,
        };
        if let Some(url) = url {
            slot.url = Some(url.to_owned());
        }
        if status.is_some() {
            slot.loading = loading;
        }
        if started_loading || new_document {
            if slot.entry.take().is_some() {
                tracing::debug!(tab_id, "the tab loads another document: its state is dropped");
            }
            slot.arrival = slot.arrival.max(arrival);
        }
    }

    /// Forget the states of one browser's pages whose origin `allowed` refuses (the user
    /// revoked their site), and those of unknown origin; returns how many went.
    pub fn forget_origins(&self, browser: &str, allowed: impl Fn(&str) -> bool) -> usize {
        let mut slots = self.slots.lock().expect("state cache poisoned");
        let mut gone = 0;
        for (_, slot) in slots.iter_mut().filter(|((b, _), _)| b == browser) {
            let keep =
                slot.entry.as_ref().is_none_or(|c| c.from.origin.as_deref().is_some_and(&allowed));
            if !keep {
                slot.entry = None;
                gone += 1;
            }
        }
        gone
    }

    /// Forget every tab of one browser (tests, and a browser whose profile went away).
    pub fn forget_browser(&self, browser: &str) {
        self.slots.lock().expect("state cache poisoned").retain(|(b, _), _| b != browser);
    }
}

/// The url without its fragment: what names the document.
fn document(url: &str) -> &str {
    url.split('#').next().unwrap_or(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Arc<RawValue> {
        Arc::from(RawValue::from_string(s.to_owned()).unwrap())
    }

    fn from(origin: &str) -> Provenance {
        Provenance { origin: Some(origin.to_owned()), url: Some(format!("{origin}/")) }
    }

    #[test]
    fn revoking_a_site_forgets_its_states_and_keeps_the_others() {
        let cache = StateCache::default();
        cache.put("p", 1, raw("1"), from("http://a"), 1);
        cache.put("p", 2, raw("2"), from("http://b"), 2);
        cache.put("q", 3, raw("3"), from("http://a"), 3);
        assert_eq!(cache.forget_origins("p", |o| o == "http://b"), 1);
        assert!(cache.get("p", 1).is_none());
        assert!(cache.get("p", 2).is_some());
        assert!(cache.get("q", 3).is_some(), "another browser has its own list");
    }

    #[test]
    fn an_older_answer_does_not_replace_a_newer_update() {
        let cache = StateCache::default();
        let stored = cache.put("p", 1, raw("2"), from("http://a"), 20).expect("stored");
        assert_eq!(cache.get("p", 1).unwrap().fetched_at_ms, stored, "one time, for both");
        assert!(cache.put("p", 1, raw("1"), from("http://a"), 10).is_none());
        assert_eq!(cache.get("p", 1).unwrap().state.get(), "2");
        assert!(cache.get("p", 2).is_none());
        assert!(cache.get("q", 1).is_none());
    }

    #[test]
    fn closing_or_loading_another_document_forgets_the_state() {
        let cache = StateCache::default();
        cache.tab_updated("p", 1, Some("http://a/x"), Some("complete"), 1);
        cache.put("p", 1, raw("1"), from("http://a"), 2);
        cache.tab_updated("p", 1, Some("http://a/x#frag"), Some("complete"), 3);
        assert!(cache.get("p", 1).is_some(), "a fragment change keeps the document");
        cache.tab_updated("p", 1, Some("http://a/x"), Some("loading"), 4);
        assert!(cache.get("p", 1).is_none(), "a reload is a new document");
        cache.put("p", 1, raw("2"), from("http://a"), 5);
        cache.tab_updated("p", 1, Some("http://a/x"), Some("loading"), 6);
        assert!(cache.get("p", 1).is_some(), "a title change while loading keeps the new state");
        cache.tab_updated("p", 1, Some("http://a/x"), Some("complete"), 7);
        cache.tab_updated("p", 1, Some("http://a/y"), Some("complete"), 8);
        assert!(cache.get("p", 1).is_none(), "another url is another document");
        cache.put("p", 1, raw("3"), from("http://a"), 9);
        cache.tab_removed("p", 1, 10);
        assert!(cache.get("p", 1).is_none());
        assert!(
            cache.put("p", 1, raw("\"late\""), from("http://a"), 9).is_none(),
            "a late answer does not bring it back"
        );
    }
}
