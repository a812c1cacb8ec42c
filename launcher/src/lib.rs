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

use tabwire_proto::runtime_dir::{self, HostRecord};

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
    /// Speak CDP with the browser over a pipe (`--remote-debugging-pipe`: the browser reads
    /// fd 3 and writes fd 4; no port is opened). Our ends: [`Browser::take_cdp_pipe`].
    /// For tests only; off for `tabwire demo`.
    pub cdp_pipe: bool,
    /// Chrome's own log in the browser's log (`--enable-logging=stderr --v=0`): what Chrome
    /// says when it cannot start the native host, and the extension's console (why it did not
    /// connect). It also logs every page's console, so it is off for the demo and the benches.
    pub chrome_log: bool,
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
    #[error("cannot create the pipes for --remote-debugging-pipe: {0}")]
    CdpPipe(std::io::Error),
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
    /// Our ends of the CDP pipe (to the browser, from the browser), until taken.
    cdp: Option<(std::fs::File, std::fs::File)>,
}

impl Browser {
    /// Start the browser and wait for its host's socket.
    pub fn launch(opts: &LaunchOptions) -> Result<Browser, LaunchError> {
        let mut browser = Self::spawn(opts)?;
        browser.wait_for_host(opts.timeout)?;
        Ok(browser)
    }

    /// Start the browser without waiting for its host: for a host whose record this process
    /// cannot check (a Windows host under Wine names a Windows pid and a named pipe).
    pub fn spawn(opts: &LaunchOptions) -> Result<Browser, LaunchError> {
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
        if opts.chrome_log {
            cmd.args(["--enable-logging=stderr", "--v=0"]);
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
        // The child's ends stay open until the spawn returns and close in `into_ours`: from
        // then on only the browser holds them, so each side sees EOF when the other goes.
        let pipe = if opts.cdp_pipe {
            cmd.arg("--remote-debugging-pipe");
            Some(cdp_pipe::CdpPipe::attach(&mut cmd).map_err(LaunchError::CdpPipe)?)
        } else {
            None
        };
        let child = cmd
            .spawn()
            .map_err(|source| LaunchError::Spawn { path: opts.chromium.clone(), source })?;
        let cdp = pipe.map(cdp_pipe::CdpPipe::into_ours);
        Ok(Browser { child, root, profile, runtime_dir, log, keep: opts.keep, cdp })
    }

    /// Whether the browser has exited (how, when it has).
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
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

    /// The live host of this browser, if it listens: its socket exists. On Windows a live host's
    /// record is enough (it writes it once its pipe is made, and the pipe lives as long as it
    /// does): looking for a pipe opens it, a connection to the host, which under Wine also says
    /// it is not there.
    pub fn host(&self) -> Option<HostRecord> {
        let listening = |r: &HostRecord| cfg!(windows) || r.socket.exists();
        runtime_dir::live_hosts(&self.runtime_dir).into_iter().find(listening)
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

    /// Our ends of the CDP pipe, once (launched with [`LaunchOptions::cdp_pipe`]): write
    /// NUL-terminated JSON messages to the first, read the browser's from the second. Both are
    /// close-on-exec. Closing the first makes the browser see EOF, on which it may exit.
    pub fn take_cdp_pipe(&mut self) -> Option<(std::fs::File, std::fs::File)> {
        self.cdp.take()
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

/// The two pipes of `--remote-debugging-pipe`.
#[cfg(unix)]
mod cdp_pipe {
    use std::fs::File;
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    /// Fds the browser reads CDP from and writes it to.
    const BROWSER_READS: libc::c_int = 3;
    const BROWSER_WRITES: libc::c_int = 4;

    pub struct CdpPipe {
        /// Ours: we write, the browser reads.
        to_browser: OwnedFd,
        /// Ours: the browser writes, we read.
        from_browser: OwnedFd,
        /// The child's ends, moved to fds above 4; closed when this is dropped.
        _theirs: [OwnedFd; 2],
    }

    impl CdpPipe {
        /// Create both pipes, every end close-on-exec, and have `cmd`'s child put its ends on
        /// fds 3 and 4 (which `dup2` leaves without close-on-exec, so only they survive exec).
        pub fn attach(cmd: &mut Command) -> io::Result<CdpPipe> {
            let (browser_reads, to_browser) = pipe()?;
            let (from_browser, browser_writes) = pipe()?;
            // Above 4, so that neither dup2 below overwrites the other end, nor is a no-op
            // (dup2(fd, fd) would keep close-on-exec and the browser would lose the fd).
            let browser_reads = above_4(&browser_reads)?;
            let browser_writes = above_4(&browser_writes)?;
            let (r, w) = (browser_reads.as_raw_fd(), browser_writes.as_raw_fd());
            // SAFETY: runs in the forked child before exec; only dup2, which is
            // async-signal-safe, on fds that stay open in the parent until the spawn returns.
            unsafe {
                cmd.pre_exec(move || {
                    if libc::dup2(r, BROWSER_READS) < 0 || libc::dup2(w, BROWSER_WRITES) < 0 {
                        return Err(io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            Ok(CdpPipe { to_browser, from_browser, _theirs: [browser_reads, browser_writes] })
        }

        /// After the spawn: close the child's ends, keep ours.
        pub fn into_ours(self) -> (File, File) {
            (File::from(self.to_browser), File::from(self.from_browser))
        }
    }

    /// A pipe, both ends close-on-exec: (read end, write end).
    fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
        let mut fds = [-1 as libc::c_int; 2];
        // SAFETY: `fds` has room for the two fds pipe2/pipe write.
        #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
        let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
        #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
        let rc = unsafe { libc::pipe(fds.as_mut_ptr()) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: two fresh fds that nothing else owns.
        let ends = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
        for fd in [fds[0], fds[1]] {
            // SAFETY: an fd we own.
            if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(ends)
    }

    /// A close-on-exec duplicate of `fd` numbered 5 or more (the original closes on drop).
    fn above_4(fd: &OwnedFd) -> io::Result<OwnedFd> {
        // SAFETY: duplicating an fd we own.
        let dup = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, BROWSER_WRITES + 1) };
        if dup < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh fd that nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(dup) })
    }
}

#[cfg(not(unix))]
mod cdp_pipe {
    pub struct CdpPipe;

    impl CdpPipe {
        pub fn attach(_cmd: &mut std::process::Command) -> std::io::Result<CdpPipe> {
            Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "--remote-debugging-pipe is wired up on unix only",
            ))
        }

        pub fn into_ours(self) -> (std::fs::File, std::fs::File) {
            unreachable!("attach never succeeds here")
        }
    }
}

/// The native-host manifest Chrome reads from `<profile>/NativeMessagingHosts/`.
fn write_host_manifest(profile: &Path, host: &Path) -> std::io::Result<()> {
    let dir = profile.join("NativeMessagingHosts");
    std::fs::create_dir_all(&dir)?;
    use tabwire_proto::extension_id::{STORE_EXTENSION_ID, own_ids};
    let ids: Vec<String> = own_ids(STORE_EXTENSION_ID).into_iter().map(str::to_owned).collect();
    let manifest = tabwire_install::HostManifest::new(host, &ids).render();
    std::fs::write(dir.join(tabwire_install::MANIFEST_FILE), manifest)
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
