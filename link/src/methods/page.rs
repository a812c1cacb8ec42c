//! `page.*`: pages that use `window.tabwire` (specs/page-sdk.md): their state, their commands,
//! the callbacks after their events were taken, and the echoes `diagnose` times hops with. Every one
//! is checked against the allowlist by the worker at the moment it runs.

use std::time::Duration;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::methods;
use crate::commands::PageCommands;
use crate::limits::{PAGE_CALL, QUICK_CALL};

/// `page.get_state`'s params.
#[derive(Debug, Clone, Serialize)]
pub struct GetState {
    pub tab_id: i64,
    /// Read nothing unless the tab shows this origin (`origin_changed`).
    pub expected_origin: Option<String>,
}

/// A page's state and the document that gave it (named by the browser, never by the page).
#[derive(Debug, Deserialize)]
pub struct PageState {
    pub origin: Option<String>,
    pub url: Option<String>,
    /// Kept as JSON text: the bridge caches and forwards it without building a tree of it.
    pub state: Box<RawValue>,
}

/// `page.command`'s params.
#[derive(Debug, Clone, Serialize)]
pub struct RunCommand {
    pub tab_id: i64,
    /// The command's name: the page's `onCommand(type)` handler runs.
    #[serde(rename = "type")]
    pub kind: String,
    pub payload: Value,
    pub expected_origin: Option<String>,
}

/// What a page's command handler returned, and which document ran it.
#[derive(Debug, Deserialize)]
pub struct CommandAnswer {
    pub origin: Option<String>,
    pub url: Option<String>,
    pub result: Value,
}

/// `page.drained`'s params: how many of the tab's events were taken.
#[derive(Debug, Clone, Serialize)]
pub struct Drained {
    pub tab_id: i64,
    pub count: u64,
}

/// `page.commands`'s params: one tab, or every page on an allowed site.
#[derive(Debug, Clone, Serialize)]
pub struct ListCommands {
    pub tab_id: Option<i64>,
}

/// The declared commands, per page.
#[derive(Debug, Deserialize)]
pub struct CommandList {
    pub pages: Vec<PageCommands>,
}

/// `page.echo`'s params: which hop of the tab answers.
#[derive(Debug, Clone, Serialize)]
pub struct PageEchoParams {
    pub tab_id: Option<i64>,
    /// `content` (the tab's relay) or `page` (the SDK in the page's world).
    pub world: &'static str,
}

/// `page.echo`'s answer: `echo` is null.
#[derive(Debug, Deserialize)]
pub struct Echoed {
    #[serde(default)]
    pub echo: Value,
}

methods! {
    /// The page's state, asked of the page now (its `provideState`, else its last `setState`).
    PageGetState = "page.get_state": GetState => PageState, PAGE_CALL;
    /// Run a page's `onCommand(type)` handler.
    PageCommand = "page.command": RunCommand => CommandAnswer, PAGE_CALL;
    /// Run the page's `onDrained` callbacks. Best effort, so short.
    PageDrained = "page.drained": Drained => IgnoredAny, Duration::from_secs(2);
    /// The commands pages declared, as the worker checked them.
    PageCommandList = "page.commands": ListCommands => CommandList, QUICK_CALL;
    /// An echo from the tab's relay or the page's world, running no page code.
    PageEcho = "page.echo": PageEchoParams => Echoed, QUICK_CALL;
}
