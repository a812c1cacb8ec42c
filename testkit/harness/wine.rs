//! The Windows programs under test, run under Wine: when `TABWIRE_TEST_WINDOWS_BINS` names the
//! folder of `tabwire.exe`, `tabwire-host.exe` and the `bcryptprimitives.dll` stand-in Wine 8
//! needs (scripts/windows.sh builds them and runs the browser tests so), [`crate::bins::bin`]
//! gives, for `tabwire` and `tabwire-host`, a wrapper that runs the Windows program under Wine
//! with the caller's arguments, stdio and environment. Debian's Chromium starts the host
//! through it as its native host (a Linux browser cannot start a `.exe` itself), and each
//! test's `tabwire mcp`, `tabwire call` or `tabwire sites` is the Windows one, reaching that host
//! over Wine's named pipes. The tests themselves stay Linux programs: they start the Linux
//! browser and drive it over its CDP pipe, which a Windows program under Wine could not.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tabwire_launcher::Browser;
use tabwire_proto::runtime_dir::HostRecord;

/// The variable naming the folder of the Windows programs.
pub const VAR: &str = "TABWIRE_TEST_WINDOWS_BINS";

/// The variables whose value is a folder: a Windows program under Wine reads it as a Windows
/// path (drive Z: is the Unix root), the same string in every process of a test.
const FOLDERS: &[&str] = &[
    "TABWIRE_RUNTIME_DIR",
    "TABWIRE_CONFIG_DIR",
    "TABWIRE_STATE_DIR",
    "TABWIRE_DATA_DIR",
    "TABWIRE_EXTENSION_DIR",
];

/// The folder of the Windows programs when this run tests them.
pub fn bins() -> Option<&'static Path> {
    static BINS: OnceLock<Option<PathBuf>> = OnceLock::new();
    BINS.get_or_init(|| {
        let dir = PathBuf::from(std::env::var_os(VAR).filter(|d| !d.is_empty())?);
        for file in ["tabwire.exe", "tabwire-host.exe", "bcryptprimitives.dll"] {
            assert!(
                dir.join(file).exists(),
                "{VAR}={} holds no {file}: build with ./scripts/windows.sh",
                dir.display()
            );
        }
        Some(dir)
    })
    .as_deref()
}

/// Whether this run tests the Windows programs under Wine.
pub fn active() -> bool {
    bins().is_some()
}

/// The wrapper that runs `name`'s Windows program under Wine, when this run tests them and
/// `name` is one of ours.
pub fn program(name: &str) -> Option<PathBuf> {
    let bins = bins()?;
    if !matches!(name, "tabwire" | "tabwire-host") {
        return None;
    }
    let prefix = prefix(bins);
    let mut script = format!(
        "#!/bin/sh\n# {name}.exe under Wine: testkit/harness/wine.rs.\n\
         export WINEPREFIX='{}' WINEDEBUG=-all\n\
         for var in {}; do\n\
         \x20 eval \"dir=\\${{$var:-}}\"\n\
         \x20 case \"$dir\" in /*) export \"$var=Z:$(printf %s \"$dir\" | tr / '\\\\')\" ;; esac\n\
         done\n",
        prefix.display(),
        FOLDERS.join(" ")
    );
    script
        .push_str(&format!("exec wine '{}' \"$@\"\n", bins.join(format!("{name}.exe")).display()));
    let dir = bins.join("wine-wrappers");
    let path = dir.join(name);
    // Written once per test process, one thread at a time (another process may be reading
    // it: a new file renamed over it).
    static WRITING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    if std::fs::read_to_string(&path).ok().as_deref() != Some(script.as_str()) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(&dir).expect("create the wrappers' folder");
        let fresh = dir.join(format!(".{name}.{}", std::process::id()));
        std::fs::write(&fresh, &script).expect("write a wrapper");
        std::fs::set_permissions(&fresh, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::rename(&fresh, &path).expect("put the wrapper in place");
    }
    Some(path)
}

/// The Wine prefix: `WINEPREFIX`, else one beside the programs.
fn prefix(bins: &Path) -> PathBuf {
    std::env::var_os("WINEPREFIX")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| bins.join("wine-prefix"))
}

/// End the Windows process `pid` at once, the Windows way (`taskkill /F`, TerminateProcess): a
/// host's record holds its Windows pid. An error when it could not be.
pub fn kill(pid: u32) -> std::io::Result<()> {
    let bins = bins().expect("the Windows programs under test");
    let out = std::process::Command::new("wine")
        .args(["taskkill", "/F", "/PID", &pid.to_string()])
        .env("WINEPREFIX", prefix(bins))
        .env("WINEDEBUG", "-all")
        .output()?;
    if out.status.success() {
        return Ok(());
    }
    Err(std::io::Error::other(String::from_utf8_lossy(&out.stdout).into_owned()))
}

/// The newest host of `browser`'s that the extension reached (its record names the browser):
/// a killed Windows host leaves its record, which this Linux process cannot tell from a live
/// one by its pid.
pub fn newest_host(browser: &Browser) -> Option<HostRecord> {
    reached_hosts(&browser.runtime_dir.join("hosts")).into_iter().max_by_key(|r| r.started_at)
}

/// The records in `dir` of hosts the extension reached (they name the browser), alive or not.
pub fn reached_hosts(dir: &Path) -> Vec<HostRecord> {
    let records = std::fs::read_dir(dir).into_iter().flatten().flatten();
    records
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok())
        .filter(|r: &HostRecord| !r.browser.is_empty())
        .collect()
}

/// `path` as a Windows program under Wine names it: drive Z: is the Unix root.
pub fn windows_path(path: &Path) -> String {
    format!("Z:{}", path.display()).replace('/', "\\")
}

/// A path a Windows program under Wine printed, as a Linux process opens it.
pub fn unix_path(printed: &str) -> PathBuf {
    let rest = printed.strip_prefix("Z:").or_else(|| printed.strip_prefix("z:"));
    rest.map_or_else(|| PathBuf::from(printed), |r| PathBuf::from(r.replace('\\', "/")))
}

/// Wait for the Windows host `browser` started, until the extension's hello reached it: its
/// record names the browser. A Windows host's record names a Windows pid and a named pipe,
/// which this Linux process cannot check, so the record is the sign. The first Wine process of
/// a prefix takes seconds to start its wineserver: at least a minute is waited.
pub fn wait_for_host(browser: &mut Browser, timeout: Duration) -> Result<HostRecord, String> {
    let dir = browser.runtime_dir.join("hosts");
    let deadline = Instant::now() + timeout.max(Duration::from_secs(60));
    loop {
        if let Some(record) = reached_hosts(&dir).pop() {
            return Ok(record);
        }
        if let Some(status) = browser.exited() {
            return Err(format!(
                "the browser exited ({status}) before the Windows host started\n{}",
                browser.log_tail(40)
            ));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "no Windows host record in {} (is Wine installed, and {VAR} right?)\n{}",
                dir.display(),
                browser.log_tail(40)
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
