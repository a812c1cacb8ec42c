//! A chat web app's adapter: the CSS selectors `chat.send` and the chat observer work by
//! (specs/operations.md, "Adapters"). It travels with the call, so it is part of the wire. And
//! `chat.detect`, the generic chat detector's proposal of one for a page no adapter fits
//! (specs/operations.md, "A detected adapter").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::methods;
use crate::limits::QUICK_CALL;

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
    /// Made by the chat detector: the bubbles are found by their place at the send (the
    /// element added that holds the text sent, and the newest like it after it), so
    /// `user_message`, `assistant_message` and `generating` may be empty.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub detected: bool,
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
        let may_be_empty = |field: &str| {
            self.detected && ["user_message", "assistant_message", "generating"].contains(&field)
        };
        for (field, value) in fields.into_iter().chain(optional) {
            if value.trim().is_empty() && !may_be_empty(field) {
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

/// `chat.detect`'s params: the tab whose page to look at.
#[derive(Debug, Clone, Serialize)]
pub struct DetectChat {
    pub tab_id: i64,
}

/// The chat detector's proposal for a page: selectors for what it found (absent: nothing
/// found), whether each choice stood alone (`clear`), and why not (`notes`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Detection {
    /// The text box, or null when the page shows none.
    #[serde(default)]
    pub input: Option<String>,
    /// The send control, or `"enter"` when none stands beside the box.
    #[serde(default)]
    pub submit: Option<String>,
    /// The app's stop-generating control, when one says so (often hidden while idle).
    #[serde(default)]
    pub stop: Option<String>,
    /// Each choice stood alone: send_message_async may use it without an adapter.
    #[serde(default)]
    pub clear: bool,
    /// Why the proposal is not clear.
    #[serde(default)]
    pub notes: Vec<String>,
    /// The page's address without its fragment, and its origin.
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub origin: String,
}

impl Detection {
    /// The adapter it proposes, named `name`, for pages of the origin it was found on; None
    /// without a text box or a way to send.
    pub fn adapter(&self, name: &str) -> Option<Adapter> {
        if self.origin.is_empty() {
            return None; // not a web page: no pattern could say where it may type
        }
        let input = self.input.clone()?;
        let submit = self.submit.clone()?;
        Some(Adapter {
            name: name.to_owned(),
            matches: vec![format!("{}/*", self.origin)],
            input,
            submit,
            user_message: String::new(),
            assistant_message: String::new(),
            generating: self.stop.clone().unwrap_or_default(),
            done: None,
            stop: self.stop.clone(),
            stable_ms: default_stable_ms(),
            detected: true,
        })
    }
}

methods! {
    /// The generic chat detector's proposal for the page in a tab; reads it, types nothing.
    ChatDetect = "chat.detect": DetectChat => Detection, QUICK_CALL;
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
    fn a_detected_adapter_has_no_bubble_selectors_and_fits_its_origin() {
        let found = Detection {
            input: Some("#text-input".into()),
            submit: Some(".send".into()),
            stop: None,
            clear: true,
            notes: vec![],
            url: "http://127.0.0.1:8080/app/chat.html".into(),
            origin: "http://127.0.0.1:8080".into(),
        };
        let adapter = found.adapter("detected").unwrap();
        assert_eq!(adapter.check(), Ok(()));
        assert!(adapter.fits(&found.url));
        assert!(!adapter.fits("http://127.0.0.1:9090/app/chat.html"));
        assert_eq!((adapter.generating.as_str(), adapter.stop.as_deref()), ("", None));
        // Only a detected adapter may leave its bubbles unnamed.
        let hand_written = Adapter { detected: false, ..adapter };
        assert!(hand_written.check().unwrap_err().contains("`user_message` is empty"));
        let nothing = Detection { input: None, ..found.clone() };
        assert_eq!(nothing.adapter("detected"), None);
        let no_page = Detection { origin: String::new(), ..found };
        assert_eq!(no_page.adapter("detected"), None);
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
}
