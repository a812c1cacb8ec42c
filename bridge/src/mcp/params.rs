//! The parameters tools of several families share (the server's instructions explain them once):
//! [`Target`], which browser, and [`Page`], which tab and the origin it must show.

use schemars::JsonSchema;
use serde::Deserialize;
use tabwire_link::methods::OnPage;

/// Which browser a tool acts in. Shared by every browser tool.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct Target {
    #[serde(default)]
    pub browser: Option<String>,
}

/// Which page: the tab, and optionally the origin it must show.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Page {
    pub tab_id: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_origin: Option<String>,
    #[serde(flatten)]
    pub target: Target,
}

impl Page {
    /// The page as every `dom.*` call names it.
    pub fn on(&self) -> OnPage {
        OnPage { tab_id: self.tab_id, expected_origin: self.expected_origin.clone() }
    }
}
