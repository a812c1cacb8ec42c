//! The assertions of an exported test: what the session read back after acting — the lines an
//! action added, find's matches, the lines of read_page it had not seen in that tab — each
//! checked on the element found by the same rule as the elements acted on ([`super::locator`]).

use std::collections::HashMap;

use serde_json::json;

use super::{js, locator};
use crate::mcp::recording::{BY_TEXT, CHECKABLE, FIELDS, Line};

/// Assertions taken from the lines one action added or one read returned.
pub(super) const CHECKS_PER_STEP: usize = 3;
/// Fields the session acted on, `(role, name)` → tag (`ns.facts` in extension/isolated/refs.js):
/// how a value read back is checked — an input's `toHaveValue`, a select's chosen option, an
/// editable element's text.
pub(super) type Fields = HashMap<(String, String), String>;

/// What makes a check of a line (the line and what a read keeps are the recording's:
/// `mcp/recording.rs`).
impl Line {
    /// What a person would check of this line; None for one that makes no good check.
    fn check(&self, fields: &Fields) -> Option<String> {
        let shown = self.name.trim_end_matches('…'); // read_page cut it at 100 characters
        if shown.trim().is_empty() {
            return None;
        }
        let role = self.role.as_str();
        let by_role = || locator(&json!({ "role": role, "name": self.name }), None);
        if role == "text" {
            return Some(format!(
                "await expect(page.locator('body')).toContainText({});",
                js(shown)
            ));
        }
        if BY_TEXT.contains(&role) {
            let found =
                format!("page.getByRole({}).filter({{ hasText: {} }})", js(role), js(shown));
            return Some(if shown.len() < self.name.len() {
                format!("await expect({found}).toBeVisible();")
            } else {
                format!("await expect({found}).toHaveText({});", js(shown))
            });
        }
        if CHECKABLE.contains(&role) {
            let not = if self.checked { "" } else { "not." };
            return Some(format!("await expect({}).{not}toBeChecked();", by_role()?));
        }
        if FIELDS.contains(&role) {
            return self.value_check(by_role()?, fields);
        }
        by_role().map(|l| format!("await expect({l}).toBeVisible();"))
    }

    /// A field's value as read: never a password's dots, nor a value read_page cut.
    fn value_check(&self, l: String, fields: &Fields) -> Option<String> {
        let v = self.value.as_deref()?;
        if v.chars().all(|c| c == '•') || v.ends_with('…') {
            return None;
        }
        let tag = fields.get(&(self.role.clone(), self.name.clone())).map(String::as_str);
        match tag {
            // A select's line shows the chosen options' labels, joined with ", ".
            Some("select") if !v.contains(", ") => {
                Some(format!("await expect({l}.locator('option:checked')).toHaveText({});", js(v)))
            }
            Some("select") => None,
            Some("input" | "textarea") => {
                Some(format!("await expect({l}).toHaveValue({});", js(v)))
            }
            Some(_) => Some(format!("await expect({l}).toHaveText({});", js(v))),
            // Never acted on: a combobox may be a select or a field; the others are inputs.
            None if self.role == "combobox" => None,
            None => Some(format!("await expect({l}).toHaveValue({});", js(v))),
        }
    }

    /// Which checks go first when a step showed more than it keeps: what a person looks at to
    /// know what happened (a heading, a status, an alert, a list item), then the other elements
    /// that are there, then the states of controls (a form that appeared shows its defaults).
    fn rank(&self) -> u8 {
        match self.role.as_str() {
            "heading" => 0,
            role if BY_TEXT.contains(&role) => 0,
            role if FIELDS.contains(&role) || CHECKABLE.contains(&role) => 2,
            _ => 1,
        }
    }
}

/// The checks of the lines one step showed, at most [`CHECKS_PER_STEP`], by [`Line::rank`] then
/// in their order: lines of a role say what changed better than runs of text (a label's words
/// among them), so text only when there is no such line; none for a line another one repeats
/// (its locator would find both).
pub(super) fn checks(lines: &[Line], fields: &Fields) -> Vec<String> {
    let mut count: HashMap<(&str, &str), usize> = HashMap::new();
    for l in lines {
        *count.entry(l.key()).or_default() += 1;
    }
    let made: Vec<(&Line, String)> = lines
        .iter()
        .filter(|l| count[&l.key()] == 1)
        .filter_map(|l| Some((l, l.check(fields)?)))
        .collect();
    let by_role = made.iter().any(|(l, _)| l.role != "text");
    let mut made: Vec<(&Line, String)> =
        made.into_iter().filter(|(l, _)| !by_role || l.role != "text").collect();
    made.sort_by_key(|(l, _)| l.rank());
    let mut out: Vec<String> = Vec::new();
    for (_, c) in made {
        if !out.contains(&c) && out.len() < CHECKS_PER_STEP {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::recording::Seen;

    fn line(s: &str) -> Line {
        Line::parse(s).unwrap_or_else(|| panic!("{s} does not parse"))
    }

    #[test]
    fn each_line_is_checked_on_the_element_the_actions_locator_finds() {
        let none = Fields::new();
        let check = |s: &str, f: &Fields| line(s).check(f);
        assert_eq!(
            check("heading \"Welcome, Ada\" [ref=e4] [level=2]", &none).unwrap(),
            "await expect(page.getByRole('heading', { name: 'Welcome, Ada', exact: true })).toBeVisible();"
        );
        assert_eq!(
            check("text \"Order placed\"", &none).unwrap(),
            "await expect(page.locator('body')).toContainText('Order placed');"
        );
        assert_eq!(
            check("status \"Saved\"", &none).unwrap(),
            "await expect(page.getByRole('status').filter({ hasText: 'Saved' })).toHaveText('Saved');"
        );
        assert_eq!(
            check("listitem \"A long item…\"", &none).unwrap(),
            "await expect(page.getByRole('listitem').filter({ hasText: 'A long item' })).toBeVisible();"
        );
        assert_eq!(
            check("textbox \"Email\" [ref=e3] [value=\"a@b.c\"]", &none).unwrap(),
            "await expect(page.getByRole('textbox', { name: 'Email', exact: true })).toHaveValue('a@b.c');"
        );
        assert_eq!(
            check("checkbox \"Gift wrap\" [ref=e9]", &none).unwrap(),
            "await expect(page.getByRole('checkbox', { name: 'Gift wrap', exact: true })).not.toBeChecked();"
        );
        // Never a password's dots, a cut value, a field without one, or an unnamed role.
        assert_eq!(check("textbox \"Password\" [ref=e3] [value=\"••••\"]", &none), None);
        assert_eq!(check("textbox \"Bio\" [ref=e3] [value=\"long…\"]", &none), None);
        assert_eq!(check("textbox \"Email\" [ref=e3]", &none), None);
        assert_eq!(check("clickable \"☆\" [ref=e7]", &none), None);
        // A combobox is checked as what it was when acted on: a select by its chosen option.
        let size = "combobox \"Size\" [ref=e5] [value=\"Large\"]";
        assert_eq!(check(size, &none), None);
        let mut fields = Fields::new();
        fields.insert(("combobox".into(), "Size".into()), "select".into());
        fields.insert(("textbox".into(), "Story".into()), "div".into());
        assert_eq!(
            check(size, &fields).unwrap(),
            "await expect(page.getByRole('combobox', { name: 'Size', exact: true }).locator('option:checked')).toHaveText('Large');"
        );
        assert!(
            check("textbox \"Story\" [value=\"Once\"]", &fields)
                .unwrap()
                .ends_with(".toHaveText('Once');")
        );
    }

    #[test]
    fn a_read_checks_what_the_session_had_not_seen_and_find_what_it_asked() {
        let mut seen = Seen::default();
        let page = [
            "heading \"Shop\" [ref=e1] [level=1]",
            "  link \"Help\" [ref=e2]",
            "  link \"Help\" [ref=e3]",
        ];
        let news = seen.read(1, page, false);
        assert_eq!(checks(&news, &Fields::new()).len(), 1, "the twice-shown link is no check");
        assert!(seen.read(1, page, false).is_empty(), "read again: nothing new");
        // An action's changes are seen; what changed after them is news to a read.
        seen.changed(1, &["status \"Saving\" [ref=e9]".into()], &[]);
        let later = ["heading \"Shop\" [ref=e1] [level=1]", "status \"Saved\" [ref=e9]"];
        let news = seen.read(1, later, false);
        assert_eq!(news, vec![line("status \"Saved\"")]);
        // find: what it matched, seen or not.
        assert_eq!(seen.read(1, ["status \"Saved\" [ref=e9]"], true).len(), 1);
        // `since`: a line it says went is news when it comes back; a new page is all news.
        seen.read(1, ["- status \"Saved\" [ref=e9]"], false);
        assert_eq!(seen.read(1, ["+ status \"Saved\" [ref=e9]"], false).len(), 1);
        seen.loaded(1);
        assert_eq!(seen.read(1, page, false).len(), 1);
    }

    #[test]
    fn what_shows_what_happened_comes_first_and_no_more_than_three() {
        let lines: Vec<Line> = [
            "text \"Thanks\"",
            "checkbox \"Remember me\"",
            "button \"Again\"",
            "heading \"Done\"",
            "link \"Home\"",
            "cell \"42\"",
        ]
        .iter()
        .map(|s| line(s))
        .collect();
        let c = checks(&lines, &Fields::new());
        assert_eq!(c.len(), CHECKS_PER_STEP);
        assert!(c[0].contains("'heading'") && c[1].contains("'Again'"), "{c:?}");
        assert!(!c.iter().any(|c| c.contains("Thanks") || c.contains("Remember")), "{c:?}");
    }
}
