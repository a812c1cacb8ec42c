//! `tabs.*`: list, open, close, activate and navigate the browser's tabs.

use std::time::Duration;

use schemars::JsonSchema;
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

use super::methods;
use crate::limits::{PAGE_CALL, QUICK_CALL};

/// A browser tab, as the extension reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tab {
    /// The tab's id: pass it to the other tab tools. Stable while the tab is open.
    pub id: i64,
    /// The id of the window the tab is in.
    #[serde(default)]
    pub window_id: i64,
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub title: String,
    /// Whether this is the selected tab of its window.
    #[serde(default)]
    pub active: bool,
    /// `loading` or `complete`.
    #[serde(default)]
    pub status: String,
    /// Whether the tab's window is the focused window.
    #[serde(default)]
    pub window_focused: bool,
    /// Whether the tab shows a site the user allowed tabwire on. On other sites `url` is only
    /// the origin and path and `title` is empty: tabwire does not read those pages.
    #[serde(default)]
    pub allowed: bool,
    /// Whether the tab is this session's: in its tab group (it opened it, a page opened it from
    /// one of its tabs, or the user dragged it there). False for the user's own tabs, which a
    /// call may still name.
    #[serde(default)]
    pub shared: bool,
    /// The title of the tabwire tab group it is in: this session's name, or a name and
    /// "(done)" for a session that ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// When `navigate` (and `open_tab`) return.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Wait {
    /// Once the page has finished loading (tab status `complete`).
    #[default]
    Load,
    /// At once, while the page may still be loading.
    None,
}

impl Wait {
    /// How long `tabs.open` and `tabs.navigate` may take with this wait.
    pub fn timeout(self) -> Duration {
        match self {
            Wait::Load => PAGE_CALL,
            Wait::None => QUICK_CALL,
        }
    }
}

/// Which tab (`tabs.close`, `tabs.activate`).
#[derive(Debug, Clone, Serialize)]
pub struct TabRef {
    pub tab_id: i64,
}

/// `tabs.open`'s params.
#[derive(Debug, Clone, Serialize)]
pub struct OpenTab {
    pub url: String,
    pub active: bool,
    pub wait: Wait,
}

/// `tabs.give`'s params: the tab, and the worker (its name or session id) that gets it.
#[derive(Debug, Clone, Serialize)]
pub struct GiveTab {
    pub tab_id: i64,
    pub to: String,
}

/// What `tabs.give` did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Given {
    /// The tab given.
    pub tab_id: i64,
    /// The name of the worker's tab group it is in now.
    pub group: String,
}

/// `tabs.navigate`'s params.
#[derive(Debug, Clone, Serialize)]
pub struct NavigateTab {
    pub tab_id: i64,
    pub url: String,
    pub wait: Wait,
}

methods! {
    /// Every tab of every window.
    TabsList = "tabs.list": () => Vec<Tab>, QUICK_CALL;
    /// Open a tab; with `wait: load` the answer comes once it has loaded (call it within
    /// [`Wait::timeout`]).
    TabsOpen = "tabs.open": OpenTab => Tab, PAGE_CALL;
    /// Close a tab.
    TabsClose = "tabs.close": TabRef => IgnoredAny, QUICK_CALL;
    /// Select a tab and focus its window.
    TabsActivate = "tabs.activate": TabRef => Tab, QUICK_CALL;
    /// Move a tab of this session's into the tab group of one of its running workers.
    TabsGive = "tabs.give": GiveTab => Given, QUICK_CALL;
    /// Load another URL in a tab; like [`TabsOpen`], waits by `wait`.
    TabsNavigate = "tabs.navigate": NavigateTab => Tab, PAGE_CALL;
}
