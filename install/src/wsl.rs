//! Claude Code inside WSL, the browser on Windows: the Windows `tabwire.exe` does the browser's
//! side, and Claude Code inside WSL starts that same `tabwire.exe mcp` through WSL interop, so
//! only its stdin and stdout cross from Linux to Windows and no socket has to.
//!
//! This file tells whether this Linux is WSL and maps Windows paths to WSL's. What install does
//! there is in `wsl_install.rs`, what doctor checks in `wsl_doctor.rs`.
//!
//! What the machine looks like comes in as values ([`Signs`], [`Wsl`]), so the decisions are
//! tested on any Linux with what WSL's `/proc` and environment hold.

use std::path::{Path, PathBuf};
use std::process::Command;

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

/// How to turn interop back on.
pub const INTEROP_FIX: &str = "set `[interop] enabled=true` in /etc/wsl.conf, then run \
                               `wsl.exe --shutdown` from Windows and open WSL again";

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
}
