//! `tabwire install` / `tabwire uninstall` against a temporary home.
//! Unix only: they check file modes; the Windows paths and keys are unit-tested everywhere.
#![cfg(unix)]

use crate::common;

use std::fs;
use std::path::PathBuf;

use common::{World, install_args, write_exe};
use tabwire_install::{Env, Error, Os};

const OWN_ID: &str = "cmbolhpnohkddmklmlbjnpdpmgmdgkfi";

fn manifest_json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

/// Where each Chromium-family browser on Linux reads per-user manifests, written out by hand
/// (not computed by the crate) so the table cannot agree with itself by mistake.
const LINUX: &[(&str, &str)] = &[
    ("chrome", ".config/google-chrome/NativeMessagingHosts"),
    ("chrome-beta", ".config/google-chrome-beta/NativeMessagingHosts"),
    ("chrome-dev", ".config/google-chrome-unstable/NativeMessagingHosts"),
    ("chromium", ".config/chromium/NativeMessagingHosts"),
    ("brave", ".config/BraveSoftware/Brave-Browser/NativeMessagingHosts"),
    ("edge", ".config/microsoft-edge/NativeMessagingHosts"),
    ("edge-beta", ".config/microsoft-edge-beta/NativeMessagingHosts"),
    ("edge-dev", ".config/microsoft-edge-dev/NativeMessagingHosts"),
    ("vivaldi", ".config/vivaldi/NativeMessagingHosts"),
    ("opera", ".config/opera/NativeMessagingHosts"),
];

#[test]
fn each_linux_browser_gets_its_manifest_and_uninstall_leaves_no_trace() {
    for (browser, dir) in LINUX {
        let w = World::new();
        let before = w.snapshot();
        let out = w.install(&["--browser", browser]).unwrap();
        let file = w.env.home.join(dir).join("dev.tabwire.host.json");
        assert!(out.contains(&format!("created       {}", file.display())), "{out}");
        let m = manifest_json(&file);
        assert_eq!(m["name"], "dev.tabwire.host");
        assert_eq!(m["type"], "stdio");
        assert_eq!(m["path"], w.host().to_str().unwrap());
        assert_eq!(
            m["allowed_origins"],
            serde_json::json!([format!("chrome-extension://{OWN_ID}/")])
        );
        assert!(w.env.config_dir.join("installed.json").is_file());

        let out = w.uninstall(&[]);
        assert!(out.contains(&format!("removed       {}", file.display())), "{out}");
        assert_eq!(w.snapshot(), before, "{browser}: uninstall left something behind");
    }
}

#[test]
fn browsers_not_made_for_linux_are_refused() {
    let w = World::new();
    for browser in ["arc", "chrome-canary", "edge-canary"] {
        let err = w.install(&["--browser", browser]).unwrap_err();
        assert!(matches!(err, Error::NotOnThisOs(_)), "{err}");
        assert!(err.to_string().contains("is not made for Linux"), "{err}");
    }
}

#[test]
fn installs_for_the_browsers_found_by_profile_folder_or_path() {
    let mut w = World::new();
    fs::create_dir_all(w.env.home.join(".config/vivaldi")).unwrap();
    let bin = w.root().join("usr-bin");
    fs::create_dir_all(&bin).unwrap();
    write_exe(&bin.join("chromium"), "#!/bin/sh\n");
    w.env.path = vec![bin];

    w.install(&[]).unwrap();
    let hosts = |dir: &str| w.env.home.join(dir).join("NativeMessagingHosts/dev.tabwire.host.json");
    assert!(hosts(".config/vivaldi").is_file());
    assert!(hosts(".config/chromium").is_file());
    assert!(!hosts(".config/google-chrome").exists());
    assert!(!w.env.home.join(".config/google-chrome").exists());
}

#[test]
fn no_browser_found_says_what_to_do() {
    let w = World::new();
    let before = w.snapshot();
    let err = w.install(&[]).unwrap_err();
    assert!(matches!(err, Error::NoBrowserFound));
    let msg = err.to_string();
    assert!(msg.contains("--browser chromium") && msg.contains("--user-data-dir DIR"), "{msg}");
    assert_eq!(w.snapshot(), before);
}

#[test]
fn dry_run_prints_every_file_and_writes_nothing() {
    let w = World::new();
    let before = w.snapshot();
    let out = w.install(&["--dry-run", "--browser", "chrome", "--browser", "brave"]).unwrap();
    for dir in [".config/google-chrome", ".config/BraveSoftware/Brave-Browser"] {
        let file = w.env.home.join(dir).join("NativeMessagingHosts/dev.tabwire.host.json");
        assert!(out.contains(&format!("would create  {}", file.display())), "{out}");
    }
    assert!(out.contains(&format!("would record them in {}", w.env.record_path().display())));
    assert!(out.contains("dry run: nothing was changed"), "{out}");
    assert_eq!(w.snapshot(), before);
}

#[test]
fn reinstall_is_idempotent() {
    let w = World::new();
    let before = w.snapshot();
    w.install(&["--browser", "chromium", "--browser", "edge"]).unwrap();
    let once = w.snapshot();
    let out = w.install(&["--browser", "chromium", "--browser", "edge"]).unwrap();
    assert_eq!(w.snapshot(), once);
    // The two manifests and the extension's folder.
    assert_eq!(out.matches("up to date").count(), 3, "{out}");
    w.uninstall(&[]);
    assert_eq!(w.snapshot(), before);
}

#[test]
fn a_second_install_adds_to_the_record_and_uninstall_removes_both() {
    let w = World::new();
    let before = w.snapshot();
    w.install(&["--browser", "chromium"]).unwrap();
    w.install(&["--browser", "chrome"]).unwrap();
    let out = w.uninstall(&[]);
    assert_eq!(
        out.matches("removed").count(),
        4,
        "two manifests, the extension, the record: {out}"
    );
    assert!(out.contains("share/tabwire/extension"), "{out}");
    assert_eq!(w.snapshot(), before);
}

#[test]
fn custom_user_data_dir() {
    let w = World::new();
    let profile = w.root().join("profile");
    fs::create_dir_all(&profile).unwrap();
    let before = w.snapshot();
    w.install(&["--user-data-dir", profile.to_str().unwrap()]).unwrap();
    let file = profile.join("NativeMessagingHosts/dev.tabwire.host.json");
    assert_eq!(manifest_json(&file)["path"], w.host().to_str().unwrap());
    // Only the profile: no browser was found or named.
    assert!(!w.env.home.join(".config/chromium").exists());
    w.uninstall(&[]);
    assert_eq!(w.snapshot(), before, "the created NativeMessagingHosts folder must go too");
    assert!(profile.is_dir(), "a folder that was there before stays");
}

#[test]
fn uninstall_dry_run_and_nothing_recorded() {
    let w = World::new();
    let out = w.uninstall(&[]);
    assert!(out.contains("nothing to uninstall"), "{out}");

    w.install(&["--browser", "chromium"]).unwrap();
    let installed = w.snapshot();
    let out = w.uninstall(&["--dry-run"]);
    assert!(out.contains("would remove") && out.contains("dry run"), "{out}");
    assert_eq!(w.snapshot(), installed);
}

#[test]
fn uninstall_keeps_a_file_that_is_no_longer_ours() {
    let w = World::new();
    w.install(&["--browser", "chromium"]).unwrap();
    let file = w.env.home.join(".config/chromium/NativeMessagingHosts/dev.tabwire.host.json");
    fs::write(&file, r#"{"name":"something.else"}"#).unwrap();
    let out = w.uninstall(&[]);
    assert!(out.contains("kept") && out.contains("no longer a tabwire manifest"), "{out}");
    assert!(file.exists());
}

#[test]
fn extension_ids() {
    let w = World::new();
    let other = "abcdefghijklmnopabcdefghijklmnop";
    w.install(&["--browser", "chromium", "--extension-id", OWN_ID, "--extension-id", other])
        .unwrap();
    let file = w.env.home.join(".config/chromium/NativeMessagingHosts/dev.tabwire.host.json");
    assert_eq!(
        manifest_json(&file)["allowed_origins"],
        serde_json::json!([
            format!("chrome-extension://{OWN_ID}/"),
            format!("chrome-extension://{other}/")
        ])
    );

    let err = w.install(&["--browser", "chromium", "--extension-id", "xyz"]).unwrap_err();
    assert!(matches!(err, Error::BadExtensionId(_)));
    assert!(err.to_string().contains("chrome://extensions"), "{err}");
}

#[test]
fn host_is_found_next_to_the_exe_then_on_path_and_named_otherwise() {
    let mut w = World::new();
    let out = w.install(&["--dry-run", "--browser", "chromium"]).unwrap();
    assert!(out.contains(&format!("host: {} (next to", w.host().display())), "{out}");

    // `cargo install`: the host is elsewhere on PATH.
    fs::remove_file(w.host()).unwrap();
    let cargo_bin = w.root().join("cargo-bin");
    fs::create_dir_all(&cargo_bin).unwrap();
    write_exe(&cargo_bin.join("tabwire-host"), "#!/bin/sh\n");
    w.env.path = vec![cargo_bin.clone()];
    let out = w.install(&["--dry-run", "--browser", "chromium"]).unwrap();
    let expected = format!("host: {} (found on PATH)", cargo_bin.join("tabwire-host").display());
    assert!(out.contains(&expected), "{out}");

    w.env.path.clear();
    let err = w.install(&["--browser", "chromium"]).unwrap_err();
    assert!(matches!(err, Error::HostNotFound { .. }));
    assert!(err.to_string().contains("--host-path"), "{err}");

    let mine = cargo_bin.join("tabwire-host");
    let out = w.install(&["--browser", "chromium", "--host-path", mine.to_str().unwrap()]).unwrap();
    assert!(out.contains("(from --host-path)"), "{out}");

    fs::set_permissions(&mine, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let err = w.install(&["--host-path", mine.to_str().unwrap()]).unwrap_err();
    assert!(err.to_string().contains(&format!("chmod +x {}", mine.display())), "{err}");
}

#[test]
fn prints_the_extension_folder_and_the_claude_line() {
    let mut w = World::new();
    let ext = w.root().join("share/tabwire/extension");
    fs::create_dir_all(&ext).unwrap();
    fs::write(ext.join("manifest.json"), "{}").unwrap();
    let out = w.install(&["--browser", "chromium"]).unwrap();
    assert!(out.contains(&format!("Load unpacked and choose {}", ext.display())), "{out}");
    let line = format!("claude mcp add tabwire -- {} mcp", w.env.current_exe.display());
    assert!(out.contains(&line), "{out}");

    // $TABWIRE_EXTENSION_DIR wins.
    let elsewhere = w.root().join("ext2");
    fs::create_dir_all(&elsewhere).unwrap();
    fs::write(elsewhere.join("manifest.json"), "{}").unwrap();
    w.env.extension_dir = Some(elsewhere.clone());
    let out = w.install(&["--browser", "chromium"]).unwrap();
    assert!(out.contains(&format!("choose {}", elsewhere.display())), "{out}");
}

#[test]
fn finds_the_checkout_extension_folder_from_a_target_dir() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let mut w = World::new();
    w.env.current_exe = repo.join("target/debug/tabwire");
    assert_eq!(tabwire_install::find_extension_dir(&w.env), Some(repo.join("extension")));
}

#[test]
fn claude_flag_runs_claude_or_says_it_is_missing() {
    let mut w = World::new();
    let out = w.install(&["--browser", "chromium", "--claude"]).unwrap();
    assert!(out.contains("claude is not on PATH"), "{out}");
    // The worker templates, whose default runs Claude Code; an existing file is the user's.
    let templates = w.env.config_dir.join("workers.json");
    assert!(out.contains(&format!("wrote {}", templates.display())), "{out}");
    let default = serde_json::json!({ "default": ["claude", "-p", "{prompt}"] });
    assert_eq!(manifest_json(&templates), default);
    fs::write(&templates, "{}").unwrap();
    let out = w.install(&["--browser", "chromium", "--claude"]).unwrap();
    assert!(out.contains("kept") && fs::read_to_string(&templates).unwrap() == "{}", "{out}");
    // Uninstall takes only what install wrote: a file the user edited stays.
    let out = w.uninstall(&[]);
    assert!(out.contains(&format!("kept          {}", templates.display())), "{out}");
    assert!(templates.exists());
    fs::remove_file(&templates).unwrap();

    let bin = w.root().join("npm-bin");
    fs::create_dir_all(&bin).unwrap();
    let log = w.root().join("claude-args");
    write_exe(&bin.join("claude"), &format!("#!/bin/sh\necho \"$@\" > '{}'\n", log.display()));
    w.env.path = vec![bin];
    let out = w.install(&["--browser", "chromium", "--claude"]).unwrap();
    assert!(out.contains("ran: claude mcp add tabwire --"), "{out}");
    let args = fs::read_to_string(&log).unwrap();
    assert_eq!(args.trim(), format!("mcp add tabwire -- {} mcp", w.env.current_exe.display()));
}

#[test]
fn system_dry_run_names_the_system_folders() {
    let w = World::new();
    let args = ["--system", "--dry-run", "--browser", "chrome", "--browser", "chrome-beta"];
    let out =
        w.install(&[&args[..], &["--browser", "chromium", "--browser", "brave"]].concat()).unwrap();
    let chrome = "would create  /etc/opt/chrome/native-messaging-hosts/dev.tabwire.host.json  (chrome, chrome-beta)";
    assert!(out.contains(chrome), "{out}");
    assert!(out.contains("/etc/chromium/native-messaging-hosts/dev.tabwire.host.json  (chromium)"));
    assert!(out.contains("note: brave: no system-wide folder"), "{out}");
}

#[test]
fn macos_layout_in_a_temporary_home() {
    let mut w = World::new();
    w.env.os = Os::MacOs;
    let before = w.snapshot();
    w.install(&["--browser", "arc", "--browser", "chrome-canary"]).unwrap();
    let support = w.env.home.join("Library/Application Support");
    // Arc reads Chrome's folder too, so it gets both.
    for dir in ["Arc/User Data", "Google/Chrome", "Google/Chrome Canary"] {
        assert!(support.join(dir).join("NativeMessagingHosts/dev.tabwire.host.json").is_file());
    }
    w.uninstall(&[]);
    assert_eq!(w.snapshot(), before);
}

#[test]
fn windows_targets_are_the_registry_keys() {
    let env = Env {
        os: Os::Windows,
        home: PathBuf::from(r"C:\Users\u"),
        xdg_config_home: None,
        path: vec![],
        config_dir: PathBuf::from(r"C:\Users\u\AppData\Roaming\tabwire"),
        // What `Dirs` picks on Windows: the local, not the roaming, app data.
        data_dir: PathBuf::from(r"C:\Users\u\AppData\Local\tabwire"),
        runtime_dir: PathBuf::from(r"C:\tmp"),
        runtime_dir_note: None,
        current_exe: PathBuf::from(r"C:\tabwire\tabwire.exe"),
        extension_dir: None,
        wsl: None,
        npx: false,
        claude_config_dir: None,
    };
    let sel =
        install_args(&["--browser", "chrome", "--browser", "brave", "--browser", "edge"]).selection;
    let targets = tabwire_install::resolve_targets(&sel, &env).unwrap().targets;
    let manifest = PathBuf::from(
        r"C:\Users\u\AppData\Local\tabwire\NativeMessagingHosts\dev.tabwire.host.json",
    );
    let got: Vec<_> = targets
        .iter()
        .map(|t| (t.label.as_str(), t.manifest.clone(), t.registry_key.clone().unwrap()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "chrome, brave",
                manifest.clone(),
                r"Software\Google\Chrome\NativeMessagingHosts\dev.tabwire.host".to_string()
            ),
            (
                "brave",
                manifest.clone(),
                r"Software\BraveSoftware\Brave-Browser\NativeMessagingHosts\dev.tabwire.host"
                    .to_string()
            ),
            (
                "edge",
                manifest,
                r"Software\Microsoft\Edge\NativeMessagingHosts\dev.tabwire.host".to_string()
            ),
        ]
    );
    let sel = install_args(&["--system", "--browser", "chrome"]).selection;
    let err = tabwire_install::resolve_targets(&sel, &env).unwrap_err();
    assert!(matches!(err, Error::SystemUnsupported("Windows")), "{err}");
}

#[test]
fn without_a_checkout_install_writes_the_extension_it_carries_and_prints_that_folder() {
    let w = World::new();
    let out = w.install(&["--browser", "chromium"]).unwrap();
    let dir = w.env.home.join(".local/share/tabwire/extension/current");
    assert!(out.contains(&format!("Load unpacked and choose {}", dir.display())), "{out}");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    assert!(manifest["key"].as_str().is_some_and(|k| k.starts_with("MIIB")), "the fixed key");
    let build = tabwire_install::extension::build_of(&dir).expect("build.json");
    assert_eq!(build.build_id, tabwire_install::extension::BUILD_ID);
}

#[test]
fn uninstall_removes_the_worker_templates_install_wrote() {
    let w = World::new();
    let before = w.snapshot();
    w.install(&["--browser", "chromium", "--claude"]).unwrap();
    assert!(w.env.config_dir.join("workers.json").exists());
    let out = w.uninstall(&[]);
    assert!(out.contains("workers.json"), "{out}");
    assert_eq!(w.snapshot(), before, "nothing of the install is left");
}

/// `npx -y tabwire install`: the programs are in npx's cache, which npm clears (and re-creates
/// under another hash). The host the manifest names is a copy in tabwire's own folder, Claude
/// Code gets `npx -y tabwire mcp`, and uninstall removes the copy.
#[test]
fn a_host_in_npx_s_cache_is_copied_and_the_manifest_names_the_copy() {
    let mut w = World::new();
    let before = w.snapshot();
    let cache = w.root().join("npm-cache/_npx/e1d9c0ef3d048ee9");
    let bin = cache.join("node_modules/@tabwire/linux-x64/bin");
    fs::create_dir_all(&bin).unwrap();
    write_exe(&bin.join("tabwire"), "#!/bin/sh\n");
    write_exe(&bin.join("tabwire-host"), "#!/bin/sh\n# the packaged host\n");
    w.env.current_exe = bin.join("tabwire");
    w.env.npx = true;

    let dry = w.install(&["--browser", "chromium", "--dry-run"]).unwrap();
    let copy = w.env.data_dir.join("bin/tabwire-host");
    assert!(dry.contains(&format!("would copy    {}", copy.display())), "{dry}");
    assert!(!copy.exists());

    let out = w.install(&["--browser", "chromium", "--claude"]).unwrap();
    let from = bin.join("tabwire-host");
    assert!(
        out.contains(&format!("host: {} (a copy of {})", copy.display(), from.display())),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "copied        {}  (from {}: npm may clear",
            copy.display(),
            from.display()
        )),
        "{out}"
    );
    assert!(out.contains("the browsers start this copy"), "{out}");
    assert!(out.contains("claude mcp add tabwire -- npx -y tabwire mcp"), "{out}");
    assert!(out.contains("(`npx -y tabwire uninstall` removes all of it)"), "{out}");
    let manifest = w.env.home.join(".config/chromium/NativeMessagingHosts/dev.tabwire.host.json");
    assert_eq!(manifest_json(&manifest)["path"], copy.to_str().unwrap());
    assert_eq!(fs::read(&copy).unwrap(), fs::read(&from).unwrap());
    assert!(!w.env.data_dir.join("bin/tabwire").exists(), "Claude Code starts npx, not a copy");

    // npm clears its cache: the manifest still names a host that starts.
    fs::remove_dir_all(w.root().join("npm-cache")).unwrap();
    let (ok, report) = w.doctor(&["--browser", "chromium"]);
    assert!(ok, "{report}");

    // A newer package in the cache replaces the copy in place.
    fs::create_dir_all(&bin).unwrap();
    write_exe(&bin.join("tabwire"), "#!/bin/sh\n");
    write_exe(&bin.join("tabwire-host"), "#!/bin/sh\n# a newer host\n");
    let out = w.install(&["--browser", "chromium"]).unwrap();
    assert!(out.contains(&format!("updated       {}", copy.display())), "{out}");
    assert!(out.contains(&format!("up to date    {}", manifest.display())), "{out}");
    assert_eq!(fs::read_to_string(&copy).unwrap(), "#!/bin/sh\n# a newer host\n");

    let out = w.uninstall(&[]);
    assert!(out.contains(&format!("removed       {}", copy.display())), "{out}");
    fs::remove_dir_all(w.root().join("npm-cache")).unwrap();
    assert_eq!(w.snapshot(), before, "nothing of the install is left");
}

/// Run from a `node_modules` without npx (`./node_modules/.bin/tabwire install`): Claude Code
/// gets a copy of tabwire too, by its path.
#[test]
fn a_tabwire_in_node_modules_is_copied_for_claude_code() {
    let mut w = World::new();
    let bin = w.root().join("project/node_modules/@tabwire/linux-x64/bin");
    fs::create_dir_all(&bin).unwrap();
    write_exe(&bin.join("tabwire"), "#!/bin/sh\n");
    write_exe(&bin.join("tabwire-host"), "#!/bin/sh\n");
    w.env.current_exe = bin.join("tabwire");
    let out = w.install(&["--browser", "chromium"]).unwrap();
    let copy = w.env.data_dir.join("bin/tabwire");
    assert!(out.contains("Claude Code starts this copy"), "{out}");
    assert!(out.contains(&format!("claude mcp add tabwire -- {} mcp", copy.display())), "{out}");
    assert!(copy.is_file() && w.env.data_dir.join("bin/tabwire-host").is_file());
}

/// An install over another build's: the extension's folder is replaced in place and the user
/// is told to press Reload; the same build again is up to date.
#[test]
fn installing_over_another_build_replaces_the_extension_and_says_reload() {
    let w = World::new();
    let out = w.install(&["--browser", "chromium"]).unwrap();
    let dir = w.env.data_dir.join("extension/current");
    assert!(out.contains(&format!("wrote         {}", dir.display())), "{out}");
    assert!(out.contains("Load the extension"), "{out}");

    // What an older release left there.
    let old = r#"{"version":"0.0.1","build_id":"0123456789abcdef"}"#;
    fs::write(dir.join("build.json"), old).unwrap();
    fs::write(dir.join("stale.js"), "// gone in the new build").unwrap();
    let dry = w.install(&["--browser", "chromium", "--dry-run"]).unwrap();
    assert!(dry.contains(&format!("would replace  {}", dir.display())), "{dry}");
    let out = w.install(&["--browser", "chromium"]).unwrap();
    let this = format!(
        "{} build {}",
        tabwire_install::extension::VERSION,
        tabwire_install::extension::BUILD_ID
    );
    assert!(
        out.contains(&format!(
            "replaced      {}  (extension 0.0.1 build 0123456789abcdef → {this})",
            dir.display()
        )),
        "{out}"
    );
    assert!(out.contains("press Reload on tabwire"), "{out}");
    assert!(!dir.join("stale.js").exists(), "the folder is replaced whole");
    let build = tabwire_install::extension::build_of(&dir).unwrap();
    assert_eq!(build.build_id, tabwire_install::extension::BUILD_ID);

    let out = w.install(&["--browser", "chromium"]).unwrap();
    assert!(out.contains(&format!("up to date    {}", dir.display())), "{out}");
    assert!(!out.contains("Reload"), "{out}");
}
