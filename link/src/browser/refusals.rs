//! Refusals the browser just gave, repeated for a moment without asking it again.
//!
//! The extension refuses a call that names another live session's tab
//! (`tab_owned_by_other_session`, specs/tools.md, "Sessions and their tab groups"). Asked again
//! at once, it says the same; but each asking still costs its worker a message in and a message
//! out, and a session refused on every call, as fast as it can, took the worker from every other
//! session (docs/performance.md, "Soak"). So for [`HOLD`] after such a refusal, the same method
//! on the same tab is answered here with the browser's own words — and not before the hold
//! ends: a session that asks again within it is the flood, not a person or a model deciding
//! again, and answering it at once only let it spend the machine's CPU (its bridge's and its
//! client's) as fast as it could ask. Held so, a flood of N calls in flight is N per [`HOLD`].
//! Fail-closed: a tab the user hands to this session meanwhile can be used at most [`HOLD`]
//! later; nothing is ever allowed here that the browser did not allow.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use tabwire_proto::wire::code;

use crate::error::CallError;

/// How long a refusal is repeated without asking the browser.
pub const HOLD: Duration = Duration::from_millis(500);
/// Tabs remembered at most; the oldest refusals go first.
const MAX_TABS: usize = 256;

/// Per tab id: each method refused on it.
#[derive(Default)]
pub struct Refusals(Mutex<HashMap<i64, Vec<Refused>>>);

/// A method refused on a tab: when, and the browser's words.
struct Refused {
    method: String,
    at: Instant,
    error: CallError,
}

impl Refusals {
    /// The refusal to repeat for `method` on `tab`, if the browser gave one within [`HOLD`],
    /// and when the hold ends: the time to give it.
    pub fn repeat(&self, method: &str, tab: Option<i64>) -> Option<(CallError, Instant)> {
        let held = self.0.lock().expect("refusals poisoned");
        let by_method = held.get(&tab?)?;
        let refused = by_method.iter().find(|r| r.method == method)?;
        (refused.at.elapsed() < HOLD).then(|| (refused.error.clone(), refused.at + HOLD))
    }

    /// Remember `error` if it is such a refusal of `method` on `tab`.
    pub fn note(&self, method: &str, tab: Option<i64>, error: &CallError) {
        let Some(tab) = tab.filter(|_| error.is(code::TAB_OWNED_BY_OTHER_SESSION)) else { return };
        let mut held = self.0.lock().expect("refusals poisoned");
        held.retain(|_, v| {
            v.retain(|r| r.at.elapsed() < HOLD);
            !v.is_empty()
        });
        if held.len() >= MAX_TABS && !held.contains_key(&tab) {
            return;
        }
        let by_method = held.entry(tab).or_default();
        by_method.retain(|r| r.method != method);
        by_method.push(Refused {
            method: method.to_owned(),
            at: Instant::now(),
            error: error.clone(),
        });
    }
}

/// The `tab_id` a request's params name, if any.
pub fn tab_of(params: &RawValue) -> Option<i64> {
    #[derive(Deserialize)]
    struct Tab {
        tab_id: Option<i64>,
    }
    serde_json::from_str::<Tab>(params.get()).ok()?.tab_id
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn a_refusal_is_repeated_for_the_same_method_and_tab_only_and_only_for_a_moment() {
        let r = Refusals::default();
        let owned = CallError::new(code::TAB_OWNED_BY_OTHER_SESSION, "tab 7 is session b's");
        let on7 = tab_of(&raw(r#"{"tab_id":7,"type":"x","payload":{"tab_id":8}}"#));
        assert_eq!(on7, Some(7));
        assert_eq!(r.repeat("page.command", on7), None);
        r.note("page.command", on7, &owned);
        let (again, until) = r.repeat("page.command", on7).unwrap();
        assert_eq!(again, owned);
        assert!(
            until > Instant::now() && until <= Instant::now() + HOLD,
            "given when the hold ends"
        );
        assert!(r.repeat("dom.read", on7).is_none(), "another method asks the browser");
        assert!(r.repeat("page.command", Some(8)).is_none(), "another tab");
        assert!(r.repeat("tabs.list", tab_of(&raw("null"))).is_none(), "no tab named");
        std::thread::sleep(HOLD);
        assert!(r.repeat("page.command", on7).is_none(), "asked again after the hold");
    }

    #[test]
    fn other_failures_are_never_repeated() {
        let r = Refusals::default();
        r.note("page.command", Some(7), &CallError::new(code::TIMEOUT, "slow"));
        assert!(r.repeat("page.command", Some(7)).is_none());
    }
}
