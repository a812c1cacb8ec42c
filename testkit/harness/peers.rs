//! Other browser MCP servers, to measure tabwire beside them: Playwright MCP (`@playwright/mcp`)
//! and chrome-devtools-mcp, installed from npm into `<target>/peers` once and run as the MCP
//! clients run them (a child over stdio, driven here by the same rmcp client as `tabwire mcp`).
//! They start Debian's Chromium themselves (no browser download), headless, each with a
//! profile of its own in a scratch dir; a peer's browser is ended by PID when it is dropped.

use std::path::{Path, PathBuf};

use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::mcp::{Mcp, text};
use crate::{bins, npm};

const CHROMIUM: &str = "/usr/bin/chromium";

/// Which peer, and how it is set up.
#[derive(Debug, Clone, Copy)]
pub enum Peer {
    /// Playwright MCP; `settle_ms` is `--timeout-settle` (its default, 500 ms, when None).
    Playwright { settle_ms: Option<u64> },
    /// chrome-devtools-mcp, as it starts by default.
    DevTools,
}

/// A running peer: its MCP session and the scratch dir holding its browser's profile.
pub struct Running {
    pub peer: Peer,
    pub mcp: Mcp,
    profile: bins::Scratch,
}

impl Peer {
    pub fn name(self) -> String {
        match self {
            Peer::Playwright { settle_ms: Some(ms) } => {
                format!("Playwright MCP browser_evaluate, settle {ms} ms")
            }
            Peer::Playwright { settle_ms: None } => {
                "Playwright MCP browser_evaluate, default settle".into()
            }
            Peer::DevTools => "chrome-devtools-mcp evaluate_script".into(),
        }
    }

    /// Start the peer's MCP server (its browser starts at the first page it opens).
    pub async fn start(self) -> Result<Running, String> {
        let modules = install()?;
        let profile = bins::scratch_dir("peer");
        let mut cmd = tokio::process::Command::new("node");
        match self {
            Peer::Playwright { settle_ms } => {
                cmd.arg(modules.join("@playwright/mcp/cli.js"))
                    .args(["--headless", "--browser", "chromium", "--no-sandbox"])
                    .arg("--executable-path")
                    .arg(CHROMIUM)
                    .arg("--user-data-dir")
                    .arg(&profile)
                    .arg("--output-dir")
                    .arg(profile.join("out"));
                if let Some(ms) = settle_ms {
                    cmd.args(["--timeout-settle", &ms.to_string()]);
                }
            }
            Peer::DevTools => {
                cmd.arg(modules.join("chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js"))
                    .args(["--headless", "--executablePath", CHROMIUM])
                    .args(["--chromeArg=--no-sandbox", "--no-page-id-routing"])
                    .args(["--no-usage-statistics", "--no-performance-crux"])
                    .arg(format!("--userDataDir={}", profile.join("profile").display()))
                    .env("CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS", "1");
            }
        }
        cmd.current_dir(&profile).env("HOME", &profile).stderr(std::process::Stdio::null());
        let transport = TokioChildProcess::new(cmd).map_err(|e| format!("spawn node: {e}"))?;
        let pid = transport.id();
        let client =
            ().serve(transport).await.map_err(|e| format!("MCP handshake with {self:?}: {e}"))?;
        Ok(Running { peer: self, mcp: Mcp { client, serve: None, pid }, profile })
    }
}

impl Running {
    /// The peer's own directory (its working directory): the one place Playwright MCP reads
    /// files from for an upload.
    pub fn dir(&self) -> &Path {
        &self.profile
    }

    /// Open `url` in the peer's browser (starting it if needed) and wait for it to load.
    pub async fn open(&self, url: &str) -> Result<(), String> {
        let (tool, args) = match self.peer {
            Peer::Playwright { .. } => ("browser_navigate", json!({ "url": url })),
            Peer::DevTools => ("navigate_page", json!({ "url": url })),
        };
        self.call(tool, args).await.map(drop)
    }

    /// Run `function` (JavaScript source of a function) in the page; the text answer.
    pub async fn evaluate(&self, function: &str) -> Result<String, String> {
        let tool = match self.peer {
            Peer::Playwright { .. } => "browser_evaluate",
            Peer::DevTools => "evaluate_script",
        };
        self.call(tool, json!({ "function": function })).await
    }

    /// Call one of the peer's tools; its text answer, or its error text.
    pub async fn call(&self, tool: &str, args: Value) -> Result<String, String> {
        let result = self.mcp.call(tool, args).await;
        if result.is_error == Some(true) {
            return Err(format!("{tool} failed: {}", text(&result)));
        }
        Ok(text(&result))
    }

    /// Close the MCP session (the peer closes its browser), then end by PID any browser
    /// process of this peer's profile still running. On Windows, where a process is not found
    /// by its command line, the peer's process tree, its browser with it, is ended before the
    /// session closes, while its root still leads to it.
    pub async fn stop(self) {
        #[cfg(windows)]
        if let Some(pid) = self.mcp.pid {
            crate::process::kill_tree(pid);
        }
        let _ = self.mcp.client.cancel().await;
        #[cfg(target_os = "linux")]
        end_browsers_of(&self.profile); // then the profile goes with the scratch dir
    }
}

/// The peers' `node_modules`, installed with npm once (`PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD`: the
/// peers use Debian's Chromium).
pub fn install() -> Result<PathBuf, String> {
    let target = bins::bin("tabwire").parent().unwrap().parent().unwrap().to_owned();
    let dir = target.join("peers");
    let modules = dir.join("node_modules");
    let have = |p: &str| modules.join(p).join("package.json").exists();
    if have("@playwright/mcp") && have("chrome-devtools-mcp") {
        return Ok(modules);
    }
    npm::install(
        &dir,
        &["@playwright/mcp", "chrome-devtools-mcp"],
        &[("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")],
    )?;
    Ok(modules)
}

/// SIGTERM, by PID, every process whose command line (Linux's /proc) names `profile` (the
/// peer's browser and its helpers, which a peer killed mid-way may leave behind).
#[cfg(target_os = "linux")]
fn end_browsers_of(profile: &Path) {
    let needle = profile.as_os_str().as_encoded_bytes();
    let Ok(procs) = std::fs::read_dir("/proc") else { return };
    for entry in procs.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        if cmdline.windows(needle.len()).any(|w| w == needle) {
            // SAFETY: kill(2) with a pid read from /proc and a valid signal number.
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
    }
}
