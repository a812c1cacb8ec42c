//! `installed.json` is the user's file, so another program of the user's (or a mistake) can
//! edit it: uninstall follows it only to what install itself writes — a registry key of a
//! known browser, the extension folder under tabwire's data dir — and leaves anything else.
//! Unix only: its machine has the Linux layout (the key check before any deletion is the same
//! code on every OS).
#![cfg(unix)]

use crate::common;

use common::World;
use tabwire_install::Record;

#[test]
fn uninstall_does_not_follow_a_forged_registry_key_or_extension_folder() {
    let w = World::new();
    w.install(&["--browser", "chromium"]).unwrap();
    let path = w.env.record_path();
    let mut record = Record::load(&path).unwrap();
    let victim = w.root().join("precious");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("data.txt"), "keep me").unwrap();
    record.entries[0].target.registry_key =
        Some(r"Software\Microsoft\Windows\CurrentVersion\Run".into());
    record.extension_root = Some(victim.clone());
    std::fs::write(&path, serde_json::to_vec(&record).unwrap()).unwrap();

    let out = w.uninstall(&[]);
    assert!(
        out.contains(r"kept          HKCU\Software\Microsoft\Windows\CurrentVersion\Run"),
        "{out}"
    );
    assert!(out.contains("not a key tabwire install writes"), "{out}");
    assert!(out.contains(&format!("kept          {}", victim.display())), "{out}");
    assert_eq!(std::fs::read_to_string(victim.join("data.txt")).unwrap(), "keep me");
}
