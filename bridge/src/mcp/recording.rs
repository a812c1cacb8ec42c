//! What this session did, step by step, for export_test to write as a Playwright test
//! (`webdev/export.rs`): each acting call (`act` in `dom/refs.rs`) leaves a step with what the
//! extension resolved for its elements (`ns.facts` in extension/isolated/refs.js: role, name,
//! test id, label, placeholder, text); navigate, open_tab, wait_for and handle_dialog leave
//! theirs, and find and read_page the lines they read back that make a check. The server holds
//! it for the families that record into it, so none imports another. The session is this
//! process: the steps live in memory and end with it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Mutex, MutexGuard};

use serde::Serialize;
use serde_json::Value;
use tabwire_link::methods::ActReport;

/// Steps kept per session; older ones go first (the export says how many).
const MAX_STEPS: usize = 2000;

/// What this session did, step by step.
#[derive(Default)]
pub struct Recording(Mutex<Steps>);

#[derive(Default)]
pub(super) struct Steps {
    pub(super) list: VecDeque<Step>,
    next: u64,
    /// Steps no longer kept ([`MAX_STEPS`]).
    pub(super) dropped: u64,
    /// Each tab's page as last seen: an action on a tab first met mid-session starts from it.
    known: HashMap<i64, String>,
    /// The lines the session has read of each tab's page.
    seen: Seen,
}

pub(super) struct Step {
    pub(super) n: u64,
    pub(super) tab: i64,
    pub(super) what: What,
}

pub(super) enum What {
    Goto(String),
    Act {
        method: &'static str,
        args: Value,
        targets: Vec<Value>,
        report: Value,
    },
    Wait(Value),
    Dialog {
        accept: bool,
        text: Option<String>,
    },
    /// What a find or read_page read back, to check.
    Read(Vec<Line>),
}

impl Recording {
    /// The steps kept, for export_test to write.
    pub(super) fn steps(&self) -> MutexGuard<'_, Steps> {
        self.0.lock().unwrap()
    }

    fn push(&self, tab: i64, what: What) {
        let mut s = self.0.lock().unwrap();
        s.next += 1;
        let n = s.next;
        s.list.push_back(Step { n, tab, what });
        if s.list.len() > MAX_STEPS {
            s.list.pop_front();
            s.dropped += 1;
        }
    }

    /// The tab loaded `url` (navigate, open_tab).
    pub(super) fn went(&self, tab: i64, url: &str) {
        if !url.starts_with("http") {
            return;
        }
        let mut s = self.0.lock().unwrap();
        s.known.insert(tab, url.to_owned());
        s.seen.loaded(tab);
        drop(s);
        self.push(tab, What::Goto(url.to_owned()));
    }

    /// An acting call and its settled report. The elements' facts are taken out of the report's
    /// `result`: they are for the export, not for the model to read.
    pub(super) fn acted<A: Serialize + ?Sized>(
        &self,
        method: &'static str,
        tab: i64,
        args: &A,
        r: &mut ActReport,
    ) {
        let targets = match r.result.as_object_mut().and_then(|o| o.remove("targets")) {
            Some(Value::Array(t)) => t,
            _ => Vec::new(),
        };
        let mut args = serde_json::to_value(args).unwrap_or_default();
        if let Some(files) = args.get_mut("files").and_then(Value::as_array_mut) {
            for f in files {
                f.as_object_mut().map(|o| o.remove("base64"));
            }
        }
        let first = !self.0.lock().unwrap().known.contains_key(&tab);
        if first && !r.navigated {
            self.went(tab, &r.url);
        }
        let mut s = self.0.lock().unwrap();
        s.known.insert(tab, r.url.clone());
        if r.navigated {
            s.seen.loaded(tab);
        }
        s.seen.changed(tab, &r.added, &r.removed);
        drop(s);
        let report = serde_json::json!({
            "result": r.result, "added": r.added, "navigated_to": r.navigated_to,
            "new_tab": r.new_tab, "dialog": r.dialog.is_some(),
        });
        self.push(tab, What::Act { method, args, targets, report });
    }

    /// A wait_for that was met: `text`, `text_gone`, `selector`, `url`.
    pub(super) fn waited(&self, tab: i64, args: &impl Serialize) {
        self.push(tab, What::Wait(serde_json::to_value(args).unwrap_or_default()));
    }

    /// What find (`asked`: its matches) or read_page (its lines, of which those not seen
    /// before in the tab are news) read in a tab this session has acted in; reads elsewhere
    /// check nothing the session did.
    pub(super) fn read<'a>(&self, tab: i64, lines: impl IntoIterator<Item = &'a str>, asked: bool) {
        let mut s = self.0.lock().unwrap();
        if !s.known.contains_key(&tab) {
            return;
        }
        let news = s.seen.read(tab, lines, asked);
        drop(s);
        if !news.is_empty() {
            self.push(tab, What::Read(news));
        }
    }

    /// handle_dialog: how the tab's next dialog is to be answered.
    pub(super) fn dialog(&self, tab: i64, accept: bool, text: Option<String>) {
        self.push(tab, What::Dialog { accept, text });
    }
}

/// One line as the session read it, `role "name" [ref=e4] [value="…"] [checked]`, without what
/// does not make a check (its ref, focus, indentation): also the key of what it has seen.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Line {
    pub(super) role: String,
    pub(super) name: String,
    pub(super) value: Option<String>,
    pub(super) checked: bool,
}

/// Roles whose lines hold a value (`[value="…"]`).
pub(super) const FIELDS: &[&str] = &["textbox", "searchbox", "spinbutton", "slider", "combobox"];
/// Roles whose lines say whether they are checked (`[checked]`).
pub(super) const CHECKABLE: &[&str] = &["checkbox", "radio", "switch"];
/// Roles tabwire names by their text and Playwright's getByRole by nothing: found by the text.
pub(super) const BY_TEXT: &[&str] = &["status", "alert", "listitem"];

/// Roles whose name Playwright's getByRole reads as tabwire does: from the content (ARIA's
/// roles named from content) or from a label.
pub(super) const NAMED_ROLES: &[&str] = &[
    "button",
    "link",
    "heading",
    "checkbox",
    "radio",
    "switch",
    "tab",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "option",
    "treeitem",
    "cell",
    "gridcell",
    "columnheader",
    "rowheader",
    "tooltip",
    "textbox",
    "searchbox",
    "combobox",
    "listbox",
    "spinbutton",
    "slider",
];

impl Line {
    /// A line of read_page, find or an action's changes (`+ ` before it, or indented); None for
    /// a line with no name, a removed one (`- `), one inside a frame, or tabwire's own notes.
    pub(super) fn parse(line: &str) -> Option<Line> {
        let line = line.trim_start_matches(['+', ' ']);
        if line.contains("[ref=f") {
            return None; // inside a frame: the test would need its frameLocator
        }
        let (role, rest) = line.split_once(' ')?;
        let (name, mut states) = string_at(rest)?;
        let (mut value, mut checked) = (None, false);
        // ` [key]` or ` [key=…]`, the page's words always a JSON string.
        while let Some(s) = states.trim_start().strip_prefix('[') {
            let key_end = s.find([']', '='])?;
            let (key, after) = s.split_at(key_end);
            states = match after.strip_prefix('=') {
                Some(v) if v.starts_with('"') => {
                    let (text, left) = string_at(v)?;
                    if key == "value" {
                        value = Some(text);
                    }
                    left.strip_prefix(']')?
                }
                Some(v) => &v[v.find(']')? + 1..],
                None => {
                    checked |= key == "checked";
                    &after[1..]
                }
            };
        }
        Some(Line { role: role.to_owned(), name, value, checked })
    }

    /// Whether this is the line of the element of `role` and `name`.
    pub(super) fn is(&self, role: &str, name: &str) -> bool {
        !role.is_empty() && self.role == role && self.name == name
    }

    pub(super) fn key(&self) -> (&str, &str) {
        (&self.role, &self.name)
    }

    /// Whether a line of this role can make a check (what a read keeps).
    fn checkable(&self) -> bool {
        match self.role.as_str() {
            "text" => true,
            role if BY_TEXT.contains(&role) => true,
            role if FIELDS.contains(&role) => self.value.is_some(),
            role => NAMED_ROLES.contains(&role),
        }
    }
}

/// A JSON string at the start of `s`, and what follows it.
fn string_at(s: &str) -> Option<(String, &str)> {
    let mut stream = serde_json::Deserializer::from_str(s).into_iter::<String>();
    let text = stream.next()?.ok()?;
    Some((text, &s[stream.byte_offset()..]))
}

/// Lines of one read kept to choose its checks from.
const KEPT_PER_READ: usize = 50;
/// Lines remembered per tab; past it the tab starts afresh (what it shows is news again).
const SEEN_MAX: usize = 20_000;

/// What the session has seen of each tab's page since it loaded: a read's news are the lines
/// not among them.
#[derive(Default)]
pub(super) struct Seen(HashMap<i64, HashSet<Line>>);

impl Seen {
    /// The tab loaded another page.
    pub(super) fn loaded(&mut self, tab: i64) {
        self.0.remove(&tab);
    }

    /// An action's changes, as the session read them in its report.
    pub(super) fn changed(&mut self, tab: i64, added: &[String], removed: &[String]) {
        let seen = self.0.entry(tab).or_default();
        for l in removed.iter().filter_map(|l| Line::parse(l)) {
            seen.remove(&l);
        }
        seen.extend(added.iter().filter_map(|l| Line::parse(l)));
    }

    /// The lines of one read to make checks from: every line find matched (`asked`: each is
    /// what the session looked for), or those of read_page it had not seen in this tab (lines
    /// `since` reports removed, `- …`, are forgotten). A line the read shows twice is left out.
    pub(super) fn read<'a>(
        &mut self,
        tab: i64,
        lines: impl IntoIterator<Item = &'a str>,
        asked: bool,
    ) -> Vec<Line> {
        let seen = self.0.entry(tab).or_default();
        if seen.len() > SEEN_MAX {
            seen.clear();
        }
        let mut read = Vec::new();
        for line in lines {
            match line.trim_start().strip_prefix("- ") {
                Some(gone) => {
                    if let Some(l) = Line::parse(gone) {
                        seen.remove(&l);
                    }
                }
                None => read.extend(Line::parse(line)),
            }
        }
        let mut count: HashMap<(&str, &str), usize> = HashMap::new();
        for l in &read {
            *count.entry(l.key()).or_default() += 1;
        }
        let mut news = Vec::new();
        for l in &read {
            let new = seen.insert(l.clone());
            if (new || asked) && count[&l.key()] == 1 && l.checkable() {
                news.push(l.clone());
            }
        }
        news.truncate(KEPT_PER_READ);
        news
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(s: &str) -> Line {
        Line::parse(s).unwrap_or_else(|| panic!("{s} does not parse"))
    }

    #[test]
    fn a_line_is_its_role_name_value_and_checked_state() {
        let l =
            line("  textbox \"Email\" [ref=e4] [value=\"a \\\"b\\\" [c]\"] [required] [focused]");
        assert_eq!((l.role.as_str(), l.name.as_str()), ("textbox", "Email"));
        assert_eq!(l.value.as_deref(), Some("a \"b\" [c]"));
        assert!(line("+ checkbox \"Gift wrap\" [ref=e9] [checked]").checked);
        assert!(!line("checkbox \"Gift wrap\" [ref=e9]").checked);
        let h = line("heading \"Welcome\" [ref=e4] [level=2]");
        assert_eq!((h.value, h.checked), (None, false));
        for not_a_check in
            ["- heading \"Gone\"", "main", "button \"In a frame\" [ref=f2e3]", "… (cut)"]
        {
            assert_eq!(Line::parse(not_a_check), None, "{not_a_check}");
        }
    }
}
