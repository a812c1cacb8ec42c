//! The Windows build, end to end under Wine: Debian's Chromium starts the Windows
//! `tabwire-host.exe` (through a one-line wrapper named as the manifest's `path`, since a Linux
//! browser cannot start a `.exe` by itself), and the Windows `tabwire.exe mcp`, also under Wine,
//! reaches it over Wine's named pipes — tabs, a forced state read, a click, a page event,
//! workers — then `tabwire.exe install` / `doctor` / `uninstall` against Wine's registry.
//!
//! Needs the Windows binaries: `TABWIRE_WINDOWS_BINS` names the folder holding `tabwire.exe`,
//! `tabwire-host.exe` and the `bcryptprimitives.dll` stand-in Wine 8 needs, and `WINEPREFIX`
//! the Wine to use (else a prefix of its own in that folder). scripts/windows.sh builds them,
//! sets both and runs this; without them the test says so and passes.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tabwire_proto::runtime_dir::HostRecord;
use tabwire_testkit::bins::{self, Scratch};
use tabwire_testkit::{Chromium, Fixtures, Mcp};

/// The key Chrome reads on Windows to find the manifest.
const CHROME_KEY: &str = r"HKCU\Software\Google\Chrome\NativeMessagingHosts\dev.tabwire.host";

/// The Windows binaries, one Wine prefix, and a scratch folder for everything the test's
/// Windows processes write (runtime dir, configuration, state, data).
struct Wine {
    bins: PathBuf,
    prefix: PathBuf,
    root: Scratch,
}

impl Wine {
    /// `None`, after saying why loudly, when the Windows binaries were not built.
    fn find() -> Option<Wine> {
        let Some(dir) = std::env::var_os("TABWIRE_WINDOWS_BINS").filter(|d| !d.is_empty()) else {
            eprintln!(
                "\n*** SKIPPED: TABWIRE_WINDOWS_BINS is not set, so the Windows build was not \
                 tested under Wine. Run ./scripts/windows.sh (it builds tabwire.exe and \
                 tabwire-host.exe and runs this test). ***\n"
            );
            return None;
        };
        let bins = PathBuf::from(dir);
        for file in ["tabwire.exe", "tabwire-host.exe", "bcryptprimitives.dll"] {
            assert!(
                bins.join(file).exists(),
                "TABWIRE_WINDOWS_BINS={} holds no {file}: build with ./scripts/windows.sh",
                bins.display()
            );
        }
        let prefix = std::env::var_os("WINEPREFIX")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| bins.join("wine-prefix"));
        let root = bins::scratch_dir("win");
        for dir in ["run", "config", "state", "data", "work"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        let wine = Wine { bins, prefix, root };
        if !wine.prefix.join("system.reg").exists() {
            let done = Command::new("wineboot").arg("-i").envs(wine.env()).output();
            assert!(done.is_ok_and(|o| o.status.success()), "wineboot -i failed");
        }
        Some(wine)
    }

    /// `path` as Windows programs under Wine name it (drive Z: is the Unix root).
    fn win(path: &Path) -> String {
        format!("Z:{}", path.display()).replace('/', "\\")
    }

    /// The environment of every Windows process of the test: one Wine, one runtime directory
    /// (as a Windows path, the same string for host and bridge), private everything else.
    fn env(&self) -> Vec<(String, String)> {
        let mut env = vec![
            ("WINEPREFIX".to_owned(), self.prefix.display().to_string()),
            ("WINEDEBUG".to_owned(), "-all".to_owned()),
        ];
        for (var, dir) in [
            ("TABWIRE_RUNTIME_DIR", "run"),
            ("TABWIRE_CONFIG_DIR", "config"),
            ("TABWIRE_STATE_DIR", "state"),
            ("TABWIRE_DATA_DIR", "data"),
        ] {
            env.push((var.to_owned(), Self::win(&self.root.join(dir))));
        }
        env
    }

    /// `wine <program> <args>`, a Windows program of the prefix or one of ours.
    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new("wine");
        let ours = self.bins.join(program);
        cmd.arg(if ours.exists() { ours.into_os_string() } else { program.into() });
        cmd.envs(self.env()).env_remove("TABWIRE_SESSION_ID").env_remove("TABWIRE_BROWSER");
        cmd
    }

    fn run(&self, program: &str, args: &[&str]) -> Output {
        self.command(program).args(args).output().expect("run wine")
    }

    /// The wrapper the Linux browser starts as its native host: the Windows host under Wine,
    /// with the browser's arguments and stdio.
    fn host_wrapper(&self) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let mut script = String::from("#!/bin/sh\n");
        for (k, v) in self.env() {
            script.push_str(&format!("export {k}='{v}'\n"));
        }
        let exe = self.bins.join("tabwire-host.exe");
        script.push_str(&format!("exec wine '{}' \"$@\"\n", exe.display()));
        let path = self.root.join("tabwire-host-wine");
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// `tabwire.exe mcp` under Wine, driven by rmcp's client as an MCP client would.
    async fn mcp(&self) -> Mcp {
        let mut cmd = tokio::process::Command::from(self.command("tabwire.exe"));
        // Every tool set: the test reaches workers and events too.
        cmd.arg("mcp").env("TABWIRE_TOOLS", "all");
        let transport = TokioChildProcess::new(cmd).expect("spawn wine tabwire.exe mcp");
        let pid = transport.id();
        let client = ().serve(transport).await.expect("MCP handshake with tabwire.exe mcp");
        Mcp { client, serve: None, pid }
    }

    /// The host the browser started, once the extension's hello reached it.
    fn wait_for_host(&self, browser: &mut Chromium) -> HostRecord {
        let dir = self.root.join("run/hosts");
        // The first Wine process of a prefix takes seconds to start its wineserver.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(record) = tabwire_testkit::wine::reached_hosts(&dir).pop() {
                return record;
            }
            if let Some(status) = browser.exited() {
                panic!("the browser exited ({status}) before the Windows host started");
            }
            assert!(Instant::now() < deadline, "no Windows host record in {}", dir.display());
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// What `wine reg query KEY` prints, or `None` when the key does not exist.
fn reg_query(wine: &Wine, key: &str) -> Option<String> {
    let out = wine.run("reg", &["query", key]);
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Removes the registry key whatever happens, so a failed run leaves the prefix as it was.
struct KeyGuard<'a>(&'a Wine);

impl Drop for KeyGuard<'_> {
    fn drop(&mut self) {
        let _ = self.0.run("reg", &["delete", CHROME_KEY, "/f"]);
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        stdout(out),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout(out)
}

/// Doctor's findings (`--json`), by check name.
fn doctor(wine: &Wine) -> Vec<Value> {
    let out = wine.run("tabwire.exe", &["doctor", "--browser", "chrome", "--json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("doctor --json printed no JSON ({e}):\n{}", String::from_utf8_lossy(&out.stderr))
    });
    doc["findings"].as_array().unwrap().clone()
}

fn finding<'a>(findings: &'a [Value], check: &str) -> &'a Value {
    let found = findings.iter().find(|f| f["check"] == check);
    found.unwrap_or_else(|| panic!("no {check:?} finding in {findings:#?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_windows_build_serves_a_real_browser_under_wine() {
    let Some(wine) = Wine::find() else { return };
    let started = Instant::now();
    let _key = KeyGuard(&wine);

    // install: the manifest in local app data, Chrome's key in the registry naming it.
    let said = ok(&wine.run("tabwire.exe", &["install", "--browser", "chrome"]), "install");
    let listed =
        reg_query(&wine, CHROME_KEY).unwrap_or_else(|| panic!("no key after install:\n{said}"));
    let manifest = wine.root.join("data/NativeMessagingHosts/dev.tabwire.host.json");
    assert!(listed.contains(&Wine::win(&manifest)), "the key names the manifest: {listed}");
    let written: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    assert_eq!(written["path"], Wine::win(&wine.bins.join("tabwire-host.exe")), "{written}");
    assert_eq!(
        written["allowed_origins"],
        json!(["chrome-extension://cmbolhpnohkddmklmlbjnpdpmgmdgkfi/"]),
        "{written}"
    );

    // The session first, the browser after: the session finds the host when it comes.
    let mcp = wine.mcp().await;
    let mut browser = Chromium::start_with_host(&wine.host_wrapper(), &[]);
    let host = wine.wait_for_host(&mut browser);
    let pipe = host.socket.to_string_lossy().into_owned();
    assert!(pipe.starts_with(r"\\.\pipe\tabwire-"), "the host listens on a named pipe: {pipe}");
    let leftovers: Vec<_> = std::fs::read_dir(wine.root.join("run/hosts"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "sock"))
        .collect();
    assert!(leftovers.is_empty(), "no socket files on Windows: {leftovers:?}");
    eprintln!("windows: host {} up after {:?}", host.pid, started.elapsed());

    let pages = Fixtures::serve();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let found = mcp.ok("list_browsers", json!({})).await;
        if found["browsers"].as_array().is_some_and(|b| b.len() == 1) {
            assert_eq!(found["browsers"][0]["browser"], "chromium", "{found}");
            break;
        }
        assert!(Instant::now() < deadline, "the session never saw the browser: {found}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Tabs.
    let opened = mcp.ok("open_tab", json!({ "url": pages.url("app.html") })).await;
    let tab = opened["tab"]["id"].clone();
    let tabs = mcp.ok("list_tabs", json!({})).await;
    let listed = tabs["tabs"].as_array().unwrap();
    let mine = listed.iter().find(|t| t["id"] == tab).unwrap_or_else(|| panic!("{tabs}"));
    assert_eq!(mine["url"], pages.url("app.html"));

    // A forced state read: fresh from the page, through the host's pipe and the extension.
    let fresh = mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    assert_eq!(fresh["source"], "fresh", "{fresh}");
    assert_eq!(fresh["state"]["items"], json!(["first"]), "{fresh}");

    // A page event, waited for.
    let pushed =
        mcp.ok("send_command", json!({ "tab_id": tab, "type": "burst", "payload": { "n": 1 } }));
    assert_eq!(pushed.await["result"]["pushed"], 1);
    let event =
        mcp.ok("wait_for_event", json!({ "types": ["page_event"], "timeout_secs": 10 })).await;
    assert_eq!((&event["type"], &event["data"]["kind"]), (&json!("page_event"), &json!("burst")));
    assert_eq!(event["tab_id"], tab, "{event}");

    // A click that the page sees.
    let widgets = mcp.ok("open_tab", json!({ "url": pages.url("dom/widgets.html") })).await;
    let widgets = widgets["tab"]["id"].clone();
    let page = mcp.read_page(json!({ "tab_id": widgets, "budget": 20000 })).await;
    let line = page.lines.lines().map(str::trim).find(|l| l.starts_with("button \"Clicked 0"));
    let line = line.unwrap_or_else(|| panic!("no counter button in:\n{}", page.lines));
    let at = line.split("[ref=").nth(1).unwrap().split(']').next().unwrap();
    let done = mcp.ok("click", json!({ "tab_id": widgets, "ref": at })).await;
    assert_eq!(done["effect"], "changed", "{done}");
    assert!(done["added"][0].as_str().unwrap().starts_with("button \"Clicked 1 times\""), "{done}");

    // Workers: Windows programs from workers.json, in a job object, their exit codes reported.
    let templates = json!({ "cmd": ["cmd", "/c", "{prompt}"] });
    std::fs::write(wine.root.join("config/workers.json"), templates.to_string()).unwrap();
    let cwd = Wine::win(&wine.root.join("work"));
    for (name, prompt) in [("echo", "echo done"), ("fail", "exit 3")] {
        let args = json!({ "name": name, "command": "cmd", "prompt": prompt, "cwd": cwd });
        let spawned = mcp.ok("spawn_worker", args).await;
        assert_eq!(spawned["state"], "running", "{spawned}");
    }
    let mut ends = Vec::new();
    for _ in 0..2 {
        let got = mcp
            .ok("wait_for_event", json!({ "types": ["worker_complete"], "timeout_secs": 60 }))
            .await;
        ends.push(got);
    }
    ends.sort_by_key(|e| e["name"].as_str().unwrap_or_default().to_owned());
    let (echo, fail) = (&ends[0], &ends[1]);
    assert_eq!(
        (&echo["name"], &echo["status"], &echo["exit_code"]),
        (&json!("echo"), &json!("success"), &json!(0)),
        "{echo}"
    );
    assert!(echo["message"].as_str().unwrap().contains("done"), "its output: {echo}");
    assert_eq!(
        (&fail["name"], &fail["status"], &fail["exit_code"]),
        (&json!("fail"), &json!("error"), &json!(3)),
        "{fail}"
    );
    assert_eq!(fail["signal"], Value::Null, "Windows has no signals: {fail}");

    // doctor: the key, the manifest and the host it names, the live host (pinged), and a
    // record a host that is gone left behind. The session ends first: it would clear that.
    mcp.client.cancel().await.expect("end the MCP session");
    let gone = wine.root.join("run/hosts/999999.json");
    let record = json!({ "pid": 999_999, "socket": r"\\.\pipe\tabwire-gone", "browser": "chromium",
        "profile": "", "extension_id": "", "extension_version": "", "protocol": 1, "started_at": 0 });
    std::fs::write(&gone, record.to_string()).unwrap();
    let findings = doctor(&wine);
    let shown = serde_json::to_string_pretty(&findings).unwrap();
    let hosts = finding(&findings, "hosts");
    assert_eq!(hosts["ok"], true, "{shown}");
    assert!(hosts["detail"].as_str().unwrap().starts_with("1 running: pid"), "{shown}");
    let stale: Vec<&Value> = findings.iter().filter(|f| f["check"] == "stale socket").collect();
    assert_eq!(stale.len(), 1, "the live host is not stale, the gone one is: {shown}");
    assert!(stale[0]["detail"].as_str().unwrap().contains("999999.json is left over"), "{shown}");
    assert_eq!(stale[0]["fix"], format!("`Remove-Item '{}'`", Wine::win(&gone)), "{shown}");
    let chrome: Vec<&Value> =
        findings.iter().filter(|f| f["check"].as_str().unwrap().contains("chrome")).collect();
    assert!(!chrome.is_empty() && chrome.iter().all(|f| f["ok"] == true), "{shown}");
    eprintln!("windows: doctor said\n{shown}");

    // uninstall: the key and the manifest are gone.
    ok(&wine.run("tabwire.exe", &["uninstall"]), "uninstall");
    assert_eq!(reg_query(&wine, CHROME_KEY), None, "the key is gone after uninstall");
    assert!(!manifest.exists(), "the manifest is gone after uninstall");
    eprintln!("windows: all done in {:?}", started.elapsed());
}
