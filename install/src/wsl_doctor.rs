//! `tabwire doctor` inside WSL: the chain checked link by link — interop, the Windows program,
//! its own doctor, Claude Code's registration — first broken link first.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::env::{Env, shell_quote};
use crate::finding::Finding;
use crate::wsl::{INTEROP_FIX, Wsl};
use crate::wsl_install::mcp_add_line;

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
