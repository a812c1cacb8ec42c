//! `tabwire install` / `doctor` / `uninstall` on Windows, against the real registry of the
//! current user (HKCU) — under Wine here (`scripts/cross.sh`), on a Windows runner in CI. The
//! keys are read back with `reg query`, Windows' own tool, not with our code.
//!
//! The host: `TABWIRE_TEST_WINDOWS_HOST` when set (a built `tabwire-host.exe`), else a file
//! that is not a program, which doctor must name as a host that cannot start.
#![cfg(windows)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Parser;
use tabwire_install::{DoctorArgs, Env, InstallArgs, Os, UninstallArgs};

const HOST_NAME: &str = "dev.tabwire.host";
const CHROME: &str = r"Software\Google\Chrome\NativeMessagingHosts\dev.tabwire.host";
const BRAVE: &str = r"Software\BraveSoftware\Brave-Browser\NativeMessagingHosts\dev.tabwire.host";
const EDGE: &str = r"Software\Microsoft\Edge\NativeMessagingHosts\dev.tabwire.host";

fn parse<A: clap::Args + clap::FromArgMatches>(args: &[&str]) -> A {
    #[derive(Parser)]
    struct Cli<A: clap::Args> {
        #[command(flatten)]
        inner: A,
    }
    Cli::<A>::try_parse_from(std::iter::once("tabwire").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("{e}"))
        .inner
}

/// `reg query HKCU\<key> /ve`: the key's default value, or `None` when the key is missing.
fn reg_query(key: &str) -> Option<String> {
    let out = Command::new("reg").args(["query", &format!(r"HKCU\{key}"), "/ve"]).output().unwrap();
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // `    (Default)    REG_SZ    C:\…\dev.tabwire.host.json` (the first column is localised).
    let line = text.lines().find(|l| l.contains("REG_SZ"))?;
    Some(line.split("REG_SZ").nth(1)?.trim().to_string())
}

fn reg_add(key: &str, value: &str) {
    let key = format!(r"HKCU\{key}");
    let out = Command::new("reg").args(["add", &key, "/ve", "/d", value, "/f"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

struct Machine {
    _dir: tempfile::TempDir,
    env: Env,
    host: PathBuf,
}

fn machine() -> Machine {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let home = root.join("home");
    let bin = root.join("bin");
    fs::create_dir_all(&bin).unwrap();
    fs::write(bin.join("tabwire.exe"), b"").unwrap();
    let host = bin.join("tabwire-host.exe");
    match std::env::var_os("TABWIRE_TEST_WINDOWS_HOST") {
        Some(real) => {
            fs::copy(&real, &host).unwrap();
            let shim = Path::new(&real).with_file_name("bcryptprimitives.dll");
            if shim.exists() {
                fs::copy(&shim, bin.join("bcryptprimitives.dll")).unwrap();
            }
        }
        None => fs::write(&host, b"not a program").unwrap(),
    }
    // The browsers "installed" for detection: their profile folders exist.
    for profile in [
        r"AppData\Local\Google\Chrome\User Data",
        r"AppData\Local\BraveSoftware\Brave-Browser\User Data",
    ] {
        fs::create_dir_all(home.join(profile)).unwrap();
    }
    let env = Env {
        os: Os::Windows,
        home: home.clone(),
        xdg_config_home: None,
        path: vec![],
        config_dir: root.join(r"Roaming\tabwire"),
        data_dir: root.join(r"Local\tabwire"),
        runtime_dir: root.join("run"),
        runtime_dir_note: None,
        current_exe: bin.join("tabwire.exe"),
        extension_dir: None,
        wsl: None,
        npx: false,
        claude_config_dir: None,
    };
    Machine { _dir: dir, env, host }
}

fn install(m: &Machine, args: &[&str]) -> String {
    let mut out = Vec::new();
    tabwire_install::run_install(&parse::<InstallArgs>(args), &m.env, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn doctor(m: &Machine) -> (bool, String) {
    let mut out = Vec::new();
    let ok = tabwire_install::run_doctor(&parse::<DoctorArgs>(&[]), &m.env, &mut out).unwrap();
    (ok, String::from_utf8(out).unwrap())
}

fn uninstall(m: &Machine) -> String {
    let mut out = Vec::new();
    tabwire_install::run_uninstall(&parse::<UninstallArgs>(&[]), &m.env, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// One test, in order: the keys are the user's one registry, shared by every test.
#[test]
fn install_writes_the_keys_doctor_reads_them_back_uninstall_removes_them() {
    let m = machine();
    for key in [CHROME, BRAVE, EDGE] {
        let _ = Command::new("reg").args(["delete", &format!(r"HKCU\{key}"), "/f"]).output();
    }
    let out = install(&m, &[]);
    let manifest = m.env.data_dir.join("NativeMessagingHosts").join(format!("{HOST_NAME}.json"));
    assert!(manifest.is_file(), "{out}");
    let text = fs::read_to_string(&manifest).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["path"], m.host.to_str().unwrap());
    for key in [CHROME, BRAVE] {
        assert_eq!(reg_query(key).as_deref(), manifest.to_str(), "{key}\n{out}");
        assert!(
            out.contains(&format!(r"set           HKCU\{key} = {}", manifest.display())),
            "{out}"
        );
    }
    assert_eq!(reg_query(EDGE), None, "Edge is not installed here");

    // Doctor reads the keys back. With a real host everything is ok; with a file that is not a
    // program, doctor names the host as one that cannot start.
    let (ok, out) = doctor(&m);
    if std::env::var_os("TABWIRE_TEST_WINDOWS_HOST").is_some() {
        assert!(ok, "{out}");
    } else {
        assert!(!ok);
        assert!(
            out.contains(&format!("the host it names, {}, cannot start", m.host.display())),
            "{out}"
        );
    }

    // A key that names another file.
    let elsewhere = m.env.data_dir.join("other.json");
    reg_add(BRAVE, elsewhere.to_str().unwrap());
    let (ok, out) = doctor(&m);
    assert!(!ok);
    assert!(
        out.contains(&format!(r"HKCU\{BRAVE} names {}, not this manifest", elsewhere.display())),
        "{out}"
    );

    // A key that is gone.
    Command::new("reg").args(["delete", &format!(r"HKCU\{BRAVE}"), "/f"]).output().unwrap();
    let (_, out) = doctor(&m);
    assert!(out.contains(&format!(r"the registry key HKCU\{BRAVE} is missing")), "{out}");
    assert!(out.contains("fix: `") && out.contains("install --browser brave`"), "{out}");
    install(&m, &[]);

    // A manifest for another extension.
    let wrong =
        text.replace("cmbolhpnohkddmklmlbjnpdpmgmdgkfi", "abcdefghijklmnopabcdefghijklmnop");
    fs::write(&manifest, wrong).unwrap();
    let (_, out) = doctor(&m);
    assert!(out.contains("lacks chrome-extension://cmbolhpnohkddmklmlbjnpdpmgmdgkfi/"), "{out}");

    // The file a key points at is gone.
    fs::remove_file(&manifest).unwrap();
    let (_, out) = doctor(&m);
    assert!(out.contains(&format!("{}: there is none", manifest.display())), "{out}");
    install(&m, &[]);

    let out = uninstall(&m);
    for key in [CHROME, BRAVE] {
        assert!(out.contains(&format!(r"removed       HKCU\{key}")), "{out}");
        assert_eq!(reg_query(key), None, "{key} is gone");
    }
    assert!(!manifest.exists());
    assert!(!m.env.data_dir.join("NativeMessagingHosts").exists(), "the folder install made");
}
