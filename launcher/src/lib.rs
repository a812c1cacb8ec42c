//! Start a Chromium-family browser with the tabwire extension loaded unpacked, a private profile
//! and a private runtime dir, and wait until its `tabwire-host` listens. Used by `tabwire demo`
//! and by every real-browser test, so both start the browser the same way.
//!
//! Why the care: a page loaded from the command line races the content script's registration
//! (1 of ~19 runs lost it), so callers open pages only after [`Browser::launch`] returns, which
//! is when the host's socket exists. The browser runs in its own process group so that its
//! renderers and host end with it; we signal only that group, by the PID we started.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tabwire_host::runtime_dir::{self, HostRecord};

/// Debian's Chromium.
pub const DEFAULT_CHROMIUM: &str = "/usr/bin/chromium";

/// Flags for a quiet, self-contained browser (checked on this machine's Chromium 156).
const FLAGS: &[&str] = &[
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
];

/// What to start.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// The browser binary.
    pub chromium: PathBuf,
    /// The unpacked extension (the folder holding manifest.json).
    pub extension_dir: PathBuf,
    /// The `tabwire-host` the native-host manifest points at.
    pub host_binary: PathBuf,
    /// Headless (`--headless=new`) or a visible window.
    pub headless: bool,
    /// Scratch folder for the profile, runtime dir and log; created 0700. Removed on drop
    /// unless `keep` is set.
    pub root: PathBuf,
    pub keep: bool,
    /// Extra environment for the browser, and so for the host it starts.
    pub env: Vec<(String, String)>,
    /// How long to wait for the host's socket.
    pub timeout: Duration,
    /// Write the native-host manifest into the profile (`<root>/profile/NativeMessagingHosts/`).
    /// Off when the caller installed it already (the tests run `tabwire install --user-data-dir`).
    pub write_manifest: bool,
}

/// Why the browser could not be started.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error(
        "no browser at {0}: install Debian's Chromium with `sudo apt-get install -y chromium` \
         (scripts/setup.sh does it)"
    )]
    NoBrowser(PathBuf),
    #[error("the tabwire extension is not at {0} (no manifest.json there)")]
    NoExtension(PathBuf),
    #[error("the tabwire host binary is not at {0}: build it with `cargo build --bins`")]
    NoHost(PathBuf),
    #[error("cannot start {path}: {source}")]
    Spawn { path: PathBuf, source: std::io::Error },
    #[error("the browser exited ({status}) before the tabwire host started.\n{log}")]
    Exited { status: String, log: String },
    #[error(
        "the tabwire host did not start within {timeout:?}: the extension did not connect \
         (no socket in {runtime}).\n{log}"
    )]
    NoHostSocket { timeout: Duration, runtime: PathBuf, log: String },
    #[error("cannot prepare {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// A running browser. Dropping it ends the browser (SIGTERM, then SIGKILL to its group) and
/// removes its scratch folder.
pub struct Browser {
    child: Child,
    pub root: PathBuf,
    pub profile: PathBuf,
    pub runtime_dir: PathBuf,
    pub log: PathBuf,
    keep: bool,
}

impl Browser {
    /// Start the browser and wait for its host's socket.
    pub fn launch(opts: &LaunchOptions) -> Result<Browser, LaunchError> {
        if !opts.chromium.exists() {
            return Err(LaunchError::NoBrowser(opts.chromium.clone()));
        }
        if !opts.extension_dir.join("manifest.json").exists() {
            return Err(LaunchError::NoExtension(opts.extension_dir.clone()));
        }
        if !opts.host_binary.exists() {
            return Err(LaunchError::NoHost(opts.host_binary.clone()));
        }
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| LaunchError::Io { path, source }
        };
        let root = opts.root.clone();
        create_private_dir(&root).map_err(io(&root))?;
        let profile = Self::profile_dir(&root);
        let runtime_dir = root.join("run");
        std::fs::create_dir_all(&profile).map_err(io(&profile))?;
        if opts.write_manifest {
            write_host_manifest(&profile, &opts.host_binary).map_err(io(&profile))?;
        }
        let log = root.join("browser.log");
        let log_file = std::fs::File::create(&log).map_err(io(&log))?;
        let log_err = log_file.try_clone().map_err(io(&log))?;

        let mut cmd = Command::new(&opts.chromium);
        if opts.headless {
            cmd.arg("--headless=new");
        }
        cmd.args(FLAGS)
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!("--load-extension={}", opts.extension_dir.display()))
            .arg(format!("--disable-extensions-except={}", opts.extension_dir.display()))
            .env("TABWIRE_RUNTIME_DIR", &runtime_dir)
            .stdin(Stdio::null())
            .stdout(log_file)
            .stderr(log_err);
        for (k, v) in &opts.env {
            cmd.env(k, v);
        }
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd
            .spawn()
            .map_err(|source| LaunchError::Spawn { path: opts.chromium.clone(), source })?;
        let mut browser = Browser { child, root, profile, runtime_dir, log, keep: opts.keep };
        browser.wait_for_host(opts.timeout)?;
        Ok(browser)
    }

    /// Wait until a live host has a socket in the runtime dir; its record.
    pub fn wait_for_host(&mut self, timeout: Duration) -> Result<HostRecord, LaunchError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(record) = self.host() {
                return Ok(record);
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(LaunchError::Exited {
                    status: status.to_string(),
                    log: self.log_tail(40),
                });
            }
            if Instant::now() > deadline {
                return Err(LaunchError::NoHostSocket {
                    timeout,
                    runtime: self.runtime_dir.clone(),
                    log: self.log_tail(40),
                });
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The live host of this browser, if its socket exists.
    pub fn host(&self) -> Option<HostRecord> {
        runtime_dir::live_hosts(&self.runtime_dir).into_iter().find(|r| r.socket.exists())
    }

    /// The profile folder a launch with `root` uses, for installing the manifest beforehand.
    pub fn profile_dir(root: &Path) -> PathBuf {
        root.join("profile")
    }

    /// The browser's PID.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The last `n` lines of the browser's log (which also holds the host's stderr).
    pub fn log_tail(&self, n: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(n)..].join("\n");
        format!("--- last lines of {} ---\n{tail}", self.log.display())
    }

    /// Keep the scratch folder after drop (for a failing test's post-mortem).
    pub fn keep(&mut self) {
        self.keep = true;
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            let pid = self.child.id() as i32;
            // SAFETY: signalling the browser we started, by its PID.
            unsafe { libc::kill(pid, libc::SIGTERM) };
            let deadline = Instant::now() + Duration::from_secs(3);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            // SAFETY: the process group we created at spawn; catches renderers left behind.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
        #[cfg(not(unix))]
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }
}

/// The native-host manifest Chrome reads from `<profile>/NativeMessagingHosts/`.
fn write_host_manifest(profile: &Path, host: &Path) -> std::io::Result<()> {
    let dir = profile.join("NativeMessagingHosts");
    std::fs::create_dir_all(&dir)?;
    let ids = [tabwire_host::extension_id::EXTENSION_ID.to_owned()];
    let manifest = tabwire_install::manifest::HostManifest::new(host, &ids).render();
    std::fs::write(dir.join(tabwire_install::browsers::MANIFEST_FILE), manifest)
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}
