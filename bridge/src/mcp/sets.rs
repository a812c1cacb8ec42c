//! Tool sets: the families of tools a server offers (`tabwire mcp --tools tabs,dom,workers`,
//! `tabwire serve --tools …`, or `TABWIRE_TOOLS`). Every tool's definition is in every
//! conversation of the client's model before its first call, so a family a user rarely needs
//! is left out by default; a tool of a family not served cannot be called either.
//!
//! A set is family names, so this file imports no family and the server can hold one. What
//! needs the families themselves — parsing a set, `all`, which family a tool is in — is in
//! `families.rs`, above them.

use std::collections::BTreeSet;
use std::fmt;

/// What a Claude Code user needs most: their browser's tabs, the pages of their own web apps
/// (state and commands), and any page read and acted on as a user would.
pub const DEFAULT: &str = "tabs,page,dom";

/// The families a server offers, and whether its tools/list gives their output schemas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSet {
    /// Names of families (`families.rs` makes a set only of names it lists).
    pub(super) families: BTreeSet<&'static str>,
    pub(super) output_schemas: bool,
}

impl ToolSet {
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

    /// Whether the family `name` is served.
    pub fn has(&self, family: &str) -> bool {
        self.families.contains(family)
    }
}

impl fmt::Display for ToolSet {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let names: Vec<&str> = self.families.iter().copied().collect();
        f.write_str(&names.join(","))
    }
}
