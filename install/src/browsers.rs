//! Every Chromium-family browser tabwire knows, and where each one looks for native-messaging
//! host manifests — the one table of this crate.
//!
//! Why our own table rather than the `native_messaging` crate's (0.3, `browsers.toml`): that
//! one lacks Chrome Beta/Dev/Canary, Opera and Arc, resolves `$HOME` from the process
//! environment (so it cannot be tested against a temporary home, nor compute Windows paths on
//! Linux), has no custom `--user-data-dir`, dry run or record of what it wrote, and registers
//! Brave and Vivaldi on Windows under keys those browsers do not read.
//!
//! The rules, from Chromium's `chrome_paths.cc` and `native_process_launcher_win.cc`:
//! - Linux and macOS read per-user manifests from `<user data dir>/NativeMessagingHosts/` (so a
//!   custom `--user-data-dir` has its own), and system-wide ones from a fixed directory that
//!   depends on the brand.
//! - Windows reads no directory: the default value of the registry key
//!   `HKCU\Software\<vendor>\NativeMessagingHosts\<host name>` names the manifest file. Google
//!   Chrome of every channel, and forks that keep Chrome's key (Brave, Vivaldi, Opera, Arc), read
//!   `Software\Google\Chrome`; Chromium reads `Software\Chromium`; Edge `Software\Microsoft\Edge`
//!   (Microsoft's native-messaging page). Brave also gets `Software\BraveSoftware\Brave-Browser`:
//!   installers disagree on which one Brave reads, and a key a browser does not read is inert.
//! - Arc reads Chrome's per-user folder on macOS, not only its own (users of KeePassXC's browser
//!   integration found it connects only once Chrome's folder has the manifest), so it gets both.
//!
//! Paths are computed by pure functions of an [`Os`] and a home directory, so the macOS and
//! Windows strings are checked by unit tests on every OS.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The host name the extension passes to `connectNative`.
pub const HOST_NAME: &str = "dev.tabwire.host";

/// The manifest's file name: Chromium looks for `<host name>.json`.
pub const MANIFEST_FILE: &str = "dev.tabwire.host.json";

/// The operating systems whose browser layouts differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Os {
    /// Linux and the BSDs (XDG layout).
    Linux,
    MacOs,
    Windows,
}

impl Os {
    /// The OS this program runs on.
    pub fn current() -> Os {
        if cfg!(windows) {
            Os::Windows
        } else if cfg!(target_os = "macos") {
            Os::MacOs
        } else {
            Os::Linux
        }
    }

    /// `base` followed by `parts`, with this OS's separator. Lossless for the OS we run on;
    /// for another OS (unit tests) the path is built as text.
    pub fn join(self, base: &Path, parts: &[&str]) -> PathBuf {
        if self == Os::current() {
            let mut out = base.to_path_buf();
            for part in parts {
                out.push(part);
            }
            return out;
        }
        let sep = if self == Os::Windows { '\\' } else { '/' };
        let mut out = base.to_string_lossy().trim_end_matches(sep).to_string();
        for part in parts {
            out.push(sep);
            out.push_str(part);
        }
        PathBuf::from(out)
    }

    fn name(self) -> &'static str {
        match self {
            Os::Linux => "Linux",
            Os::MacOs => "macOS",
            Os::Windows => "Windows",
        }
    }
}

/// A Chromium-family browser (one release channel of it), as named on the command line.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Browser {
    Chrome,
    ChromeBeta,
    /// Chrome Dev, called `google-chrome-unstable` on Linux.
    #[value(alias = "chrome-unstable")]
    ChromeDev,
    ChromeCanary,
    Chromium,
    Brave,
    #[value(alias = "msedge")]
    Edge,
    EdgeBeta,
    EdgeDev,
    EdgeCanary,
    Vivaldi,
    Opera,
    Arc,
}

/// Where Windows keeps a browser's user data.
#[derive(Clone, Copy)]
enum WinBase {
    /// `%LOCALAPPDATA%` (`<home>\AppData\Local`).
    Local,
    /// `%APPDATA%` (`<home>\AppData\Roaming`).
    Roaming,
}

/// One row of the table. Per-user paths are relative: to `$XDG_CONFIG_HOME` (Linux), to
/// `~/Library/Application Support` (macOS), to the `WinBase` folder (Windows). `None` means the
/// browser does not exist on that OS, or (for system dirs) that it has no system-wide location
/// we could confirm.
struct Row {
    browser: Browser,
    name: &'static str,
    linux: Option<&'static str>,
    macos: Option<&'static str>,
    windows: Option<(WinBase, &'static str)>,
    linux_system: Option<&'static str>,
    macos_system: Option<&'static str>,
    /// `Software\<vendor>` of each registry key Windows builds read (none: not on Windows).
    windows_keys: &'static [&'static str],
    /// Another browser whose per-user manifest folder this one reads too (Linux, macOS).
    also_reads: Option<Browser>,
    /// Executables on `PATH` that reveal the browser is installed (Linux).
    binaries: &'static [&'static str],
}

const CHROME_LINUX_SYSTEM: &str = "/etc/opt/chrome/native-messaging-hosts";
const CHROME_MACOS_SYSTEM: &str = "/Library/Google/Chrome/NativeMessagingHosts";
const EDGE_LINUX_SYSTEM: &str = "/etc/opt/edge/native-messaging-hosts";
const EDGE_MACOS_SYSTEM: &str = "/Library/Microsoft/Edge/NativeMessagingHosts";
const CHROME_KEYS: &[&str] = &[r"Software\Google\Chrome"];
const EDGE_KEYS: &[&str] = &[r"Software\Microsoft\Edge"];
const BRAVE_KEYS: &[&str] = &[r"Software\Google\Chrome", r"Software\BraveSoftware\Brave-Browser"];

#[rustfmt::skip]
const TABLE: &[Row] = &[
    Row { browser: Browser::Chrome, name: "Google Chrome",
        linux: Some("google-chrome"), macos: Some("Google/Chrome"),
        windows: Some((WinBase::Local, r"Google\Chrome\User Data")),
        linux_system: Some(CHROME_LINUX_SYSTEM), macos_system: Some(CHROME_MACOS_SYSTEM),
        windows_keys: CHROME_KEYS, also_reads: None, binaries: &["google-chrome", "google-chrome-stable"] },
    Row { browser: Browser::ChromeBeta, name: "Google Chrome Beta",
        linux: Some("google-chrome-beta"), macos: Some("Google/Chrome Beta"),
        windows: Some((WinBase::Local, r"Google\Chrome Beta\User Data")),
        linux_system: Some(CHROME_LINUX_SYSTEM), macos_system: Some(CHROME_MACOS_SYSTEM),
        windows_keys: CHROME_KEYS, also_reads: None, binaries: &["google-chrome-beta"] },
    Row { browser: Browser::ChromeDev, name: "Google Chrome Dev",
        linux: Some("google-chrome-unstable"), macos: Some("Google/Chrome Dev"),
        windows: Some((WinBase::Local, r"Google\Chrome Dev\User Data")),
        linux_system: Some(CHROME_LINUX_SYSTEM), macos_system: Some(CHROME_MACOS_SYSTEM),
        windows_keys: CHROME_KEYS, also_reads: None, binaries: &["google-chrome-unstable"] },
    Row { browser: Browser::ChromeCanary, name: "Google Chrome Canary",
        linux: None, macos: Some("Google/Chrome Canary"),
        windows: Some((WinBase::Local, r"Google\Chrome SxS\User Data")),
        linux_system: None, macos_system: Some(CHROME_MACOS_SYSTEM),
        windows_keys: CHROME_KEYS, also_reads: None, binaries: &[] },
    Row { browser: Browser::Chromium, name: "Chromium",
        linux: Some("chromium"), macos: Some("Chromium"),
        windows: Some((WinBase::Local, r"Chromium\User Data")),
        linux_system: Some("/etc/chromium/native-messaging-hosts"),
        macos_system: Some("/Library/Application Support/Chromium/NativeMessagingHosts"),
        windows_keys: &[r"Software\Chromium"], also_reads: None,
        binaries: &["chromium", "chromium-browser"] },
    Row { browser: Browser::Brave, name: "Brave",
        linux: Some("BraveSoftware/Brave-Browser"), macos: Some("BraveSoftware/Brave-Browser"),
        windows: Some((WinBase::Local, r"BraveSoftware\Brave-Browser\User Data")),
        linux_system: None, macos_system: None,
        windows_keys: BRAVE_KEYS, also_reads: None, binaries: &["brave-browser", "brave"] },
    Row { browser: Browser::Edge, name: "Microsoft Edge",
        linux: Some("microsoft-edge"), macos: Some("Microsoft Edge"),
        windows: Some((WinBase::Local, r"Microsoft\Edge\User Data")),
        linux_system: Some(EDGE_LINUX_SYSTEM), macos_system: Some(EDGE_MACOS_SYSTEM),
        windows_keys: EDGE_KEYS, also_reads: None, binaries: &["microsoft-edge", "microsoft-edge-stable"] },
    Row { browser: Browser::EdgeBeta, name: "Microsoft Edge Beta",
        linux: Some("microsoft-edge-beta"), macos: Some("Microsoft Edge Beta"),
        windows: Some((WinBase::Local, r"Microsoft\Edge Beta\User Data")),
        linux_system: Some(EDGE_LINUX_SYSTEM), macos_system: Some(EDGE_MACOS_SYSTEM),
        windows_keys: EDGE_KEYS, also_reads: None, binaries: &["microsoft-edge-beta"] },
    Row { browser: Browser::EdgeDev, name: "Microsoft Edge Dev",
        linux: Some("microsoft-edge-dev"), macos: Some("Microsoft Edge Dev"),
        windows: Some((WinBase::Local, r"Microsoft\Edge Dev\User Data")),
        linux_system: Some(EDGE_LINUX_SYSTEM), macos_system: Some(EDGE_MACOS_SYSTEM),
        windows_keys: EDGE_KEYS, also_reads: None, binaries: &["microsoft-edge-dev"] },
    Row { browser: Browser::EdgeCanary, name: "Microsoft Edge Canary",
        linux: None, macos: Some("Microsoft Edge Canary"),
        windows: Some((WinBase::Local, r"Microsoft\Edge SxS\User Data")),
        linux_system: None, macos_system: Some(EDGE_MACOS_SYSTEM),
        windows_keys: EDGE_KEYS, also_reads: None, binaries: &[] },
    Row { browser: Browser::Vivaldi, name: "Vivaldi",
        linux: Some("vivaldi"), macos: Some("Vivaldi"),
        windows: Some((WinBase::Local, r"Vivaldi\User Data")),
        linux_system: None, macos_system: None,
        windows_keys: CHROME_KEYS, also_reads: None, binaries: &["vivaldi", "vivaldi-stable"] },
    Row { browser: Browser::Opera, name: "Opera",
        linux: Some("opera"), macos: Some("com.operasoftware.Opera"),
        windows: Some((WinBase::Roaming, r"Opera Software\Opera Stable")),
        linux_system: None, macos_system: None,
        windows_keys: CHROME_KEYS, also_reads: None, binaries: &["opera"] },
    Row { browser: Browser::Arc, name: "Arc",
        linux: None, macos: Some("Arc/User Data"),
        // Arc for Windows is a Store (MSIX) package: its profile lives in the package's folder.
        windows: Some((WinBase::Local,
            r"Packages\TheBrowserCompany.Arc_ttt1ap7aakyb4\LocalCache\Local\Arc\User Data")),
        linux_system: None, macos_system: None,
        windows_keys: CHROME_KEYS, also_reads: Some(Browser::Chrome), binaries: &[] },
];

impl Browser {
    /// Every browser in the table, in a stable order.
    pub fn all() -> impl Iterator<Item = Browser> {
        TABLE.iter().map(|row| row.browser)
    }

    fn row(self) -> &'static Row {
        TABLE.iter().find(|row| row.browser == self).expect("every browser has a row")
    }

    /// The name used on the command line (`chrome-beta`).
    pub fn id(self) -> &'static str {
        match self {
            Browser::Chrome => "chrome",
            Browser::ChromeBeta => "chrome-beta",
            Browser::ChromeDev => "chrome-dev",
            Browser::ChromeCanary => "chrome-canary",
            Browser::Chromium => "chromium",
            Browser::Brave => "brave",
            Browser::Edge => "edge",
            Browser::EdgeBeta => "edge-beta",
            Browser::EdgeDev => "edge-dev",
            Browser::EdgeCanary => "edge-canary",
            Browser::Vivaldi => "vivaldi",
            Browser::Opera => "opera",
            Browser::Arc => "arc",
        }
    }

    /// The product's name (`Google Chrome Beta`).
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// Whether the browser is made for `os`.
    pub fn exists_on(self, os: Os) -> bool {
        self.user_data_dir(os, Path::new("/"), None).is_some()
    }

    /// Why the browser cannot be used on `os`, for an error message.
    pub fn not_on(self, os: Os) -> String {
        format!("{} ({}) is not made for {}", self.name(), self.id(), os.name())
    }

    /// The browser's default user data directory, holding its profiles. `xdg_config_home` is
    /// `$XDG_CONFIG_HOME` (Linux only; `<home>/.config` when unset).
    pub fn user_data_dir(
        self,
        os: Os,
        home: &Path,
        xdg_config_home: Option<&Path>,
    ) -> Option<PathBuf> {
        let row = self.row();
        match os {
            Os::Linux => {
                let base = match xdg_config_home {
                    Some(dir) => dir.to_path_buf(),
                    None => os.join(home, &[".config"]),
                };
                Some(os.join(&base, &split(row.linux?, '/')))
            }
            Os::MacOs => {
                let base = os.join(home, &["Library", "Application Support"]);
                Some(os.join(&base, &split(row.macos?, '/')))
            }
            Os::Windows => {
                let (base, rel) = row.windows?;
                let base = match base {
                    WinBase::Local => os.join(home, &["AppData", "Local"]),
                    WinBase::Roaming => os.join(home, &["AppData", "Roaming"]),
                };
                Some(os.join(&base, &split(rel, '\\')))
            }
        }
    }

    /// Where this browser reads per-user manifests: `<user data dir>/NativeMessagingHosts` on
    /// Linux and macOS. On Windows it reads the registry instead, see [`Browser::registry_keys`].
    pub fn user_manifest_dir(
        self,
        os: Os,
        home: &Path,
        xdg_config_home: Option<&Path>,
    ) -> Option<PathBuf> {
        if os == Os::Windows {
            return None;
        }
        Some(os.join(&self.user_data_dir(os, home, xdg_config_home)?, &["NativeMessagingHosts"]))
    }

    /// Every per-user folder this browser reads manifests from: its own, and the one of the
    /// browser it also reads (Arc on macOS reads Chrome's). Empty on Windows.
    pub fn user_manifest_dirs(
        self,
        os: Os,
        home: &Path,
        xdg_config_home: Option<&Path>,
    ) -> Vec<PathBuf> {
        let also = self.row().also_reads.filter(|other| other.exists_on(os));
        [Some(self), also]
            .into_iter()
            .flatten()
            .filter_map(|b| b.user_manifest_dir(os, home, xdg_config_home))
            .collect()
    }

    /// Where this browser reads system-wide manifests, when it has such a place we know.
    pub fn system_manifest_dir(self, os: Os) -> Option<PathBuf> {
        let row = self.row();
        match os {
            Os::Linux => row.linux_system.map(PathBuf::from),
            Os::MacOs => row.macos_system.map(PathBuf::from),
            Os::Windows => None,
        }
    }

    /// The keys under `HKEY_CURRENT_USER` whose default value names the manifest (Windows).
    pub fn registry_keys(self) -> Vec<String> {
        let vendors = self.row().windows_keys.iter();
        vendors.map(|vendor| format!(r"{vendor}\NativeMessagingHosts\{HOST_NAME}")).collect()
    }

    /// Names of executables that, found on `PATH`, show the browser is installed.
    pub fn binaries(self) -> &'static [&'static str] {
        self.row().binaries
    }
}

/// Where tabwire keeps the manifest file on Windows, which the registry keys point at:
/// `<data dir>\NativeMessagingHosts`, the data dir being `%LOCALAPPDATA%\tabwire` unless
/// `TABWIRE_DATA_DIR` says otherwise. (Windows reads no manifest directory, so one file serves
/// every browser.)
pub fn windows_manifest_dir(data_dir: &Path) -> PathBuf {
    Os::Windows.join(data_dir, &["NativeMessagingHosts"])
}

fn split(rel: &str, sep: char) -> Vec<&str> {
    rel.split(sep).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(path: Option<PathBuf>) -> String {
        path.map(|p| p.to_string_lossy().into_owned()).unwrap_or_default()
    }

    #[test]
    fn linux_user_dirs() {
        let home = Path::new("/home/u");
        let dir = |b: Browser| s(b.user_manifest_dir(Os::Linux, home, None));
        assert_eq!(dir(Browser::Chrome), "/home/u/.config/google-chrome/NativeMessagingHosts");
        assert_eq!(
            dir(Browser::ChromeDev),
            "/home/u/.config/google-chrome-unstable/NativeMessagingHosts"
        );
        assert_eq!(
            dir(Browser::Brave),
            "/home/u/.config/BraveSoftware/Brave-Browser/NativeMessagingHosts"
        );
        assert_eq!(
            dir(Browser::EdgeBeta),
            "/home/u/.config/microsoft-edge-beta/NativeMessagingHosts"
        );
        assert_eq!(dir(Browser::ChromeCanary), "");
        assert_eq!(dir(Browser::Arc), "");
        let xdg = Browser::Chromium.user_manifest_dir(Os::Linux, home, Some(Path::new("/x/cfg")));
        assert_eq!(s(xdg), "/x/cfg/chromium/NativeMessagingHosts");
    }

    #[test]
    fn macos_dirs() {
        let home = Path::new("/Users/u");
        let dir = |b: Browser| s(b.user_manifest_dir(Os::MacOs, home, None));
        assert_eq!(
            dir(Browser::Chrome),
            "/Users/u/Library/Application Support/Google/Chrome/NativeMessagingHosts"
        );
        assert_eq!(
            dir(Browser::ChromeCanary),
            "/Users/u/Library/Application Support/Google/Chrome Canary/NativeMessagingHosts"
        );
        assert_eq!(
            dir(Browser::EdgeCanary),
            "/Users/u/Library/Application Support/Microsoft Edge Canary/NativeMessagingHosts"
        );
        assert_eq!(
            dir(Browser::Arc),
            "/Users/u/Library/Application Support/Arc/User Data/NativeMessagingHosts"
        );
        assert_eq!(
            dir(Browser::Opera),
            "/Users/u/Library/Application Support/com.operasoftware.Opera/NativeMessagingHosts"
        );
        assert_eq!(
            s(Browser::Chrome.system_manifest_dir(Os::MacOs)),
            "/Library/Google/Chrome/NativeMessagingHosts"
        );
        assert_eq!(
            s(Browser::Chromium.system_manifest_dir(Os::MacOs)),
            "/Library/Application Support/Chromium/NativeMessagingHosts"
        );
    }

    #[test]
    fn windows_paths_and_keys() {
        let home = Path::new(r"C:\Users\u");
        assert_eq!(
            s(Browser::Chrome.user_data_dir(Os::Windows, home, None)),
            r"C:\Users\u\AppData\Local\Google\Chrome\User Data"
        );
        assert_eq!(
            s(Browser::Opera.user_data_dir(Os::Windows, home, None)),
            r"C:\Users\u\AppData\Roaming\Opera Software\Opera Stable"
        );
        assert_eq!(
            s(Browser::ChromeCanary.user_data_dir(Os::Windows, home, None)),
            r"C:\Users\u\AppData\Local\Google\Chrome SxS\User Data"
        );
        assert_eq!(
            s(Browser::Arc.user_data_dir(Os::Windows, home, None)),
            r"C:\Users\u\AppData\Local\Packages\TheBrowserCompany.Arc_ttt1ap7aakyb4\LocalCache\Local\Arc\User Data"
        );
        assert_eq!(Browser::Chrome.user_manifest_dir(Os::Windows, home, None), None);
        assert_eq!(Browser::Arc.user_manifest_dirs(Os::Windows, home, None), Vec::<PathBuf>::new());
        assert_eq!(
            windows_manifest_dir(Path::new(r"C:\Users\u\AppData\Local\tabwire")).to_string_lossy(),
            r"C:\Users\u\AppData\Local\tabwire\NativeMessagingHosts"
        );
        let chrome = r"Software\Google\Chrome\NativeMessagingHosts\dev.tabwire.host";
        let keys = |b: Browser| b.registry_keys();
        assert_eq!(keys(Browser::Chrome), [chrome]);
        for b in [Browser::ChromeBeta, Browser::ChromeDev, Browser::ChromeCanary] {
            assert_eq!(keys(b), [chrome], "{b:?}");
        }
        for b in [Browser::Vivaldi, Browser::Opera, Browser::Arc] {
            assert_eq!(keys(b), [chrome], "{b:?}");
        }
        assert_eq!(
            keys(Browser::Brave),
            [chrome, r"Software\BraveSoftware\Brave-Browser\NativeMessagingHosts\dev.tabwire.host"]
        );
        assert_eq!(
            keys(Browser::Chromium),
            [r"Software\Chromium\NativeMessagingHosts\dev.tabwire.host"]
        );
        for b in [Browser::Edge, Browser::EdgeBeta, Browser::EdgeDev, Browser::EdgeCanary] {
            assert_eq!(
                keys(b),
                [r"Software\Microsoft\Edge\NativeMessagingHosts\dev.tabwire.host"],
                "{b:?}"
            );
        }
    }

    #[test]
    fn arc_on_macos_also_reads_chromes_folder() {
        let home = Path::new("/Users/u");
        let dirs: Vec<String> = Browser::Arc
            .user_manifest_dirs(Os::MacOs, home, None)
            .into_iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            dirs,
            [
                "/Users/u/Library/Application Support/Arc/User Data/NativeMessagingHosts",
                "/Users/u/Library/Application Support/Google/Chrome/NativeMessagingHosts",
            ]
        );
        let chrome = Browser::Chrome.user_manifest_dirs(Os::MacOs, home, None);
        assert_eq!(chrome.len(), 1);
    }

    #[test]
    fn linux_system_dirs() {
        let dir = |b: Browser| s(b.system_manifest_dir(Os::Linux));
        assert_eq!(dir(Browser::Chrome), "/etc/opt/chrome/native-messaging-hosts");
        assert_eq!(dir(Browser::ChromeBeta), "/etc/opt/chrome/native-messaging-hosts");
        assert_eq!(dir(Browser::Chromium), "/etc/chromium/native-messaging-hosts");
        assert_eq!(dir(Browser::Edge), "/etc/opt/edge/native-messaging-hosts");
        assert_eq!(dir(Browser::Brave), "");
    }

    #[test]
    fn command_line_names_round_trip() {
        use clap::ValueEnum;
        for b in Browser::all() {
            assert_eq!(Browser::from_str(b.id(), true), Ok(b));
        }
        assert_eq!(Browser::from_str("chrome-unstable", true), Ok(Browser::ChromeDev));
    }
}
