//! Keep the set of attached browsers in step with the hosts in the runtime directory.
//!
//! Every 100 ms the watcher lists `hosts/*.json` (which also removes records of dead hosts) and
//! attaches to each live host it does not know yet, so a browser started after `tabwire mcp` is
//! usable within about a tenth of a second. A host that goes away is noticed sooner, by its
//! socket closing (see `connection.rs`). Polling a directory of a few files costs next to
//! nothing, works the same on every Unix, and cannot miss an event the way a watch can.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use tabwire_proto::runtime_dir::{HostRecord, live_hosts};
use tokio::sync::{mpsc, oneshot, watch};

use super::registry::Registry;
use super::{Connection, matches};
use crate::inbox::Inbox;

/// How often the runtime directory is listed.
const POLL: Duration = Duration::from_millis(100);
/// How long the first pass waits for the hosts found at start-up to introduce their browsers,
/// before tools start answering. A host whose extension is connected answers in microseconds.
const FIRST_PASS: Duration = Duration::from_secs(1);
/// After a failed attach, wait this long before trying that host again.
const RETRY: Duration = Duration::from_secs(1);

/// Watch `runtime_dir` for hosts and attach to each (`--browser`: to `only`); the registry
/// says which are attached. With `subscribe`, their events go to `inbox`. The registry knows
/// nothing of the watcher, which fills it.
pub(crate) fn attach_all(
    runtime_dir: PathBuf,
    only: Option<String>,
    subscribe: bool,
    inbox: Inbox,
) -> Registry {
    let (registry, ready) = Registry::new(runtime_dir, only, subscribe, inbox);
    tokio::spawn(watch(registry.clone(), ready));
    registry
}

/// Run until the registry is closed. `ready` fires once the hosts present at start-up are
/// attached.
async fn watch(registry: Registry, ready: watch::Sender<bool>) {
    // Hosts being attached, attached, or not ours (`--browser`), by pid.
    let mut known: HashSet<u32> = HashSet::new();
    // Attach tasks report here when they are done with a host, so it may be tried again.
    let (forget_tx, mut forget) = mpsc::unbounded_channel::<u32>();
    let mut ready = Some(ready);
    let closing = registry.closing().clone();
    while !closing.is_cancelled() {
        while let Ok(pid) = forget.try_recv() {
            known.remove(&pid);
        }
        let live = live_hosts(registry.runtime_dir());
        known.retain(|pid| live.iter().any(|r| r.pid == *pid));

        let mut settled = Vec::new();
        for record in live {
            if !known.insert(record.pid) {
                continue;
            }
            if let Some(only) = registry.only()
                && !may_be(only, &record)
            {
                tracing::debug!(pid = record.pid, only, "not attaching: not the chosen browser");
                continue;
            }
            let (done, settle) = oneshot::channel();
            settled.push(settle);
            tokio::spawn(attach(registry.clone(), record, forget_tx.clone(), done));
        }
        if let Some(ready) = ready.take() {
            let _ = tokio::time::timeout(FIRST_PASS, futures::future::join_all(settled)).await;
            let _ = ready.send(true);
        }
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            () = closing.cancelled() => {}
        }
    }
}

/// Whether this host may be the one `--browser` names, judging by its record. A record written
/// before the extension said hello has no browser name yet: connect and check the hello.
fn may_be(only: &str, record: &HostRecord) -> bool {
    record.browser.is_empty() && only.parse::<u32>().is_err()
        || matches(only, record.pid, &record.browser, &record.profile)
}

/// Attach to one host and hold it until its connection ends or the registry is closed.
async fn attach(
    registry: Registry,
    record: HostRecord,
    forget: mpsc::UnboundedSender<u32>,
    settled: oneshot::Sender<()>,
) {
    let pid = record.pid;
    let inbox = registry.inbox().clone();
    let conn = match Connection::open(&record, inbox, registry.subscribes()).await {
        Ok(conn) => conn,
        Err(e) => {
            tracing::warn!(pid, error = %e, "cannot attach to a browser's host");
            drop(settled);
            tokio::time::sleep(RETRY).await;
            let _ = forget.send(pid);
            return;
        }
    };
    if let Some(only) = registry.only()
        && !conn.info().matches(only)
    {
        tracing::debug!(pid, only, "not attaching: not the chosen browser");
        return;
    }
    tracing::info!(browser = %conn.info().label(), "browser attached");
    registry.attach(conn.clone());
    drop(settled);
    tokio::select! {
        () = conn.closed() => {}
        () = registry.closing().cancelled() => return, // let go: dropping `conn` closes it
    }
    registry.detach(&conn);
    let _ = forget.send(pid);
}
