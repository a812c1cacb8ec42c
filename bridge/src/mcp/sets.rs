//! Tool sets: the families of tools a server offers (`tabwire mcp --tools tabs,dom,workers`,
//! `tabwire serve --tools …`, or `TABWIRE_TOOLS`). Every tool's definition is in every
//! conversation of the client's model before its first call, so a family a user rarely needs
//! is left out by default; a tool of a family not served cannot be called either.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

/// One family: its name on the command line and its tools.
pub struct Family {
    pub name: &'static str,
    pub tools: &'static [&'static str],
}

/// Every family. A tool may be in two (wait_for_event follows sessions and workers).
pub const FAMILIES: [Family; 8] = [
    Family {
        name: "tabs",
        tools: &[
            "list_browsers",
            "list_tabs",
            "open_tab",
            "navigate",
            "activate_tab",
            "close_tab",
            "diagnose",
        ],
    },
    Family {
        name: "page",
        tools: &["get_state", "list_commands", "send_command", "wait_for_state_change"],
    },
    Family {
        name: "dom",
        tools: &[
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
    },
    Family {
        name: "sessions",
        tools: &[
            "get_session",
            "notify_completion",
            "post_message",
            "ask_question",
            "answer_question",
            "wait_for_event",
        ],
    },
    Family {
        name: "workers",
        tools: &["spawn_worker", "list_workers", "stop_worker", "give_tab", "wait_for_event"],
    },
    Family {
        name: "chat",
        tools: &[
            "send_message_async",
            "wait_for_operation",
            "get_operation",
            "list_operations",
            "cancel_operation",
            "list_adapters",
        ],
    },
    Family {
        name: "workflows",
        tools: &[
            "start_workflow",
            "complete_skill",
            "update_workflow",
            "get_workflow_state",
            "list_workflows",
        ],
    },
    // A web developer's tools for allowed sites; some need a switch the user turns on.
    Family {
        name: "webdev",
        tools: &[
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
    },
];

/// What a Claude Code user needs most: their browser's tabs, the pages of their own web apps
/// (state and commands), and any page read and acted on as a user would.
pub const DEFAULT: &str = "tabs,page,dom";

/// The families a server offers, and whether its tools/list gives their output schemas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSet {
    families: BTreeSet<&'static str>,
    output_schemas: bool,
}

impl ToolSet {
    pub fn all() -> ToolSet {
        ToolSet { families: FAMILIES.iter().map(|f| f.name).collect(), output_schemas: false }
    }

    /// Also give each tool's output schema (`--output-schemas`): for clients that check
    /// results against it. No model reads them, and they are 16 KB of the default sets'
    /// 37 KB listing, so they are left out unless asked for.
    pub fn with_output_schemas(mut self, on: bool) -> ToolSet {
        self.output_schemas = on;
        self
    }

    pub fn output_schemas(&self) -> bool {
        self.output_schemas
    }

    /// Whether the tool `name` (a built-in one) is served.
    pub fn serves(&self, name: &str) -> bool {
        FAMILIES.iter().any(|f| self.families.contains(f.name) && f.tools.contains(&name))
    }

    /// Whether the family `name` is served.
    pub fn has(&self, family: &str) -> bool {
        self.families.contains(family)
    }

    /// The family of a built-in tool this set does not serve, to say how to get it.
    pub fn family_of(name: &str) -> Option<&'static str> {
        FAMILIES.iter().find(|f| f.tools.contains(&name)).map(|f| f.name)
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

impl fmt::Display for ToolSet {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let names: Vec<&str> = self.families.iter().copied().collect();
        f.write_str(&names.join(","))
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

    #[test]
    fn every_tool_is_in_a_set_and_every_set_names_real_tools() {
        let served = super::super::TabwireServer::tools(&ToolSet::all()).list_all();
        let mut served: Vec<String> = served.iter().map(|t| t.name.to_string()).collect();
        served.sort();
        let mut named: Vec<String> =
            FAMILIES.iter().flat_map(|f| f.tools).map(|t| t.to_string()).collect();
        named.sort();
        named.dedup();
        assert_eq!(served, named);
    }
}
