//! `tabwire install` / `doctor` / `uninstall` inside WSL, with the browser on Windows, against
//! a temporary machine: the `Env` says "this is WSL" (as `wsl::detect` finds it from WSL's
//! `/proc` and environment) and where Windows' `%LOCALAPPDATA%` is mounted; the Windows
//! programs are stand-ins that log how they were called (through WSL interop a `.exe` is
//! started like any other program).
#![cfg(unix)]

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{World, write_exe};
use tabwire_install::wsl::Wsl;

struct Machine {
    w: World,
    /// `%LOCALAPPDATA%` as WSL mounts it.
    local: PathBuf,
    calls: PathBuf,
}

/// A WSL machine with `tabwire.exe` and `tabwire-host.exe` next to the Linux `tabwire`.
fn wsl_machine() -> Machine {
    let mut w = World::new();
    let local = w.root().join("mnt/c/Users/u/AppData/Local");
    fs::create_dir_all(&local).unwrap();
    let calls = w.root().join("calls.log");
    let bin = w.root().join("bin");
    let exe = format!(
        "#!/bin/sh\necho \"$0 $*\" >> '{}'\nif [ \"$1\" = doctor ]; then echo '{{\"ok\":true,\"findings\":[{{\"check\":\"chrome manifest\",\"ok\":true,\"detail\":\"C:/x.json\"}}]}}'; fi\n",
        calls.display()
    );
    write_exe(&bin.join("tabwire.exe"), &exe);
    write_exe(&bin.join("tabwire-host.exe"), "#!/bin/sh\n");
    w.env.wsl = Some(Wsl {
        distro: Some("Ubuntu".into()),
        interop: true,
        local_app_data: Some(local.clone()),
    });
    Machine { w, local, calls }
}

fn calls(m: &Machine) -> Vec<String> {
    let text = fs::read_to_string(&m.calls).unwrap_or_default();
    text.lines().map(|l| l.replace(&m.local.display().to_string(), "%LOCALAPPDATA%")).collect()
}

fn windows_exe(local: &Path) -> PathBuf {
    local.join("tabwire/bin/tabwire.exe")
}

#[test]
fn install_in_wsl_registers_the_windows_program_and_uninstall_takes_it_back() {
    let m = wsl_machine();
    let before = m.w.snapshot();
    let out = m.w.install(&[]).unwrap();
    let exe = windows_exe(&m.local);
    assert!(exe.is_file() && exe.with_file_name("tabwire-host.exe").is_file(), "{out}");
    assert!(out.contains("WSL: registering the Windows tabwire"), "{out}");
    assert_eq!(calls(&m), ["%LOCALAPPDATA%/tabwire/bin/tabwire.exe install"]);
    let line = format!("claude mcp add tabwire -- {} mcp", exe.display());
    assert!(out.contains(&line), "the Claude Code line names the Windows program:\n{out}");
    // Nothing was written for a Linux browser.
    assert!(!m.w.env.home.join(".config/chromium").exists());

    let out = m.w.uninstall(&[]);
    assert!(out.contains("removed       the Windows side"), "{out}");
    assert!(out.contains(&format!("removed       {}", exe.display())), "{out}");
    assert_eq!(calls(&m)[1], "%LOCALAPPDATA%/tabwire/bin/tabwire.exe uninstall");
    fs::remove_file(&m.calls).unwrap();
    assert_eq!(m.w.snapshot(), before, "uninstall left something behind");
}

#[test]
fn doctor_in_wsl_follows_the_chain_to_claude_code() {
    let mut m = wsl_machine();
    // Before install: the first broken link is the missing Windows program.
    let (ok, out) = m.w.doctor(&[]);
    assert!(!ok);
    assert!(out.contains("FAIL  windows tabwire: no Windows tabwire.exe is installed"), "{out}");

    m.w.install(&[]).unwrap();
    let exe = windows_exe(&m.local);
    // Claude Code that still runs a Linux tabwire, which cannot reach the browser on Windows.
    let claude_bin = m.w.root().join("claude-bin");
    fs::create_dir_all(&claude_bin).unwrap();
    let claude = claude_bin.join("claude");
    write_exe(
        &claude,
        "#!/bin/sh\nprintf 'tabwire:\\n  Type: stdio\\n  Command: /usr/local/bin/tabwire\\n'\n",
    );
    m.w.env.path = vec![claude_bin.clone()];
    let (ok, out) = m.w.doctor(&[]);
    assert!(!ok, "{out}");
    assert!(out.contains("ok    wsl interop: Ubuntu can start Windows programs"), "{out}");
    assert!(out.contains("ok    windows: chrome manifest: C:/x.json"), "{out}");
    assert!(
        out.contains(
            "FAIL  claude code: Claude Code's tabwire server is not the Windows tabwire.exe"
        ),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "fix: `claude mcp remove tabwire && claude mcp add tabwire -- {} mcp`",
            exe.display()
        )),
        "{out}"
    );

    write_exe(
        &claude,
        &format!("#!/bin/sh\nprintf 'tabwire:\\n  Command: {}\\n  Args: mcp\\n'\n", exe.display()),
    );
    let (ok, out) = m.w.doctor(&[]);
    assert!(ok, "{out}");

    // The Windows program gone: doctor names it.
    fs::remove_file(&exe).unwrap();
    let (ok, out) = m.w.doctor(&[]);
    assert!(!ok);
    assert!(out.contains(&format!("FAIL  windows tabwire: {} is gone", exe.display())), "{out}");
}

#[test]
fn install_in_wsl_without_the_windows_program_says_how_to_get_it() {
    let m = wsl_machine();
    fs::remove_file(m.w.root().join("bin/tabwire-host.exe")).unwrap();
    let before = m.w.snapshot();
    let err = m.w.install(&[]).unwrap_err().to_string();
    assert!(err.contains("no tabwire.exe with tabwire-host.exe beside it"), "{err}");
    assert!(err.contains("--windows-exe"), "{err}");
    assert_eq!(m.w.snapshot(), before);
}

#[test]
fn a_linux_browser_in_wsl_is_still_possible_by_naming_it() {
    let m = wsl_machine();
    m.w.install(&["--browser", "chromium"]).unwrap();
    assert!(
        m.w.env.home.join(".config/chromium/NativeMessagingHosts/dev.tabwire.host.json").is_file()
    );
    assert_eq!(calls(&m), Vec::<String>::new(), "the Windows program was not run");
}

#[test]
fn interop_off_is_refused_with_the_fix() {
    let mut m = wsl_machine();
    m.w.env.wsl.as_mut().unwrap().interop = false;
    let err = m.w.install(&[]).unwrap_err().to_string();
    assert!(err.contains("interop is off") && err.contains("/etc/wsl.conf"), "{err}");
}
