//! Claude Code inside WSL, the browser on Windows: the Windows `tabwire.exe` does the browser's
//! side, and Claude Code inside WSL starts that same `tabwire.exe mcp` through WSL interop, so
//! only its stdin and stdout cross from Linux to Windows and no socket has to.
//!
//! `tabwire install` inside WSL (without `--browser`/`--user-data-dir`/`--system`, which name a
//! Linux browser in WSL) copies the Windows programs to `%LOCALAPPDATA%\tabwire\bin`, runs
//! `tabwire.exe install` there (it writes the registry keys of the Windows browsers), and
//! records the copies so `tabwire uninstall` removes them again. `doctor` checks the chain link
//! by link: interop, the Windows program, its own doctor, Claude Code's registration.
//!
//! What the machine looks like comes in as values ([`Signs`], [`Wsl`]), so the decisions are
//! tested on any Linux with what WSL's `/proc` and environment hold.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::doctor::Finding;
use crate::env::{Env, shell_quote};
use crate::error::Error;

/// binfmt_misc's entry for Windows programs: present when WSL can run `.exe` files.
pub const INTEROP_FILE: &str = "/proc/sys/fs/binfmt_misc/WSLInterop";
/// Newer WSL versions register the entry under this name instead.
pub const INTEROP_LATE_FILE: &str = "/proc/sys/fs/binfmt_misc/WSLInterop-late";

/// What tells a Linux process it runs inside WSL.
#[derive(Debug, Clone, Default)]
pub struct Signs {
    /// `/proc/version`.
    pub proc_version: String,
    /// `$WSL_DISTRO_NAME`, which WSL sets in every process it starts.
    pub distro: Option<String>,
    /// The content of [`INTEROP_FILE`] (or [`INTEROP_LATE_FILE`]) when it exists.
    pub interop: Option<String>,
}

impl Signs {
    /// This process's signs (none outside Linux).
    pub fn from_process() -> Signs {
        if !cfg!(target_os = "linux") {
            return Signs::default();
        }
        let read = |p: &str| std::fs::read_to_string(p).ok();
        Signs {
            proc_version: read("/proc/version").unwrap_or_default(),
            distro: std::env::var("WSL_DISTRO_NAME").ok().filter(|d| !d.is_empty()),
            interop: read(INTEROP_FILE).or_else(|| read(INTEROP_LATE_FILE)),
        }
    }
}

/// This Linux runs inside WSL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wsl {
    /// The distribution's name (`Ubuntu`), when WSL said it.
    pub distro: Option<String>,
    /// Whether WSL may start Windows programs (interop on).
    pub interop: bool,
    /// `%LOCALAPPDATA%` of the Windows user, as a path in WSL (`/mnt/c/Users/u/AppData/Local`);
    /// `None`: ask Windows when needed ([`Wsl::windows_local_app_data`]).
    pub local_app_data: Option<PathBuf>,
}

/// WSL, when the signs say so: its kernel says "microsoft" in `/proc/version` (WSL 1:
/// `Microsoft`, WSL 2: `microsoft-standard-WSL2`), or WSL named the distribution, or its
/// interop entry exists.
pub fn detect(signs: &Signs) -> Option<Wsl> {
    let kernel = signs.proc_version.to_ascii_lowercase().contains("microsoft");
    if !kernel && signs.distro.is_none() && signs.interop.is_none() {
        return None;
    }
    // The entry reads "enabled" or "disabled" on its first line.
    let interop = signs.interop.as_deref().is_some_and(|s| s.trim_start().starts_with("enabled"));
    Some(Wsl { distro: signs.distro.clone(), interop, local_app_data: None })
}

impl Wsl {
    /// The Windows user's `%LOCALAPPDATA%` as a WSL path: from `cmd.exe /c echo %LOCALAPPDATA%`
    /// through interop, unless already known.
    pub fn windows_local_app_data(&self) -> Result<PathBuf, String> {
        if let Some(dir) = &self.local_app_data {
            return Ok(dir.clone());
        }
        let out = Command::new("cmd.exe")
            .args(["/d", "/c", "echo %LOCALAPPDATA%"])
            .current_dir("/")
            .output()
            .map_err(|e| format!("cannot run cmd.exe through WSL interop: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
        to_wsl_path(line).ok_or_else(|| {
            format!("cmd.exe printed {line:?} for %LOCALAPPDATA%, not a Windows folder")
        })
    }
}

/// `C:\Users\u\AppData\Local` as WSL mounts it: `/mnt/c/Users/u/AppData/Local` (WSL's default
/// automount root). `None` for what is not a drive path.
pub fn to_wsl_path(windows: &str) -> Option<PathBuf> {
    let mut chars = windows.chars();
    let drive = chars.next().filter(|c| c.is_ascii_alphabetic())?;
    let rest = windows.get(1..)?.strip_prefix(':')?;
    let rest = rest.trim_start_matches(['\\', '/']).replace('\\', "/");
    let base = format!("/mnt/{}", drive.to_ascii_lowercase());
    Some(if rest.is_empty() { PathBuf::from(base) } else { Path::new(&base).join(rest) })
}

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

/// How to turn interop back on.
pub const INTEROP_FIX: &str = "set `[interop] enabled=true` in /etc/wsl.conf, then run \
                               `wsl.exe --shutdown` from Windows and open WSL again";

/// What doctor saw of the chain inside WSL.
#[derive(Debug, Clone, Default)]
pub struct Chain {
    /// The Windows `tabwire.exe` install put there (from the record), if any.
    pub windows_exe: Option<PathBuf>,
    /// Whether that file exists.
    pub exe_exists: bool,
    /// `tabwire.exe doctor --json`'s findings, or why it could not run.
    pub windows_doctor: Option<Result<Vec<Finding>, String>>,
    /// What `claude mcp get tabwire` printed, or why it could not run.
    pub claude: Option<Result<String, String>>,
}

/// The findings for the chain, first broken link first.
pub fn chain_findings(wsl: &Wsl, chain: &Chain, tabwire: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let distro = wsl.distro.as_deref().unwrap_or("WSL");
    if !wsl.interop {
        out.push(Finding::broken(
            "wsl interop",
            format!(
                "{distro} cannot start Windows programs, so Claude Code cannot start tabwire.exe"
            ),
            INTEROP_FIX,
        ));
        return out;
    }
    out.push(Finding::ok("wsl interop", format!("{distro} can start Windows programs")));
    let Some(exe) = &chain.windows_exe else {
        out.push(Finding::broken(
            "windows tabwire",
            "no Windows tabwire.exe is installed for this WSL (the record names none)",
            format!(
                "`{tabwire} install` (inside WSL: copies tabwire.exe to Windows and registers it)"
            ),
        ));
        return out;
    };
    if !chain.exe_exists {
        out.push(Finding::broken(
            "windows tabwire",
            format!("{} is gone", exe.display()),
            format!("`{tabwire} install`"),
        ));
        return out;
    }
    out.push(Finding::ok("windows tabwire", exe.display().to_string()));
    match &chain.windows_doctor {
        Some(Ok(findings)) => out.extend(
            findings
                .iter()
                .map(|f| Finding { check: format!("windows: {}", f.check), ..f.clone() }),
        ),
        Some(Err(why)) => out.push(Finding::broken(
            "windows doctor",
            format!("cannot run `{} doctor --json` through interop: {why}", exe.display()),
            format!("run `{} doctor` to see why it does not start", shell_quote(exe)),
        )),
        None => {}
    }
    let line = mcp_add_line(exe);
    match &chain.claude {
        Some(Ok(text)) if text.contains(&*exe.to_string_lossy()) => out.push(Finding::ok(
            "claude code",
            format!("its tabwire server is {} mcp", exe.display()),
        )),
        Some(Ok(text)) if text.trim().is_empty() || text.contains("No MCP server") => {
            out.push(Finding::broken(
                "claude code",
                "Claude Code has no MCP server called tabwire",
                format!("`{line}`"),
            ))
        }
        Some(Ok(text)) => out.push(Finding::broken(
            "claude code",
            format!(
                "Claude Code's tabwire server is not the Windows tabwire.exe ({}): a Linux \
                 tabwire in WSL cannot reach the browser on Windows",
                text.lines().find(|l| l.contains("Command")).unwrap_or(text.trim()).trim()
            ),
            format!("`claude mcp remove tabwire && {line}`"),
        )),
        Some(Err(why)) => out.push(Finding::broken(
            "claude code",
            format!("cannot ask Claude Code (`claude mcp get tabwire`): {why}"),
            format!("install Claude Code in WSL, then `{line}`"),
        )),
        None => {}
    }
    out
}

/// Look at the chain on this machine: the file, `tabwire.exe doctor --json`, Claude Code.
pub fn observe(windows_exe: Option<PathBuf>, env: &Env) -> Chain {
    let exe_exists = windows_exe.as_ref().is_some_and(|p| p.is_file());
    let windows_doctor = windows_exe.as_ref().filter(|_| exe_exists).map(|exe| {
        let output = Command::new(exe)
            .args(["doctor", "--json"])
            .current_dir(exe.parent().unwrap_or(Path::new("/")))
            .output()
            .map_err(|e| e.to_string())?;
        #[derive(serde::Deserialize)]
        struct Doc {
            findings: Vec<Finding>,
        }
        serde_json::from_slice::<Doc>(&output.stdout).map(|d| d.findings).map_err(|e| {
            format!(
                "it exited {} without a report ({e}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            )
        })
    });
    let claude = Some(match env.find_on_path("claude") {
        None => Err("claude is not on PATH".to_string()),
        Some(claude) => Command::new(claude)
            .args(["mcp", "get", "tabwire"])
            .output()
            .map(|o| {
                format!(
                    "{}{}",
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr)
                )
            })
            .map_err(|e| e.to_string()),
    });
    Chain { windows_exe, exe_exists, windows_doctor, claude }
}

// WSL is Linux: its paths are built with `/`, so the tests run where that is the separator.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    const WSL2_VERSION: &str = "Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1) \
        (gcc (GCC) 11.2.0, GNU ld (GNU Binutils) 2.37) #1 SMP Fri Mar 29 23:14:13 UTC 2024\n";
    const WSL1_VERSION: &str = "Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) \
        (gcc version 5.4.0 (GCC) ) #3996-Microsoft Thu Jan 01 62:00:00 PST 2022\n";
    const DEBIAN_VERSION: &str = "Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org) \
        (gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP \
        PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)\n";
    /// What binfmt_misc shows for WSL's interop entry.
    const INTEROP_ON: &str = "enabled\ninterpreter /init\nflags: PF\noffset 0\nmagic 4d5a\n";

    #[test]
    fn wsl_is_recognised_by_its_kernel_its_variable_or_its_interop_entry() {
        let wsl2 = Signs {
            proc_version: WSL2_VERSION.into(),
            distro: Some("Ubuntu".into()),
            interop: Some(INTEROP_ON.into()),
        };
        assert_eq!(
            detect(&wsl2),
            Some(Wsl { distro: Some("Ubuntu".into()), interop: true, local_app_data: None })
        );
        let wsl1 = Signs { proc_version: WSL1_VERSION.into(), ..Signs::default() };
        assert_eq!(detect(&wsl1).map(|w| w.interop), Some(false));
        let by_name = Signs { distro: Some("Debian".into()), ..Signs::default() };
        assert!(detect(&by_name).is_some());
        let off = Signs { interop: Some("disabled\n".into()), ..wsl2.clone() };
        assert_eq!(detect(&off).map(|w| w.interop), Some(false));
        assert_eq!(
            detect(&Signs { proc_version: DEBIAN_VERSION.into(), ..Signs::default() }),
            None
        );
    }

    #[test]
    fn windows_paths_as_wsl_mounts_them() {
        assert_eq!(
            to_wsl_path(r"C:\Users\Ada Lovelace\AppData\Local"),
            Some(PathBuf::from("/mnt/c/Users/Ada Lovelace/AppData/Local"))
        );
        assert_eq!(to_wsl_path("D:\\"), Some(PathBuf::from("/mnt/d")));
        assert_eq!(to_wsl_path("%LOCALAPPDATA%"), None, "cmd.exe echoes an unset variable");
        assert_eq!(to_wsl_path(r"\\wsl$\Ubuntu"), None);
        assert_eq!(to_wsl_path(""), None);
    }

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

    fn wsl() -> Wsl {
        Wsl { distro: Some("Ubuntu".into()), interop: true, local_app_data: None }
    }

    fn exe() -> PathBuf {
        PathBuf::from("/mnt/c/Users/u/AppData/Local/tabwire/bin/tabwire.exe")
    }

    /// The first broken link, and its fix.
    fn broken(findings: &[Finding]) -> (String, String, String) {
        let f = findings.iter().find(|f| !f.ok).expect("a broken link");
        (f.check.clone(), f.detail.clone(), f.fix.clone().unwrap_or_default())
    }

    #[test]
    fn doctor_names_interop_when_it_is_off() {
        let off = Wsl { interop: false, ..wsl() };
        let (check, detail, fix) = broken(&chain_findings(&off, &Chain::default(), "tabwire"));
        assert_eq!(check, "wsl interop");
        assert!(detail.contains("Ubuntu cannot start Windows programs"), "{detail}");
        assert!(fix.contains("/etc/wsl.conf") && fix.contains("wsl.exe --shutdown"), "{fix}");
    }

    #[test]
    fn doctor_names_a_missing_windows_program() {
        let (check, _, fix) = broken(&chain_findings(&wsl(), &Chain::default(), "tabwire"));
        assert_eq!(
            (check.as_str(), fix.as_str()),
            (
                "windows tabwire",
                "`tabwire install` (inside WSL: copies tabwire.exe to Windows and registers it)"
            )
        );
        let gone = Chain { windows_exe: Some(exe()), ..Chain::default() };
        let (check, detail, _) = broken(&chain_findings(&wsl(), &gone, "tabwire"));
        assert_eq!(check, "windows tabwire");
        assert!(detail.ends_with("tabwire.exe is gone"), "{detail}");
    }

    #[test]
    fn doctor_passes_on_the_windows_findings_and_checks_claude_code() {
        let windows = vec![
            Finding::ok("chrome manifest", "C:\\…\\dev.tabwire.host.json"),
            Finding::broken(
                "edge manifest",
                "the registry key HKCU\\… is missing",
                "`tabwire install --browser edge`",
            ),
        ];
        let chain = Chain {
            windows_exe: Some(exe()),
            exe_exists: true,
            windows_doctor: Some(Ok(windows)),
            claude: Some(Ok(
                "tabwire:\n  Type: stdio\n  Command: /home/u/.cargo/bin/tabwire\n  Args: mcp\n"
                    .into(),
            )),
        };
        let findings = chain_findings(&wsl(), &chain, "tabwire");
        let checks: Vec<&str> = findings.iter().map(|f| f.check.as_str()).collect();
        assert_eq!(
            checks,
            [
                "wsl interop",
                "windows tabwire",
                "windows: chrome manifest",
                "windows: edge manifest",
                "claude code"
            ]
        );
        let claude = findings.last().unwrap();
        assert!(!claude.ok);
        assert!(claude.detail.contains("Command: /home/u/.cargo/bin/tabwire"), "{}", claude.detail);
        assert_eq!(
            claude.fix.as_deref(),
            Some(
                "`claude mcp remove tabwire && claude mcp add tabwire -- /mnt/c/Users/u/AppData/Local/tabwire/bin/tabwire.exe mcp`"
            )
        );

        let good = Chain {
            claude: Some(Ok(format!("tabwire:\n  Command: {}\n  Args: mcp\n", exe().display()))),
            windows_doctor: Some(Ok(vec![])),
            ..chain
        };
        assert!(chain_findings(&wsl(), &good, "tabwire").iter().all(|f| f.ok));
    }

    #[test]
    fn doctor_names_a_windows_program_that_does_not_run() {
        let chain = Chain {
            windows_exe: Some(exe()),
            exe_exists: true,
            windows_doctor: Some(Err("exec format error".into())),
            claude: None,
        };
        let (check, detail, _) = broken(&chain_findings(&wsl(), &chain, "tabwire"));
        assert_eq!(check, "windows doctor");
        assert!(detail.contains("exec format error"), "{detail}");
    }
}
