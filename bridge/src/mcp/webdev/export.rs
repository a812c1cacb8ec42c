//! export_test: what this session did on a site, written as a Playwright Test file the developer
//! keeps and runs. The steps are the session's recording (`mcp/recording.rs`): each acting call
//! with what the extension resolved for its elements (`ns.facts` in extension/isolated/refs.js:
//! role, name, test id, label, placeholder, text), navigate, open_tab, wait_for and
//! handle_dialog, and what find and read_page read back (`checks.rs`: the assertions). The one
//! rule that turns those facts into a locator is [`locator`].

mod checks;

use std::path::{Component, Path, PathBuf};

use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tabwire_link::error::CallError;
use tabwire_proto::wire::code;

use crate::mcp::recording::{Line, NAMED_ROLES, Step, What};
use crate::mcp::reply::{Reply, ToolError};
use crate::mcp::server::TabwireServer;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExportParams {
    /// Only this tab's steps; without it, every tab this session acted in (one test each).
    #[serde(default)]
    pub tab_id: Option<i64>,
    /// The test's title.
    #[serde(default)]
    pub name: Option<String>,
    /// A step number: only that step and later ones (an earlier export says where it ended).
    #[serde(default)]
    pub since: Option<u64>,
    /// Also write the file here: a `.spec.ts` or `.test.ts` path inside the working directory.
    #[serde(default)]
    pub path: Option<String>,
}

/// A JavaScript string literal of `s`: whatever a page put in it stays a string.
fn js(s: &str) -> String {
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// `{ name: …, exact: true }`, or a prefix match for a name read_page cut at 100 characters.
fn name_option(name: &str) -> String {
    match name.strip_suffix('…') {
        Some(prefix) => format!("{{ name: {} }}", js(prefix)),
        None => format!("{{ name: {}, exact: true }}", js(name)),
    }
}

/// The locator of an element from what tabwire resolved for it: its role and name; else its
/// test id, label, placeholder or text; else the CSS selector the session gave. Never an index
/// into the DOM: None when nothing names it.
fn locator(f: &Value, selector: Option<&str>) -> Option<String> {
    let s = |k: &str| f[k].as_str().filter(|v| !v.is_empty());
    if let (Some(role), Some(name)) = (s("role"), s("name"))
        && NAMED_ROLES.contains(&role)
    {
        return Some(format!("page.getByRole({}, {})", js(role), name_option(name)));
    }
    if let Some(id) = s("test_id") {
        return Some(format!("page.getByTestId({})", js(id)));
    }
    if let Some(label) = s("label") {
        return Some(format!("page.getByLabel({}, {{ exact: true }})", js(label)));
    }
    if let Some(p) = s("placeholder") {
        return Some(format!("page.getByPlaceholder({}, {{ exact: true }})", js(p)));
    }
    if let Some(text) = s("text") {
        return Some(format!("page.getByText({}, {{ exact: true }})", js(text)));
    }
    selector.map(|sel| format!("page.locator({})", js(sel)))
}

/// The environment variable a password field's value comes from: its name in capitals.
fn secret_name(f: &Value) -> String {
    let base = ["label", "name", "placeholder"]
        .iter()
        .find_map(|k| f[*k].as_str().filter(|v| !v.is_empty()))
        .unwrap_or("password");
    let mut name: String = base
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' })
        .collect();
    name = name.split('_').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("_");
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert_str(0, "SECRET_");
    }
    name
}

/// A URL as the test goes to it: a path of the test's site (`baseURL`), else whole.
fn relative(url: &str, site: &str) -> String {
    match url.strip_prefix(site) {
        Some(rest) if rest.starts_with('/') => rest.to_owned(),
        Some("") => "/".to_owned(),
        _ => url.to_owned(),
    }
}

fn origin_of(url: &str) -> String {
    let after = url.find("://").map(|i| i + 3).unwrap_or(0);
    let end = url[after..].find('/').map(|i| after + i).unwrap_or(url.len());
    url[..end].to_owned()
}

/// What one test is written from, and what it needs.
#[derive(Default)]
struct Written {
    body: Vec<String>,
    secrets: Vec<String>,
    left_out: Vec<String>,
    /// The fields acted on so far, for checking their values read back.
    fields: checks::Fields,
}

/// One tab's steps as the body of a test, in `site`'s terms.
fn write_steps(steps: &[&Step], site: &str) -> Written {
    let mut w = Written::default();
    for step in steps {
        let n = step.n;
        match &step.what {
            What::Goto(url) => {
                w.body.push(format!("await page.goto({});", js(&relative(url, site))));
            }
            What::Dialog { accept, text } => {
                let answer = match (accept, text) {
                    (true, Some(t)) => format!("dialog.accept({})", js(t)),
                    (true, None) => "dialog.accept()".to_owned(),
                    (false, _) => "dialog.dismiss()".to_owned(),
                };
                w.body.push(format!("page.once('dialog', (dialog) => {answer});"));
            }
            What::Wait(a) => {
                let s = |k: &str| a[k].as_str();
                if let Some(t) = s("text") {
                    w.body.push(format!(
                        "await expect(page.locator('body')).toContainText({});",
                        js(t)
                    ));
                }
                if let Some(t) = s("text_gone") {
                    w.body.push(format!(
                        "await expect(page.locator('body')).not.toContainText({});",
                        js(t)
                    ));
                }
                if let Some(sel) = s("selector") {
                    w.body.push(format!(
                        "await page.locator({}).first().waitFor({{ state: 'attached' }});",
                        js(sel)
                    ));
                }
                if let Some(u) = s("url") {
                    w.body.push(format!(
                        "await page.waitForURL((url) => url.href.includes({}));",
                        js(u)
                    ));
                }
            }
            What::Act { method, args, targets, report } => {
                for t in targets {
                    if let (Some(role), Some(name), Some(tag)) =
                        (t["role"].as_str(), t["name"].as_str(), t["tag"].as_str())
                    {
                        w.fields.insert((role.to_owned(), name.to_owned()), tag.to_owned());
                    }
                }
                act(&mut w, n, method, args, targets, report, site);
            }
            What::Read(lines) => {
                let made = checks::checks(lines, &w.fields);
                w.body.extend(made);
            }
        }
    }
    w
}

fn act(
    w: &mut Written,
    n: u64,
    method: &str,
    args: &Value,
    targets: &[Value],
    report: &Value,
    site: &str,
) {
    let selector = args["selector"].as_str();
    let none = Value::Null;
    let first = targets.first().unwrap_or(&none);
    let frame = targets.iter().any(|t| t["frame"] == true);
    if frame {
        w.left_out.push(format!("step {n} acted inside a frame"));
        w.body.push(format!(
            "// step {n}: tabwire acted inside a frame here; write it with page.frameLocator(…)"
        ));
        return;
    }
    let loc = |f: &Value, sel: Option<&str>| locator(f, sel);
    let missing = |w: &mut Written| {
        w.left_out.push(format!("step {n}: an element with no role, name, test id, label or text"));
        w.body.push(format!(
            "throw new Error('step {n}: the element acted on has no role and name, test id, label \
             or text to find it by; give it a data-testid and export again');"
        ));
    };
    if args["trusted"] == true {
        w.body.push(
            "// tabwire used trusted input here; Playwright's input is the browser's own".into(),
        );
    }
    let secret = |w: &mut Written, f: &Value| {
        let name = secret_name(f);
        if !w.secrets.contains(&name) {
            w.secrets.push(name.clone());
        }
        format!("secret({})", js(&name))
    };
    let is_password = |f: &Value| f["type"] == "password";
    match method {
        "dom.click" => {
            let Some(l) = loc(first, selector) else { return missing(w) };
            let mut opts = Vec::new();
            if let Some(b) = args["button"].as_str().filter(|b| *b != "left") {
                opts.push(format!("button: {}", js(b)));
            }
            if let Some(m) = args["modifiers"].as_array().filter(|m| !m.is_empty()) {
                let keys: Vec<String> = m.iter().filter_map(Value::as_str).map(js).collect();
                opts.push(format!("modifiers: [{}]", keys.join(", ")));
            }
            let call = if args["count"].as_u64() == Some(2) { "dblclick" } else { "click" };
            let opts =
                if opts.is_empty() { String::new() } else { format!("{{ {} }}", opts.join(", ")) };
            w.body.push(format!("await {l}.{call}({opts});"));
        }
        "dom.fill" => {
            let fields = args["fields"].as_array().cloned().unwrap_or_default();
            let values = report["result"]["values"].as_array().cloned().unwrap_or_default();
            for (i, field) in fields.iter().enumerate() {
                let f = targets.get(i).unwrap_or(&none);
                let Some(l) = loc(f, field["selector"].as_str()) else { return missing(w) };
                let value = &field["value"];
                let kind = f["type"].as_str().unwrap_or("");
                if f["tag"] == "select" {
                    let v: Vec<String> = match value {
                        Value::Array(a) => a.iter().map(|v| js(&text_of(v))).collect(),
                        v => vec![js(&text_of(v))],
                    };
                    w.body.push(format!(
                        "await {l}.selectOption({});",
                        if v.len() == 1 { v[0].clone() } else { format!("[{}]", v.join(", ")) }
                    ));
                } else if kind == "checkbox" || kind == "radio" {
                    let on = matches!(value, Value::Bool(true))
                        || matches!(value.as_str(), Some("true" | "on" | "checked"));
                    w.body.push(format!("await {l}.{}();", if on { "check" } else { "uncheck" }));
                } else if is_password(f) {
                    let s = secret(w, f);
                    w.body.push(format!("await {l}.fill({s});"));
                } else {
                    let given = text_of(value);
                    w.body.push(format!("await {l}.fill({});", js(&given)));
                    // The page changed what it was given (a mask, a format): the session read it.
                    if let Some(now) = values.get(i).and_then(Value::as_str).filter(|v| *v != given)
                    {
                        w.body.push(format!("await expect({l}).toHaveValue({});", js(now)));
                    }
                }
            }
        }
        "dom.type" => {
            let text = args["text"].as_str().unwrap_or("");
            let (l, password) = match targets.first() {
                Some(f) => match loc(f, selector) {
                    Some(l) => (Some(l), is_password(f)),
                    None => return missing(w),
                },
                None => (None, false),
            };
            let typed = if password { secret(w, first) } else { js(text) };
            match &l {
                Some(l) => w.body.push(format!("await {l}.pressSequentially({typed});")),
                None => w.body.push(format!("await page.keyboard.type({typed});")),
            }
            if let (Some(l), false, Some(v)) = (&l, password, report["result"]["value"].as_str()) {
                let field = matches!(first["tag"].as_str(), Some("input" | "textarea"));
                if field {
                    w.body.push(format!("await expect({l}).toHaveValue({});", js(v)));
                }
            }
            if args["submit"] == true {
                w.body.push(format!(
                    "await {}.press('Enter');",
                    l.as_deref().unwrap_or("page.keyboard")
                ));
            }
        }
        "dom.press_key" => {
            let on = match targets.first() {
                Some(f) => match loc(f, selector) {
                    Some(l) => l,
                    None => return missing(w),
                },
                None => "page.keyboard".to_owned(),
            };
            for chord in args["keys"].as_str().unwrap_or("").split(' ').filter(|c| !c.is_empty()) {
                let chord = chord.replace("Space", " ");
                w.body.push(format!("await {on}.press({});", js(&chord)));
            }
        }
        "dom.pointer" => match args["action"].as_str() {
            Some("hover") => match loc(first, selector) {
                Some(l) => w.body.push(format!("await {l}.hover();")),
                None => missing(w),
            },
            Some("drag") => match (loc(first, selector), targets.get(1).and_then(|t| loc(t, None)))
            {
                (Some(a), Some(b)) => w.body.push(format!("await {a}.dragTo({b});")),
                _ => missing(w),
            },
            _ => match targets.first().and_then(|f| loc(f, selector)) {
                Some(l) => w.body.push(format!("await {l}.scrollIntoViewIfNeeded();")),
                None => w.body.push(format!(
                    "await page.mouse.wheel({}, {});",
                    args["dx"].as_f64().unwrap_or(0.0),
                    args["dy"].as_f64().unwrap_or(0.0)
                )),
            },
        },
        "dom.upload" => {
            let Some(l) = loc(first, None) else { return missing(w) };
            let names: Vec<String> = args["files"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f["name"].as_str())
                .map(|name| format!("path.join(__dirname, {})", js(name)))
                .collect();
            w.body.push("// the files upload_file gave, expected beside this test file".into());
            w.body.push(format!("await {l}.setInputFiles([{}]);", names.join(", ")));
        }
        _ => return,
    }
    if let Some(to) = report["navigated_to"].as_str() {
        w.body.push(format!("await expect(page).toHaveURL({});", js(&relative(to, site))));
    }
    if let Some(id) = report["new_tab"].as_i64() {
        w.left_out.push(format!("step {n} opened tab {id}, exported on its own"));
        w.body.push(format!("// step {n} opened another tab: export_test {{\"tab_id\": {id}}} writes what was done there"));
    }
    // What the action changed, as its report showed the session; the elements it acted on are
    // as the action left them, checked above where the page made them otherwise.
    let acted_on = |l: &Line| {
        targets
            .iter()
            .any(|t| l.is(t["role"].as_str().unwrap_or(""), t["name"].as_str().unwrap_or("")))
    };
    let added: Vec<Line> = report["added"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(Line::parse)
        .filter(|l| !acted_on(l))
        .collect();
    let made = checks::checks(&added, &w.fields);
    w.body.extend(made);
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// The whole file: one test per tab.
fn spec(title: &str, tabs: &[(i64, Vec<&Step>)]) -> (String, Written) {
    let site = tabs
        .iter()
        .flat_map(|(_, s)| s.iter())
        .find_map(|s| match &s.what {
            What::Goto(url) => Some(origin_of(url)),
            _ => None,
        })
        .unwrap_or_default();
    let mut all = Written::default();
    let mut tests = Vec::new();
    for (tab, steps) in tabs {
        let w = write_steps(steps, &site);
        let name = if tabs.len() > 1 { format!("{title} (tab {tab})") } else { title.to_owned() };
        let mut t = format!("test({}, async ({{ page }}) => {{\n", js(&name));
        for line in &w.body {
            t.push_str(&format!("  {line}\n"));
        }
        t.push_str("});\n");
        tests.push(t);
        for s in w.secrets {
            if !all.secrets.contains(&s) {
                all.secrets.push(s);
            }
        }
        all.left_out.extend(w.left_out);
    }
    let mut out = String::from("import { test, expect } from '@playwright/test';\n");
    if tests.iter().any(|t| t.contains("path.join(")) {
        out.push_str("import path from 'node:path';\n");
    }
    out.push_str(&format!(
        "\n// Written by tabwire's export_test from what an assistant did on {site}.\n\
         // BASE_URL runs it against another copy of the app (a staging server, a preview).\n\
         test.use({{ baseURL: process.env.BASE_URL ?? {} }});\n",
        js(&site)
    ));
    if !all.secrets.is_empty() {
        out.push_str(
            "\n// What was typed into password fields is never written here: it comes from the\n\
             // environment when the test runs.\n\
             function secret(name: string): string {\n  \
               const value = process.env[name];\n  \
               if (value === undefined) throw new Error(`set ${name}: this test types it into a password field`);\n  \
               return value;\n\
             }\n",
        );
    }
    for t in tests {
        out.push('\n');
        out.push_str(&t);
    }
    (out, all)
}

/// `path` made absolute inside `root`, refused when it leaves it or is not a test file's name.
fn inside(root: &Path, path: &str) -> Result<PathBuf, CallError> {
    let bad = |why: &str| {
        CallError::new(
            code::BAD_REQUEST,
            format!(
                "path {path:?} {why}; give a path such as e2e/checkout.spec.ts inside {}",
                root.display()
            ),
        )
    };
    let p = Path::new(path);
    let rel = if p.is_absolute() {
        p.strip_prefix(root).map_err(|_| bad("is outside the working directory"))?
    } else {
        p
    };
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(bad("must go down from the working directory, without `..`"));
    }
    let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if ![".spec.ts", ".test.ts", ".spec.js", ".test.js"].iter().any(|e| name.ends_with(e)) {
        return Err(bad("must name a test file (ending .spec.ts or .test.ts)"));
    }
    Ok(root.join(rel))
}

fn write(root: &Path, path: &str, text: &str) -> Result<PathBuf, CallError> {
    let target = inside(root, path)?;
    let fail = |e: std::io::Error| {
        CallError::new(code::INTERNAL, format!("could not write {}: {e}", target.display()))
    };
    let dir = target.parent().unwrap_or(root);
    std::fs::create_dir_all(dir).map_err(fail)?;
    // A link inside the project may point out of it: where the file lands is checked, not named.
    let real = dir.canonicalize().map_err(fail)?;
    if !real.starts_with(root.canonicalize().map_err(fail)?) {
        return Err(CallError::new(
            code::BAD_REQUEST,
            format!(
                "{} leads outside the working directory (a symbolic link); give another path",
                dir.display()
            ),
        ));
    }
    std::fs::write(&target, text).map_err(fail)?;
    Ok(target)
}

/// What `export_test` answers besides its text.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Exported {
    /// The Playwright Test file (`.spec.ts`).
    pub test: String,
    /// The first and last step of this session the file holds; `since: last + 1` exports what
    /// comes next.
    pub first_step: u64,
    pub last_step: u64,
    /// How many tabs' steps it holds (a `test()` each).
    pub tabs: usize,
    /// Where it was written, when `path` was given.
    pub written_to: Option<String>,
    /// Environment variables the test reads for password fields.
    pub secrets: Vec<String>,
    /// What was done but is not in the file, and why.
    pub not_exported: Vec<String>,
}

#[tool_router(router = export_tools, vis = "pub(super)")]
impl TabwireServer {
    /// Write what this session did in a tab (navigate, click, fill, type, press_key, pointer,
    /// upload_file, wait_for, handle_dialog) as a Playwright Test file: locators by role and
    /// name (else test id, label, text), the waits tabwire saw settle and the lines it read after
    /// acting as assertions; password fields read process.env. `path` also writes it.
    #[tool(
        output_schema = schema_for_output::<Exported>(),
        annotations(
            title = "Export a Playwright test",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn export_test(
        &self,
        Parameters(p): Parameters<ExportParams>,
    ) -> Result<Reply<Exported>, ToolError> {
        let steps = self.recording.steps();
        let since = p.since.unwrap_or(0);
        let chosen: Vec<&Step> = steps
            .list
            .iter()
            .filter(|s| s.n >= since && p.tab_id.is_none_or(|t| s.tab == t))
            .collect();
        if !chosen.iter().any(|s| matches!(s.what, What::Act { .. } | What::Wait(_))) {
            let which = p.tab_id.map(|t| format!(" in tab {t}")).unwrap_or_default();
            return Err(CallError::new(
                code::BAD_REQUEST,
                format!(
                    "nothing to export: this session has not acted{which}{} yet; navigate, click, \
                     fill… first, then export",
                    if since > 0 { format!(" since step {since}") } else { String::new() }
                ),
            )
            .into());
        }
        let mut tabs: Vec<(i64, Vec<&Step>)> = Vec::new();
        for s in &chosen {
            match tabs.iter_mut().find(|(t, _)| *t == s.tab) {
                Some((_, list)) => list.push(s),
                None => tabs.push((s.tab, vec![s])),
            }
        }
        let (first, last) = (chosen[0].n, chosen[chosen.len() - 1].n);
        let dropped = steps.dropped;
        let title = p.name.as_deref().unwrap_or("what the assistant did");
        let (file, w) = spec(title, &tabs);
        let mut head = format!(
            "steps {first}–{last} as a Playwright test ({} tab{}); `since: {}` exports what comes next",
            tabs.len(),
            if tabs.len() == 1 { "" } else { "s" },
            last + 1
        );
        let mut written_to = None;
        if let Some(path) = &p.path {
            let root = std::env::current_dir().map_err(|e| {
                CallError::new(code::INTERNAL, format!("no working directory to write into: {e}"))
            })?;
            let at = write(&root, path, &file)?;
            head.push_str(&format!("; written to {}", at.display()));
            written_to = Some(at.display().to_string());
        }
        if !w.secrets.is_empty() {
            head.push_str(&format!(
                "; set {} in the environment to run it (password fields)",
                w.secrets.join(", ")
            ));
        }
        if dropped > 0 && since <= first {
            head.push_str(&format!(
                "; the first {dropped} steps of this session are no longer kept"
            ));
        }
        for l in &w.left_out {
            head.push_str(&format!("\nnot exported: {l}"));
        }
        let text = format!("{head}\n```ts\n{file}```");
        let data = Exported {
            test: file,
            first_step: first,
            last_step: last,
            tabs: tabs.len(),
            written_to,
            secrets: w.secrets.clone(),
            not_exported: w.left_out.clone(),
        };
        Ok(Reply::new(text, data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn locators_prefer_role_and_name_and_never_an_index() {
        let f = json!({"role": "button", "name": "Try it out", "test_id": "try"});
        assert_eq!(
            locator(&f, None).unwrap(),
            "page.getByRole('button', { name: 'Try it out', exact: true })"
        );
        let f = json!({"role": null, "name": "", "test_id": "card-1", "text": "Open"});
        assert_eq!(locator(&f, None).unwrap(), "page.getByTestId('card-1')");
        let f = json!({"role": null, "name": "", "text": "It's \"here\"\n"});
        assert_eq!(
            locator(&f, None).unwrap(),
            "page.getByText('It\\'s \"here\"\\n', { exact: true })"
        );
        assert_eq!(locator(&json!({"role": null, "name": ""}), None), None);
        let cut = json!({"role": "link", "name": "A very long…"});
        assert_eq!(locator(&cut, None).unwrap(), "page.getByRole('link', { name: 'A very long' })");
    }

    #[test]
    fn secrets_are_named_for_their_field_and_paths_stay_inside() {
        assert_eq!(secret_name(&json!({"label": "Password", "type": "password"})), "PASSWORD");
        assert_eq!(secret_name(&json!({"name": "API key (live)"})), "API_KEY_LIVE");
        // Absolute paths as each system writes them.
        let (root, at, away) = match cfg!(windows) {
            true => (r"C:\work\app", r"C:\work\app\e2e\a.spec.ts", r"C:\etc\a.spec.ts"),
            false => ("/work/app", "/work/app/e2e/a.spec.ts", "/etc/a.spec.ts"),
        };
        let root = Path::new(root);
        assert!(inside(root, "e2e/a.spec.ts").is_ok());
        assert!(inside(root, at).is_ok());
        assert!(inside(root, "../a.spec.ts").is_err());
        assert!(inside(root, away).is_err());
        assert!(inside(root, "src/main.ts").is_err());
    }
}
