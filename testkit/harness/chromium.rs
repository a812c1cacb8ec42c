//! Debian's Chromium, headless, with the unpacked extension and the real `tabwire-host`, started
//! through the same launcher `tabwire demo` uses. Each browser gets its own scratch dir (profile
//! with the host manifest, private runtime dir, log). Dropping it kills the browser by PID and
//! removes the dir — also when the test fails, after printing the browser's and host's log.
//! The tests of a theme share one process (`bridge/tests/<theme>/main.rs`): a [`Seat`] keeps
//! the browsers running at once in it to a cap.

use std::cell::Cell;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use tabwire_launcher::{Browser, DEFAULT_CHROMIUM, LaunchOptions};

use crate::bins;

/// A browser, and its seat among those of this process while a test uses it (dropped after
/// it: fields drop in order; none while it waits between tests, [`crate::shared`]).
pub struct Chromium(Browser, Option<Seat>);

/// One of the browsers a test process runs at once: at most `TABWIRE_TEST_BROWSERS`, else
/// half the machine's threads and at least two (a shared browser waiting between tests does
/// not count: it runs nothing). Tests run on as many threads as the machine
/// has, each may start a Chromium of several processes; past the cap a test waits for a seat.
/// A thread that already holds one takes more without waiting (a test with two browsers
/// never waits for itself).
pub struct Seat {
    counted: bool,
}

static SEATS: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

thread_local! {
    static HELD: Cell<usize> = const { Cell::new(0) };
}

impl Seat {
    fn take() -> Seat {
        let counted = HELD.get() == 0;
        if counted {
            let cap = std::env::var("TABWIRE_TEST_BROWSERS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| {
                    std::thread::available_parallelism().map_or(2, |n| n.get() / 2).max(2)
                });
            let (taken, freed) = &SEATS;
            let taken = taken.lock().unwrap_or_else(|e| e.into_inner());
            let mut taken =
                freed.wait_while(taken, |n| *n >= cap).unwrap_or_else(|e| e.into_inner());
            *taken += 1;
        }
        HELD.set(HELD.get() + 1);
        Seat { counted }
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        HELD.set(HELD.get().saturating_sub(1));
        if self.counted {
            let (taken, freed) = &SEATS;
            *taken.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
            freed.notify_one();
        }
    }
}

/// The browser the tests drive: `$TABWIRE_TEST_CHROMIUM` when set (CI's macOS and Windows
/// runners name the Chrome for Testing they installed), else Debian's Chromium.
pub fn chromium_binary() -> PathBuf {
    let var = std::env::var_os("TABWIRE_TEST_CHROMIUM").filter(|v| !v.is_empty());
    var.map(PathBuf::from).unwrap_or_else(|| DEFAULT_CHROMIUM.into())
}

impl Chromium {
    /// `tabwire sites ARGS…` against this browser, as the user would run it in a terminal;
    /// its stdout. Panics with what it said if it fails.
    pub fn sites(&self, args: &[&str]) -> String {
        let out = Command::new(bins::bin("tabwire"))
            .arg("sites")
            .args(args)
            .env("TABWIRE_RUNTIME_DIR", &self.runtime_dir)
            .output()
            .expect("run tabwire sites");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "tabwire sites {args:?}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    /// The pid of this browser's one running `tabwire-host`, from the records in its runtime
    /// directory (a new one after the old host died).
    pub fn host_pid(&self) -> i32 {
        let hosts = std::fs::read_dir(self.runtime_dir.join("hosts")).expect("runtime dir");
        let pids: Vec<i32> = hosts
            .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".json")?.parse().ok())
            .collect();
        assert_eq!(pids.len(), 1, "one host: {pids:?}");
        pids[0]
    }

    /// Whether the host `pid` (from [`Self::host_pid`]) still runs. Under Wine the record
    /// names a Windows pid, which this Linux process cannot look up (it may be some Linux
    /// process's): there a host that ended is one whose record is gone.
    pub fn host_running(&self, pid: i32) -> bool {
        #[cfg(unix)]
        if crate::wine::active() {
            return self.runtime_dir.join("hosts").join(format!("{pid}.json")).exists();
        }
        tabwire_proto::runtime_dir::pid_alive(pid as u32)
    }

    /// This browser's live host, by its record; under Wine the newest one ([`crate::wine`]).
    pub fn live_host(&self) -> Option<tabwire_proto::runtime_dir::HostRecord> {
        #[cfg(unix)]
        if crate::wine::active() {
            return crate::wine::newest_host(self);
        }
        self.host()
    }

    /// Give this browser's seat up while it waits between tests ([`crate::shared`]), on the
    /// thread that took it.
    pub(crate) fn leave_seat(&mut self) {
        self.1 = None;
    }

    /// Take a seat again for the test of this thread, waiting for one.
    pub(crate) fn take_seat(&mut self) {
        self.1 = Some(Seat::take());
    }

    /// End this browser's host `pid` at once, as a crash would: its own system's way (a Windows
    /// host under Wine by `taskkill /F`).
    pub fn kill_host(&self, pid: u32) -> std::io::Result<()> {
        #[cfg(unix)]
        if crate::wine::active() {
            return crate::wine::kill(pid);
        }
        crate::process::kill(pid)
    }

    /// Start a browser and wait until its `tabwire-host` is listening.
    pub fn start() -> Chromium {
        Self::start_with(&[])
    }

    /// Start with extra environment for the browser (and so for the host).
    pub fn start_with(env: &[(&str, &str)]) -> Chromium {
        Self::launch(env, false)
    }

    /// Start with a CDP pipe (`--remote-debugging-pipe`, no port opened): take it with
    /// `take_cdp_pipe()` and drive it with [`crate::cdp::Cdp`].
    pub fn start_with_cdp() -> Chromium {
        Self::launch(&[], true)
    }

    /// Start a headed browser (a window, as a user has it) on the X display `display` (from
    /// [`crate::xvfb::Xvfb`]), with a CDP pipe as [`Chromium::start_with_cdp`]. Its tabs other
    /// than each window's active one are hidden, and Chrome throttles them.
    pub fn start_headed_with_cdp(display: &str) -> Chromium {
        let mut opts = Self::options(bins::bin("tabwire-host"), &[("DISPLAY", display)], true);
        opts.headless = false;
        Self::open(&opts, true)
    }

    /// [`Chromium::start_with_cdp`] with the extension in `extension_dir` instead of the
    /// checkout's: another version of it (the page-cost bench compares two in one run).
    pub fn start_with_cdp_from(extension_dir: &Path) -> Chromium {
        let mut opts = Self::options(bins::bin("tabwire-host"), &[], true);
        opts.extension_dir = extension_dir.to_owned();
        Self::open(&opts, true)
    }

    /// Start a browser the way an installed tabwire runs: the extension from `extension_dir`
    /// (not the checkout's) and the host `host`, in the profile at `Browser::profile_dir(root)`
    /// whose native-host manifest the caller's `tabwire install --user-data-dir` wrote.
    pub fn start_installed(root: PathBuf, extension_dir: PathBuf, host: PathBuf) -> Chromium {
        let opts = LaunchOptions {
            chromium: chromium_binary(),
            extension_dir,
            host_binary: host,
            headless: true,
            root,
            keep: std::env::var_os("TABWIRE_KEEP_TEST_DIRS").is_some(),
            env: vec![("TABWIRE_LOG".into(), "debug".into())],
            // A first start from a freshly installed folder, while the other tests of the
            // package run npm and browsers of their own: under CI's load this once took more
            // than 30 s (no host was started in that time; the log showed nothing else).
            timeout: Duration::from_secs(60),
            write_manifest: false,
            cdp_pipe: false,
            // A browser that starts no host says why (the tests of the installed programs).
            chrome_log: true,
        };
        Self::open(&opts, true)
    }

    /// Start with `host` as the program the native-host manifest names (a wrapper that starts
    /// the Windows `tabwire-host.exe` under Wine), without waiting for it: its record names a
    /// Windows pid and a named pipe, which only the caller knows how to check.
    pub fn start_with_host(host: &Path, env: &[(&str, &str)]) -> Chromium {
        let opts = Self::options(host.to_owned(), env, false);
        Self::open(&opts, false)
    }

    fn launch(env: &[(&str, &str)], cdp_pipe: bool) -> Chromium {
        let opts = Self::options(bins::bin("tabwire-host"), env, cdp_pipe);
        Self::open(&opts, true)
    }

    /// Start once a seat is free; with `wait`, until its host listens (a Windows host under
    /// Wine: until its record names the browser, [`crate::wine::wait_for_host`]).
    fn open(opts: &LaunchOptions, wait: bool) -> Chromium {
        let seat = Seat::take();
        let mut browser = Browser::spawn(opts).unwrap_or_else(|e| panic!("{e}"));
        if wait {
            #[cfg(unix)]
            if crate::wine::active() {
                let waited = crate::wine::wait_for_host(&mut browser, opts.timeout);
                waited.unwrap_or_else(|e| panic!("{e}"));
                return Chromium(browser, Some(seat));
            }
            browser.wait_for_host(opts.timeout).unwrap_or_else(|e| panic!("{e}"));
        }
        Chromium(browser, Some(seat))
    }

    fn options(host: PathBuf, env: &[(&str, &str)], cdp_pipe: bool) -> LaunchOptions {
        let mut env: Vec<(String, String)> =
            env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        env.push(("TABWIRE_LOG".into(), "debug".into()));
        let root = bins::scratch_dir("chr").into_path(); // the launcher removes it
        // The Windows `tabwire.exe install` registers a host for Windows' Chrome: for Debian's
        // Chromium the launcher writes the manifest naming the wrapper (crate::wine).
        #[cfg(unix)]
        let write_manifest = crate::wine::active();
        #[cfg(windows)]
        let write_manifest = false;
        if !write_manifest {
            install_manifest(&root, &host);
        }
        // `TABWIRE_TEST_EXTENSION=DIR`: another version of the extension (to see a test fail
        // without a change, e.g. the last commit's from `git archive HEAD extension`).
        let extension = std::env::var_os("TABWIRE_TEST_EXTENSION").map(PathBuf::from);
        LaunchOptions {
            chromium: chromium_binary(),
            extension_dir: extension.unwrap_or_else(|| bins::repo_root().join("extension")),
            host_binary: host,
            headless: true,
            root,
            keep: std::env::var_os("TABWIRE_KEEP_TEST_DIRS").is_some(),
            env,
            timeout: Duration::from_secs(30),
            write_manifest,
            cdp_pipe,
            chrome_log: false,
        }
    }
}

/// Set the profile up the way a user would: `tabwire install --user-data-dir <profile>`.
fn install_manifest(root: &Path, host: &Path) {
    let profile = Browser::profile_dir(root);
    std::fs::create_dir_all(&profile).unwrap();
    let out = Command::new(bins::bin("tabwire"))
        .arg("install")
        .arg("--user-data-dir")
        .arg(&profile)
        .arg("--host-path")
        .arg(host)
        .env("TABWIRE_CONFIG_DIR", root.join("config"))
        // Never the user's own data dir, wherever the binaries were built.
        .env("TABWIRE_DATA_DIR", root.join("data"))
        .env("TABWIRE_EXTENSION_DIR", bins::repo_root().join("extension"))
        .output()
        .expect("run tabwire install");
    assert!(
        out.status.success(),
        "tabwire install --user-data-dir failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Deref for Chromium {
    type Target = Browser;
    fn deref(&self) -> &Browser {
        &self.0
    }
}

impl DerefMut for Chromium {
    fn deref_mut(&mut self) -> &mut Browser {
        &mut self.0
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}", self.0.log_tail(60));
        }
    }
}
