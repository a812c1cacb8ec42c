//! `tabwire doctor`, the static part: the manifests, the runtime directory and the sockets in
//! it, checked without talking to the browser. Each problem comes with the command or click
//! that fixes it. The bridge adds the live checks (a ping through the browser) to the same
//! list of [`Finding`]s before rendering it.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use tabwire_proto::runtime_dir::{self, HostRecord};

use crate::browsers::{HOST_NAME, Os};
use crate::env::{Env, is_executable, shell_quote};
use crate::error::Error;
pub use crate::finding::Finding;
use crate::manifest::origin;
use crate::record::Record;
use crate::targets::{Selection, Target, resolve};

/// `tabwire doctor`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub selection: Selection,

    /// Print the findings as one JSON document
    #[arg(long)]
    pub json: bool,

    /// Also time each hop to this tab (its id, as list_tabs gives it): the extension's
    /// worker, the tab's isolated world, the page's own world
    #[arg(long, value_name = "TAB_ID")]
    pub tab: Option<i64>,
}

/// Whether every finding is ok (doctor exits non-zero otherwise).
pub fn all_ok(findings: &[Finding]) -> bool {
    findings.iter().all(|f| f.ok)
}

/// The static checks. Which manifests: those of `--browser`/`--user-data-dir`/`--system`
/// when given, else those the record says install wrote, else those of the browsers found.
pub fn static_findings(args: &DoctorArgs, env: &Env) -> Result<Vec<Finding>, Error> {
    let sel = &args.selection;
    let record = Record::load(&env.record_path())?;
    if let Some(wsl) = crate::record::wsl_mode(env, sel, &record) {
        let chain = crate::wsl_doctor::observe(record.windows_exe.clone(), env);
        return Ok(crate::wsl_doctor::chain_findings(wsl, &chain, &env.self_command()));
    }
    let ids = if sel.extension_ids.is_empty() && !record.extension_ids.is_empty() {
        record.extension_ids.clone()
    } else {
        sel.extension_ids()?
    };
    let mut findings = Vec::new();
    let targets = if !sel.is_explicit() && !record.entries.is_empty() {
        record.entries.iter().map(|e| e.target.clone()).collect()
    } else {
        match resolve(sel, env) {
            Ok(resolved) => resolved.targets,
            Err(Error::NoBrowserFound) => {
                findings.push(Finding::broken(
                    "browsers",
                    "no Chromium-family browser found: no profile folder of one exists and \
                     none is on PATH",
                    format!(
                        "`{} install --browser NAME` or `{0} install --user-data-dir DIR`",
                        env.self_command()
                    ),
                ));
                Vec::new()
            }
            Err(e) => return Err(e),
        }
    };
    use tabwire_proto::extension_id::{STORE_EXTENSION_ID, own_ids};
    let default_ids = ids == own_ids(STORE_EXTENSION_ID);
    let mut started: Vec<(PathBuf, Option<String>)> = Vec::new();
    for target in &targets {
        let mut install = format!("{} install {}", env.self_command(), target.install_args);
        if !default_ids {
            for id in &ids {
                install.push_str(&format!(" --extension-id {id}"));
            }
        }
        let mut found = check_manifest(target, &ids, &install);
        if found.iter().all(|f| f.ok) {
            // The files are right; does the host they name start? Once per host.
            let host = manifest_host(&target.manifest);
            let why = match started.iter().find(|(h, _)| *h == host) {
                Some((_, why)) => why.clone(),
                None => {
                    let why = start_host(&host, &ids).err();
                    started.push((host.clone(), why.clone()));
                    why
                }
            };
            if let Some(why) = why {
                found = vec![Finding::broken(
                    format!("{} manifest", target.label),
                    format!("the host it names, {}, cannot start: {why}", host.display()),
                    format!(
                        "run `{} chrome-extension://{}/ < /dev/null` to see why; reinstall it \
                         (`cargo install --locked --path bridge`), then `{install}`",
                        shell_quote(&host),
                        ids[0]
                    ),
                )];
            }
        }
        findings.extend(found);
    }
    findings.extend(check_runtime_dir(&env.runtime_dir));
    findings.extend(check_socket_room(env));
    if let Some(why) = &env.runtime_dir_note {
        // Working, so not broken: but the user should know someone took the usual place.
        findings.push(Finding::ok("runtime dir location", why.clone()));
    }
    findings.extend(check_hosts(&env.runtime_dir));
    Ok(findings)
}

/// Everything wrong with one manifest, or one ok finding.
fn check_manifest(target: &Target, ids: &[String], install: &str) -> Vec<Finding> {
    let check = format!("{} manifest", target.label);
    let path = &target.manifest;
    let fix_install = format!("`{install}`");
    let text = match fs::read(path) {
        Ok(text) => text,
        Err(e) => {
            let why = if e.kind() == std::io::ErrorKind::NotFound {
                "there is none".to_string()
            } else {
                e.to_string()
            };
            return vec![Finding::broken(
                check,
                format!(
                    "{}: {why}, so the browser cannot start tabwire-host (\"Specified native \
                     messaging host not found\")",
                    path.display()
                ),
                fix_install,
            )];
        }
    };
    let value: serde_json::Value = match serde_json::from_slice(&text) {
        Ok(v) => v,
        Err(e) => {
            return vec![Finding::broken(
                check,
                format!("{} is not valid JSON ({e})", path.display()),
                format!("{fix_install} (rewrites it)"),
            )];
        }
    };
    let mut faults = Vec::new();
    let field = |name: &str| value.get(name).and_then(|v| v.as_str()).unwrap_or("");
    if field("name") != HOST_NAME {
        faults.push((format!("its name is {:?}, not {HOST_NAME:?}", field("name")), None));
    }
    if field("type") != "stdio" {
        faults.push((format!("its type is {:?}, not \"stdio\"", field("type")), None));
    }
    let host = PathBuf::from(field("path"));
    if !host.is_absolute() {
        faults.push((format!("its path {host:?} is not absolute (Chrome requires it)"), None));
    } else if !host.is_file() {
        faults.push((format!("the host it names, {}, does not exist", host.display()), None));
    } else if !is_executable(&host) {
        faults.push((
            format!("the host it names, {}, is not executable", host.display()),
            Some(format!("`chmod +x {}`", shell_quote(&host))),
        ));
    }
    let origins: Vec<&str> = value
        .get("allowed_origins")
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|o| o.as_str()).collect())
        .unwrap_or_default();
    for id in ids {
        if !origins.contains(&origin(id).as_str()) {
            faults.push((
                format!(
                    "allowed_origins {origins:?} lacks {}: the browser refuses the extension \
                     (\"Access to the specified native messaging host is forbidden\")",
                    origin(id)
                ),
                None,
            ));
        }
    }
    if let Some(key) = &target.registry_key {
        if let Some(fault) = check_registry(key, path) {
            faults.push((fault, None));
        }
    }
    if faults.is_empty() {
        return vec![Finding::ok(
            check,
            format!("{}: host {}, allows {}", path.display(), host.display(), origins.join(" ")),
        )];
    }
    faults
        .into_iter()
        .map(|(fault, fix)| {
            let detail = format!("{}: {fault}", path.display());
            Finding::broken(check.clone(), detail, fix.unwrap_or_else(|| fix_install.clone()))
        })
        .collect()
}

/// The `path` a manifest names (read again: [`check_manifest`] found it sound).
fn manifest_host(manifest: &Path) -> PathBuf {
    let value: serde_json::Value =
        fs::read(manifest).ok().and_then(|t| serde_json::from_slice(&t).ok()).unwrap_or_default();
    PathBuf::from(value.get("path").and_then(|p| p.as_str()).unwrap_or(""))
}

/// Start `host` the way the browser does — the extension's origin, and on Windows the
/// `--parent-window=` Chrome adds — with its stdin at its end, so a working host exits at once
/// with 0; in a runtime directory of its own, so it meets no browser or bridge. What is wrong
/// when it does not: a missing library or DLL, a crash, a refusal.
fn start_host(host: &Path, ids: &[String]) -> Result<(), String> {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let scratch = std::env::temp_dir().join(format!(
        "tabwire-doctor-{}-{}",
        std::process::id(),
        runtime_dir::now_ms()
    ));
    runtime_dir::prepare(&scratch).map_err(|e| e.to_string())?;
    let mut child = Command::new(host)
        .arg(origin(&ids[0]))
        .arg("--parent-window=0")
        .env("TABWIRE_RUNTIME_DIR", &scratch)
        // The host's allow-list of other extension ids (host/src/origin.rs).
        .env("TABWIRE_ALLOWED_EXTENSIONS", ids.join(","))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(5);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => break None,
        }
    };
    let result = match status {
        Some(status) if status.success() => Ok(()),
        Some(status) => {
            let mut stderr = String::new();
            if let Some(mut err) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut err, &mut stderr);
            }
            let stderr = stderr.trim();
            Err(if stderr.is_empty() {
                format!("it exited with {status} and said nothing")
            } else {
                format!("it exited with {status}: {stderr}")
            })
        }
        None => {
            let _ = child.kill();
            let _ = child.wait();
            Err("it did not exit within 5 s of its input ending".to_string())
        }
    };
    let _ = fs::remove_dir_all(&scratch);
    result
}

/// What is wrong with the registry key that should name `manifest`, if anything.
fn check_registry(key: &str, manifest: &Path) -> Option<String> {
    match crate::registry::get(key) {
        Ok(Some(value)) if Path::new(&value) == manifest => None,
        Ok(Some(value)) => Some(format!("HKCU\\{key} names {value}, not this manifest")),
        Ok(None) => Some(format!("the registry key HKCU\\{key} is missing")),
        Err(e) => Some(format!("cannot read the registry key HKCU\\{key}: {e}")),
    }
}

/// Whether the longest socket path under the runtime directory fits in `sun_path` on the
/// user's OS (Windows uses named pipes: nothing to check).
fn check_socket_room(env: &Env) -> Option<Finding> {
    let sun_path = match env.os {
        Os::Linux => 108,
        Os::MacOs => 104,
        Os::Windows => return None,
    };
    let root = &env.runtime_dir;
    if runtime_dir::sockets_fit(root, sun_path) {
        return None;
    }
    Some(Finding::broken(
        "runtime dir",
        format!(
            "{} is too long: a session's socket under it would have a path of {} bytes, and a \
             socket's path has at most {} here",
            root.display(),
            root.as_os_str().len() + runtime_dir::LONGEST_SOCKET_NAME,
            sun_path - 1
        ),
        format!(
            "set TABWIRE_RUNTIME_DIR to a folder of your own with a path of at most {} bytes",
            sun_path - 1 - runtime_dir::LONGEST_SOCKET_NAME
        ),
    ))
}

/// The runtime directory and its `hosts/` and `sessions/` folders: ours, mode 0700.
fn check_runtime_dir(root: &Path) -> Vec<Finding> {
    let check = "runtime dir";
    if !root.exists() {
        return vec![Finding::ok(
            check,
            format!("{} does not exist yet; the host creates it when it starts", root.display()),
        )];
    }
    let mut findings = Vec::new();
    for dir in [root.to_path_buf(), runtime_dir::hosts_dir(root), runtime_dir::sessions_dir(root)] {
        if let Some(f) = check_private_dir(check, &dir) {
            findings.push(f);
        }
    }
    if findings.is_empty() {
        findings.push(Finding::ok(check, format!("{}: yours, mode 0700", root.display())));
    }
    findings
}

#[cfg(unix)]
fn check_private_dir(check: &str, dir: &Path) -> Option<Finding> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = fs::symlink_metadata(dir).ok()?;
    let shown = shell_quote(dir);
    if !meta.is_dir() {
        return Some(Finding::broken(
            check,
            format!("{} is not a folder", dir.display()),
            format!("`rm {shown}` (the host recreates it)"),
        ));
    }
    let me = runtime_dir::current_uid();
    if meta.uid() != me {
        return Some(Finding::broken(
            check,
            format!("{} belongs to uid {}, not to you (uid {me})", dir.display(), meta.uid()),
            format!(
                "have its owner remove it (`sudo rm -rf {shown}`), or set TABWIRE_RUNTIME_DIR \
                 to a folder of your own"
            ),
        ));
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Some(Finding::broken(
            check,
            format!(
                "{} has mode {mode:04o}: other users could reach your browser through it, so \
                 the host refuses to start",
                dir.display()
            ),
            format!("`chmod 700 {shown}`"),
        ));
    }
    None
}

#[cfg(not(unix))]
fn check_private_dir(_check: &str, _dir: &Path) -> Option<Finding> {
    None
}

/// The hosts running now, and sockets left behind by hosts that are gone.
fn check_hosts(root: &Path) -> Vec<Finding> {
    let dir = runtime_dir::hosts_dir(root);
    let Ok(entries) = fs::read_dir(&dir) else {
        return vec![Finding::ok(
            "hosts",
            "none running (the browser starts one when the extension connects)",
        )];
    };
    let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    files.sort();
    let mut live = Vec::new();
    let mut findings = Vec::new();
    for path in &files {
        let ext = path.extension().and_then(|e| e.to_str());
        let (sock, json) = match ext {
            Some("sock") => (path.clone(), path.with_extension("json")),
            // A record without its socket is reported here; one with it, under its socket.
            Some("json") if !path.with_extension("sock").exists() => {
                (path.with_extension("sock"), path.clone())
            }
            _ => continue,
        };
        let record: Option<HostRecord> =
            fs::read(&json).ok().and_then(|b| serde_json::from_slice(&b).ok());
        match record {
            Some(r) if runtime_dir::pid_alive(r.pid) && listening(&r, &sock) => live.push(r),
            other => {
                let why = match other {
                    Some(r) if !listening(&r, &sock) => {
                        format!("its socket is gone (pid {})", r.pid)
                    }
                    Some(r) => format!("its host (pid {}) is gone", r.pid),
                    None if json.exists() => format!("{} is unreadable", json.display()),
                    None => format!("{} is missing", json.display()),
                };
                let left: Vec<String> = [&sock, &json]
                    .into_iter()
                    .filter(|p| p.exists())
                    .map(|p| shell_quote(p))
                    .collect();
                // PowerShell's `rm` is Remove-Item, whose `-f` is ambiguous.
                let rm = if cfg!(windows) {
                    format!("`Remove-Item {}`", left.join(", "))
                } else {
                    format!("`rm -f {}`", left.join(" "))
                };
                findings.push(Finding::broken(
                    "stale socket",
                    format!("{} is left over: {why}", path.display()),
                    rm,
                ));
            }
        }
    }
    let detail = if live.is_empty() {
        "none running (the browser starts one when the extension connects)".to_string()
    } else {
        let each: Vec<String> = live
            .iter()
            .map(|r| {
                let browser =
                    if r.browser.is_empty() { "waiting for the extension" } else { &r.browser };
                format!("pid {} ({browser}, extension {})", r.pid, r.extension_version)
            })
            .collect();
        format!("{} running: {}", live.len(), each.join("; "))
    };
    findings.insert(0, Finding::ok("hosts", detail));
    findings
}

/// Whether a host's channel is there. On Unix its socket `sock`, beside its record. On Windows
/// the named pipe its record names: no file stands for it (opening it to look would be a
/// connection to the host), and it lives exactly as long as the host's process.
fn listening(record: &HostRecord, sock: &Path) -> bool {
    if cfg!(windows) {
        record.socket.to_string_lossy().starts_with(r"\\.\pipe\")
    } else {
        sock.exists()
    }
}

/// Print findings: one line each (with its fix underneath), or one JSON document.
pub fn render(findings: &[Finding], json: bool, out: &mut dyn Write) -> std::io::Result<()> {
    if json {
        #[derive(Serialize)]
        struct Doc<'a> {
            ok: bool,
            findings: &'a [Finding],
        }
        serde_json::to_writer_pretty(&mut *out, &Doc { ok: all_ok(findings), findings })?;
        return writeln!(out);
    }
    for f in findings {
        let mark = if f.ok { "ok  " } else { "FAIL" };
        writeln!(out, "{mark}  {}: {}", f.check, f.detail)?;
        if let Some(fix) = &f.fix {
            writeln!(out, "      fix: {fix}")?;
        }
    }
    let broken = findings.iter().filter(|f| !f.ok).count();
    if broken == 0 {
        writeln!(out, "all {} checks passed", findings.len())
    } else {
        writeln!(out, "{broken} of {} checks failed", findings.len())
    }
}

/// `tabwire doctor` (static part): check, print, and return whether everything is ok.
pub fn run_doctor(args: &DoctorArgs, env: &Env, out: &mut dyn Write) -> Result<bool, Error> {
    let findings = static_findings(args, env)?;
    render(&findings, args.json, out).map_err(Error::io("print to", "stdout"))?;
    Ok(all_ok(&findings))
}
