//! The live half of `tabwire doctor` and of the `diagnose` tool: what only a running bridge can
//! check. The static half (manifests, runtime dir, stale sockets) is `tabwire_install::doctor`.
//!
//! For each live host: did it say hello (the extension is connected to it), and does a `ping`
//! go through the extension and back — with its latency, because "connected but slow" is a
//! finding too. With a tab (`tabwire doctor --tab`, `diagnose {tab_id}`), each hop a page call
//! takes is timed on its own: to the extension's worker, on to the tab's isolated world, on to
//! the page's world; a slow call then shows where its time goes.

use std::time::{Duration, Instant};

use tabwire_install::{DoctorArgs, Env, Finding};
use tabwire_proto::{extension_id, runtime_dir};

use tabwire_install::extension;
use tabwire_link::browser::BrowserInfo;
use tabwire_link::core::Core;
use tabwire_link::error::CallError;
use tabwire_link::methods::{Echo, PageEcho, PageEchoParams, Ping};

/// Shorter than a ping's default: doctor pings every browser in turn, and a healthy one answers
/// in milliseconds.
const PING_TIMEOUT: Duration = Duration::from_secs(3);

/// Static and live findings, in that order.
pub async fn findings(
    core: Option<&Core>,
    args: &DoctorArgs,
    env: &Env,
) -> anyhow::Result<Vec<Finding>> {
    let mut findings = tabwire_install::static_findings(args, env)?;
    let started;
    let core = match core {
        Some(core) => core,
        // A runtime dir that cannot be used is already a static finding; nothing to ping then.
        None => match Core::probe_in(&env.runtime_dir, None) {
            Ok(core) => {
                started = core;
                &started
            }
            Err(_) => return Ok(findings),
        },
    };
    findings.extend(live_findings(core).await);
    findings.push(sessions_finding(core));
    if let Some(tab) = args.tab {
        findings.push(hops(core, tab).await.finding(tab));
    }
    Ok(findings)
}

/// Echoes timed per hop: enough for a median that one slow call does not move.
const HOP_CALLS: usize = 20;

/// One hop of a page call, timed from this process: the echo's round trip to it and back.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Hop {
    /// Where the echo was answered: `worker` (the extension's service worker), `isolated`
    /// (the tab's content script), `page` (window.tabwire in the page's own world).
    pub to: &'static str,
    /// The median round trip, in milliseconds.
    pub median_ms: f64,
    /// The slowest of the echoes, in milliseconds.
    pub slowest_ms: f64,
    /// How many echoes were timed.
    pub calls: usize,
}

/// The hops timed, up to the first that did not answer (and why).
pub struct Hops {
    pub timed: Vec<Hop>,
    pub failed: Option<(&'static str, CallError)>,
}

/// Times each hop to `tab`: `echo` in the worker, then `page.echo` in the tab's isolated world
/// and in its page world — the same checks as every call that names the tab (allowed site,
/// tab group, Stop), no page code run.
pub async fn hops(core: &Core, tab: i64) -> Hops {
    let mut out = Hops { timed: Vec::new(), failed: None };
    for to in ["worker", "isolated", "page"] {
        let echo = async || -> Result<(), CallError> {
            if to == "worker" {
                core.invoke::<Echo>(None, &serde_json::Value::Null).await.map(drop)
            } else {
                let world = if to == "isolated" { "content" } else { "page" };
                let params = PageEchoParams { tab_id: Some(tab), world };
                core.invoke::<PageEcho>(None, &params).await.map(drop)
            }
        };
        // The first call may wake a suspended worker or load a frame's scripts: not timed.
        if let Err(e) = echo().await {
            out.failed = Some((to, e));
            return out;
        }
        let mut ms = Vec::with_capacity(HOP_CALLS);
        for _ in 0..HOP_CALLS {
            let t = Instant::now();
            if let Err(e) = echo().await {
                out.failed = Some((to, e));
                return out;
            }
            ms.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        ms.sort_by(f64::total_cmp);
        let (median_ms, slowest_ms) = (ms[ms.len() / 2], ms[ms.len() - 1]);
        out.timed.push(Hop { to, median_ms, slowest_ms, calls: HOP_CALLS });
    }
    out
}

impl Hops {
    /// `hops to tab 7: worker 0.21 ms, isolated world 0.43 ms, page world 0.47 ms (medians…)`
    pub fn finding(&self, tab: i64) -> Finding {
        let check = format!("hops to tab {tab}");
        let name = |to: &str| match to {
            "worker" => "the extension's worker",
            "isolated" => "the tab's isolated world",
            _ => "the page's world",
        };
        let timed: Vec<String> = self
            .timed
            .iter()
            .map(|h| format!("{} {:.2} ms (slowest {:.2})", name(h.to), h.median_ms, h.slowest_ms))
            .collect();
        match &self.failed {
            None => Finding::ok(
                check,
                format!(
                    "{}: the median round trip of {HOP_CALLS} echoes from this process to each",
                    timed.join(", ")
                ),
            ),
            Some((to, e)) => {
                let mut detail = format!("{} did not answer an echo: {e}", name(to));
                if !timed.is_empty() {
                    detail.push_str(&format!(" (before it: {})", timed.join(", ")));
                }
                Finding::broken(
                    check,
                    detail,
                    "open a page of a site you allow in tabwire's popup in that tab (list_tabs \
                     gives the ids), or reload the tab if it was open before the extension",
                )
            }
        }
    }
}

/// The assistant sessions (`tabwire mcp` processes) running now. Each attaches to every live
/// host unless it was started with `--browser`.
fn sessions_finding(core: &Core) -> Finding {
    let sessions = tabwire_proto::sessions::live_sessions(core.runtime_dir());
    let detail = if sessions.is_empty() {
        "none running (an MCP client starts `tabwire mcp` when it needs the browser)".to_owned()
    } else {
        let list: Vec<String> =
            sessions.iter().map(|s| format!("{} (pid {})", s.session_id, s.pid)).collect();
        format!("{} running, each attached to the hosts above: {}", sessions.len(), list.join(", "))
    };
    Finding::ok("sessions", detail)
}

/// Whether the extension this browser runs is the one this tabwire carries: the same version,
/// and — when it was unpacked by `tabwire install` — the same build. A checkout's extension
/// (no build id) is fine when its version matches: that is development.
pub fn version_finding(info: &BrowserInfo) -> Finding {
    let check = format!("extension version in {}", info.label());
    let mine = extension::VERSION;
    let theirs = &info.extension_version;
    let reload = format!(
        "reload tabwire in chrome://extensions (the files on disk were updated); if it still \
         says {theirs}, Load unpacked the folder `tabwire extension path` prints"
    );
    if theirs != mine {
        let (detail, fix) = if older(theirs, mine) {
            (
                format!("the browser runs extension {theirs}, older than this tabwire ({mine})"),
                reload,
            )
        } else {
            (
                format!("the browser runs extension {theirs}, newer than this tabwire ({mine})"),
                "update tabwire (`cargo install --locked --path bridge` in the newer checkout), \
                 then run `tabwire install`"
                    .to_owned(),
            )
        };
        return Finding::broken(check, detail, fix);
    }
    match info.build_id.as_deref() {
        Some(build) if build != extension::BUILD_ID => Finding::broken(
            check,
            format!(
                "the browser runs extension {theirs} build {build}, not build {} that this \
                 tabwire wrote: it loaded an older copy of the files",
                extension::BUILD_ID
            ),
            reload,
        ),
        Some(build) => {
            Finding::ok(check, format!("{theirs}, build {build}: the one this tabwire carries"))
        }
        None => Finding::ok(check, format!("{theirs}, loaded from a checkout (no build.json)")),
    }
}

/// Whether version `a` is older than `b` (dotted numbers).
fn older(a: &str, b: &str) -> bool {
    let parts = |v: &str| v.split('.').map(|p| p.parse::<u64>().unwrap_or(0)).collect::<Vec<_>>();
    parts(a) < parts(b)
}

/// One finding per live host: pinged through the extension, or why not.
pub async fn live_findings(core: &Core) -> Vec<Finding> {
    core.ready().await;
    let hosts = runtime_dir::live_hosts(core.runtime_dir());
    let attached = core.browsers();
    let mut out = Vec::new();
    if hosts.is_empty() {
        out.push(Finding::broken(
            "browser connection",
            "no browser is running the tabwire extension right now (no live host in the \
             runtime directory)",
            "start the browser with the tabwire extension loaded (chrome://extensions → \
             Developer mode → Load unpacked → the extension folder `tabwire install` printed); \
             its service worker starts tabwire-host by itself",
        ));
        return out;
    }
    for host in hosts {
        let check = format!("ping via host {}", host.pid);
        let Some(info) = attached.iter().find(|b| b.host_pid == host.pid) else {
            out.push(Finding::broken(
                check,
                format!(
                    "host {} is running but this bridge could not attach to it (no hello \
                     from its extension within a second)",
                    host.pid
                ),
                "reload the extension in chrome://extensions, or restart the browser",
            ));
            continue;
        };
        out.push(version_finding(info));
        let selector = host.pid.to_string();
        let t = Instant::now();
        match core.invoke_within::<Ping>(Some(&selector), &(), PING_TIMEOUT).await {
            Ok(pong) => {
                let ms = t.elapsed().as_secs_f64() * 1000.0;
                let (browser, profile, version) =
                    (&info.browser, &info.profile, &info.extension_version);
                let mut detail = format!(
                    "{browser} (profile {profile}, extension {version}) answered in {ms:.2} ms"
                );
                if let Some(carrier) = pong.carrier {
                    detail.push_str(&format!("; messages go by {carrier}"));
                }
                // The id the extension reported in its hello (`chrome.runtime.id`): which
                // build of tabwire's extension this browser runs.
                if !host.extension_id.is_empty() {
                    let id = &host.extension_id;
                    let build = extension_id::Build::of(id, extension_id::STORE_EXTENSION_ID);
                    detail.push_str(&format!("; {}", build.describe(id)));
                }
                out.push(Finding::ok(check, detail))
            }
            Err(e) => out.push(Finding::broken(
                check,
                format!("{} did not answer a ping: {e}", info.browser),
                "reload the extension in chrome://extensions; if that does not help, restart the \
                 browser and run `tabwire doctor` again",
            )),
        }
    }
    out
}
