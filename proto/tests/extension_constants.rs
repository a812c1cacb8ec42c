//! The extension is JavaScript and the host and bridges are Rust: the numbers both sides must
//! agree on are written twice. This reads them out of the extension's files and checks each
//! against its Rust twin (and the version against `manifest.json`), so that changing one side
//! alone fails here rather than in a user's browser.

use std::path::PathBuf;

use tabwire_proto::{limits, sites, wire};

fn extension_file(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../extension").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The right-hand side of `const NAME = …;` in `source`.
fn rhs<'a>(source: &'a str, name: &str) -> &'a str {
    let start = source
        .find(&format!("const {name} = "))
        .unwrap_or_else(|| panic!("no `const {name} = …` in the extension"));
    let rest = &source[start + name.len() + 9..];
    rest[..rest.find(';').expect("a `;` ends the constant")].trim()
}

/// A numeric constant: a product of integer literals (with `_`) and `MiB`.
fn number(source: &str, name: &str) -> u64 {
    rhs(source, name)
        .split('*')
        .map(|factor| match factor.trim() {
            "MiB" => 1024 * 1024,
            n => n.replace('_', "").parse().unwrap_or_else(|e| panic!("{name}: {n:?}: {e}")),
        })
        .product()
}

/// Every string literal (single-quoted) of a constant.
fn strings(source: &str, name: &str) -> Vec<String> {
    rhs(source, name).split('\'').skip(1).step_by(2).map(str::to_owned).collect()
}

#[test]
fn the_native_port_speaks_the_hosts_protocol_limits_and_timeout() {
    let native = extension_file("worker/native.js");
    assert_eq!(number(&native, "PROTOCOL"), u64::from(wire::PROTOCOL_VERSION));
    assert_eq!(number(&native, "MAX_MESSAGE"), limits::MAX_FROM_BROWSER as u64);
    assert_eq!(number(&native, "DEFAULT_TIMEOUT_MS"), limits::DEFAULT_REQUEST_TIMEOUT_MS);
    assert_eq!(strings(&native, "HOST"), ["dev.tabwire.host"]);
}

#[test]
fn the_page_limits_are_the_same_in_the_sdk_the_worker_and_the_bridge() {
    let sdk = extension_file("page-world/page-sdk.js");
    let worker = extension_file("lib/limits.js");
    assert_eq!(number(&sdk, "MAX_DEPTH"), wire::MAX_DEPTH as u64);
    assert_eq!(number(&worker, "MAX_DEPTH"), wire::MAX_DEPTH as u64);
    assert_eq!(number(&sdk, "MAX_EVENT"), number(&worker, "MAX_EVENT"));
    assert_eq!(number(&sdk, "MAX_JSON"), limits::MAX_FROM_BROWSER as u64);
}

#[test]
fn the_default_sites_are_the_same_on_both_sides() {
    let js = extension_file("lib/sites.js");
    assert_eq!(strings(&js, "DEFAULT_SITES"), sites::DEFAULTS);
}

#[test]
fn the_sdk_says_the_extensions_version() {
    let manifest: serde_json::Value =
        serde_json::from_str(&extension_file("manifest.json")).expect("manifest.json is JSON");
    let sdk = extension_file("page-world/page-sdk.js");
    assert_eq!(strings(&sdk, "VERSION"), [manifest["version"].as_str().unwrap()]);
}
