//! A browser the tests of one process take in turn ([`Chromium::shared`]), for the tests that
//! need only what a fresh browser gives a new session: the extension and its host, loopback
//! allowed, no tab of anyone's. A test that takes a waiting browser saves about 1.7 CPU-seconds
//! on Linux and 4 with the Windows programs under Wine, whose host starts slowly there
//! (docs/performance.md, "The whole test run").
//!
//! A test has the browser alone while it holds it. When it is done, every tab and window it left
//! is closed over the browser's CDP pipe, leaving one blank tab in a new window as at a start,
//! and the browser waits for the next test; a test that failed takes its browser with it (killed,
//! its log printed, as [`Chromium`] does). What persists in the extension from one test to the
//! next is what a user's browser keeps between two sessions: a test that changes the sites the
//! user allowed, the popup's choices, the host or the worker starts its own browser instead.
//! The browsers still waiting when the tests are done are ended as the process exits.
//! `TABWIRE_TEST_FRESH_BROWSERS=1` gives every test a browser of its own instead (to tell
//! whether a failure comes from a test before it).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::Chromium;
use crate::cdp::Cdp;

/// How long closing the tabs a test left may take before its browser is ended instead.
const RESET_WITHIN: Duration = Duration::from_secs(10);
/// After the tabs close, time for the extension to hear they went (and that the test's session
/// ended) before another session starts: no event of theirs reaches the next test.
const QUIET: Duration = Duration::from_millis(300);

/// The browsers waiting for a test, each with its CDP pipe.
static IDLE: Mutex<Vec<(Chromium, Cdp)>> = Mutex::new(Vec::new());

/// A shared browser while a test holds it; derefs to [`Chromium`].
pub struct Shared(Option<(Chromium, Cdp)>);

impl Chromium {
    /// A browser of this process's that no other test holds, fresh as [`Chromium::start`]'s
    /// for a new session; started when none waits.
    pub fn shared() -> Shared {
        // One that ended while it waited (a crash) is dropped, and the next one is looked at.
        loop {
            let waiting = IDLE.lock().unwrap_or_else(|e| e.into_inner()).pop();
            let Some((mut browser, cdp)) = waiting else { break };
            if browser.exited().is_none() {
                browser.take_seat();
                return Shared(Some((browser, cdp)));
            }
        }
        end_waiting_browsers_at_exit();
        let mut browser = Chromium::start_with_cdp();
        let (to, from) = browser.take_cdp_pipe().expect("the shared browser's CDP pipe");
        Shared(Some((browser, Cdp::new(to, from))))
    }
}

impl Shared {
    /// The browser's CDP pipe, to act on its pages as the user would ([`Cdp`]).
    pub fn cdp(&self) -> &Cdp {
        &self.0.as_ref().expect("a shared browser").1
    }
}

impl std::ops::Deref for Shared {
    type Target = Chromium;
    fn deref(&self) -> &Chromium {
        &self.0.as_ref().expect("a shared browser").0
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        let Some((mut browser, cdp)) = self.0.take() else { return };
        let fresh = std::env::var_os("TABWIRE_TEST_FRESH_BROWSERS").is_some_and(|v| v != "0");
        if std::thread::panicking() || fresh || !cfg!(unix) {
            return; // ended with its log (Chromium's Drop); on Windows, nothing ends them at exit
        }
        browser.leave_seat();
        // The test's runtime may be the one this drop runs in: the CDP calls get their own.
        let reset = std::thread::scope(|s| s.spawn(|| reset(&cdp)).join());
        match reset {
            Ok(Ok(())) => IDLE.lock().unwrap_or_else(|e| e.into_inner()).push((browser, cdp)),
            Ok(Err(e)) => eprintln!("a shared browser is ended, not reused: {e}"),
            Err(_) => eprintln!("a shared browser is ended, not reused: its reset panicked"),
        }
    }
}

/// Close every tab but a new blank one in a new window, as a browser starts; then let the
/// extension hear of it.
fn reset(cdp: &Cdp) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build();
    let runtime = runtime.map_err(|e| format!("no runtime for the CDP calls: {e}"))?;
    runtime.block_on(async {
        let blank = json!({ "url": "about:blank", "newWindow": true });
        let fresh = cdp.call("Target.createTarget", blank, None).await?;
        let fresh = fresh["targetId"].clone();
        let deadline = Instant::now() + RESET_WITHIN;
        loop {
            let targets = cdp.call("Target.getTargets", json!({}), None).await?;
            let left: Vec<&Value> = targets["targetInfos"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|t| t["type"] == "page" && t["targetId"] != fresh)
                .collect();
            if left.is_empty() {
                break;
            }
            if Instant::now() > deadline {
                return Err(format!("tabs still open after {RESET_WITHIN:?}: {left:?}"));
            }
            for tab in left {
                let id = json!({ "targetId": tab["targetId"] });
                // One that is already closing answers with an error: looked at again below.
                let _ = cdp.call("Target.closeTarget", id, None).await;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(QUIET).await;
        Ok(())
    })
}

/// Once per process: end the browsers still waiting when it exits (libtest's main returns, or
/// exits with the failures' status; both run `atexit`'s functions).
fn end_waiting_browsers_at_exit() {
    #[cfg(unix)]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        extern "C" fn end() {
            let waiting = std::mem::take(&mut *IDLE.lock().unwrap_or_else(|e| e.into_inner()));
            drop(waiting);
        }
        // SAFETY: `end` is a plain function that touches only the list above.
        ONCE.call_once(|| unsafe {
            libc::atexit(end);
        });
    }
}
