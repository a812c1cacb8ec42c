//! When a tabwire process should end: SIGTERM or SIGINT (Ctrl-C on Windows), as one
//! [`Shutdown`] value that `main` makes first and hands to the run it starts (mini-redis's
//! `server::run(listener, shutdown)`). Made before any socket or record exists, so that a
//! signal never kills the process with its files still there: the run ends as it does when
//! its peer goes, and cleans up.

use std::io;

use tokio::sync::watch;

/// Fires once, and says why ("SIGTERM"). Every clone sees the same shutdown; select on
/// [`Shutdown::requested`] wherever a loop should stop.
#[derive(Clone, Debug)]
pub struct Shutdown(watch::Receiver<Option<&'static str>>);

/// Fires its [`Shutdown`] by hand (the signal task holds one; so can a test).
#[derive(Debug)]
pub struct Trigger(watch::Sender<Option<&'static str>>);

impl Shutdown {
    /// Catch SIGTERM and SIGINT from now on: the first one fires the shutdown (the process no
    /// longer dies of them). Needs a running tokio runtime.
    pub fn on_signals() -> io::Result<Shutdown> {
        let (trigger, shutdown) = Shutdown::by_hand();
        let mut signals = Signals::install()?;
        tokio::spawn(async move { trigger.fire(signals.recv().await) });
        Ok(shutdown)
    }

    /// A shutdown that fires when its [`Trigger`] does; dropping the trigger unfired means
    /// never.
    pub fn by_hand() -> (Trigger, Shutdown) {
        let (tx, rx) = watch::channel(None);
        (Trigger(tx), Shutdown(rx))
    }

    /// Resolves when the shutdown fires, with why; pending forever if it no longer can.
    pub async fn requested(&self) -> &'static str {
        let mut rx = self.0.clone();
        let why = match rx.wait_for(Option::is_some).await {
            Ok(why) => *why,
            Err(_) => None, // the trigger went unfired
        };
        match why {
            Some(why) => why,
            None => std::future::pending().await,
        }
    }
}

impl Trigger {
    /// Fire the shutdown; `why` names the cause in logs ("SIGTERM"). Later calls change
    /// nothing.
    pub fn fire(&self, why: &'static str) {
        self.0.send_if_modified(|now| {
            let first = now.is_none();
            if first {
                *now = Some(why);
            }
            first
        });
    }
}

/// The signal handlers, installed when made (so a signal that comes right after start is not
/// missed).
struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl Signals {
    fn install() -> io::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Self {
                term: signal(SignalKind::terminate())?,
                int: signal(SignalKind::interrupt())?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(Self {})
        }
    }

    /// Wait for the next signal; returns its name.
    async fn recv(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.term.recv() => "SIGTERM",
                _ = self.int.recv() => "SIGINT",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn every_clone_sees_the_first_cause_and_only_it() {
        let (trigger, shutdown) = Shutdown::by_hand();
        let other = shutdown.clone();
        let waiting = tokio::spawn(async move { other.requested().await });
        trigger.fire("SIGTERM");
        trigger.fire("SIGINT");
        assert_eq!(waiting.await.unwrap(), "SIGTERM");
        drop(trigger);
        assert_eq!(shutdown.requested().await, "SIGTERM", "still fired after the trigger goes");
    }

    #[tokio::test]
    async fn an_unfired_shutdown_never_resolves() {
        let (trigger, shutdown) = Shutdown::by_hand();
        drop(trigger);
        let waited = tokio::time::timeout(Duration::from_millis(20), shutdown.requested()).await;
        assert!(waited.is_err());
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn sigterm_fires_it() {
        let shutdown = Shutdown::on_signals().unwrap();
        // SAFETY: a signal to this process, whose SIGTERM is now caught.
        unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
        let why = tokio::time::timeout(Duration::from_secs(5), shutdown.requested()).await;
        assert_eq!(why.unwrap(), "SIGTERM");
    }
}
