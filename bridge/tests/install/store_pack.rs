//! `tabwire extension pack`: the zip a maintainer uploads to the Chrome Web Store. The store
//! refuses a manifest with a `key`, rejects a manifest that names a file the zip lacks, and
//! shows the icons; the unit tests of lib/ have no business there.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;
use std::process::Command;

use tabwire_testkit::bins;

/// Every extension file a manifest names: the service worker, the popup, the icons.
fn named_by_manifest(manifest: &serde_json::Value) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    names.insert(manifest["background"]["service_worker"].as_str().unwrap().to_owned());
    names.insert(manifest["action"]["default_popup"].as_str().unwrap().to_owned());
    for icons in [&manifest["icons"], &manifest["action"]["default_icon"]] {
        let icons = icons.as_object().expect("icons listed");
        names.extend(icons.values().map(|v| v.as_str().unwrap().to_owned()));
    }
    names
}

/// The files worker/content-scripts.js registers or injects: each quoted `….js` path in its
/// code (not its comments; imports start with `.`).
fn content_scripts() -> BTreeSet<String> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../extension/worker/content-scripts.js");
    let text = std::fs::read_to_string(file).unwrap();
    let code = text.lines().filter(|l| !l.trim_start().starts_with("//"));
    let quoted = code.flat_map(|l| l.split('\'').skip(1).step_by(2).collect::<Vec<_>>());
    quoted.filter(|s| s.ends_with(".js") && !s.starts_with('.')).map(str::to_owned).collect()
}

#[test]
fn pack_writes_a_zip_the_store_takes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("store.zip");
    let run = Command::new(bins::bin("tabwire"))
        .args(["extension", "pack", "--out"])
        .arg(&out)
        .output()
        .expect("run tabwire extension pack");
    let said =
        String::from_utf8_lossy(&run.stdout).into_owned() + &String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "pack failed:\n{said}");
    assert!(said.contains(&out.display().to_string()), "it says where the zip is:\n{said}");

    let mut zip = zip::ZipArchive::new(std::fs::File::open(&out).unwrap()).expect("a zip");
    let names: BTreeSet<String> = zip.file_names().map(|n| n.unwrap().into_owned()).collect();
    let mut manifest = String::new();
    zip.by_name("manifest.json")
        .expect("manifest.json at the root")
        .read_to_string(&mut manifest)
        .unwrap();
    let manifest: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    assert!(manifest.get("key").is_none(), "the store refuses a key: {manifest}");
    assert_eq!(manifest["manifest_version"], 3);

    let scripts = content_scripts();
    assert!(scripts.contains("isolated/relay.js"), "the content scripts were found: {scripts:?}");
    for name in named_by_manifest(&manifest).iter().chain(&scripts) {
        assert!(names.contains(name), "{name} is named but not in the zip: {names:?}");
    }
    for size in [16, 32, 48, 128] {
        let icon = format!("icons/icon-{size}.png");
        assert_eq!(manifest["icons"][size.to_string()], icon.as_str());
        let mut png = Vec::new();
        zip.by_name(&icon).unwrap().read_to_end(&mut png).unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{icon} is a PNG");
        let (w, h) = (&png[16..20], &png[20..24]);
        assert_eq!((w, h), (&(size as u32).to_be_bytes()[..], &(size as u32).to_be_bytes()[..]));
    }
    let stray: Vec<_> =
        names.iter().filter(|n| n.ends_with(".test.js") || n.ends_with("build.json")).collect();
    assert!(stray.is_empty(), "no unit tests or build.json in the store zip: {stray:?}");
}

#[test]
fn pack_into_a_missing_folder_says_where() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("no-such-folder").join("store.zip");
    let run = Command::new(bins::bin("tabwire"))
        .args(["extension", "pack", "--out"])
        .arg(&out)
        .output()
        .expect("run tabwire extension pack");
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(said.contains("no-such-folder") && said.contains("does not exist"), "{said}");
}
