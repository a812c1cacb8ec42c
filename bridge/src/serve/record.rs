//! What `tabwire serve --http` writes so that the user's own scripts and clients can find it:
//! `<runtime>/serve/<port>.json`, mode 0600 in the 0700 runtime dir, with its URL and the bearer
//! token. Removed when the server stops; a record whose process died is removed by whoever
//! lists the directory next.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tabwire_proto::runtime_dir::{self, HasPid, now_ms};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServeRecord {
    pub pid: u32,
    /// `http://127.0.0.1:<port>/mcp`
    pub url: String,
    /// What every request must send as `Authorization: Bearer <token>`.
    pub token: String,
    /// Milliseconds since the Unix epoch.
    pub started_at: u64,
}

impl HasPid for ServeRecord {
    fn pid(&self) -> u32 {
        self.pid
    }
}

/// Where the servers' records live.
pub fn dir(runtime_dir: &Path) -> PathBuf {
    runtime_dir.join("serve")
}

/// The servers running now.
pub fn live(runtime_dir: &Path) -> Vec<ServeRecord> {
    runtime_dir::live_records::<ServeRecord>(&dir(runtime_dir))
        .into_iter()
        .map(|(_, r)| r)
        .collect()
}

/// A written record; dropping it removes the file.
pub struct Written {
    pub path: PathBuf,
}

impl ServeRecord {
    pub fn new(url: String, token: String) -> ServeRecord {
        ServeRecord { pid: std::process::id(), url, token, started_at: now_ms() }
    }

    /// Write it as `<runtime>/serve/<port>.json`.
    pub fn write(&self, runtime_dir: &Path, port: u16) -> anyhow::Result<Written> {
        let dir = dir(runtime_dir);
        runtime_dir::ensure_private_dir(&dir)?;
        let path = dir.join(format!("{port}.json"));
        runtime_dir::write_record(&path, self)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        Ok(Written { path })
    }
}

impl Drop for Written {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
