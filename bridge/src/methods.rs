//! The extension's methods (`specs/protocol.md`, "Methods the extension answers"), typed.
//! MCP tools and CLI commands call these; none of them builds a request by hand.

use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::core::Core;
use crate::error::CallError;

use crate::limits::{PAGE_CALL as SLOW, QUICK_CALL as QUICK};

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
    fn timeout(self) -> Duration {
        match self {
            Wait::Load => SLOW,
            Wait::None => QUICK,
        }
    }
}

impl Core {
    pub async fn ping(&self, browser: Option<&str>) -> Result<Value, CallError> {
        self.call(browser, "ping", Value::Null, QUICK).await
    }

    pub async fn list_tabs(&self, browser: Option<&str>) -> Result<Vec<Tab>, CallError> {
        self.call_as(browser, "tabs.list", Value::Null, QUICK).await
    }

    pub async fn open_tab(
        &self,
        browser: Option<&str>,
        url: &str,
        active: bool,
        wait: Wait,
    ) -> Result<Tab, CallError> {
        let params = json!({ "url": url, "active": active, "wait": wait });
        self.call_as(browser, "tabs.open", params, wait.timeout()).await
    }

    pub async fn close_tab(&self, browser: Option<&str>, tab_id: i64) -> Result<(), CallError> {
        self.call(browser, "tabs.close", json!({ "tab_id": tab_id }), QUICK).await.map(drop)
    }

    pub async fn activate_tab(&self, browser: Option<&str>, tab_id: i64) -> Result<Tab, CallError> {
        self.call_as(browser, "tabs.activate", json!({ "tab_id": tab_id }), QUICK).await
    }

    pub async fn navigate(
        &self,
        browser: Option<&str>,
        tab_id: i64,
        url: &str,
        wait: Wait,
    ) -> Result<Tab, CallError> {
        let params = json!({ "tab_id": tab_id, "url": url, "wait": wait });
        self.call_as(browser, "tabs.navigate", params, wait.timeout()).await
    }
}

/// The sites the user allowed tabwire on, as one browser's extension keeps them
/// (`sites.list`, and the answer to `sites.allow`/`sites.revoke`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SiteList {
    /// Origin patterns, e.g. `https://app.example.com`, `http://localhost:*`.
    pub sites: Vec<String>,
    /// The switches that are on, by pattern: `{"https://app.example.com": {"scripts": true}}`
    /// (`scripts`: evaluate may run there; `trusted_input`: debugger input may be used).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, BTreeMap<String, bool>>,
    /// What a new profile starts with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defaults: Vec<String>,
    /// `allow`/`revoke`: the pattern, normalised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// `allow`/`revoke`: whether the list changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed: Option<bool>,
}

/// Changes to the allowlist. Only the CLI (`tabwire sites`) asks for these: no MCP tool does,
/// so an assistant cannot widen where tabwire reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SiteChange {
    /// Allow the site, with its switches set exactly so.
    Allow(Switches),
    Revoke,
}

/// A site's switches (`tabwire sites allow --scripts --trusted-input`); off unless given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Switches {
    /// evaluate may run the assistant's JavaScript in the site's pages.
    pub scripts: bool,
    /// Clicks and keys may go through Chrome's debugger (real input, with its bar).
    pub trusted_input: bool,
}

impl Core {
    pub async fn sites(&self, browser: Option<&str>) -> Result<SiteList, CallError> {
        self.call_as(browser, "sites.list", Value::Null, QUICK).await
    }

    pub async fn change_sites(
        &self,
        browser: Option<&str>,
        change: SiteChange,
        pattern: &str,
    ) -> Result<SiteList, CallError> {
        let (method, params) = match change {
            SiteChange::Allow(switches) => {
                ("sites.allow", json!({ "pattern": pattern, "switches": switches }))
            }
            SiteChange::Revoke => ("sites.revoke", json!({ "pattern": pattern })),
        };
        self.call_as(browser, method, params, QUICK).await
    }
}
