//! Site adapters: how to find the text box, the send button and the conversation's bubbles of
//! one chat web app, as plain JSON selectors.
//!
//! The built-in ones (claude.ai, chatgpt.com, gemini.google.com) live in `adapters/*.json`
//! beside this file, embedded here — their one place. Each `chat.send` carries the whole
//! adapter to the extension, which therefore keeps none of its own. The built-in selectors are
//! best-effort: those sites change their markup, and they cannot be tested offline. A user
//! fixes or adds an adapter by dropping a file into `$TABWIRE_CONFIG_DIR/adapters/`, or by
//! passing one whole in the call.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

const BUILT_IN: [(&str, &str); 3] = [
    ("claude.json", include_str!("adapters/claude.json")),
    ("chatgpt.json", include_str!("adapters/chatgpt.json")),
    ("gemini.json", include_str!("adapters/gemini.json")),
];

/// How tabwire talks to one chat web app. Every selector is a CSS selector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Adapter {
    /// A name for it, e.g. `claude.ai`.
    pub name: String,
    /// URL patterns of the pages it works on; `*` matches any run of characters, e.g.
    /// `https://claude.ai/*`.
    #[serde(default)]
    pub matches: Vec<String>,
    /// The text box: a textarea, an input or a contenteditable element.
    pub input: String,
    /// The send button, or `"enter"` to press Enter in the text box instead.
    pub submit: String,
    /// Each of the user's messages in the conversation.
    pub user_message: String,
    /// Each of the assistant's answers in the conversation.
    pub assistant_message: String,
    /// Present while the answer is being written (a stop button, a typing indicator).
    pub generating: String,
    /// Optional: appears when an answer is finished (e.g. its copy button).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done: Option<String>,
    /// Optional: the app's stop-generating control. cancel_operation clicks it, so the app
    /// really stops; an answer stopped with it (by cancel_operation or by the user) ends
    /// `stopped`, not `completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
    /// Quiet time, in ms, after `generating` disappears that counts as finished. Default 1000.
    #[serde(default = "default_stable_ms")]
    pub stable_ms: u64,
}

fn default_stable_ms() -> u64 {
    1000
}

impl Adapter {
    /// Parse and check one adapter from JSON text.
    pub fn parse(text: &str) -> Result<Adapter, String> {
        let adapter: Adapter = serde_json::from_str(text).map_err(|e| e.to_string())?;
        adapter.check()?;
        Ok(adapter)
    }

    /// What serde cannot check: no empty selector, a sane quiet time.
    pub fn check(&self) -> Result<(), String> {
        let name = &self.name;
        if name.trim().is_empty() {
            return Err("`name` is empty".into());
        }
        let fields = [
            ("input", &self.input),
            ("submit", &self.submit),
            ("user_message", &self.user_message),
            ("assistant_message", &self.assistant_message),
            ("generating", &self.generating),
        ];
        let optional = self.done.iter().map(|d| ("done", d));
        let optional = optional.chain(self.stop.iter().map(|s| ("stop", s)));
        for (field, value) in fields.into_iter().chain(optional) {
            if value.trim().is_empty() {
                return Err(format!("adapter {name:?}: `{field}` is empty; give a CSS selector"));
            }
        }
        if self.matches.iter().all(|m| m.trim().is_empty()) {
            return Err(format!(
                "adapter {name:?} has no `matches`: give the URL patterns of the chat pages it is \
                 for (e.g. \"https://claude.ai/*\"); an adapter works only on pages they fit"
            ));
        }
        if !(50..=600_000).contains(&self.stable_ms) {
            return Err(format!(
                "adapter {name:?}: `stable_ms` is {}; give a quiet time from 50 to 600000 ms",
                self.stable_ms
            ));
        }
        Ok(())
    }

    /// Whether one of `matches` fits `url`.
    pub fn fits(&self, url: &str) -> bool {
        self.matches.iter().any(|pattern| glob(pattern, url))
    }
}

/// Where an adapter came from.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Loaded {
    pub adapter: Adapter,
    /// `built-in`, or the file it was read from.
    pub source: String,
}

/// A file in the adapters directory that could not be used.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Problem {
    pub path: String,
    pub error: String,
}

/// Everything loaded: user adapters first (they win over a built-in of the same name), then
/// the built-in ones.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Catalog {
    pub adapters: Vec<Loaded>,
    /// Files in the adapters directory that were skipped, and why.
    pub problems: Vec<Problem>,
    /// The directory user adapters are read from.
    pub directory: String,
}

impl Catalog {
    /// The built-in adapters plus `<config_dir>/adapters/*.json`, read now (so an edited file
    /// counts at the next call, without a restart).
    pub fn load(config_dir: &Path) -> Catalog {
        let dir = config_dir.join("adapters");
        let mut catalog = Catalog { directory: dir.display().to_string(), ..Catalog::default() };
        let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect(),
            Err(_) => Vec::new(), // no directory: no user adapters
        };
        files.sort();
        for path in files {
            let read = std::fs::read_to_string(&path).map_err(|e| e.to_string());
            match read.and_then(|text| Adapter::parse(&text)) {
                Ok(adapter) if catalog.named(&adapter.name).is_some() => {
                    catalog.problems.push(Problem {
                        path: path.display().to_string(),
                        error: format!("another file already defines adapter {:?}", adapter.name),
                    })
                }
                Ok(adapter) => {
                    catalog.adapters.push(Loaded { adapter, source: path.display().to_string() })
                }
                Err(error) => {
                    catalog.problems.push(Problem { path: path.display().to_string(), error })
                }
            }
        }
        for adapter in built_in() {
            if catalog.named(&adapter.name).is_none() {
                catalog.adapters.push(Loaded { adapter, source: "built-in".into() });
            }
        }
        catalog
    }

    pub fn named(&self, name: &str) -> Option<&Adapter> {
        self.adapters.iter().map(|l| &l.adapter).find(|a| a.name == name)
    }

    /// The first adapter whose `matches` fit `url`.
    pub fn for_url(&self, url: &str) -> Option<&Adapter> {
        self.adapters.iter().map(|l| &l.adapter).find(|a| a.fits(url))
    }

    pub fn names(&self) -> String {
        self.adapters.iter().map(|l| l.adapter.name.as_str()).collect::<Vec<_>>().join(", ")
    }
}

/// The adapters shipped with tabwire.
pub fn built_in() -> Vec<Adapter> {
    BUILT_IN
        .iter()
        .map(|(file, text)| {
            Adapter::parse(text).unwrap_or_else(|e| panic!("built-in adapter {file}: {e}"))
        })
        .collect()
}

/// Where user adapters live, under `adapters/` (`crate::dirs::config_dir`).
pub use crate::dirs::config_dir;

/// `*` matches any run of characters (also none); everything else matches itself.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, rest) = parts.split_first().expect("split yields one part at least");
    let Some(mut tail) = text.strip_prefix(first) else { return false };
    let Some((last, middle)) = rest.split_last() else { return tail.is_empty() };
    for part in middle {
        match tail.find(part) {
            Some(i) => tail = &tail[i + part.len()..],
            None => return false,
        }
    }
    tail.len() >= last.len() && tail.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_ins_parse_and_match_their_sites() {
        let adapters = built_in();
        let fits = |url: &str| adapters.iter().find(|a| a.fits(url)).map(|a| a.name.clone());
        assert_eq!(fits("https://claude.ai/new").as_deref(), Some("claude.ai"));
        assert_eq!(fits("https://chatgpt.com/c/123").as_deref(), Some("chatgpt.com"));
        assert_eq!(fits("https://gemini.google.com/app").as_deref(), Some("gemini.google.com"));
        assert_eq!(fits("https://example.com/"), None);
    }

    #[test]
    fn globs() {
        assert!(glob("https://claude.ai/*", "https://claude.ai/"));
        assert!(glob("http://127.0.0.1:*/*chat.html*", "http://127.0.0.1:8080/tok/chat.html?x=1"));
        assert!(!glob("http://127.0.0.1:*/*chat.html*", "http://127.0.0.1:8080/tok/app.html"));
        assert!(glob("exact", "exact"));
        assert!(!glob("exact", "exactly"));
        assert!(!glob("a*b*b", "ab"));
        assert!(glob("*", ""));
    }

    #[test]
    fn bad_adapters_say_what_is_wrong() {
        let no_input = r#"{"name":"x","submit":"enter","user_message":"a","assistant_message":"b","generating":"c"}"#;
        assert!(Adapter::parse(no_input).unwrap_err().contains("input"));
        let empty = r#"{"name":"x","input":" ","submit":"enter","user_message":"a","assistant_message":"b","generating":"c"}"#;
        assert!(Adapter::parse(empty).unwrap_err().contains("`input` is empty"));
        let extra = r#"{"name":"x","input":"i","submit":"enter","user_message":"a","assistant_message":"b","generating":"c","colour":1}"#;
        assert!(Adapter::parse(extra).unwrap_err().contains("colour"));
    }

    #[test]
    fn user_adapters_come_first_and_replace_built_ins() {
        let dir = std::env::temp_dir().join(format!("tabwire-adapters-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(dir.join("adapters")).unwrap();
        let mine = r##"{"name":"claude.ai","matches":["https://claude.ai/*"],"input":"#mine","submit":"enter","user_message":"a","assistant_message":"b","generating":"c"}"##;
        std::fs::write(dir.join("adapters/claude.json"), mine).unwrap();
        std::fs::write(dir.join("adapters/broken.json"), "{").unwrap();
        let catalog = Catalog::load(&dir);
        assert_eq!(catalog.for_url("https://claude.ai/new").unwrap().input, "#mine");
        assert_eq!(catalog.adapters.iter().filter(|l| l.adapter.name == "claude.ai").count(), 1);
        assert_eq!(catalog.adapters.len(), 3);
        assert_eq!(catalog.problems.len(), 1);
        assert!(catalog.problems[0].path.ends_with("broken.json"));
        let _ = std::fs::remove_dir_all(dir);
    }
}
