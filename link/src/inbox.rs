//! Where events from the browsers go. A connection's reader hands each event here the moment it
//! is read, and this hands it to the one part of the bridge that owns it: a page's state goes
//! into the state cache, a closed or reloaded tab leaves it, declared commands go to their
//! registry, an event of a kind a feature registered a [`Sink`] for goes to that sink (a
//! milestone to this session's operations), and the rest joins the session's queue in arrival
//! order. One path, called straight from the reader (as the host's relay has one
//! `Input` path): no channel on the way, so a burst cannot overrun or reorder anything.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};

use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;
use tabwire_proto::sites::{self, Sites};
use tabwire_proto::wire::{self, Event};

use crate::commands::registry::CommandRegistry;
use crate::commands::{DeclaredCommand, PageCommands};
use crate::events::{EventQueue, SessionEvent, kind};
use crate::identity::BrowserInfo;
use crate::state_cache::StateCache;

/// Shared by the core and every connection's reader. Cheap to clone.
#[derive(Clone, Default)]
pub struct Inbox {
    pub queue: EventQueue,
    pub cache: StateCache,
    /// Each browser's allowed sites, as its extension last announced them (by profile key).
    pub sites: Arc<Mutex<HashMap<String, Vec<String>>>>,
    /// The pages' declared commands (`commands` events).
    pub commands: CommandRegistry,
    /// The features' sinks, by the kind of event each takes ([`Inbox::register`]).
    sinks: Arc<RwLock<HashMap<&'static str, Weak<dyn Sink>>>>,
    /// The number of the last frame the connections read (see [`Inbox::arrival`]).
    arrivals: Arc<AtomicU64>,
    /// The session this core is, once it is one: each request carries it (`request.session`).
    pub caller: Arc<OnceLock<wire::SessionTag>>,
}

/// A feature's share of the events: those of the kind it registered for ([`Inbox::register`]:
/// the operations take `operation`, the workers `worker_complete`), and word of the browsers
/// going and coming back, for what the feature has in flight there. A trait, so that the inbox
/// (held by the browsers' readers) need not know the features (which hold the core); held
/// weakly, as the features hold the core that holds this inbox.
pub trait Sink: Send + Sync {
    /// The data of an event of the kind this sink is registered for, as it arrives: from a
    /// browser, or from another session, a worker or this session (`Core::receive`).
    fn event(self: Arc<Self>, data: &RawValue);
    /// `from` said it is going away: what is unfinished there cannot finish.
    fn browser_gone(self: Arc<Self>, from: &BrowserInfo) {
        let _ = from;
    }
    /// `from` attached (at start, or with a new host after the old one died).
    fn browser_back(self: Arc<Self>, from: &BrowserInfo) {
        let _ = from;
    }
}

/// What a `commands` event's data says.
#[derive(Deserialize)]
struct Declared {
    #[serde(default)]
    app: Option<String>,
    commands: Vec<DeclaredCommand>,
}

/// What a `tab` event's data says (`specs/protocol.md`, "Events the extension sends").
#[derive(Deserialize)]
struct TabChange {
    kind: String,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    status: Option<String>,
}

/// What the host's `browser_disconnected` event says.
#[derive(Deserialize)]
struct Disconnected {
    #[serde(default)]
    reason: Option<String>,
}

impl Inbox {
    /// Hand the events of `kind` to `sink` from now on. The first live sink of a kind stays: a
    /// core has one session, and the session one of each feature.
    pub fn register(&self, kind: &'static str, sink: Weak<dyn Sink>) {
        let mut sinks = self.sinks.write().expect("sinks poisoned");
        if sinks.get(kind).is_some_and(|s| s.strong_count() > 0) {
            tracing::warn!(
                kind,
                "this core's {kind} events already have a sink; ignoring a second"
            );
            return;
        }
        sinks.insert(kind, sink);
    }

    /// The sink of `kind`, while the feature that registered it lives.
    pub fn sink(&self, kind: &str) -> Option<Arc<dyn Sink>> {
        self.sinks.read().expect("sinks poisoned").get(kind).and_then(Weak::upgrade)
    }

    /// Every live sink, to tell of a browser going or coming back.
    fn sinks(&self) -> Vec<Arc<dyn Sink>> {
        self.sinks.read().expect("sinks poisoned").values().filter_map(Weak::upgrade).collect()
    }

    /// The next arrival number: every frame the connections of this inbox read gets one, and
    /// what arrived later has the larger. The state cache uses it to keep an older answer from
    /// replacing a newer update that the reader stored while the answer was on its way.
    pub fn arrival(&self) -> u64 {
        self.arrivals.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// One event from the browser `from`; `arrival` numbers it among every frame this inbox's
    /// connections have read. Returns why the browser went away, when the event says it did.
    pub fn event(&self, from: &BrowserInfo, arrival: u64, event: Event) -> Option<String> {
        let Event { event: name, tab_id, from: page, data, seq, owner } = event;
        let mut data: Arc<RawValue> = Arc::from(data);
        let key = from.key();
        // A tab in another live session's group: this session neither hears of it nor keeps
        // what it knew of the page there (its state, its commands), as if the tab were gone
        // (specs/tools.md, "Sessions and their tab groups"). A bridge of no session (the CLI)
        // hears every tab.
        if let (Some(owner), Some(me), Some(tab)) = (&owner, self.caller.get(), tab_id)
            && *owner != me.id
        {
            self.commands.tab_removed(&key, tab);
            self.cache.tab_removed(&key, tab, arrival);
            return None;
        }
        if wire::nesting_depth(data.get()) > wire::MAX_DEPTH {
            // The extension refuses these; one that slips through must not poison a wait
            // (a value too deep to parse would fail the whole reply).
            tracing::warn!(event = %name, tab_id, "an event nested too deep was replaced");
            data = Arc::from(wire::raw(&json!({
                "count": 1,
                "reason": format!("a {name} nested deeper than {} levels was refused", wire::MAX_DEPTH),
            })));
            let marker = SessionEvent::from_raw(kind::DROPPED, tab_id, data);
            self.queue.push(marker.from_host(from.host_pid, seq).from_page(page));
            return None;
        }
        if let Some(sink) = self.sink(&name) {
            sink.event(&data);
        }
        match (name.as_str(), tab_id) {
            ("browser_disconnected", _) => {
                // The connection is about to close; the registry queues the `browser` event then.
                for sink in self.sinks() {
                    sink.browser_gone(from);
                }
                let said: Option<Disconnected> = serde_json::from_str(data.get()).ok();
                return Some(said.and_then(|d| d.reason).unwrap_or_else(|| name.clone()));
            }
            (kind::OPERATION, _) => {
                // Raw milestones go to every bridge, and to the sink of this session's
                // operations above; those queue the ones they applied, so only this session's
                // appear.
                return None;
            }
            (sites::EVENT, _) => {
                // The user changed where tabwire may reach: what revoked sites said is forgotten.
                if let Some(sites) = Sites::from_event(&data) {
                    let cached = self.cache.forget_origins(&key, |o| sites.allows(o));
                    let queued = self.queue.forget_origins(|o| sites.allows(o));
                    self.commands.forget_origins(&key, |o| sites.allows(o));
                    tracing::info!(cached, queued, "the allowed sites changed");
                    let list = sites.patterns().map(ToString::to_string).collect();
                    self.sites.lock().expect("sites poisoned").insert(key, list);
                }
                return None;
            }
            ("commands", Some(tab)) => {
                // Kept for list_commands and the page tools; not the assistant's to wait for.
                match serde_json::from_str::<Declared>(data.get()) {
                    Ok(d) => {
                        let commands = PageCommands {
                            tab_id: tab,
                            origin: page.origin,
                            url: page.url,
                            app: d.app,
                            commands: d.commands,
                        };
                        self.commands.put(&key, commands);
                    }
                    Err(e) => {
                        tracing::warn!(tab, error = %e, "a commands event this bridge cannot read")
                    }
                }
                return None;
            }
            (kind::STATE_UPDATE, Some(tab)) => {
                self.cache.put(&key, tab, data.clone(), page.clone(), arrival);
            }
            (kind::TAB, Some(tab)) => match serde_json::from_str::<TabChange>(data.get()) {
                Ok(change) if change.kind == "removed" => {
                    self.commands.tab_removed(&key, tab);
                    self.cache.tab_removed(&key, tab, arrival)
                }
                Ok(change) => self.cache.tab_updated(
                    &key,
                    tab,
                    change.url.as_deref(),
                    change.status.as_deref(),
                    arrival,
                ),
                Err(e) => tracing::warn!(tab, error = %e, "a tab event this bridge cannot read"),
            },
            _ => {}
        }
        self.queue.push(
            SessionEvent::from_raw(&name, tab_id, data)
                .from_host(from.host_pid, seq)
                .from_page(page),
        );
        None
    }

    /// A browser was attached.
    pub fn connected(&self, from: &BrowserInfo) {
        for sink in self.sinks() {
            sink.browser_back(from);
        }
        self.queue.push(SessionEvent::new(
            kind::BROWSER,
            None,
            &json!({
                "kind": "connected",
                "browser": from.browser,
                "profile": from.profile,
                "host_pid": from.host_pid,
                "extension_version": from.extension_version,
            }),
        ));
    }

    /// A browser went away (closed, its extension reloaded, its host killed).
    pub fn disconnected(&self, from: &BrowserInfo, reason: &str) {
        self.commands.forget_browser(&from.key());
        self.queue.push(SessionEvent::new(
            kind::BROWSER,
            None,
            &json!({
                "kind": "disconnected",
                "browser": from.browser,
                "profile": from.profile,
                "host_pid": from.host_pid,
                "reason": reason,
            }),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink that keeps what it heard.
    #[derive(Default)]
    struct Heard(Mutex<Vec<String>>);

    impl Sink for Heard {
        fn event(self: Arc<Self>, data: &RawValue) {
            self.0.lock().unwrap().push(data.get().to_owned());
        }
    }

    impl Heard {
        fn said(&self) -> Vec<String> {
            self.0.lock().unwrap().clone()
        }
    }

    #[test]
    fn the_first_live_sink_of_a_kind_hears_it_and_a_dropped_one_is_replaced() {
        let inbox = Inbox::default();
        let first = Arc::new(Heard::default());
        let second = Arc::new(Heard::default());
        let weak = |sink: &Arc<Heard>| -> Weak<dyn Sink> { Arc::downgrade(sink) as Weak<dyn Sink> };
        inbox.register(kind::WORKER_COMPLETE, weak(&first));
        inbox.register(kind::WORKER_COMPLETE, weak(&second));
        inbox.sink(kind::WORKER_COMPLETE).unwrap().event(&wire::raw(&1));
        assert_eq!(first.said(), ["1"]);
        assert!(second.said().is_empty(), "the first live sink stays");
        assert!(inbox.sink(kind::OPERATION).is_none(), "a kind no feature took has no sink");
        drop(first);
        assert!(inbox.sink(kind::WORKER_COMPLETE).is_none(), "held weakly");
        inbox.register(kind::WORKER_COMPLETE, weak(&second));
        inbox.sink(kind::WORKER_COMPLETE).unwrap().event(&wire::raw(&2));
        assert_eq!(second.said(), ["2"]);
    }
}
