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
use serde::Serialize;
pub use tabwire_link::methods::adapter::Adapter;

const BUILT_IN: [(&str, &str); 3] = [
    ("claude.json", include_str!("adapters/claude.json")),
    ("chatgpt.json", include_str!("adapters/chatgpt.json")),
    ("gemini.json", include_str!("adapters/gemini.json")),
];

/// Where an adapter came from.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Loaded {
    pub adapter: Adapter,
    /// `built-in`, or the file it was read from.
    pub source: String,
}

pub use tabwire_link::error::Problem;

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

/// Where user adapters live, under `adapters/` (`tabwire_proto::dirs::config_dir`).
pub use tabwire_proto::dirs::config_dir;

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
