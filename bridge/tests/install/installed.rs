//! An installed tabwire is whole: the two programs `cargo install --path bridge` puts in a bin
//! folder, far from any checkout, write the extension they carry, a real Chromium loads *that*
//! folder and works, an install over an older one replaces it in place and says to press
//! Reload, `doctor` tells an older extension from the one installed, and `uninstall` leaves
//! nothing behind.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use tabwire_launcher::Browser;
use tabwire_testkit::{Chromium, Fixtures, Mcp, bins};

/// A machine with tabwire installed: a home, and a bin folder holding the two programs as
/// `cargo install` leaves them (copies of this build's binaries, outside the checkout).
struct Installed {
    root: bins::Scratch,
    bin: PathBuf,
    home: PathBuf,
}

impl Installed {
    fn new(tag: &str) -> Installed {
        let root = bins::scratch_dir(tag);
        let (bin, home) = (root.join("bin"), root.join("home"));
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        for name in ["tabwire", "tabwire-host"] {
            std::fs::copy(bins::bin(name), bin.join(name)).unwrap();
        }
        Installed { root, bin, home }
    }

    /// `tabwire ARGS` as the user runs it: HOME is the fresh home, nothing of the checkout in
    /// the environment.
    fn tabwire(&self, args: &[&str], runtime: Option<&Path>) -> Output {
        let mut cmd = Command::new(self.bin.join("tabwire"));
        cmd.args(args).env_clear().env("HOME", &self.home).env("PATH", "/usr/bin:/bin");
        if let Some(dir) = runtime {
            cmd.env("TABWIRE_RUNTIME_DIR", dir);
        }
        cmd.output().expect("run the installed tabwire")
    }
}

fn stdout(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "failed: {text}{}", String::from_utf8_lossy(&out.stderr));
    text
}

#[test]
fn one_package_builds_both_programs() {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--no-deps", "--format-version", "1", "--offline"])
        .current_dir(bins::repo_root())
        .output()
        .unwrap();
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata");
    let package = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["manifest_path"].as_str().unwrap().ends_with("bridge/Cargo.toml"))
        .expect("the bridge package");
    let bins: Vec<&str> = package["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["kind"] == json!(["bin"]))
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(bins, ["tabwire", "tabwire-host"], "`cargo install --path bridge` installs both");
}

#[test]
fn the_version_names_the_build() {
    let machine = Installed::new("ver");
    let said = stdout(&machine.tabwire(&["--version"], None));
    let unpacked = machine.root.join("ext");
    stdout(&machine.tabwire(&["extension", "unpack", unpacked.to_str().unwrap()], None));
    let build: Value =
        serde_json::from_slice(&std::fs::read(unpacked.join("build.json")).unwrap()).unwrap();
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(bins::repo_root())
        .output()
        .expect("git");
    let commit = String::from_utf8(head.stdout).unwrap();
    let want = format!(
        "tabwire {} (commit {}, extension build {})",
        env!("CARGO_PKG_VERSION"),
        commit.trim(),
        build["build_id"].as_str().unwrap()
    );
    assert_eq!(said.trim(), want);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_installed_extension_is_written_loaded_checked_and_removed() {
    let machine = Installed::new("inst");
    let profile = Browser::profile_dir(&machine.root.join("chr"));
    std::fs::create_dir_all(&profile).unwrap();
    let out = machine.tabwire(
        &["install", "--browser", "chromium", "--user-data-dir", profile.to_str().unwrap()],
        None,
    );
    let said = stdout(&out);
    let folder = machine.home.join(".local/share/tabwire/extension/current");
    assert!(said.contains(&format!("Load unpacked and choose {}", folder.display())), "{said}");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(folder.join("manifest.json")).unwrap()).unwrap();
    assert!(manifest["key"].as_str().is_some_and(|k| k.starts_with("MIIB")), "the fixed key");
    let printed = stdout(&machine.tabwire(&["extension", "path"], None));
    assert_eq!(printed.trim(), folder.to_str().unwrap());

    // Chromium loads the installed folder, not the checkout's, and a round trip works.
    let browser = Chromium::start_installed(
        machine.root.join("chr"),
        folder.clone(),
        machine.bin.join("tabwire-host"),
    );
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let listed = mcp.ok("list_browsers", json!({})).await;
    let build = std::fs::read_to_string(folder.join("build.json")).unwrap();
    let build: Value = serde_json::from_str(&build).unwrap();
    assert_eq!(listed["browsers"][0]["build_id"], build["build_id"], "{listed}");
    assert!(listed["browsers"][0].get("version_problem").is_none(), "{listed}");
    let tab =
        mcp.ok("open_tab", json!({ "url": pages.url("app.html") })).await["tab"]["id"].clone();
    let got = mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    assert_eq!(got["state"]["items"], json!(["first"]));
    let doctor = machine.tabwire(&["doctor"], Some(&browser.runtime_dir));
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(report.contains("the one this tabwire carries"), "{report}");
    drop(mcp);
    drop(browser);

    let out = machine.tabwire(&["uninstall"], None);
    let said = stdout(&out);
    assert!(said.contains("share/tabwire/extension"), "{said}");
    assert!(!machine.home.join(".local").exists(), "uninstall leaves nothing of it behind");
}

/// The update path: an older release's extension is installed and running; `tabwire install`
/// of this one replaces the files in place and says to press Reload, and until then the browser
/// runs the old one, which `list_browsers` and `doctor` name with that fix.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_install_over_an_older_one_replaces_it_and_says_reload() {
    let machine = Installed::new("old");
    let profile = Browser::profile_dir(&machine.root.join("chr"));
    std::fs::create_dir_all(&profile).unwrap();
    let install =
        ["install", "--browser", "chromium", "--user-data-dir", profile.to_str().unwrap()];
    stdout(&machine.tabwire(&install, None));
    // What an older release's install left: its files, its version in manifest and build.json.
    let folder = machine.home.join(".local/share/tabwire/extension/current");
    let path = folder.join("manifest.json");
    let mut manifest: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    manifest["version"] = json!("0.0.1");
    std::fs::write(&path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    let old_build = r#"{"version":"0.0.1","build_id":"0123456789abcdef"}"#;
    std::fs::write(folder.join("build.json"), old_build).unwrap();
    let browser = Chromium::start_installed(
        machine.root.join("chr"),
        folder.clone(),
        machine.bin.join("tabwire-host"),
    );

    let said = stdout(&machine.tabwire(&install, None));
    let build: Value =
        serde_json::from_slice(&std::fs::read(folder.join("build.json")).unwrap()).unwrap();
    let this =
        format!("{} build {}", env!("CARGO_PKG_VERSION"), build["build_id"].as_str().unwrap());
    let replaced = format!(
        "replaced      {}  (extension 0.0.1 build 0123456789abcdef → {this})",
        folder.display()
    );
    assert!(said.contains(&replaced), "{said}");
    assert!(said.contains("open chrome://extensions and press Reload on tabwire"), "{said}");
    let manifest: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"), "the files are replaced");

    let mcp = Mcp::start(&browser.runtime_dir).await;
    let listed = mcp.ok("list_browsers", json!({})).await;
    let b = &listed["browsers"][0];
    assert_eq!(b["extension_version"], "0.0.1");
    assert_eq!(b["tabwire_version"], env!("CARGO_PKG_VERSION"));
    let problem = b["version_problem"].as_str().unwrap_or_default();
    assert!(problem.contains("older than this tabwire"), "{listed}");
    assert!(problem.contains("chrome://extensions"), "{problem}");

    let doctor = machine.tabwire(&["doctor"], Some(&browser.runtime_dir));
    assert!(!doctor.status.success(), "doctor fails on the mismatch");
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(report.contains("0.0.1, older than this tabwire"), "{report}");
    assert!(report.contains("reload tabwire in chrome://extensions"), "{report}");
}

/// `tabwire install --claude --skill`: Claude Code's skill, in its skills folder, teaching
/// `tabwire call` with this installed program in a few hundred words, and pointing to
/// `tabwire call --help <tool>`, which answers without a browser.
#[test]
fn install_writes_claude_codes_skill_for_tabwire_call() {
    let machine = Installed::new("skill");
    let profile = Browser::profile_dir(&machine.root.join("chr"));
    std::fs::create_dir_all(&profile).unwrap();
    let dir = profile.to_str().unwrap();
    let args = ["install", "--browser", "chromium", "--user-data-dir", dir, "--claude", "--skill"];
    let said = stdout(&machine.tabwire(&args, None));
    let path = machine.home.join(".claude/skills/tabwire/SKILL.md");
    assert!(said.contains(&format!("wrote {}", path.display())), "{said}");
    assert!(!said.contains("claude is not on PATH"), "the skill instead of the MCP server: {said}");
    let skill = std::fs::read_to_string(&path).unwrap();
    // Claude Code's front matter: the name and the description it shows the model.
    let front = skill.strip_prefix("---\n").and_then(|s| s.split_once("\n---\n")).unwrap().0;
    assert!(
        front.contains("name: tabwire\n")
            && front.contains("description: Use the user's own browser")
    );
    let program = machine.bin.join("tabwire");
    assert!(skill.contains(&format!("{} call read_page --tab-id 7", program.display())), "{skill}");
    assert!(
        skill.contains("call --help <tool>") && skill.contains("TABWIRE_SESSION_ID"),
        "{skill}"
    );
    let words = skill.split_whitespace().count();
    assert!((150..600).contains(&words), "a few hundred words, not {words}");
    eprintln!("SKILL.md: {words} words, {} bytes (≈ {} tokens)", skill.len(), skill.len() / 4);

    let help = stdout(&machine.tabwire(&["call", "--help", "click"], None));
    assert!(help.contains("--tab-id <integer, required>") && help.contains("--ref"), "{help}");
    let list = stdout(&machine.tabwire(&["call", "--help"], None));
    assert!(list.contains("audit_accessibility") && list.contains("read_page"), "{list}");

    // Uninstall takes the skill with it, and says so; the skills folder stays Claude Code's.
    let said = stdout(&machine.tabwire(&["uninstall", "--dry-run"], None));
    assert!(said.contains(&format!("would remove  {}", path.display())), "{said}");
    assert!(path.exists(), "a dry run changes nothing");
    let said = stdout(&machine.tabwire(&["uninstall"], None));
    let removed = format!("removed       {} (Claude Code's skill)", path.display());
    assert!(said.contains(&removed), "{said}");
    assert!(!path.parent().unwrap().exists(), "its folder goes with it: {said}");
    assert!(machine.home.join(".claude/skills").is_dir(), "{said}");
}

/// A SKILL.md in tabwire's folder that is not tabwire's (its front matter names another skill)
/// is the user's: uninstall leaves it and says why, even with no record of an install.
#[test]
fn uninstall_keeps_a_skill_that_is_not_tabwires() {
    let machine = Installed::new("skill-kept");
    let path = machine.home.join(".claude/skills/tabwire/SKILL.md");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mine = "---\nname: my-browser-notes\ndescription: mine\n---\n\nNotes on tabwire.\n";
    std::fs::write(&path, mine).unwrap();
    let said = stdout(&machine.tabwire(&["uninstall"], None));
    assert!(said.contains(&format!("kept          {}", path.display())), "{said}");
    assert!(said.contains("not tabwire's skill"), "{said}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), mine);
}
