//! `tabwire install` inside WSL (without `--browser`/`--user-data-dir`/`--system`, which name a
//! Linux browser in WSL): copy the Windows programs to `%LOCALAPPDATA%\tabwire\bin`, run
//! `tabwire.exe install` there (it writes the registry keys of the Windows browsers), and record
//! the copies so `tabwire uninstall` removes them again.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::env::{Env, shell_quote};
use crate::error::Error;
use crate::wsl::{INTEROP_FIX, Wsl};

/// Where the Windows programs go: `%LOCALAPPDATA%\tabwire\bin`.
pub fn windows_bin_dir(local_app_data: &Path) -> PathBuf {
    local_app_data.join("tabwire").join("bin")
}

/// The Windows programs to copy: `tabwire.exe` and `tabwire-host.exe`, from `flag`
/// (`--windows-exe`, naming `tabwire.exe`), else beside the running `tabwire`, else in
/// `share/tabwire/windows/` of the tree it was installed into.
pub fn windows_sources(
    flag: Option<&Path>,
    current_exe: &Path,
) -> Result<(PathBuf, PathBuf), Error> {
    let pair = |exe: PathBuf| {
        let host = exe.with_file_name("tabwire-host.exe");
        (exe, host)
    };
    let candidates: Vec<PathBuf> = match flag {
        Some(exe) => vec![exe.to_path_buf()],
        None => {
            let dir = current_exe.parent().unwrap_or(Path::new("."));
            let mut c = vec![dir.join("tabwire.exe")];
            if let Some(prefix) = dir.parent() {
                c.push(prefix.join("share").join("tabwire").join("windows").join("tabwire.exe"));
            }
            c
        }
    };
    for exe in &candidates {
        let (exe, host) = pair(exe.clone());
        if exe.is_file() && host.is_file() {
            return Ok((exe, host));
        }
    }
    Err(Error::NoWindowsExe { looked: candidates })
}

/// `claude mcp add tabwire -- <the Windows tabwire.exe, as a WSL path> mcp`.
pub fn mcp_add_line(windows_exe: &Path) -> String {
    format!("claude mcp add tabwire -- {} mcp", shell_quote(windows_exe))
}

/// What one install inside WSL does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Each file to copy, from where in WSL to where on Windows.
    pub copies: Vec<(PathBuf, PathBuf)>,
    /// The Windows `tabwire.exe` that does the rest, as a WSL path.
    pub windows_exe: PathBuf,
    /// Its arguments: `install`, and the extension ids asked for.
    pub args: Vec<String>,
}

/// The plan for the Windows programs at `sources`, with `%LOCALAPPDATA%` at `local_app_data`.
/// Programs already on the Windows side (under `/mnt/<drive>/`) are used where they are.
pub fn plan(sources: (PathBuf, PathBuf), local_app_data: &Path, extension_ids: &[String]) -> Plan {
    let (exe, host) = sources;
    let mut args = vec!["install".to_string()];
    for id in extension_ids {
        args.extend(["--extension-id".to_string(), id.clone()]);
    }
    if on_windows_drive(&exe) {
        return Plan { copies: Vec::new(), windows_exe: exe, args };
    }
    let bin = windows_bin_dir(local_app_data);
    let copies = vec![(exe, bin.join("tabwire.exe")), (host, bin.join("tabwire-host.exe"))];
    Plan { windows_exe: bin.join("tabwire.exe"), copies, args }
}

/// Whether `path` is on a Windows drive as WSL mounts it (`/mnt/c/…`).
fn on_windows_drive(path: &Path) -> bool {
    let text = path.to_string_lossy();
    let Some(rest) = text.strip_prefix("/mnt/") else { return false };
    let mut chars = rest.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic()) && matches!(chars.next(), Some('/'))
}

/// `tabwire install` inside WSL: carry out [`plan`] and say what is left to do.
pub fn install(
    wsl: &Wsl,
    windows_exe_flag: Option<&Path>,
    extension_ids: &[String],
    dry_run: bool,
    env: &Env,
    out: &mut dyn Write,
) -> Result<Plan, Error> {
    let say = |out: &mut dyn Write, text: String| {
        writeln!(out, "{text}").map_err(Error::io("print to", "stdout"))
    };
    if !wsl.interop {
        return Err(Error::Wsl(format!(
            "this is WSL{}, but it cannot start Windows programs (interop is off): {}",
            wsl.distro.as_deref().map(|d| format!(" ({d})")).unwrap_or_default(),
            INTEROP_FIX
        )));
    }
    let sources = windows_sources(windows_exe_flag, &env.current_exe)?;
    let local = wsl.windows_local_app_data().map_err(Error::Wsl)?;
    let plan = plan(sources, &local, extension_ids);
    say(out, "WSL: registering the Windows tabwire for the browsers on Windows".into())?;
    for (from, to) in &plan.copies {
        let verb = if dry_run { "would copy" } else { "copied" };
        if !dry_run {
            std::fs::create_dir_all(to.parent().expect("a file has a folder"))
                .map_err(Error::io("create the folder for", to))?;
            std::fs::copy(from, to).map_err(Error::io("copy to", to))?;
        }
        say(out, format!("{verb:<12}  {} -> {}", from.display(), to.display()))?;
    }
    let shown = format!("{} {}", shell_quote(&plan.windows_exe), plan.args.join(" "));
    if dry_run {
        say(out, format!("would run     {shown}"))?;
        return Ok(plan);
    }
    say(out, format!("running       {shown}"))?;
    let output = Command::new(&plan.windows_exe)
        .args(&plan.args)
        .current_dir(plan.windows_exe.parent().unwrap_or(Path::new("/")))
        .output()
        .map_err(Error::io("run through WSL interop", &plan.windows_exe))?;
    out.write_all(&output.stdout).map_err(Error::io("print to", "stdout"))?;
    if !output.status.success() {
        return Err(Error::Wsl(format!(
            "{shown} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok(plan)
}

// WSL is Linux: its paths are built with `/`, so the tests run where that is the separator.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn the_plan_copies_both_programs_to_local_app_data_unless_they_are_on_windows_already() {
        let local = Path::new("/mnt/c/Users/u/AppData/Local");
        let sources = (
            PathBuf::from("/usr/lib/tabwire/tabwire.exe"),
            PathBuf::from("/usr/lib/tabwire/tabwire-host.exe"),
        );
        let p = plan(sources, local, &["a".repeat(32)]);
        let bin = Path::new("/mnt/c/Users/u/AppData/Local/tabwire/bin");
        assert_eq!(
            p.copies,
            [
                (PathBuf::from("/usr/lib/tabwire/tabwire.exe"), bin.join("tabwire.exe")),
                (PathBuf::from("/usr/lib/tabwire/tabwire-host.exe"), bin.join("tabwire-host.exe")),
            ]
        );
        assert_eq!(p.windows_exe, bin.join("tabwire.exe"));
        assert_eq!(p.args, ["install".to_string(), "--extension-id".into(), "a".repeat(32)]);
        assert_eq!(
            mcp_add_line(&p.windows_exe),
            "claude mcp add tabwire -- /mnt/c/Users/u/AppData/Local/tabwire/bin/tabwire.exe mcp"
        );

        let there = (
            PathBuf::from("/mnt/d/tools/tabwire.exe"),
            PathBuf::from("/mnt/d/tools/tabwire-host.exe"),
        );
        let p = plan(there, local, &[]);
        assert_eq!(p.copies, []);
        assert_eq!(p.windows_exe, PathBuf::from("/mnt/d/tools/tabwire.exe"));
        assert_eq!(p.args, ["install"]);
    }
}
