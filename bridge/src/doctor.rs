//! The live half of `tabwire doctor` and of the `diagnose` tool: what only a running bridge can
//! check. The static half (manifests, runtime dir, stale sockets) is `tabwire_install::doctor`.
//!
//! For each live host: did it say hello (the extension is connected to it), and does a `ping`
//! go through the extension and back — with its latency, because "connected but slow" is a
//! finding too.

use std::time::{Duration, Instant};

use tabwire_install::{DoctorArgs, Env, Finding};
use tabwire_proto::{extension_id, runtime_dir};

use tabwire_install::extension;
use tabwire_link::browser::BrowserInfo;
use tabwire_link::core::Core;
use tabwire_link::methods::Ping;

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
    Ok(findings)
}

/// The assistant sessions (`tabwire mcp` processes) running now. Each attaches to every live
/// host unless it was started with `--browser`.
fn sessions_finding(core: &Core) -> Finding {
    let sessions = tabwire_session::record::live_sessions(core.runtime_dir());
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
