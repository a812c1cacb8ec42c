//! `sites.*`: the sites the user allowed tabwire on. Only the CLI (`tabwire sites`) changes
//! them: no MCP tool does, so an assistant cannot widen where tabwire reaches.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::methods;
use crate::limits::QUICK_CALL;

/// The sites the user allowed tabwire on, as one browser's extension keeps them
/// (`sites.list`, and the answer to `sites.allow`/`sites.revoke`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SiteList {
    /// Origin patterns, e.g. `https://app.example.com`, `http://localhost:*`.
    pub sites: Vec<String>,
    /// The switches that are on, by pattern: `{"https://app.example.com": {"scripts": true}}`
    /// (`scripts`: evaluate may run there; `trusted_input`: debugger input may be used;
    /// `cookies`: its cookies and storage may be read and written).
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

/// A site's switches (`tabwire sites allow --scripts --trusted-input --cookies`); off unless given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Switches {
    /// evaluate may run the assistant's JavaScript in the site's pages.
    pub scripts: bool,
    /// Clicks and keys may go through Chrome's debugger (real input, with its bar).
    pub trusted_input: bool,
    /// The site's cookies and web storage may be read, set, saved and restored: credentials.
    pub cookies: bool,
}

/// `sites.allow`'s params.
#[derive(Debug, Clone, Serialize)]
pub struct AllowSite {
    pub pattern: String,
    pub switches: Switches,
}

/// `sites.revoke`'s params.
#[derive(Debug, Clone, Serialize)]
pub struct RevokeSite {
    pub pattern: String,
}

methods! {
    /// The allowed sites, their switches and the defaults.
    SitesList = "sites.list": () => SiteList, QUICK_CALL;
    /// Allow a site, with its switches set exactly so.
    SitesAllow = "sites.allow": AllowSite => SiteList, QUICK_CALL;
    /// Take a site off the list; its pages are refused from then on.
    SitesRevoke = "sites.revoke": RevokeSite => SiteList, QUICK_CALL;
}
