//! The npm package as a user gets it: the tarballs `scripts/npm-pack.sh` writes (the `tabwire`
//! launcher and `@tabwire/linux-x64` with the prebuilt programs), installed into a fresh prefix
//! by an npm kept offline (nothing is downloaded) with no Rust toolchain on its PATH, then run
//! through `npx` as the README says:
//! `install` registers the host for a Chromium profile, `doctor` passes through that real
//! headless Chromium running the installed extension, and an MCP session started as
//! `npx -y tabwire mcp` (what `claude mcp add tabwire -- npx -y tabwire mcp` runs) reads a page.
//! Run from npx's own cache (`~/.npm/_npx/<hash>/`), `install --claude` copies the host out of
//! it and registers `npx -y tabwire mcp` with the real Claude Code CLI; clearing the cache then
//! leaves the browser's host in place.
//!
//! What is packed is the programs Cargo built for this test run, through `npm-pack.sh
//! --prebuilt`, the way the release workflow packs its own builds (a release build here would
//! add 12 minutes to every run for the same code); set `TABWIRE_NPM_DIR` to a folder of
//! tarballs packed before (e.g. by `scripts/npm-pack.sh`, release) to test those instead.
//! Without npm the tests say so loudly and pass.
//!
//! Unix only: the package tested is `@tabwire/linux-x64`, on a PATH of symlinks, its launcher
//! followed through /proc and signals; scripts/windows.sh runs the Windows package's programs
//! (bridge/tests/install/windows.rs).
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tabwire_launcher::Browser;
use tabwire_testkit::claude::{QUIET_ENV, claude_cli};
use tabwire_testkit::{Chromium, Fixtures, Mcp, bins};

/// A machine with the npm package installed: a home, a prefix holding `node_modules`, and a
/// PATH of Node.js, npm and a shell only.
struct Machine {
    root: bins::Scratch,
    home: PathBuf,
    prefix: PathBuf,
    path: PathBuf,
}

fn npm_missing() -> bool {
    let found = Command::new("npm").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        eprintln!(
            "\n!!!!! SKIPPED: npm is not installed, so the npm package was not tested. \
             Install Node.js and npm (`apt-get install nodejs npm`) and run again. !!!!!\n"
        );
    }
    !found
}

/// The folder of packed tarballs: `TABWIRE_NPM_DIR`, else what `scripts/npm-pack.sh` packs now
/// (once for all the tests here) into `npm/` beside the test programs' target dir.
fn tarballs() -> PathBuf {
    static PACKED: OnceLock<PathBuf> = OnceLock::new();
    PACKED.get_or_init(pack).clone()
}

/// Packs the programs Cargo built for this run, as the release workflow packs its builds:
/// `--prebuilt DIR`, with DIR/linux-x64/ holding `tabwire` and `tabwire-host`.
fn pack() -> PathBuf {
    if let Some(dir) = std::env::var_os("TABWIRE_NPM_DIR").filter(|d| !d.is_empty()) {
        return dir.into();
    }
    let out = bins::bin("tabwire").parent().unwrap().join("npm");
    let prebuilt = out.join("prebuilt");
    let programs = prebuilt.join("linux-x64");
    let _ = std::fs::remove_dir_all(&prebuilt);
    std::fs::create_dir_all(&programs).unwrap();
    for name in ["tabwire", "tabwire-host"] {
        std::os::unix::fs::symlink(bins::bin(name), programs.join(name)).unwrap();
    }
    let status = Command::new(bins::repo_root().join("scripts/npm-pack.sh"))
        .args(["--platform", "linux-x64", "--prebuilt"])
        .arg(&prebuilt)
        .arg("--out")
        .arg(&out)
        .status()
        .expect("run scripts/npm-pack.sh");
    assert!(status.success(), "scripts/npm-pack.sh failed (above: why)");
    out
}

fn one(dir: &Path, prefix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.strip_prefix(prefix).is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
                && name.ends_with(".tgz")
        })
        .collect();
    assert_eq!(found.len(), 1, "one {prefix}VERSION.tgz in {}: {found:?}", dir.display());
    found[0].clone()
}

impl Machine {
    fn new() -> Machine {
        let root = bins::scratch_dir("npm");
        let (home, prefix, path) = (root.join("home"), root.join("prefix"), root.join("path"));
        for dir in [&home, &prefix, &path] {
            std::fs::create_dir_all(dir).unwrap();
        }
        // Only these programs: no cargo, no rustc, nothing of the checkout.
        for tool in ["node", "npm", "npx", "sh"] {
            let which = Command::new("sh").args(["-c", &format!("command -v {tool}")]).output();
            let at = String::from_utf8(which.unwrap().stdout).unwrap();
            assert!(!at.trim().is_empty(), "{tool} is not on PATH");
            std::os::unix::fs::symlink(at.trim(), path.join(tool)).unwrap();
        }
        Machine { root, home, prefix, path }
    }

    /// A command as the user's shell runs it: only HOME and PATH, in the prefix.
    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(self.path.join(program));
        cmd.env_clear()
            .env("HOME", &self.home)
            .env("PATH", &self.path)
            .env("npm_config_update_notifier", "false")
            // Nothing from the registry: what runs is what the tarballs hold.
            .env("npm_config_offline", "true")
            .current_dir(&self.prefix);
        cmd
    }

    /// `npx -y tabwire ARGS`.
    fn npx(&self, args: &[&str], runtime: Option<&Path>) -> Output {
        let mut cmd = self.command("npx");
        cmd.args(["-y", "tabwire"]).args(args);
        if let Some(dir) = runtime {
            cmd.env("TABWIRE_RUNTIME_DIR", dir);
        }
        cmd.output().expect("run npx")
    }

    /// Where npm put the platform package's programs.
    fn programs(&self) -> PathBuf {
        self.prefix.join("node_modules/@tabwire/linux-x64/bin")
    }

    /// Where install keeps the host it copies out of npm's folders.
    fn kept_host(&self) -> PathBuf {
        self.home.join(".local/share/tabwire/bin/tabwire-host")
    }
}

/// The `path` of the native-host manifest in `profile`.
fn manifest_host(profile: &Path) -> PathBuf {
    let file = profile.join("NativeMessagingHosts/dev.tabwire.host.json");
    let manifest: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    PathBuf::from(manifest["path"].as_str().unwrap_or_else(|| panic!("no path: {manifest}")))
}

fn said(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "failed ({}): {text}{}", out.status, stderr(out));
    text
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Install the tarballs into a fresh prefix, as `npm install` of the published package would
/// (the other systems' packages are skipped: their `os` and `cpu` do not match).
fn installed() -> Machine {
    let machine = Machine::new();
    let dir = tarballs();
    let (main, linux) = (one(&dir, "tabwire-"), one(&dir, "tabwire-linux-x64-"));
    for tgz in [&main, &linux] {
        eprintln!("{}: {} bytes", tgz.display(), std::fs::metadata(tgz).unwrap().len());
    }
    let started = Instant::now();
    let out = machine
        .command("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&machine.prefix)
        .args([&main, &linux])
        .output()
        .expect("run npm");
    said(&out);
    eprintln!("npm install of the two tarballs took {:.1} s", started.elapsed().as_secs_f64());
    machine
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn npx_installs_checks_and_serves_mcp_without_rust() {
    if npm_missing() {
        return;
    }
    let machine = installed();
    for tool in ["cargo", "rustc", "rustup"] {
        let found = machine.command("sh").args(["-c", &format!("command -v {tool}")]).output();
        assert!(!found.unwrap().status.success(), "{tool} is on the test's PATH");
    }

    // Which build: the release's version, commit and extension build.
    let version = said(&machine.npx(&["--version"], None));
    assert!(version.starts_with(&format!("tabwire {} (commit ", env!("CARGO_PKG_VERSION"))));

    // install: the host registered for this Chromium profile is the packaged program.
    let profile = Browser::profile_dir(&machine.root.join("chr"));
    std::fs::create_dir_all(&profile).unwrap();
    let out = machine.npx(
        &["install", "--browser", "chromium", "--user-data-dir", profile.to_str().unwrap()],
        None,
    );
    let text = said(&out);
    let folder = machine.home.join(".local/share/tabwire/extension/current");
    assert!(text.contains(&format!("Load unpacked and choose {}", folder.display())), "{text}");
    // npm's folder may go (`npm uninstall`, a temporary prefix): the manifest names a copy.
    let packaged = machine.programs().join("tabwire-host").canonicalize().unwrap();
    let host = machine.kept_host();
    assert_eq!(manifest_host(&profile), host);
    assert!(text.contains(&format!(
        "copied        {}  (from {}",
        host.display(),
        packaged.display()
    )));
    assert_eq!(std::fs::read(&host).unwrap(), std::fs::read(&packaged).unwrap());
    let build: Value =
        serde_json::from_slice(&std::fs::read(folder.join("build.json")).unwrap()).unwrap();
    let build_id = build["build_id"].as_str().unwrap();
    assert!(version.contains(&format!("extension build {build_id})")), "{version}");

    // A real Chromium with the installed extension starts that host; doctor passes through it.
    let browser = Chromium::start_installed(machine.root.join("chr"), folder, host);
    let doctor = machine.npx(
        &["doctor", "--browser", "chromium", "--user-data-dir", profile.to_str().unwrap()],
        Some(&browser.runtime_dir),
    );
    let report = format!("{}{}", String::from_utf8_lossy(&doctor.stdout), stderr(&doctor));
    assert!(doctor.status.success(), "doctor should pass:\n{report}");
    assert!(report.contains("answered in"), "a ping through the browser:\n{report}");
    assert!(report.contains("the one this tabwire carries"), "{report}");

    // An MCP session as Claude Code starts it: `npx -y tabwire mcp`.
    let pages = Fixtures::serve();
    let mut cmd = tokio::process::Command::from(machine.command("npx"));
    cmd.args(["-y", "tabwire", "mcp"]).env("TABWIRE_RUNTIME_DIR", &browser.runtime_dir);
    let transport = TokioChildProcess::new(cmd).expect("spawn npx -y tabwire mcp");
    let pid = transport.id();
    let client = ().serve(transport).await.expect("MCP handshake through npx");
    let mcp = Mcp { client, serve: None, pid };
    let tab =
        mcp.ok("open_tab", json!({ "url": pages.url("plain.html") })).await["tab"]["id"].clone();
    let page = mcp.read_page(json!({ "tab_id": tab, "mode": "text" })).await;
    assert!(page.head.starts_with("page \"Plain page\""), "{page:?}");
    assert_eq!(page.lines.trim_end(), "│ A page that does not use window.tabwire.", "{page:?}");
}

/// `npx -y tabwire install --claude` as a user runs it, from npx's cache (here filled from the
/// tarballs, `--package`, since nothing is published): the host is copied out of the cache,
/// Claude Code gets `npx -y tabwire mcp`, and after the cache is cleared the browser still
/// starts the host and doctor passes.
#[test]
fn clearing_npx_s_cache_leaves_the_browser_its_host() {
    if npm_missing() {
        return;
    }
    let machine = Machine::new();
    let claude = claude_cli();
    std::os::unix::fs::symlink(&claude, machine.path.join("claude")).unwrap();
    let dir = tarballs();
    let (main, linux) = (one(&dir, "tabwire-"), one(&dir, "tabwire-linux-x64-"));
    let work = machine.root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let profile = Browser::profile_dir(&machine.root.join("chr"));
    std::fs::create_dir_all(&profile).unwrap();
    let npx = |args: &[&str], runtime: Option<&Path>| {
        let mut cmd = machine.command("npx");
        cmd.arg("-y").arg("--package").arg(&main).arg("--package").arg(&linux);
        cmd.arg("tabwire").args(args).current_dir(&work).envs(QUIET_ENV);
        if let Some(dir) = runtime {
            cmd.env("TABWIRE_RUNTIME_DIR", dir);
        }
        cmd.output().expect("run npx")
    };

    let args = ["install", "--claude", "--browser", "chromium", "--user-data-dir"];
    let out = npx(&[&args[..], &[profile.to_str().unwrap()]].concat(), None);
    let text = said(&out);
    let cache = machine.home.join(".npm/_npx");
    let host = machine.kept_host();
    assert_eq!(manifest_host(&profile), host, "{text}");
    let copied = text.lines().find(|l| l.starts_with("copied")).unwrap_or_else(|| panic!("{text}"));
    assert!(copied.contains(&format!("(from {}/", cache.display())), "from npx's cache: {text}");
    assert!(copied.contains("npm may clear or replace that folder"), "{text}");
    assert!(text.contains("(`npx -y tabwire uninstall` removes all of it)"), "{text}");
    let package: Value = serde_json::from_slice(
        &std::fs::read(bins::repo_root().join("npm/tabwire/package.json")).unwrap(),
    )
    .unwrap();
    let name = package["name"].as_str().unwrap();
    assert!(text.contains(&format!("ran: claude mcp add tabwire -- npx -y {name} mcp")), "{text}");

    // What the user sees in Claude Code.
    let mut get = machine.command("claude");
    get.args(["mcp", "get", "tabwire"]).current_dir(&work).envs(QUIET_ENV);
    let got = said(&get.output().unwrap());
    assert!(got.contains("Command: npx\n"), "{got}");
    assert!(got.contains(&format!("Args: -y {name} mcp\n")), "{got}");

    // npm clears npx's cache (`rm -rf ~/.npm/_npx`, or another package evicts it).
    std::fs::remove_dir_all(&cache).unwrap();
    let folder = machine.home.join(".local/share/tabwire/extension/current");
    let browser = Chromium::start_installed(machine.root.join("chr"), folder, host.clone());
    let hosts = tabwire_proto::runtime_dir::live_hosts(&browser.runtime_dir);
    let started = std::fs::read_link(format!("/proc/{}/exe", hosts[0].pid)).unwrap();
    assert_eq!(started, host, "the browser started the kept copy");
    let profile = profile.to_str().unwrap();
    let doctor = npx(
        &["doctor", "--browser", "chromium", "--user-data-dir", profile],
        Some(&browser.runtime_dir),
    );
    let report = format!("{}{}", String::from_utf8_lossy(&doctor.stdout), stderr(&doctor));
    assert!(doctor.status.success(), "doctor should pass:\n{report}");
    assert!(report.contains("answered in"), "a ping through the browser:\n{report}");
}

/// The launcher is the program to whoever runs it: the program's exit code comes back, and a
/// signal sent to the launcher (an MCP client stopping its server) ends the program too — also
/// one that arrives while the program is starting (CI once sent it there: the launcher died of
/// it and the program ran on, orphaned). A preloaded module holds Node for 300 ms just after
/// it starts the program, so the second run's signal lands in that moment every time.
#[test]
fn the_launcher_passes_exit_codes_and_signals_on() {
    if npm_missing() {
        return;
    }
    let machine = installed();
    let out = machine.npx(&["no-such-command"], None);
    assert_eq!(out.status.code(), Some(2), "clap's usage error: {}", stderr(&out));
    assert!(stderr(&out).contains("unrecognized subcommand 'no-such-command'"), "{}", stderr(&out));

    let slow = machine.root.join("slow-spawn.js");
    std::fs::write(
        &slow,
        "const cp = require('child_process');\n\
         const spawn = cp.spawn;\n\
         cp.spawn = (...args) => {\n\
           const child = spawn(...args);\n\
           Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);\n\
           return child;\n\
         };\n",
    )
    .unwrap();
    let launcher = machine.prefix.join("node_modules/.bin/tabwire");
    for preload in [None, Some(&slow)] {
        let mut command = machine.command("sh");
        command
            .arg("-c")
            .arg("exec \"$0\" mcp")
            .arg(&launcher)
            .env("TABWIRE_RUNTIME_DIR", machine.root.join("run"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null());
        if let Some(preload) = preload {
            command.env("NODE_OPTIONS", format!("--require={}", preload.display()));
        }
        let mut child = command.spawn().expect("start the launcher");
        let children = format!("/proc/{0}/task/{0}/children", child.id());
        let deadline = Instant::now() + Duration::from_secs(10);
        let program: i32 = loop {
            let text = std::fs::read_to_string(&children).unwrap_or_default();
            if let Some(pid) = text.split_whitespace().next() {
                break pid.parse().unwrap();
            }
            assert!(Instant::now() < deadline, "the launcher started no program");
            std::thread::sleep(Duration::from_millis(5));
        };
        // Node forks, then the child execs the program: until then the child is still node.
        let want = machine.programs().join("tabwire").canonicalize().unwrap();
        let exe = loop {
            let exe = std::fs::read_link(format!("/proc/{program}/exe")).unwrap();
            if exe == want || Instant::now() > deadline {
                break exe;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        assert_eq!(exe, want);

        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "the launcher did not end on SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        };
        // A zombie has no exe, and a pid used again is another program.
        let outlived = std::fs::read_link(format!("/proc/{program}/exe")).is_ok_and(|e| e == want);
        assert!(!outlived, "the program outlived the launcher (preload {preload:?}): {status}");
        eprintln!("after SIGTERM the launcher ended (preload {preload:?}): {status}");
    }
}
