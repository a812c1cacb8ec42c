//! A chat web app's adapter: the CSS selectors `chat.send` and the chat observer work by
//! (specs/operations.md, "Adapters"). It travels with the call, so it is part of the wire.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    fn globs() {
        assert!(glob("https://claude.ai/*", "https://claude.ai/"));
        assert!(glob("http://127.0.0.1:*/*chat.html*", "http://127.0.0.1:8080/tok/chat.html?x=1"));
        assert!(!glob("http://127.0.0.1:*/*chat.html*", "http://127.0.0.1:8080/tok/app.html"));
        assert!(glob("exact", "exact"));
        assert!(!glob("exact", "exactly"));
        assert!(!glob("a*b*b", "ab"));
        assert!(glob("*", ""));
    }
}
