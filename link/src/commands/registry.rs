//! The declared commands of every page, per browser and tab, as the extension announced them
//! (`commands` events, and the answers to `page.commands`). A tab leaves when its page goes
//! (the worker announces an empty list), the tab closes, its site is revoked or its browser
//! goes away. Every change bumps a counter that page tools watch to send `tools/list_changed`.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use super::PageCommands;

/// Cheap to clone; clones share the registry.
#[derive(Clone)]
pub struct CommandRegistry {
    /// (browser key, tab id) → the page's commands; only pages that declared some.
    pages: Arc<Mutex<BTreeMap<(String, i64), PageCommands>>>,
    /// The browsers whose whole list was asked for at least once (`page.commands`).
    listed: Arc<Mutex<HashSet<String>>>,
    changed: watch::Sender<u64>,
}

impl Default for CommandRegistry {
    fn default() -> Self {
        CommandRegistry {
            pages: Arc::default(),
            listed: Arc::default(),
            changed: watch::channel(0).0,
        }
    }
}

impl CommandRegistry {
    /// A tab's page declared `page` (an empty list: it has none now, or it went away).
    pub fn put(&self, browser: &str, page: PageCommands) {
        let key = (browser.to_owned(), page.tab_id);
        let mut pages = self.pages.lock().expect("commands poisoned");
        let changed = if page.commands.is_empty() {
            pages.remove(&key).is_some()
        } else if pages.get(&key) != Some(&page) {
            pages.insert(key, page);
            true
        } else {
            false
        };
        drop(pages);
        if changed {
            self.bump();
        }
    }

    /// Every page of `browser`, as the extension listed them just now.
    pub fn replace_browser(&self, browser: &str, listed: &[PageCommands]) {
        let mut pages = self.pages.lock().expect("commands poisoned");
        let before: Vec<_> =
            pages.iter().filter(|((b, _), _)| b == browser).map(|(_, p)| p.clone()).collect();
        pages.retain(|(b, _), _| b != browser);
        for page in listed.iter().filter(|p| !p.commands.is_empty()) {
            pages.insert((browser.to_owned(), page.tab_id), page.clone());
        }
        let after: Vec<_> =
            pages.iter().filter(|((b, _), _)| b == browser).map(|(_, p)| p.clone()).collect();
        drop(pages);
        self.listed.lock().expect("commands poisoned").insert(browser.to_owned());
        if before != after {
            self.bump();
        }
    }

    /// Whether `browser`'s whole list was asked for since it attached.
    pub fn was_listed(&self, browser: &str) -> bool {
        self.listed.lock().expect("commands poisoned").contains(browser)
    }

    /// The tab was closed.
    pub fn tab_removed(&self, browser: &str, tab_id: i64) {
        let removed =
            self.pages.lock().expect("commands poisoned").remove(&(browser.to_owned(), tab_id));
        if removed.is_some() {
            self.bump();
        }
    }

    /// The browser went away: its pages' commands go with it.
    pub fn forget_browser(&self, browser: &str) {
        self.listed.lock().expect("commands poisoned").remove(browser);
        let mut pages = self.pages.lock().expect("commands poisoned");
        let before = pages.len();
        pages.retain(|(b, _), _| b != browser);
        let changed = pages.len() != before;
        drop(pages);
        if changed {
            self.bump();
        }
    }

    /// The user changed the allowed sites: pages of origins no longer allowed are forgotten.
    pub fn forget_origins(&self, browser: &str, allowed: impl Fn(&str) -> bool) {
        let mut pages = self.pages.lock().expect("commands poisoned");
        let before = pages.len();
        pages.retain(|(b, _), p| b != browser || p.origin.as_deref().is_some_and(&allowed));
        let changed = pages.len() != before;
        drop(pages);
        if changed {
            self.bump();
        }
    }

    /// The pages of `browser` (all browsers with `None`), by tab.
    pub fn pages(&self, browser: Option<&str>) -> Vec<(String, PageCommands)> {
        let pages = self.pages.lock().expect("commands poisoned");
        pages
            .iter()
            .filter(|((b, _), _)| browser.is_none_or(|want| b == want))
            .map(|((b, _), p)| (b.clone(), p.clone()))
            .collect()
    }

    /// One tab's page, if it declared commands.
    pub fn page(&self, browser: &str, tab_id: i64) -> Option<PageCommands> {
        self.pages.lock().expect("commands poisoned").get(&(browser.to_owned(), tab_id)).cloned()
    }

    /// A receiver that sees a new number after each change.
    pub fn watch(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n += 1);
    }
}
