//! The downloads tool: the files pages of allowed sites downloaded, as metadata. Chrome names
//! them (`extension/worker/downloads.js`); the size and SHA-256 are read here from the disk
//! (tabwire runs as the user who owns the browser). The content never enters the reply.

use std::io::Read;
use std::time::Duration;

use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use tabwire_proto::wire::code;

use super::reply::Reply;
use super::server::TabwireServer;
use super::tabs::Target;
use crate::error::CallError;
use crate::methods::{Download, Downloads, DownloadsArgs, DownloadsList};

/// The longest `wait_secs`: five minutes.
const MAX_WAIT_SECS: u64 = 300;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct DownloadsParams {
    /// One download (else all of them, newest first).
    #[serde(default)]
    pub id: Option<i64>,
    /// Wait up to this many seconds (0 … 300, default 0) for it (else all) to finish.
    #[serde(default)]
    pub wait_secs: Option<u64>,
    #[serde(flatten)]
    pub target: Target,
}

#[tool_router(router = download_tools, vis = "pub(super)")]
impl TabwireServer {
    /// Files pages of allowed sites downloaded (e.g. after a click): path, size, MIME type,
    /// SHA-256, state. With the click's download id and wait_secs, waits for it to finish.
    #[tool(
        output_schema = schema_for_output::<Downloads>(),
        annotations(
            title = "Downloads",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn downloads(
        &self,
        Parameters(p): Parameters<DownloadsParams>,
    ) -> Result<Reply<Downloads>, CallError> {
        let secs = p.wait_secs.unwrap_or(0);
        if secs > MAX_WAIT_SECS {
            return Err(CallError::new(
                code::BAD_REQUEST,
                format!("wait_secs must be from 0 to {MAX_WAIT_SECS}; got {secs}"),
            ));
        }
        let args = DownloadsArgs { id: p.id, wait_ms: secs * 1000 };
        let browser = p.target.browser.as_deref();
        let within = Duration::from_secs(secs + 5);
        let mut got = self.core.invoke_within::<DownloadsList>(browser, &args, within).await?;
        for d in got.downloads.iter_mut().filter(|d| d.state == "complete") {
            let path = d.path.clone();
            (d.size, d.sha256) = match path {
                Some(path) => {
                    tokio::task::spawn_blocking(move || hash(&path)).await.ok().flatten().unzip()
                }
                None => (None, None),
            };
        }
        let text = summary(&got);
        Ok(Reply::new(text, got))
    }
}

/// The file's size and SHA-256 (hex), or None when it cannot be read (moved, deleted).
fn hash(path: &str) -> Option<(u64, String)> {
    let mut file = std::fs::File::open(path).ok()?;
    let mut sha = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        sha.update(&buf[..n]);
        size += n as u64;
    }
    let hex = sha.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Some((size, hex))
}

fn summary(got: &Downloads) -> String {
    if got.downloads.is_empty() {
        return "no downloads from allowed sites".into();
    }
    let line = |d: &Download| {
        let what = match (&d.sha256, d.size) {
            (Some(sha), Some(size)) => format!("{size} bytes, sha256 {sha}"),
            _ if d.state == "complete" => "the file is no longer on disk".into(),
            _ => format!(
                "{} of {} bytes",
                d.bytes,
                d.total_bytes.map_or("?".into(), |t| t.to_string())
            ),
        };
        let name = d.path.as_deref().or(d.filename.as_deref()).unwrap_or("(no name yet)");
        let error = d.error.as_deref().map(|e| format!(" ({e})")).unwrap_or_default();
        format!(
            "download {}: {}{error}, {name}, {}, {what}, from {} (started by {})",
            d.id,
            d.state,
            d.mime.as_deref().unwrap_or("unknown type"),
            d.url_origin,
            d.started_by
        )
    };
    let mut text: Vec<String> = got.downloads.iter().map(line).collect();
    if got.in_progress {
        text.push("still in progress: call downloads again with wait_secs to wait more".into());
    }
    text.join("\n")
}
