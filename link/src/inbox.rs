//! Where events from the browsers go. A connection's reader hands each event here the moment it
//! is read, and this hands it to the one part of the bridge that owns it: a page's state goes
//! into the state cache, a closed or reloaded tab leaves it, a milestone goes to this session's
//! operations, declared commands to their registry, and the rest joins the session's queue in
//! arrival order. One path, called straight from the reader (as the host's relay has one
//! `Input` path): no channel on the way, so a burst cannot overrun or reorder anything.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;
use tabwire_proto::sites::{self, Sites};
use tabwire_proto::wire::{self, Event};

use crate::browser::BrowserInfo;
use crate::commands::registry::CommandRegistry;
use crate::commands::{DeclaredCommand, PageCommands};
use crate::events::{EventQueue, SessionEvent, kind};
use crate::state_cache::{Provenance, StateCache};

/// Shared by the core and every connection's reader. Cheap to clone.
#[derive(Clone, Default)]
pub struct Inbox {
    pub queue: EventQueue,
    pub cache: StateCache,
    /// Each browser's allowed sites, as its extension last announced them (by profile key).
    pub sites: Arc<Mutex<HashMap<String, Vec<String>>>>,
    /// The pages' declared commands (`commands` events).
    pub commands: CommandRegistry,
    /// This session's operations, once started: they take the `operation` events.
    operations: Arc<OnceLock<Weak<dyn OperationSink>>>,
    /// The number of the last frame the connections read (see [`Inbox::arrival`]).
    arrivals: Arc<AtomicU64>,
    /// The session this core is, once it is one: each request carries it (`request.session`).
    pub caller: Arc<OnceLock<wire::SessionTag>>,
}

/// What takes `operation` events: this session's operations (`crate::operations`). A trait, so
/// that the inbox (held by the browsers' readers) need not know the operations (which hold the
/// core); held weakly, as the operations hold the core that holds this inbox.
pub trait OperationSink: Send + Sync {
    /// An `operation` event's data: a milestone, maybe of an operation this session follows.
    fn milestone(self: Arc<Self>, data: &RawValue);
    /// `from` said it is going away: its unfinished operations cannot finish.
    fn browser_gone(self: Arc<Self>, from: &BrowserInfo);
    /// `from` attached (at start, or with a new host after the old one died).
    fn browser_back(self: Arc<Self>, from: &BrowserInfo);
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
    /// Hand `operation` events to `sink` from now on. The first sink stays: a core has one
    /// session, and the session one set of operations.
    pub fn follow_operations(&self, sink: Weak<dyn OperationSink>) {
        if self.operations.set(sink).is_err() {
            tracing::warn!("this core's operations are already followed; ignoring a second set");
        }
    }

    fn operations(&self) -> Option<Arc<dyn OperationSink>> {
        self.operations.get().and_then(Weak::upgrade)
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
        let Event { event: name, tab_id, origin, url, data, seq, owner } = event;
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
            self.queue.push(marker.from_host(from.host_pid, seq).from_page(origin, url));
            return None;
        }
        match (name.as_str(), tab_id) {
            ("browser_disconnected", _) => {
                // The connection is about to close; the registry queues the `browser` event then.
                if let Some(operations) = self.operations() {
                    operations.browser_gone(from);
                }
                let said: Option<Disconnected> = serde_json::from_str(data.get()).ok();
                return Some(said.and_then(|d| d.reason).unwrap_or_else(|| name.clone()));
            }
            (kind::OPERATION, _) => {
                // Raw milestones go to every bridge; the operations that own them queue them
                // once applied, so only this session's appear.
                if let Some(operations) = self.operations() {
                    operations.milestone(&data);
                }
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
                        let page = PageCommands {
                            tab_id: tab,
                            origin,
                            url,
                            app: d.app,
                            commands: d.commands,
                        };
                        self.commands.put(&key, page);
                    }
                    Err(e) => {
                        tracing::warn!(tab, error = %e, "a commands event this bridge cannot read")
                    }
                }
                return None;
            }
            (kind::STATE_UPDATE, Some(tab)) => {
                let origin = Provenance { origin: origin.clone(), url: url.clone() };
                self.cache.put(&key, tab, data.clone(), origin, arrival);
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
                .from_page(origin, url),
        );
        None
    }

    /// A browser was attached.
    pub fn connected(&self, from: &BrowserInfo) {
        if let Some(operations) = self.operations() {
            operations.browser_back(from);
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
