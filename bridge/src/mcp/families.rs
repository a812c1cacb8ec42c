//! Every tool family, listed once, and what needs them all: the names a tool set may hold
//! (`--tools`), the families' tools, and the router of a set's tools. A family is a folder
//! (`tabs/`, `page/`, …) whose `mod.rs` declares its [`Family`]; adding one is a line here.

use std::collections::BTreeSet;
use std::str::FromStr;
use std::sync::LazyLock;

use rmcp::handler::server::router::tool::ToolRouter;

use super::family::Family;
use super::server::TabwireServer;
use super::sets::{DEFAULT, ToolSet};
use super::{chat, dom, page, sessions, tabs, webdev, workers, workflows};

/// Every family, in the order of their lines in the server's instructions.
pub const FAMILIES: [Family; 8] = [
    tabs::FAMILY,
    page::FAMILY,
    dom::FAMILY,
    sessions::FAMILY,
    workers::FAMILY,
    chat::FAMILY,
    workflows::FAMILY,
    webdev::FAMILY,
];

/// Each family's name and the names of its tools, read from its router once: `serves` and
/// `family_of` answer at every call, and building a router builds its tools' schemas.
static TOOLS: LazyLock<Vec<(&'static str, Vec<String>)>> = LazyLock::new(|| {
    let names = |f: &Family| (f.router)().list_all().into_iter().map(|t| t.name.into()).collect();
    FAMILIES.iter().map(|f| (f.name, names(f))).collect()
});

impl TabwireServer {
    /// The tools of `set`, with their schemas. `tabwire serve` keeps one copy to describe the
    /// tools before a client's session exists.
    pub fn tools(set: &ToolSet) -> ToolRouter<Self> {
        let served = FAMILIES.iter().filter(|f| set.has(f.name)).map(|f| (f.router)());
        let router = served.fold(ToolRouter::new(), |all, family| all + family);
        super::schema::clean_router(router, set.output_schemas())
    }
}

impl ToolSet {
    pub fn all() -> ToolSet {
        ToolSet { families: FAMILIES.iter().map(|f| f.name).collect(), output_schemas: false }
    }

    /// Whether the tool `name` (a built-in one) is served.
    pub fn serves(&self, name: &str) -> bool {
        TOOLS.iter().any(|(family, tools)| {
            self.families.contains(family) && tools.iter().any(|t| t == name)
        })
    }

    /// The family of a built-in tool this set does not serve, to say how to get it.
    pub fn family_of(name: &str) -> Option<&'static str> {
        TOOLS.iter().find(|(_, tools)| tools.iter().any(|t| t == name)).map(|(family, _)| *family)
    }
}

impl Default for ToolSet {
    fn default() -> ToolSet {
        DEFAULT.parse().expect("the default tool set parses")
    }
}

impl FromStr for ToolSet {
    type Err = String;

    /// Family names separated by commas; `all`, and `default` for [`DEFAULT`], may be among
    /// them (`default,workers`).
    fn from_str(s: &str) -> Result<ToolSet, String> {
        let mut set = BTreeSet::new();
        for word in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word {
                "all" => set.extend(FAMILIES.iter().map(|f| f.name)),
                "default" => set.extend(ToolSet::default().families),
                _ => match FAMILIES.iter().find(|f| f.name == word) {
                    Some(f) => drop(set.insert(f.name)),
                    None => return Err(format!("no tool set {word:?}: {}", names())),
                },
            }
        }
        if set.is_empty() {
            return Err(format!("name at least one tool set: {}", names()));
        }
        Ok(ToolSet { families: set, output_schemas: false })
    }
}

fn names() -> String {
    let all: Vec<&str> = FAMILIES.iter().map(|f| f.name).collect();
    format!("the sets are {}, `all`, and `default` ({DEFAULT})", all.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_parse_and_refuse_unknown_names_saying_which_exist() {
        let set: ToolSet = "default, workers".parse().unwrap();
        assert!(set.serves("click") && set.serves("spawn_worker") && set.serves("wait_for_event"));
        assert!(!set.serves("send_message_async"));
        assert_eq!(set.to_string(), "dom,page,tabs,workers");
        assert!(ToolSet::all().serves("start_workflow"));
        let e = "tabs,nope".parse::<ToolSet>().unwrap_err();
        assert!(e.contains("\"nope\"") && e.contains("workflows") && e.contains("default"), "{e}");
        assert!("".parse::<ToolSet>().is_err());
    }

    /// Every `#[tool]` written under `mcp/` is in a family: a router no family joins would
    /// serve nothing.
    #[test]
    fn every_tool_written_is_in_a_family() {
        fn count(dir: &std::path::Path) -> usize {
            let mut n = 0;
            for entry in std::fs::read_dir(dir).expect("mcp/ reads") {
                let path = entry.expect("an entry").path();
                if path.is_dir() {
                    n += count(&path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).expect("a source reads");
                    n += text.lines().filter(|l| l.trim_start().starts_with("#[tool(")).count();
                }
            }
            n
        }
        let mcp = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/mcp");
        let mut served: Vec<&str> =
            TOOLS.iter().flat_map(|(_, tools)| tools).map(String::as_str).collect();
        served.sort();
        served.dedup();
        assert_eq!(served.len(), count(&mcp), "{served:?}");
        let listed = TabwireServer::tools(&ToolSet::all()).list_all();
        assert_eq!(listed.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(), served);
    }

    /// The families serve what their hand-kept lists said before each folder's router became
    /// its list (and wait_for_event is the sessions' first, as `family_of` says).
    #[test]
    fn the_families_serve_what_their_lists_said() {
        let said: [(&str, &[&str]); 8] = [
            (
                "tabs",
                &[
                    "list_browsers",
                    "list_tabs",
                    "open_tab",
                    "navigate",
                    "activate_tab",
                    "close_tab",
                    "diagnose",
                ],
            ),
            ("page", &["get_state", "list_commands", "send_command", "wait_for_state_change"]),
            (
                "dom",
                &[
                    "read_page",
                    "find",
                    "click",
                    "fill",
                    "type",
                    "press_key",
                    "pointer",
                    "upload_file",
                    "wait_for",
                    "handle_dialog",
                    "screenshot",
                    "console_messages",
                    "network_requests",
                    "evaluate",
                    "downloads",
                    "ask_user",
                ],
            ),
            (
                "sessions",
                &[
                    "get_session",
                    "notify_completion",
                    "post_message",
                    "ask_question",
                    "answer_question",
                    "wait_for_event",
                ],
            ),
            (
                "workers",
                &["spawn_worker", "list_workers", "stop_worker", "give_tab", "wait_for_event"],
            ),
            (
                "chat",
                &[
                    "send_message_async",
                    "wait_for_operation",
                    "get_operation",
                    "list_operations",
                    "cancel_operation",
                    "list_adapters",
                ],
            ),
            (
                "workflows",
                &[
                    "start_workflow",
                    "complete_skill",
                    "update_workflow",
                    "get_workflow_state",
                    "list_workflows",
                ],
            ),
            (
                "webdev",
                &[
                    "cookies",
                    "web_storage",
                    "site_state",
                    "network_rules",
                    "viewport",
                    "page_timing",
                    "print_pdf",
                    "export_test",
                    "audit_accessibility",
                ],
            ),
        ];
        let derived: Vec<(&str, Vec<String>)> = TOOLS.clone();
        let said: Vec<(&str, Vec<String>)> = said
            .iter()
            .map(|(family, tools)| {
                let mut tools: Vec<String> = tools.iter().map(|t| t.to_string()).collect();
                tools.sort();
                (*family, tools)
            })
            .collect();
        assert_eq!(derived, said);
        assert_eq!(ToolSet::family_of("wait_for_event"), Some("sessions"));
        let default = ToolSet::default();
        let mut served: Vec<&str> = ["tabs", "page", "dom"]
            .iter()
            .flat_map(|f| &said.iter().find(|(n, _)| n == f).unwrap().1)
            .map(String::as_str)
            .collect();
        served.sort();
        let listed = TabwireServer::tools(&default).list_all();
        assert_eq!(listed.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(), served);
    }
}
