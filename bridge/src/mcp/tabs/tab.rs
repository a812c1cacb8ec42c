//! Tab tools: list, open, close, activate, navigate.

use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mcp::params::Target;
use crate::mcp::reply::{Reply, ToolError, one_line};
use crate::mcp::server::TabwireServer;
use tabwire_link::methods::{
    NavigateTab, OpenTab, Tab, TabRef, TabsActivate, TabsClose, TabsList, TabsNavigate, TabsOpen,
    Wait,
};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListTabsParams {
    #[serde(flatten)]
    pub target: Target,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct OpenTabParams {
    /// The address, e.g. `https://example.com/`.
    pub url: String,
    /// Bring it to the front; by default it opens in the background, leaving the user's tab.
    #[serde(default)]
    pub active: bool,
    #[serde(flatten)]
    pub target: Target,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct TabParams {
    pub tab_id: i64,
    #[serde(flatten)]
    pub target: Target,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct NavigateParams {
    pub tab_id: i64,
    /// The address to load.
    pub url: String,
    /// `load`: return once the page has loaded; `none`: at once.
    #[serde(default)]
    pub wait: Wait,
    #[serde(flatten)]
    pub target: Target,
}

/// The tabs of one browser.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TabList {
    pub tabs: Vec<Tab>,
}

/// The tab a tool acted on, as it is now.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OneTab {
    pub tab: Tab,
}

/// A closed tab.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Closed {
    /// Always true: a tab that could not be closed is an error.
    pub closed: bool,
    pub tab_id: i64,
}

#[tool_router(router = tab_tools, vis = "pub(super)")]
impl TabwireServer {
    /// List the browser's open tabs: id, window, url, title, whether active, load status,
    /// whether tabwire may work on the site, and whether the tab is yours (in your tab group);
    /// other sessions' tabs are left out. list_browsers names the browsers.
    #[tool(
        output_schema = schema_for_output::<TabList>(),
        annotations(
            title = "List tabs",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn list_tabs(
        &self,
        Parameters(p): Parameters<ListTabsParams>,
    ) -> Result<Reply<TabList>, ToolError> {
        let tabs = self.core.invoke::<TabsList>(p.target.browser.as_deref(), &()).await?;
        let mut text = match tabs.len() {
            1 => "1 tab:".to_owned(),
            n => format!("{n} tabs:"),
        };
        for tab in &tabs {
            text.push('\n');
            text.push_str(&line(tab));
        }
        Ok(Reply::new(text, TabList { tabs }))
    }

    /// Open a new tab at `url` and wait until it has loaded. navigate reuses a tab.
    #[tool(
        output_schema = schema_for_output::<OneTab>(),
        annotations(
            title = "Open a tab",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn open_tab(
        &self,
        Parameters(p): Parameters<OpenTabParams>,
    ) -> Result<Reply<OneTab>, ToolError> {
        let browser = p.target.browser.as_deref();
        let params = OpenTab { url: p.url, active: p.active, wait: Wait::Load };
        let tab = self.core.invoke::<TabsOpen>(browser, &params);
        let tab = tab.await?;
        self.recording.went(tab.id, &tab.url);
        Ok(Reply::new(format!("opened {}", line(&tab)), OneTab { tab }))
    }

    /// Close a tab; what its page held unsaved is lost. Close only tabs you opened unless asked;
    /// navigate reuses a tab.
    #[tool(
        output_schema = schema_for_output::<Closed>(),
        annotations(
            title = "Close a tab",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn close_tab(
        &self,
        Parameters(p): Parameters<TabParams>,
    ) -> Result<Reply<Closed>, ToolError> {
        let params = TabRef { tab_id: p.tab_id };
        let closed = self.core.invoke::<TabsClose>(p.target.browser.as_deref(), &params);
        closed.await?;
        let text = format!("closed tab {}", p.tab_id);
        Ok(Reply::new(text, Closed { closed: true, tab_id: p.tab_id }))
    }

    /// Bring a tab to the front of its window and focus that window, for the user to see it;
    /// read_page, get_state and the actions work without it.
    #[tool(
        output_schema = schema_for_output::<OneTab>(),
        annotations(
            title = "Activate a tab",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn activate_tab(
        &self,
        Parameters(p): Parameters<TabParams>,
    ) -> Result<Reply<OneTab>, ToolError> {
        let params = TabRef { tab_id: p.tab_id };
        let tab = self.core.invoke::<TabsActivate>(p.target.browser.as_deref(), &params);
        let tab = tab.await?;
        Ok(Reply::new(format!("activated {}", line(&tab)), OneTab { tab }))
    }

    /// Load `url` in an existing tab, replacing its page. open_tab keeps the current page; do not
    /// navigate away from a tab you did not open unless asked.
    #[tool(
        output_schema = schema_for_output::<OneTab>(),
        annotations(
            title = "Navigate a tab",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn navigate(
        &self,
        Parameters(p): Parameters<NavigateParams>,
    ) -> Result<Reply<OneTab>, ToolError> {
        let browser = p.target.browser.as_deref();
        let params = NavigateTab { tab_id: p.tab_id, url: p.url, wait: p.wait };
        let tab = self.core.invoke_within::<TabsNavigate>(browser, &params, p.wait.timeout());
        let tab = tab.await?;
        self.recording.went(tab.id, &tab.url);
        Ok(Reply::new(format!("navigated {}", line(&tab)), OneTab { tab }))
    }
}

/// `tab 5: Demo — http://127.0.0.1:8080/ (active, loading)`
fn line(tab: &Tab) -> String {
    let mut flags = Vec::new();
    if tab.active {
        flags.push("active");
    }
    if tab.status == "loading" {
        flags.push("loading");
    }
    // In this session's tab group; the others shown are the user's (specs/tools.md).
    if tab.shared {
        flags.push("yours");
    }
    // A web page on a site the user did not allow: its title is not read.
    let unread = !tab.allowed && tab.url.starts_with("http");
    if unread {
        flags.push("site not allowed");
    }
    let flags = if flags.is_empty() { String::new() } else { format!(" ({})", flags.join(", ")) };
    let title = match (tab.title.is_empty(), unread) {
        (false, _) => tab.title.as_str(),
        (true, false) => "(no title)",
        (true, true) => "(not read)",
    };
    // The title is the page's words: kept on its line, its controls written out.
    format!("tab {}: {} — {}{flags}", tab.id, one_line(title), one_line(&tab.url))
}
