//! `downloads.*`: the browser's downloads started by pages of allowed sites, those of the
//! calling session and the user's (`extension/worker/downloads.js`, through
//! `chrome.downloads`). The answer is the `downloads` tool's structured result too, with what
//! the bridge adds from the disk.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::methods;

/// `downloads.list`'s params.
#[derive(Debug, Clone, Serialize)]
pub struct DownloadsArgs {
    pub id: Option<i64>,
    /// How long to wait for `id` (else every listed download) to stop being in progress.
    pub wait_ms: u64,
}

/// One download, as Chrome records it; `sha256` and `size` are the file's on disk.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Download {
    pub id: i64,
    /// The file's name, without its folders (null when `withheld`).
    pub filename: Option<String>,
    /// Where Chrome wrote it (null when `withheld`).
    pub path: Option<String>,
    /// Where the bytes came from: an origin, or `blob:` / `data:`.
    pub url_origin: String,
    /// The path of the URL they came from (no query); null for `blob:` / `data:`.
    #[serde(default)]
    pub url_path: Option<String>,
    /// The allowed site whose page started it.
    pub started_by: String,
    /// The tab whose tabwire action started it, when one was running.
    pub tab_id: Option<i64>,
    /// `in_progress`, `interrupted` or `complete`; `withheld` when the bytes came from a site
    /// not allowed (`withheld` says why).
    pub state: String,
    /// Why it was interrupted.
    pub error: Option<String>,
    pub mime: Option<String>,
    /// Bytes received so far (null when `withheld`).
    pub bytes: Option<u64>,
    pub total_bytes: Option<u64>,
    /// When it started (ISO 8601).
    pub started: String,
    /// Why only the source is told: the bytes came from a site the user has not allowed (an
    /// allowed page's link to it carried that site's cookies). No name, size, hash or text then.
    #[serde(default)]
    pub withheld: Option<String>,
    /// Of a complete download: the file's size on disk…
    #[serde(default)]
    pub size: Option<u64>,
    /// …and its SHA-256 (hex), read from disk by tabwire; null when the file is gone.
    #[serde(default)]
    pub sha256: Option<String>,
    /// Only when asked (`read_text`): the file's text, read from disk by tabwire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<DownloadText>,
}

/// A download's content as text, up to a budget (`downloads {id, read_text}`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DownloadText {
    /// The file's text from its start, at most `max_bytes` bytes of UTF-8 (cut before a
    /// character that would not fit); null when the file is not text (`why`).
    pub text: Option<String>,
    /// How many bytes of the file `text` holds.
    pub bytes_read: u64,
    /// Whether the file holds more than `text`.
    pub truncated: bool,
    /// Why there is no text: not complete, gone, or not UTF-8 text.
    pub why: Option<String>,
}

/// What `downloads.list` answers.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Downloads {
    /// Newest first.
    pub downloads: Vec<Download>,
    /// Whether one asked for is still in progress (the wait ran out).
    pub in_progress: bool,
}

methods! {
    /// The downloads started by pages of allowed sites, of the calling session or the user;
    /// waits for them to finish if asked.
    DownloadsList = "downloads.list": DownloadsArgs => Downloads, crate::limits::QUICK_CALL;
}
