//! The real thing: `tabwire install --user-data-dir P`, then Chromium started with that profile
//! and the unpacked extension starts `tabwire-host` through the manifest install wrote, and
//! doctor sees the host running.
//!
//! Needs /usr/bin/chromium and a built host (`target/debug/tabwire-host`, from
//! `cargo build -p tabwire-host`); without them it says so and passes.
#![cfg(target_os = "linux")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::World;
use tabwire_host::runtime_dir;

const CHROMIUM: &str = "/usr/bin/chromium";

/// `target/debug/tabwire-host` beside this test's `deps/` folder.
fn built_host() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().join("tabwire-host")
}

#[test]
fn chromium_starts_the_host_through_the_installed_manifest() {
    let host = built_host();
    if !Path::new(CHROMIUM).exists() || !host.exists() {
        eprintln!("SKIPPED: needs {CHROMIUM} and {} (cargo build -p tabwire-host)", host.display());
        return;
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let extension = repo.join("extension");

    let mut w = World::new();
    let profile = w.root().join("profile");
    std::fs::create_dir_all(&profile).unwrap();
    w.env.runtime_dir = w.root().join("run");
    let out = w
        .install(&[
            "--user-data-dir",
            profile.to_str().unwrap(),
            "--host-path",
            host.to_str().unwrap(),
        ])
        .unwrap();
    assert!(out.contains("created"), "{out}");

    let mut cmd = Command::new(CHROMIUM);
    cmd.args([
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg(format!("--load-extension={}", extension.display()))
    .arg(format!("--disable-extensions-except={}", extension.display()))
    .arg("about:blank")
    .env("TABWIRE_RUNTIME_DIR", &w.env.runtime_dir)
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let browser = Running(cmd.spawn().unwrap());

    let deadline = Instant::now() + Duration::from_secs(30);
    let mut hosts = Vec::new();
    while hosts.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        hosts = runtime_dir::live_hosts(&w.env.runtime_dir);
    }
    let doctor = w.doctor(&[]);

    drop(browser);

    assert_eq!(hosts.len(), 1, "Chromium did not start the host through the manifest");
    assert!(doctor.0, "{}", doctor.1);
    assert!(doctor.1.contains("ok    hosts: 1 running"), "{}", doctor.1);

    w.uninstall(&[]);
    assert!(!profile.join("NativeMessagingHosts").exists());
}

/// The browser; dropping it (also when the test panics) ends its process group.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        stop(&mut self.0);
    }
}

/// End the browser's process group (renderers, the host): SIGTERM, then SIGKILL after 5 s.
/// Through libc, never `/usr/bin/kill`: procps-ng 4.0.2 turns `kill -TERM -PGID` into
/// kill(-1), a signal to every process of the user.
fn stop(browser: &mut std::process::Child) {
    let pgid = browser.id() as libc::pid_t;
    assert!(pgid > 1, "the browser's process group");
    // SAFETY: signals the process group created for the browser at spawn, nothing else.
    unsafe { libc::kill(-pgid, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if browser.try_wait().ok().flatten().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: as above; whatever of the group is left.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
    let _ = browser.wait();
}
