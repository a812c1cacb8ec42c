//! `tabwire doctor` (static part) against a healthy set-up and each way it breaks.
//! Unix only: they check file modes; the Windows paths and keys are unit-tested everywhere.
#![cfg(unix)]

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::World;
use tabwire_proto::runtime_dir::{self, HostRecord};

const OWN_ID: &str = "cmbolhpnohkddmklmlbjnpdpmgmdgkfi";

/// A machine where `tabwire install --user-data-dir P` ran and a host prepared its runtime dir.
fn healthy() -> (World, PathBuf) {
    let w = World::new();
    let profile = w.root().join("profile");
    w.install(&["--user-data-dir", profile.to_str().unwrap()]).unwrap();
    runtime_dir::prepare(&w.env.runtime_dir).unwrap();
    let manifest = profile.join("NativeMessagingHosts/dev.tabwire.host.json");
    (w, manifest)
}

fn edit_manifest(path: &PathBuf, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut v: serde_json::Value = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
    edit(&mut v);
    fs::write(path, serde_json::to_vec(&v).unwrap()).unwrap();
}

/// Assert doctor fails, with a FAIL line containing `detail` followed by `fix`.
fn assert_fault(w: &World, args: &[&str], detail: &str, fix: &str) {
    let (ok, out) = w.doctor(args);
    assert!(!ok, "doctor should fail:\n{out}");
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("FAIL") && l.contains(detail))
        .unwrap_or_else(|| panic!("no FAIL line with {detail:?}:\n{out}"));
    assert_eq!(lines[at + 1].trim(), format!("fix: {fix}"), "\n{out}");
}

#[test]
fn a_healthy_setup_is_all_ok() {
    let (w, manifest) = healthy();
    let profile = manifest.parent().unwrap().parent().unwrap().to_str().unwrap().to_string();
    for args in [vec![], vec!["--user-data-dir", profile.as_str()]] {
        let (ok, out) = w.doctor(&args);
        assert!(ok, "{out}");
        assert!(out.contains(&format!("ok    profile {profile} manifest: {}", manifest.display())));
        assert!(out.contains("ok    runtime dir:") && out.contains("mode 0700"), "{out}");
        assert!(out.contains("ok    hosts: none running"), "{out}");
        assert!(out.lines().last().unwrap().starts_with("all 3 checks passed"), "{out}");
    }
}

#[test]
fn missing_manifest() {
    let (w, manifest) = healthy();
    fs::remove_file(&manifest).unwrap();
    let profile = manifest.parent().unwrap().parent().unwrap();
    let fix =
        format!("`{} install --user-data-dir {}`", w.env.current_exe.display(), profile.display());
    assert_fault(&w, &[], "there is none", &fix);
}

#[test]
fn missing_manifest_for_a_named_browser() {
    let w = World::new();
    let fix = format!("`{} install --browser chromium`", w.env.current_exe.display());
    assert_fault(&w, &["--browser", "chromium"], "chromium manifest", &fix);
}

#[test]
fn wrong_host_path() {
    let (w, manifest) = healthy();
    edit_manifest(&manifest, |v| v["path"] = "/nowhere/tabwire-host".into());
    assert_fault(&w, &[], "/nowhere/tabwire-host, does not exist", &install_fix(&w, &manifest));
}

#[test]
fn a_host_that_cannot_start_is_named_with_what_it_said() {
    let (w, manifest) = healthy();
    // Started as the browser starts it, or it refuses: the origin, then Windows' extra flag.
    let host = format!(
        "#!/bin/sh\n[ \"$1 $2\" = 'chrome-extension://{OWN_ID}/ --parent-window=0' ] || exit 3\n\
         [ -d \"$TABWIRE_RUNTIME_DIR\" ] || exit 4\n\
         echo 'error while loading shared libraries: libssl.so.3: cannot open shared object file' >&2\n\
         exit 127\n"
    );
    common::write_exe(&w.host(), &host);
    let (ok, out) = w.doctor(&[]);
    assert!(!ok, "{out}");
    let want = format!(
        "FAIL  profile {} manifest: the host it names, {}, cannot start: it exited with exit \
         status: 127: error while loading shared libraries: libssl.so.3",
        manifest.parent().unwrap().parent().unwrap().display(),
        w.host().display()
    );
    assert!(out.contains(&want), "{out}");
    assert!(
        out.contains(&format!(
            "fix: run `{} chrome-extension://{OWN_ID}/ < /dev/null` to see why",
            w.host().display()
        )),
        "{out}"
    );
    // A host that starts and ends with its input is fine.
    common::write_exe(&w.host(), "#!/bin/sh\ncat > /dev/null\n");
    let (ok, out) = w.doctor(&[]);
    assert!(ok, "{out}");
}

#[test]
fn a_runtime_dir_too_long_for_a_macs_sockets_is_named() {
    let (mut w, _) = healthy();
    w.env.os = tabwire_install::Os::MacOs;
    w.env.runtime_dir = PathBuf::from("/Users").join("a".repeat(64)).join(".cache/tabwire/run");
    assert_fault(
        &w,
        &[],
        "is too long: a session's socket under it would have a path of 169 bytes, and a socket's path has at most 103 here",
        "set TABWIRE_RUNTIME_DIR to a folder of your own with a path of at most 24 bytes",
    );
}

#[test]
fn host_not_executable() {
    let (w, _) = healthy();
    fs::set_permissions(w.host(), fs::Permissions::from_mode(0o644)).unwrap();
    let fix = format!("`chmod +x {}`", w.host().display());
    assert_fault(&w, &[], "is not executable", &fix);
}

#[test]
fn wrong_extension_id() {
    let (w, manifest) = healthy();
    edit_manifest(&manifest, |v| {
        v["allowed_origins"] =
            serde_json::json!(["chrome-extension://abcdefghijklmnopabcdefghijklmnop/"])
    });
    let detail = format!("lacks chrome-extension://{OWN_ID}/");
    assert_fault(&w, &[], &detail, &install_fix(&w, &manifest));
}

#[test]
fn wrong_name_and_type_are_both_named() {
    let (w, manifest) = healthy();
    edit_manifest(&manifest, |v| {
        v["name"] = "other.host".into();
        v["type"] = "socket".into();
    });
    assert_fault(
        &w,
        &[],
        r#"its name is "other.host", not "dev.tabwire.host""#,
        &install_fix(&w, &manifest),
    );
    assert_fault(&w, &[], r#"its type is "socket", not "stdio""#, &install_fix(&w, &manifest));
}

#[test]
fn bad_json() {
    let (w, manifest) = healthy();
    fs::write(&manifest, "{\"name\": ").unwrap();
    let fix = format!("{} (rewrites it)", install_fix(&w, &manifest));
    assert_fault(&w, &[], "is not valid JSON", &fix);
}

#[test]
fn runtime_dir_open_to_others() {
    let (w, _) = healthy();
    let dir = &w.env.runtime_dir;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).unwrap();
    assert_fault(&w, &[], "has mode 0755", &format!("`chmod 700 {}`", dir.display()));
}

#[test]
fn stale_sockets() {
    let (w, _) = healthy();
    let hosts = runtime_dir::hosts_dir(&w.env.runtime_dir);
    // A host that died without cleaning up: record and socket, pid gone.
    let dead = record(i32::MAX as u32 - 11, &hosts.join("777.sock"));
    runtime_dir::write_record(&hosts.join("777.json"), &dead).unwrap();
    fs::write(hosts.join("777.sock"), b"").unwrap();
    // A socket without any record.
    fs::write(hosts.join("888.sock"), b"").unwrap();

    let sock = hosts.join("777.sock");
    let fix = format!("`rm -f {} {}`", sock.display(), hosts.join("777.json").display());
    assert_fault(&w, &[], &format!("{} is left over: its host (pid", sock.display()), &fix);
    let fix = format!("`rm -f {}`", hosts.join("888.sock").display());
    assert_fault(&w, &[], "888.json is missing", &fix);
    assert!(sock.exists(), "doctor reports, it does not delete");
}

#[test]
fn live_hosts_are_listed() {
    let (w, _) = healthy();
    let hosts = runtime_dir::hosts_dir(&w.env.runtime_dir);
    let me = std::process::id();
    let sock = hosts.join(format!("{me}.sock"));
    fs::write(&sock, b"").unwrap();
    runtime_dir::write_record(&hosts.join(format!("{me}.json")), &record(me, &sock)).unwrap();
    let (ok, out) = w.doctor(&[]);
    assert!(ok, "{out}");
    assert!(
        out.contains(&format!("ok    hosts: 1 running: pid {me} (chromium, extension 0.1.0)")),
        "{out}"
    );
}

#[test]
fn json_output_is_one_document_with_the_same_findings() {
    let (w, _) = healthy();
    fs::set_permissions(&w.env.runtime_dir, fs::Permissions::from_mode(0o750)).unwrap();
    let (ok, out) = w.doctor(&["--json"]);
    assert!(!ok);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["ok"], false);
    let findings = doc["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 3);
    let bad = findings.iter().find(|f| f["ok"] == false).unwrap();
    assert_eq!(bad["check"], "runtime dir");
    assert_eq!(bad["fix"], format!("`chmod 700 {}`", w.env.runtime_dir.display()));
    assert!(findings.iter().filter(|f| f["ok"] == true).all(|f| f.get("fix").is_none()));
}

#[test]
fn no_browser_and_no_record() {
    let w = World::new();
    let (ok, out) = w.doctor(&[]);
    assert!(!ok);
    assert!(out.contains("FAIL  browsers: no Chromium-family browser found"), "{out}");
    assert!(out.contains("install --browser NAME"), "{out}");
    assert!(out.contains("ok    runtime dir:") && out.contains("does not exist yet"), "{out}");
}

fn install_fix(w: &World, manifest: &Path) -> String {
    let profile = manifest.parent().unwrap().parent().unwrap();
    format!("`{} install --user-data-dir {}`", w.env.current_exe.display(), profile.display())
}

fn record(pid: u32, socket: &Path) -> HostRecord {
    HostRecord {
        pid,
        socket: socket.to_path_buf(),
        browser: "chromium".into(),
        profile: "p".into(),
        extension_id: OWN_ID.into(),
        extension_version: "0.1.0".into(),
        protocol: 1,
        started_at: 0,
    }
}
