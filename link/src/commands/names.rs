//! Page tools' names: `<site>_<tag>_<app>__<command>`, e.g.
//! `127-0-0-1_k4d2xq_colours__change_model_color`. `site` is the page's host (anything but
//! `[A-Za-z0-9]` written `-`, cut to 16 characters) and `tag` six characters of a hash of its
//! whole origin (scheme, host and port), so a name is bound to one origin: the same in every
//! session and after every reload, and never another origin's — a page can declare any app and
//! command, but not another site's host and origin. Names are what every MCP client accepts
//! (`[A-Za-z0-9_-]`, at most 64 characters: the strictest client's rule). A tool is one (origin,
//! app, command): two tabs of one app share it (the call names the tab). Should two origins
//! still come to one name (their hosts alike and their tags equal by chance or by design), it is
//! given to neither: no page can take a name another origin has.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::{DeclaredCommand, PageCommands};

/// The most characters of a tool name.
const MAX: usize = 64;
/// At most this many characters of the site's host in the name.
const SITE: usize = 16;
/// The app keeps at least this many characters when the command needs the room.
const APP: usize = 12;

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

/// The page tools of `pages` (only commands declared with a description or schema), each named
/// for its origin. `reserved` names (the built-in tools) are never given.
pub fn tools(pages: &[(String, PageCommands)], reserved: impl Fn(&str) -> bool) -> Vec<PageTool> {
    let mut grouped: BTreeMap<Key, PageTool> = BTreeMap::new();
    for (browser, page) in pages {
        let Some(origin) = page.origin.clone() else { continue };
        let app = page.app.clone().unwrap_or_else(|| host_of(&origin).to_owned());
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
    // Within one origin, names its own app and command names made alike get `_2`, `_3`, … in
    // the order of the names declared: the page only ever competes with itself.
    let mut given: HashSet<(String, String)> = HashSet::new(); // (origin, name)
    for ((origin, app, command), tool) in grouped.iter_mut() {
        let base = tool_name(origin, app, command);
        let taken = |n: &str| reserved(n) || given.contains(&(origin.clone(), n.to_owned()));
        tool.name = std::iter::once(base.clone())
            .chain((2..).map(|i| suffixed(&base, i)))
            .find(|n| !taken(n))
            .expect("some suffix is free");
        given.insert((origin.clone(), tool.name.clone()));
    }
    let mut origins: HashMap<&str, HashSet<&str>> = HashMap::new();
    for (origin, name) in &given {
        origins.entry(name).or_default().insert(origin);
    }
    let shared: HashSet<String> =
        origins.into_iter().filter(|(_, o)| o.len() > 1).map(|(n, _)| n.to_owned()).collect();
    grouped
        .into_values()
        .filter(|tool| {
            let alone = !shared.contains(&tool.name);
            if !alone {
                tracing::warn!(tool = %tool.name, origin = %tool.origin,
                    "two origins come to one page tool name: it is given to neither");
            }
            alone
        })
        .collect()
}

/// The name of `origin`'s `app`'s `command` (before any `_2` within the origin).
pub fn tool_name(origin: &str, app: &str, command: &str) -> String {
    let site: String = host_of(origin)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .take(SITE)
        .collect();
    let prefix = format!("{site}_{}_", origin_tag(origin));
    let (app, command) = (sanitise(app), sanitise(command));
    let room = MAX - prefix.len() - 2;
    let app_len = app.len().min(room.saturating_sub(command.len()).max(APP));
    let command_len = command.len().min(room - app_len);
    format!("{prefix}{}__{}", &app[..app_len], &command[..command_len])
}

/// Six characters (`[a-z2-7]`, 30 bits) of the 64-bit FNV-1a hash of `origin`: the part of a
/// tool's name that tells apart origins of one host (other ports, http and https). Fixed: a
/// name must stay the same from one version of tabwire to the next.
pub fn origin_tag(origin: &str) -> String {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let hash = origin
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    (0..6).map(|i| char::from(ALPHABET[(hash >> (i * 5)) as usize & 31])).collect()
}

/// `base` with `_i` at its end, cut so that it stays within [`MAX`] characters.
fn suffixed(base: &str, i: usize) -> String {
    let suffix = format!("_{i}");
    format!("{}{suffix}", &base[..base.len().min(MAX - suffix.len())])
}

/// `[A-Za-z0-9_-]` only (anything else becomes `_`), never empty.
fn sanitise(part: &str) -> String {
    let clean: String = part
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .take(MAX)
        .collect();
    if clean.is_empty() { "_".into() } else { clean }
}

/// `127.0.0.1` of `http://127.0.0.1:5173`: the app's name when the page gave none.
fn host_of(origin: &str) -> &str {
    let rest = origin.split_once("://").map_or(origin, |(_, r)| r);
    if let Some(v6) = rest.strip_prefix('[') {
        return v6.split(']').next().unwrap_or_default();
    }
    rest.split(':').next().unwrap_or_default()
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
    fn names_are_the_site_its_origin_tag_the_app_then_the_command() {
        let origin = "http://127.0.0.1:5173";
        let tools = tools(&[page(1, origin, None, &["get color!"])], |_| false);
        let tag = origin_tag(origin);
        assert_eq!(names(&tools), [format!("127-0-0-1_{tag}_127_0_0_1__get_color_")]);
        // The tag is fixed: names stay the same from one session and version to the next.
        assert_eq!(origin_tag("http://127.0.0.1:8080"), origin_tag("http://127.0.0.1:8080"));
        assert_eq!(origin_tag("https://claude.ai"), "e5g3dl");
        let long = "x".repeat(200);
        let tools = tools_of(&[page(1, &format!("https://{long}.com"), Some(&long), &[&long])]);
        assert_eq!(tools[0].name.len(), 64, "{}", tools[0].name);
        assert!(tools[0].name.contains("_xxxxxxxxxxxx__"), "the app keeps 12: {}", tools[0].name);
        let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        assert!(tools[0].name.chars().all(ok), "{}", tools[0].name);
    }

    fn tools_of(pages: &[(String, PageCommands)]) -> Vec<PageTool> {
        tools(pages, |_| false)
    }

    #[test]
    fn two_tabs_of_one_app_share_a_tool_and_another_origin_never_takes_its_name() {
        let real = tools_of(&[page(1, "http://a", Some("shop"), &["buy"])]);
        // Another origin came first, then the real shop opened twice: its name is the same.
        let pages = [
            page(3, "http://evil", Some("shop"), &["buy"]),
            page(1, "http://a", Some("shop"), &["buy"]),
            page(2, "http://a", Some("shop"), &["buy"]),
            page(4, "https://a", Some("shop"), &["buy"]),
        ];
        let all = tools_of(&pages);
        let of = |origin: &str| all.iter().find(|t| t.origin == origin).unwrap();
        assert_eq!(of("http://a").name, real[0].name);
        assert_eq!(of("http://a").tabs.len(), 2);
        assert!(of("http://evil").name.starts_with("evil_"), "{}", of("http://evil").name);
        assert_ne!(of("https://a").name, real[0].name, "another scheme is another origin");
        assert_eq!(all.len(), 3);
    }

    #[test]
    fn a_name_two_origins_come_to_is_given_to_neither_and_built_ins_are_never_taken() {
        // Names alike within one origin get _2; built-in names are skipped the same way.
        let origin = "http://x";
        let own = tools_of(&[page(5, origin, Some("a"), &["b c", "b_c"])]);
        let base = tool_name(origin, "a", "b_c");
        assert_eq!(names(&own), [base.clone(), format!("{base}_2")]);
        let built_in = tools(&[page(5, origin, Some("a"), &["b_c"])], |n| n == base);
        assert_eq!(names(&built_in), [format!("{base}_2")]);
        // Two origins whose names meet: one host label, and tags equal (a birthday search).
        let (one, two) = colliding();
        assert_eq!(tool_name(&one, "s", "c"), tool_name(&two, "s", "c"));
        let pages = [page(1, &one, Some("s"), &["c", "d"]), page(2, &two, Some("s"), &["c"])];
        assert_eq!(names(&tools_of(&pages)), [tool_name(&one, "s", "d")]);
    }

    /// Two origins `https://sixteen-letters.N.example` with one tag (30 bits: ~2^15 tries).
    fn colliding() -> (String, String) {
        let mut seen = HashMap::new();
        for i in 0u32.. {
            let origin = format!("https://sixteen-letters.{i}.example");
            if let Some(first) = seen.insert(origin_tag(&origin), origin.clone()) {
                return (first, origin);
            }
        }
        unreachable!()
    }
}
