//! Page tools' names: `<app>__<command>`, sanitised to what every MCP client accepts
//! (`[A-Za-z0-9_-]`, at most 64 characters: the strictest client's rule), and stable while a
//! page that declares the command stays open. A tool is one (origin, app, command): two tabs of
//! one app share it (the call names the tab), and a page of another origin can never take over
//! another site's tool — a name already given, or a built-in tool's, gets a `_2`, `_3`, … of its
//! own.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use super::{DeclaredCommand, PageCommands};

/// At most this many characters of the app's and of the command's name.
const PART: usize = 30;

/// One page tool: a declared command and the tabs that offer it.
#[derive(Debug, Clone, PartialEq)]
pub struct PageTool {
    pub name: String,
    pub origin: String,
    pub app: String,
    /// The declaration of the tab that declared it most recently (lowest tab id on a tie).
    pub command: DeclaredCommand,
    /// (browser key, tab id, url) of every tab that offers it.
    pub tabs: Vec<(String, i64, Option<String>)>,
}

type Key = (String, String, String); // origin, app, command

/// The names given so far; cheap to share behind a reference.
#[derive(Default)]
pub struct ToolNames {
    given: Mutex<HashMap<Key, String>>,
}

impl ToolNames {
    /// The page tools of `pages` (only commands declared with a description or schema). Names
    /// of tools whose pages all went are given up; `reserved` names (the built-in tools) are
    /// never given.
    pub fn tools(
        &self,
        pages: &[(String, PageCommands)],
        reserved: impl Fn(&str) -> bool,
    ) -> Vec<PageTool> {
        let mut grouped: BTreeMap<Key, PageTool> = BTreeMap::new();
        for (browser, page) in pages {
            let Some(origin) = page.origin.clone() else { continue };
            let app = page.app.clone().unwrap_or_else(|| host_of(&origin));
            for command in page.commands.iter().filter(|c| c.declared) {
                let key = (origin.clone(), app.clone(), command.kind.clone());
                let tool = grouped.entry(key).or_insert_with(|| PageTool {
                    name: String::new(),
                    origin: origin.clone(),
                    app: app.clone(),
                    command: command.clone(),
                    tabs: Vec::new(),
                });
                tool.tabs.push((browser.clone(), page.tab_id, page.url.clone()));
            }
        }
        let mut given = self.given.lock().expect("tool names poisoned");
        given.retain(|key, _| grouped.contains_key(key));
        for (key, tool) in grouped.iter_mut() {
            if let Some(name) = given.get(key) {
                tool.name = name.clone();
                continue;
            }
            let base = format!("{}__{}", sanitise(&key.1), sanitise(&key.2));
            let taken = |n: &str| reserved(n) || given.values().any(|g| g == n);
            let name = std::iter::once(base.clone())
                .chain((2..).map(|i| format!("{base}_{i}")))
                .find(|n| !taken(n))
                .expect("some suffix is free");
            given.insert(key.clone(), name.clone());
            tool.name = name;
        }
        grouped.into_values().collect()
    }
}

/// `[A-Za-z0-9_-]` only (anything else becomes `_`), at most [`PART`] characters, never empty.
fn sanitise(part: &str) -> String {
    let clean: String = part
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .take(PART)
        .collect();
    if clean.is_empty() { "_".into() } else { clean }
}

/// `127.0.0.1` of `http://127.0.0.1:5173`: the app's name when the page gave none.
fn host_of(origin: &str) -> String {
    let rest = origin.split_once("://").map_or(origin, |(_, r)| r);
    if let Some(v6) = rest.strip_prefix('[') {
        return v6.split(']').next().unwrap_or_default().to_owned();
    }
    rest.split(':').next().unwrap_or_default().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(
        tab: i64,
        origin: &str,
        app: Option<&str>,
        commands: &[&str],
    ) -> (String, PageCommands) {
        let commands = commands
            .iter()
            .map(|c| DeclaredCommand {
                kind: (*c).into(),
                description: Some("d".into()),
                params: None,
                result: None,
                read_only: false,
                destructive: false,
                declared: true,
            })
            .collect();
        let page = PageCommands {
            tab_id: tab,
            origin: Some(origin.into()),
            url: None,
            app: app.map(Into::into),
            commands,
        };
        ("b".into(), page)
    }

    fn names(tools: &[PageTool]) -> Vec<&str> {
        tools.iter().map(|t| t.name.as_str()).collect()
    }

    #[test]
    fn names_are_sanitised_app_then_command() {
        let n = ToolNames::default();
        let tools = n.tools(&[page(1, "http://127.0.0.1:5173", None, &["get color!"])], |_| false);
        assert_eq!(names(&tools), ["127_0_0_1__get_color_"]);
        let long = "x".repeat(200);
        let tools = n.tools(&[page(1, "http://a", Some(&long), &[&long])], |_| false);
        assert!(tools[0].name.len() <= 64, "{}", tools[0].name);
    }

    #[test]
    fn two_tabs_of_one_app_share_a_tool_and_another_origin_gets_its_own() {
        let n = ToolNames::default();
        let pages = [
            page(1, "http://a", Some("shop"), &["buy"]),
            page(2, "http://a", Some("shop"), &["buy"]),
            page(3, "http://evil", Some("shop"), &["buy"]),
        ];
        let tools = n.tools(&pages, |_| false);
        assert_eq!(names(&tools), ["shop__buy", "shop__buy_2"]);
        assert_eq!(tools[0].tabs.len(), 2);
        assert_eq!(tools[1].origin, "http://evil");
    }

    #[test]
    fn names_stay_while_their_page_is_open_and_built_ins_are_never_taken() {
        let n = ToolNames::default();
        let first = n.tools(&[page(3, "http://evil", Some("shop"), &["buy"])], |_| false);
        assert_eq!(names(&first), ["shop__buy"]);
        // The real shop opens later: the name already given stays with the first page.
        let pages = [
            page(3, "http://evil", Some("shop"), &["buy"]),
            page(1, "http://a", Some("shop"), &["buy"]),
        ];
        let tools = n.tools(&pages, |_| false);
        let evil = tools.iter().find(|t| t.origin == "http://evil").unwrap();
        assert_eq!(evil.name, "shop__buy");
        let built_in =
            n.tools(&[page(5, "http://x", Some("list"), &["tabs"])], |name| name == "list__tabs");
        assert_eq!(names(&built_in), ["list__tabs_2"]);
    }
}
