//! Debian's Chromium, headless, with the unpacked extension and the real `tabwire-host`.
//!
//! Each browser gets its own scratch dir holding the profile (`profile/`, with the host
//! manifest in `profile/NativeMessagingHosts/`), the runtime dir (`run/`, passed to the host
//! through the browser's environment) and the browser's log (`chromium.log`, which also holds
//! the host's stderr). We wait for the host's socket before anything opens a page: a page
//! loaded on the command line races the content script's registration.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::bins;

const CHROMIUM: &str = "/usr/bin/chromium";

/// A running headless Chromium. Dropping it kills the browser (by PID) and removes its dirs.
pub struct Chromium {
    child: Child,
    pub root: PathBuf,
    pub profile: PathBuf,
    pub runtime_dir: PathBuf,
    pub log: PathBuf,
}

impl Chromium {
    /// Start a browser and wait until its `tabwire-host` is listening.
    pub fn start() -> Chromium {
        Self::start_with(&[])
    }

    /// Start with extra environment for the browser (and so for the host).
    pub fn start_with(env: &[(&str, &str)]) -> Chromium {
        assert!(
            Path::new(CHROMIUM).exists(),
            "Chromium is not installed at {CHROMIUM}: install it with \
             `sudo apt-get install -y chromium` (scripts/test.sh does this)"
        );
        let root = bins::scratch_dir("chr");
        let profile = root.join("profile");
        let runtime_dir = root.join("run");
        std::fs::create_dir_all(&profile).unwrap();
        install_host_manifest(&profile);
        let log = root.join("chromium.log");
        let log_file = std::fs::File::create(&log).unwrap();
        let ext = bins::repo_root().join("extension");
        let mut cmd = Command::new(CHROMIUM);
        cmd.args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--load-extension={}", ext.display()))
        .arg(format!("--disable-extensions-except={}", ext.display()))
        .env("TABWIRE_RUNTIME_DIR", &runtime_dir)
        .env("TABWIRE_LOG", "debug")
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().unwrap())
        .stderr(log_file);
        for (k, v) in env {
            cmd.env(k, v);
        }
        // Its own process group, so that the renderers and the host go with it.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().unwrap_or_else(|e| {
            panic!("cannot start {CHROMIUM}: {e}; install it with `sudo apt-get install -y chromium`")
        });
        let mut browser = Chromium { child, root, profile, runtime_dir, log };
        browser.wait_for_host(Duration::from_secs(30));
        browser
    }

    /// Wait until a host socket exists in the runtime dir.
    pub fn wait_for_host(&mut self, timeout: Duration) -> PathBuf {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(sock) = self.host_socket() {
                return sock;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "Chromium exited ({status}) before the tabwire host started.\n{}",
                    self.log_tail()
                );
            }
            if Instant::now() > deadline {
                panic!(
                    "the tabwire host did not start within {timeout:?} (no socket in {}).\n{}",
                    self.runtime_dir.display(),
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The socket of the live host, if any.
    pub fn host_socket(&self) -> Option<PathBuf> {
        self.host_record().map(|r| r.socket)
    }

    /// The record of the live host, if any.
    pub fn host_record(&self) -> Option<tabwire_host::runtime_dir::HostRecord> {
        tabwire_host::runtime_dir::live_hosts(&self.runtime_dir)
            .into_iter()
            .find(|r| r.socket.exists())
    }

    /// The browser's PID.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The last lines of the browser's (and host's) log, for failure messages.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(40)..].join("\n");
        format!("--- last lines of {} ---\n{tail}", self.log.display())
    }
}

/// Write the native-host manifest into the profile, pointing at the real host binary.
fn install_host_manifest(profile: &Path) {
    let dir = profile.join("NativeMessagingHosts");
    std::fs::create_dir_all(&dir).unwrap();
    let template = std::fs::read_to_string(bins::repo_root().join("manifests/dev.tabwire.host.json.in"))
        .expect("manifests/dev.tabwire.host.json.in");
    let host = bins::bin("tabwire-host");
    let manifest = template.replace("@HOST_PATH@", &host.display().to_string());
    std::fs::write(dir.join("dev.tabwire.host.json"), manifest).unwrap();
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let pid = self.child.id() as i32;
        // SAFETY: signalling the browser we started, by its PID, then its process group.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let _ = self.child.wait();
        if std::env::var_os("TABWIRE_KEEP_TEST_DIRS").is_none() && !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.root);
        } else if std::thread::panicking() {
            eprintln!("{}", self.log_tail());
            let _ = std::fs::remove_dir_all(&self.profile);
        }
    }
}
