//! The native-messaging host manifest: what install writes and what doctor reads back.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::browsers::HOST_NAME;
use crate::error::Error;

/// The JSON file Chromium reads to find and trust the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostManifest {
    pub name: String,
    pub description: String,
    /// Absolute path of `tabwire-host`.
    pub path: PathBuf,
    #[serde(rename = "type")]
    pub kind: String,
    /// `chrome-extension://<id>/` of every extension allowed to start the host.
    pub allowed_origins: Vec<String>,
}

impl HostManifest {
    /// The manifest for `host` and these extension ids.
    pub fn new(host: &Path, extension_ids: &[String]) -> HostManifest {
        HostManifest {
            name: HOST_NAME.into(),
            description: "tabwire native host: relays between the tabwire extension and local \
                          assistant sessions"
                .into(),
            path: host.to_path_buf(),
            kind: "stdio".into(),
            allowed_origins: extension_ids.iter().map(|id| origin(id)).collect(),
        }
    }

    /// The file's text: pretty JSON with a final newline.
    pub fn render(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a manifest serializes");
        text.push('\n');
        text
    }
}

/// The origin Chrome passes for extension `id`.
pub fn origin(id: &str) -> String {
    format!("chrome-extension://{id}/")
}

/// Check that `id` looks like a Chrome extension id: 32 letters `a`–`p`.
pub fn check_extension_id(id: &str) -> Result<(), Error> {
    if id.len() == 32 && id.bytes().all(|b| (b'a'..=b'p').contains(&b)) {
        Ok(())
    } else {
        Err(Error::BadExtensionId(id.to_string()))
    }
}

/// What happened (or, in a dry run, would happen) to one manifest file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Created,
    Updated,
    /// It already had exactly this content.
    Unchanged,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_what_chrome_expects() {
        let m = HostManifest::new(Path::new("/opt/tabwire-host"), &["a".repeat(32)]);
        let v: serde_json::Value = serde_json::from_str(&m.render()).unwrap();
        assert_eq!(v["name"], "dev.tabwire.host");
        assert_eq!(v["type"], "stdio");
        assert_eq!(v["path"], "/opt/tabwire-host");
        assert_eq!(v["allowed_origins"][0], format!("chrome-extension://{}/", "a".repeat(32)));
    }

    #[test]
    fn extension_ids() {
        assert!(check_extension_id(tabwire_proto::extension_id::EXTENSION_ID).is_ok());
        let err = check_extension_id("abc").unwrap_err().to_string();
        assert!(err.contains("32 letters a to p"), "{err}");
        assert!(check_extension_id(&"q".repeat(32)).is_err());
    }
}
