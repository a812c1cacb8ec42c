//! `list_browsers`: which browsers this session can use.

use rmcp::handler::server::tool::schema_for_output;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Serialize;

use super::reply::Reply;
use super::server::TabwireServer;
use crate::browser::BrowserInfo;
use crate::error::NO_BROWSER;

/// The attached browsers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct BrowserList {
    /// Oldest first; the last one is the default for every tool.
    pub browsers: Vec<ListedBrowser>,
}

/// One browser, and where its user lets tabwire work.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ListedBrowser {
    #[serde(flatten)]
    pub info: BrowserInfo,
    /// The sites (origin patterns) the user allowed tabwire on in this browser; pages
    /// elsewhere are out of reach. Read-only: only the user changes it, in the extension's popup
    /// or with `tabwire sites allow|revoke`. Null when the browser did not say.
    pub sites: Option<Vec<String>>,
}

#[tool_router(router = browser_tools, vis = "pub(super)")]
impl TabwireServer {
    /// List the browsers tabwire is attached to (one per browser profile running the
    /// extension). The last one is the default; pass `browser` to other tools to pick another.
    #[tool(
        output_schema = schema_for_output::<BrowserList>(),
        annotations(
            title = "List browsers",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn list_browsers(&self) -> Reply<BrowserList> {
        self.core.ready().await;
        let mut browsers = Vec::new();
        for info in self.core.browsers() {
            let sites = self.core.allowed_sites(&info);
            browsers.push(ListedBrowser { info, sites });
        }
        let text = if browsers.is_empty() {
            NO_BROWSER.to_owned()
        } else {
            let last = browsers.len() - 1;
            let lines: Vec<String> = browsers
                .iter()
                .enumerate()
                .map(|(i, ListedBrowser { info: b, sites })| {
                    let default = if i == last { ", default" } else { "" };
                    let sites = match sites {
                        Some(sites) if sites.is_empty() => "no site allowed".to_owned(),
                        Some(sites) => format!("allowed sites: {}", sites.join(", ")),
                        None => "allowed sites unknown".to_owned(),
                    };
                    format!(
                        "{} — host pid {}, profile {}, extension {}{default}; {sites}",
                        b.browser, b.host_pid, b.profile, b.extension_version
                    )
                })
                .collect();
            lines.join("\n")
        };
        Reply::new(text, BrowserList { browsers })
    }
}
