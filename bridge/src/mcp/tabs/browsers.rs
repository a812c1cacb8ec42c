//! `list_browsers`: which browsers this session can use.

use rmcp::handler::server::tool::schema_for_output;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Serialize;

use crate::mcp::reply::Reply;
use crate::mcp::server::TabwireServer;
use tabwire_link::browser::BrowserInfo;
use tabwire_link::error::NO_BROWSER;

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
    /// This tabwire's own version, beside the extension's.
    pub tabwire_version: &'static str,
    /// When the extension is not the one this tabwire carries: which side is older and what
    /// to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_problem: Option<String>,
}

#[tool_router(router = browser_tools, vis = "pub(super)")]
impl TabwireServer {
    /// List the attached browsers (one per profile running the extension) and the sites the user
    /// allowed in each; the last is the default `browser`. Use diagnose when none is attached.
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
            let finding = crate::doctor::version_finding(&info);
            let version_problem = (!finding.ok)
                .then(|| format!("{}; {}", finding.detail, finding.fix.unwrap_or_default()));
            let tabwire_version = tabwire_install::extension::VERSION;
            browsers.push(ListedBrowser { info, sites, tabwire_version, version_problem });
        }
        let text = if browsers.is_empty() {
            NO_BROWSER.to_owned()
        } else {
            let last = browsers.len() - 1;
            let lines: Vec<String> = browsers
                .iter()
                .enumerate()
                .map(|(i, ListedBrowser { info: b, sites, version_problem, .. })| {
                    let default = if i == last { ", default" } else { "" };
                    let sites = match sites {
                        Some(sites) if sites.is_empty() => "no site allowed".to_owned(),
                        Some(sites) => format!("allowed sites: {}", sites.join(", ")),
                        None => "allowed sites unknown".to_owned(),
                    };
                    let problem =
                        version_problem.as_ref().map(|p| format!("\n  {p}")).unwrap_or_default();
                    format!(
                        "{} — host pid {}, profile {}, extension {}{default}; {sites}{problem}",
                        b.browser, b.host_pid, b.profile, b.extension_version
                    )
                })
                .collect();
            lines.join("\n")
        };
        Reply::new(text, BrowserList { browsers })
    }
}
