//! Who an attached browser is, and how the user names one (`--browser`, a tool's `browser`).

use schemars::JsonSchema;
use serde::Serialize;
use tabwire_proto::runtime_dir::HostRecord;
use tabwire_proto::wire::Hello;

/// One attached browser profile, as its host introduced it (the extension's `hello` plus the
/// host's pid). The host pid changes when the browser restarts; the profile id does not.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct BrowserInfo {
    /// The browser's brand: chrome, chromium, edge, brave, opera or vivaldi.
    pub browser: String,
    /// A random id the extension keeps per browser profile; stable across restarts.
    pub profile: String,
    /// Process id of this browser's tabwire-host; changes when the browser restarts.
    pub host_pid: u32,
    /// Version of the tabwire extension in this browser.
    pub extension_version: String,
    /// Which build of the extension's files it runs: what `tabwire install` unpacked (its
    /// `build.json`); null for a checkout's extension/.
    pub build_id: Option<String>,
    /// Protocol version the extension speaks.
    pub protocol: u32,
    /// When this bridge attached to it, in milliseconds since the Unix epoch.
    pub attached_at_ms: u64,
}

impl BrowserInfo {
    pub fn new(hello: &Hello, record: &HostRecord, attached_at_ms: u64) -> Self {
        let or = |a: &Option<String>, b: &str| a.clone().unwrap_or_else(|| b.to_owned());
        BrowserInfo {
            browser: or(&hello.browser, &record.browser),
            profile: or(&hello.profile, &record.profile),
            host_pid: hello.host_pid.unwrap_or(record.pid),
            extension_version: or(&hello.extension_version, &record.extension_version),
            build_id: hello.build_id.clone(),
            protocol: hello.protocol,
            attached_at_ms,
        }
    }

    /// How messages name this browser: `chrome (host pid 4242)`.
    pub fn label(&self) -> String {
        let name = if self.browser.is_empty() { "a browser" } else { &self.browser };
        format!("{name} (host pid {})", self.host_pid)
    }

    /// What names this browser across host restarts: its profile id (its host pid when the
    /// extension gave none). The state cache is keyed by it.
    pub fn key(&self) -> String {
        if self.profile.is_empty() {
            format!("pid:{}", self.host_pid)
        } else {
            self.profile.clone()
        }
    }

    pub fn matches(&self, selector: &str) -> bool {
        matches(selector, self.host_pid, &self.browser, &self.profile)
    }
}

/// Whether `selector` names this browser: its host pid, its brand (any case), its profile id,
/// or the first characters (4 or more) of the profile id.
pub fn matches(selector: &str, pid: u32, browser: &str, profile: &str) -> bool {
    let selector = selector.trim();
    if selector.is_empty() {
        return false;
    }
    if let Ok(n) = selector.parse::<u32>() {
        return n == pid;
    }
    browser.eq_ignore_ascii_case(selector)
        || (!profile.is_empty() && profile == selector)
        || (selector.len() >= 4 && profile.starts_with(selector))
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn a_browser_is_named_by_pid_brand_or_profile() {
        assert!(matches("4242", 4242, "chrome", "3f1c9a"));
        assert!(!matches("4243", 4242, "chrome", "3f1c9a"));
        assert!(matches("Chrome", 4242, "chrome", "3f1c9a"));
        assert!(matches("3f1c", 4242, "chrome", "3f1c9a"));
        assert!(!matches("3f1", 4242, "chrome", "3f1c9a"), "too short a prefix is ambiguous");
        assert!(!matches("edge", 4242, "chrome", "3f1c9a"));
        assert!(!matches("", 4242, "", ""));
    }
}
