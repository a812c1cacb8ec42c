//! The attached browsers: which are attached, which one a call goes to, and when to let go.
//!
//! A [`Registry`] is a cheap handle on one shared state (mini-redis's `Db { shared }`): the
//! core holds one, and the watcher and each attach task hold their own clone of it — what they
//! need, not the whole core. [`Registry::close`] (called by the core when it is closed or its
//! last handle goes) stops them all; once they have stopped, the state goes with them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tabwire_proto::wire::code;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{BrowserInfo, Connection};
use crate::error::CallError;
use crate::inbox::Inbox;

/// A handle on the attached browsers. Cheap to clone.
#[derive(Clone)]
pub struct Registry {
    shared: Arc<Shared>,
}

struct Shared {
    runtime_dir: PathBuf,
    /// `--browser`: attach to this browser only.
    only: Option<String>,
    /// Ask the hosts for events. Off for one-shot commands (`status`, `doctor`), so that they
    /// do not take the events a host keeps for the next session.
    subscribe: bool,
    /// Where the connections' readers put events.
    inbox: Inbox,
    /// Attached browsers, oldest first: the last one is the default.
    attached: Mutex<Vec<Arc<Connection>>>,
    /// True once the hosts present at start-up have been attached (or given up on).
    ready: watch::Receiver<bool>,
    /// Fired by [`Registry::close`]: the watcher stops and the connections to the hosts close.
    closing: CancellationToken,
}

impl Registry {
    /// No browser yet, and the sender that marks the hosts present at start-up attached:
    /// the watcher fills it ([`super::attach_all`]). With `subscribe`, the hosts' events go to `inbox`.
    pub fn new(
        runtime_dir: PathBuf,
        only: Option<String>,
        subscribe: bool,
        inbox: Inbox,
    ) -> (Registry, watch::Sender<bool>) {
        let (ready_tx, ready) = watch::channel(false);
        let registry = Registry {
            shared: Arc::new(Shared {
                runtime_dir,
                only: only.filter(|s| !s.trim().is_empty()),
                subscribe,
                inbox,
                attached: Mutex::new(Vec::new()),
                ready,
                closing: CancellationToken::new(),
            }),
        };
        (registry, ready_tx)
    }

    /// Wait until the browsers running at start-up are attached, so that "no browser" means none
    /// is running rather than "not attached yet".
    pub async fn ready(&self) {
        let _ = self.shared.ready.clone().wait_for(|ready| *ready).await;
    }

    pub fn runtime_dir(&self) -> &Path {
        &self.shared.runtime_dir
    }

    /// The attached browsers, oldest first (the last one is the default).
    pub fn browsers(&self) -> Vec<BrowserInfo> {
        self.attached().iter().map(|c| c.info().clone()).collect()
    }

    /// The browser a call goes to: the one `selector` names, else the most recently attached.
    pub async fn pick(&self, selector: Option<&str>) -> Result<Arc<Connection>, CallError> {
        self.ready().await;
        let attached = self.attached();
        let Some(default) = attached.last() else { return Err(CallError::NoBrowser) };
        let Some(selector) = selector.map(str::trim).filter(|s| !s.is_empty()) else {
            return Ok(default.clone());
        };
        let hits: Vec<_> = attached.iter().filter(|c| c.info().matches(selector)).collect();
        let list = || attached.iter().map(|c| describe(c.info())).collect::<Vec<_>>().join(", ");
        match hits.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(CallError::new(
                code::BAD_REQUEST,
                format!(
                    "no attached browser is {selector:?}; attached: {}. Name one by its host pid, \
                     brand or profile id, as list_browsers shows",
                    list()
                ),
            )),
            many => Err(CallError::new(
                code::BAD_REQUEST,
                format!(
                    "{} attached browsers match {selector:?}: {}. Name one by its host pid or \
                     profile id",
                    many.len(),
                    list()
                ),
            )),
        }
    }

    /// Let go of the browsers: stop watching for hosts and close every connection (the hosts
    /// cancel what was still in flight).
    pub fn close(&self) {
        self.shared.closing.cancel();
        self.shared.attached.lock().expect("attached list poisoned").clear();
    }

    /// Resolves once [`Registry::close`] was called.
    pub fn closing(&self) -> &CancellationToken {
        &self.shared.closing
    }

    pub(super) fn only(&self) -> Option<&str> {
        self.shared.only.as_deref()
    }

    pub(super) fn subscribes(&self) -> bool {
        self.shared.subscribe
    }

    pub(super) fn inbox(&self) -> &Inbox {
        &self.shared.inbox
    }

    /// Add a browser (replacing an older connection to the same host); the session hears of it.
    pub(super) fn attach(&self, conn: Arc<Connection>) {
        let mut attached = self.shared.attached.lock().expect("attached list poisoned");
        if self.shared.closing.is_cancelled() {
            return; // closed while this host was being attached
        }
        attached.retain(|c| c.info().host_pid != conn.info().host_pid);
        self.shared.inbox.connected(conn.info());
        attached.push(conn);
    }

    /// Remove a browser whose connection ended; the session hears why.
    pub(super) fn detach(&self, conn: &Arc<Connection>) {
        let mut attached = self.shared.attached.lock().expect("attached list poisoned");
        attached.retain(|c| !Arc::ptr_eq(c, conn));
        drop(attached);
        self.shared.inbox.disconnected(conn.info(), &conn.close_reason());
    }

    fn attached(&self) -> Vec<Arc<Connection>> {
        self.shared.attached.lock().expect("attached list poisoned").clone()
    }
}

/// `chrome (host pid 4242, profile 3f1c…)`, for lists in messages.
fn describe(info: &BrowserInfo) -> String {
    let profile: String = info.profile.chars().take(8).collect();
    format!("{} (host pid {}, profile {profile})", info.browser, info.host_pid)
}
