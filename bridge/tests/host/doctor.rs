//! `tabwire doctor` against a real browser: healthy → exit 0 with a measured ping; broken →
//! exit non-zero naming the fault and its fix. (Every static fault, one by one, is covered in
//! install/tests/doctor.rs; here the real binary and a real Chromium.)

use std::process::Command;

use tabwire_testkit::{Chromium, bins};

fn doctor(browser: &Chromium, extra: &[&str]) -> (bool, String) {
    let profile = tabwire_launcher::Browser::profile_dir(&browser.root);
    let out = Command::new(bins::bin("tabwire"))
        .arg("doctor")
        .arg("--user-data-dir")
        .arg(&profile)
        .args(extra)
        .env("TABWIRE_RUNTIME_DIR", &browser.runtime_dir)
        .env("TABWIRE_CONFIG_DIR", browser.root.join("config"))
        .output()
        .expect("run tabwire doctor");
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[test]
fn healthy_setup_pings_through_the_browser() {
    let browser = Chromium::start();
    let (ok, text) = doctor(&browser, &[]);
    assert!(ok, "doctor should pass:\n{text}");
    assert!(text.contains("answered in"), "a measured ping:\n{text}");
    // Which build the browser runs, by the id the extension reported: here the unpacked one.
    let id = tabwire_proto::extension_id::EXTENSION_ID;
    let build = format!("development build (unpacked, id {id})");
    assert!(text.contains(&build), "doctor names the build:\n{text}");
    // And what carries the messages: Native Messaging until the fast link is up, a moment later.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut text = text;
    while !text.contains("; messages go by the fast link (a loopback WebSocket to tabwire-host)") {
        assert!(text.contains("; messages go by Native Messaging"), "{text}");
        assert!(std::time::Instant::now() < deadline, "the fast link never came up:\n{text}");
        std::thread::sleep(std::time::Duration::from_millis(200));
        text = doctor(&browser, &[]).1;
    }

    // With an assistant session running, doctor names it.
    let mut session = Command::new(bins::bin("tabwire"))
        .arg("mcp")
        .env("TABWIRE_RUNTIME_DIR", &browser.runtime_dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("start tabwire mcp");
    let sessions = tabwire_proto::runtime_dir::sessions_dir(&browser.runtime_dir);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !std::fs::read_dir(&sessions).is_ok_and(|mut d| {
        d.any(|e| e.is_ok_and(|e| e.path().extension().is_some_and(|x| x == "json")))
    }) {
        assert!(std::time::Instant::now() < deadline, "the session never wrote its record");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (ok, text) = doctor(&browser, &[]);
    assert!(ok, "{text}");
    assert!(text.contains("1 running, each attached to the hosts above"), "{text}");
    assert!(text.contains(&format!("(pid {})", session.id())), "{text}");
    drop(session.stdin.take()); // EOF ends the session
    session.wait().unwrap();

    let (ok, json) = doctor(&browser, &["--json"]);
    assert!(ok, "{json}");
    let doc: serde_json::Value =
        serde_json::from_str(&json).expect("--json prints one JSON document");
    let findings = doc["findings"].as_array().expect("findings array");
    let ping = findings
        .iter()
        .find(|f| f["check"].as_str().is_some_and(|c| c.starts_with("ping")))
        .expect("a ping finding");
    assert_eq!(ping["ok"], true, "{ping}");
}

#[test]
fn broken_manifest_and_dead_host_are_named_with_their_fix() {
    let browser = Chromium::start();
    let profile = tabwire_launcher::Browser::profile_dir(&browser.root);
    let manifest = profile.join("NativeMessagingHosts/dev.tabwire.host.json");
    std::fs::write(&manifest, "{ not json").unwrap();
    // A socket left behind by a host that died.
    let hosts = tabwire_proto::runtime_dir::hosts_dir(&browser.runtime_dir);
    std::fs::write(hosts.join("999999.sock"), b"").unwrap();

    let (ok, text) = doctor(&browser, &[]);
    assert!(!ok, "doctor must exit non-zero:\n{text}");
    assert!(text.contains("is not valid JSON"), "{text}");
    assert!(text.contains("install --user-data-dir"), "the fix is named:\n{text}");
    assert!(text.contains("999999.sock"), "the stale socket is named:\n{text}");
    assert!(text.contains("rm -f"), "with its fix:\n{text}");
}

#[test]
fn no_browser_running_is_a_finding_with_a_fix() {
    let root = bins::scratch_dir("doc");
    let profile = root.join("profile");
    std::fs::create_dir_all(&profile).unwrap();
    let run = |args: &[&str]| {
        Command::new(bins::bin("tabwire"))
            .args(args)
            .env("TABWIRE_RUNTIME_DIR", root.join("run"))
            .env("TABWIRE_CONFIG_DIR", root.join("config"))
            .env("TABWIRE_DATA_DIR", root.join("data"))
            .output()
            .unwrap()
    };
    let host = bins::bin("tabwire-host");
    let out = run(&[
        "install",
        "--user-data-dir",
        profile.to_str().unwrap(),
        "--host-path",
        host.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run(&["doctor", "--user-data-dir", profile.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("no browser is running the tabwire extension"), "{text}");
    assert!(text.contains("Load unpacked"), "{text}");
    let _ = std::fs::remove_dir_all(root);
}
