//! The browsers this bridge is attached to: finding their hosts, talking to each, and naming them.
//!
//! Nothing here knows the core: the core holds a `Registry`, and events go to the inbox the
//! registry was given.

mod connection;
mod refusals;
mod registry;
mod watcher;

pub use crate::identity::{BrowserInfo, matches};
pub use connection::Connection;
pub use registry::Registry;
pub(crate) use watcher::attach_all;

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The browsers sit below the core: the core holds a registry, never the other way round,
    /// and the inbox they feed knows neither the core nor them (both name a browser by
    /// `identity.rs`, below them). (That nothing in this crate knows a feature above it, the
    /// compiler keeps: they are other crates.)
    #[test]
    fn nothing_under_browser_or_in_the_inbox_imports_the_core() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files: Vec<_> = std::fs::read_dir(src.join("browser"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|e| e == "rs"))
            .collect();
        assert!(files.len() >= 4, "browser/ has its files: {files:?}");
        let inbox = src.join("inbox.rs");
        files.push(inbox.clone());
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let upward: &[&str] =
                if file == inbox { &["crate::core", "crate::browser"] } else { &["crate::core"] };
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or_default().trim();
                let import = code.starts_with("use ") || code.contains(" use ");
                for upward in upward {
                    assert!(
                        !(import && code.contains(upward) || code.contains(&format!("{upward}::"))),
                        "{}:{}: `{upward}` imported below it: {line}",
                        file.display(),
                        n + 1
                    );
                }
            }
        }
    }
}
