//! Working with a page that uses `window.tabwire`: read its state (from the cache or fresh),
//! run its commands, and take the events it pushed. MCP tools, `tabwire wait` and the HTTP
//! long-poll all come through here.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tabwire_proto::wire::{Provenance, code};

use crate::browser::Connection;
use crate::core::Core;
use crate::error::CallError;
use crate::events::{Filter, SessionEvent, kind};
use crate::methods::{
    Drained, GetState, Method, PageCommand, PageDrained, PageGetState, RunCommand, TabsList,
    invoke_on,
};

/// Where a state came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The bridge's copy, from the page's last `state_update` or the last fresh read.
    Cache,
    /// Asked of the page just now.
    Fresh,
}

/// A page's state, and how old it is.
#[derive(Debug, Clone)]
pub struct StateRead {
    pub tab_id: i64,
    /// The page that published it, as the extension named it (never the page itself).
    pub from: Provenance,
    /// The browser's label, `chrome (host pid 4242)`.
    pub browser: String,
    pub state: Arc<RawValue>,
    pub source: Source,
    /// Milliseconds since the bridge received it.
    pub age_ms: u64,
    /// When the bridge received it, in milliseconds since the Unix epoch.
    pub fetched_at_ms: u64,
    /// Set when a fresh read was asked for, failed, and the cached copy is returned instead.
    pub warning: Option<String>,
}

/// What a command's handler returned, and which page ran it.
#[derive(Debug, Clone)]
pub struct CommandRun {
    pub tab_id: i64,
    pub from: Provenance,
    pub result: Value,
}

impl Core {
    /// The tab a page tool acts on: `tab_id`, else the active tab of the focused window.
    pub async fn resolve_tab(
        &self,
        conn: &Connection,
        tab_id: Option<i64>,
    ) -> Result<i64, CallError> {
        if let Some(tab) = tab_id {
            return Ok(tab);
        }
        let tabs = invoke_on::<TabsList>(conn, &(), TabsList::TIMEOUT).await.0?;
        if let Some(tab) = tabs.iter().find(|t| t.window_focused && t.active) {
            return Ok(tab.id);
        }
        // No window has the focus (a headless browser, or another program is in front):
        // one active tab is still unambiguous.
        match tabs.iter().filter(|t| t.active).collect::<Vec<_>>().as_slice() {
            [one] => Ok(one.id),
            _ => Err(CallError::new(
                code::BAD_REQUEST,
                "no tab_id given and no browser window has the focus, so there is no one active \
                 tab to use; pass tab_id (list_tabs shows the open tabs)",
            )),
        }
    }

    /// A page's state. From the cache when there is a copy and `force` is false; else asked of
    /// the page (`page.get_state`), which also refreshes the cache. A fresh read that fails
    /// falls back to the cached copy with a warning; with no copy it is the error.
    ///
    /// With `expected_origin`, a page of another origin is not read (`origin_changed`). The
    /// extension checks, at the moment it runs, that the tab's site is allowed; the cache
    /// forgets the states of a site the moment the user revokes it.
    pub async fn read_state(
        &self,
        browser: Option<&str>,
        tab_id: Option<i64>,
        force: bool,
        expected_origin: Option<&str>,
        timeout: Duration,
    ) -> Result<StateRead, CallError> {
        let conn = self.pick(browser).await?;
        let tab_id = self.resolve_tab(&conn, tab_id).await?;
        let key = conn.info().key();
        let label = conn.info().label();
        let from_cache = |warning: Option<String>| {
            self.state_cache().get(&key, tab_id).map(|c| StateRead {
                tab_id,
                from: c.from,
                browser: label.clone(),
                state: c.state,
                source: Source::Cache,
                age_ms: c.at.elapsed().as_millis() as u64,
                fetched_at_ms: c.fetched_at_ms,
                warning,
            })
        };
        if !force && let Some(read) = from_cache(None) {
            check_origin(tab_id, expected_origin, read.from.origin.as_deref())?;
            return Ok(read);
        }
        let params = GetState { tab_id, expected_origin: expected_origin.map(str::to_owned) };
        match invoke_on::<PageGetState>(&conn, &params, timeout).await {
            (Ok(answer), arrival) => {
                let state: Arc<RawValue> = Arc::from(answer.state);
                let from = Provenance { origin: answer.origin, url: answer.url };
                let stored =
                    self.state_cache().put(&key, tab_id, state.clone(), from.clone(), arrival);
                Ok(StateRead {
                    tab_id,
                    from,
                    browser: label,
                    state,
                    source: Source::Fresh,
                    age_ms: 0,
                    fetched_at_ms: stored.unwrap_or_else(tabwire_proto::runtime_dir::now_ms),
                    warning: None,
                })
            }
            // The site is not allowed, or not the one expected: never fall back to a copy.
            (Err(e), _) if e.is(code::SITE_NOT_ALLOWED) || e.is(code::ORIGIN_CHANGED) => Err(e),
            (Err(e), _) => {
                let warning = format!("could not refresh ({e}); this is the cached copy");
                let read =
                    from_cache(Some(warning)).ok_or_else(|| unreadable(tab_id, &e, timeout))?;
                check_origin(tab_id, expected_origin, read.from.origin.as_deref())?;
                Ok(read)
            }
        }
    }

    /// Run the page's `onCommand(kind)` handler with `payload` in tab `tab_id` — always a
    /// tab named by the caller, never "whatever is focused now". With `expected_origin`, a page
    /// of another origin is not touched (`origin_changed`). A page with `provideState` pushes
    /// its new state before this returns.
    pub async fn send_command(
        &self,
        browser: Option<&str>,
        tab_id: i64,
        kind: &str,
        payload: &Value,
        expected_origin: Option<&str>,
        timeout: Duration,
    ) -> Result<CommandRun, CallError> {
        let params = RunCommand {
            tab_id,
            kind: kind.to_owned(),
            payload: payload.clone(),
            expected_origin: expected_origin.map(str::to_owned),
        };
        let answer = self.invoke_within::<PageCommand>(browser, &params, timeout).await?;
        let from = Provenance { origin: answer.origin, url: answer.url };
        Ok(CommandRun { tab_id, from, result: answer.result })
    }

    /// Wait up to `timeout` for page events (`tabwire.pushEvent`), of one tab or of all, and
    /// take every one queued, at once, with the `dropped` reports of lost ones. An error at once when no browser is attached.
    /// Call [`Core::tell_drained`] with the result afterwards.
    pub async fn wait_page_events(
        &self,
        tab_id: Option<i64>,
        timeout: Duration,
    ) -> Result<Vec<SessionEvent>, CallError> {
        self.ready().await;
        if self.browsers().is_empty() {
            return Err(CallError::NoBrowser);
        }
        // With the pages' own events go the reports of their losses (`dropped`).
        let filter = Filter { tab_id, ..Filter::kinds(&[kind::PAGE_EVENT, kind::DROPPED]) };
        Ok(self.queue().drain(&filter, timeout).await)
    }

    /// Run the `onDrained` callbacks of the pages whose events were taken (`page.drained`
    /// with how many), so a page that shows its queue can refresh. Failures are only logged:
    /// the events were delivered either way.
    pub async fn tell_drained(&self, events: &[SessionEvent]) {
        let mut counts: BTreeMap<(u32, i64), u64> = BTreeMap::new();
        for event in events.iter().filter(|e| e.kind == kind::PAGE_EVENT) {
            if let (Some(pid), Some(tab)) = (event.host_pid, event.tab_id) {
                *counts.entry((pid, tab)).or_default() += 1;
            }
        }
        let calls = counts.into_iter().map(|((pid, tab_id), count)| async move {
            let params = Drained { tab_id, count };
            let pid = pid.to_string();
            if let Err(e) = self.invoke::<PageDrained>(Some(&pid), &params).await {
                tracing::info!(tab_id, error = %e, "the page's onDrained callbacks did not run");
            }
        });
        futures::future::join_all(calls).await;
    }
}

/// `origin_changed` when the page is not of the origin the caller expected.
fn check_origin(
    tab_id: i64,
    expected: Option<&str>,
    actual: Option<&str>,
) -> Result<(), CallError> {
    match expected {
        Some(want) if actual != Some(want) => Err(CallError::new(
            code::ORIGIN_CHANGED,
            format!(
                "tab {tab_id} now shows {} (expected {want}); nothing was read. list_tabs shows \
                 what each tab holds",
                actual.unwrap_or("a page of unknown origin")
            ),
        )),
        _ => Ok(()),
    }
}

/// Why a page's state could not be read, said for the person.
fn unreadable(tab_id: i64, e: &CallError, timeout: Duration) -> CallError {
    let message = match e.code() {
        code::TIMEOUT => format!(
            "the page in tab {tab_id} did not answer within {} ms (its provideState may be \
             slow or stuck) and nothing is cached for it; try a larger timeout_ms or check the page",
            timeout.as_millis()
        ),
        _ => format!("cannot read the state of tab {tab_id}: {}", e.message()),
    };
    CallError::new(e.code(), message)
}
