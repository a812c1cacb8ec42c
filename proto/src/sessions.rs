//! Finding sessions by the records they write beside their sockets
//! (`<runtime>/sessions/<id>.json`; the record's type is the runtime directory's layout,
//! [`crate::runtime_dir`]), and the variables that name a session and a worker to the processes
//! started within them. Dead sessions' records are removed by whoever lists them next.
//!
//! Below every feature: the session itself, the operations (is an operation's owner still
//! running?) and the workers (what their processes are told) all read them.

use std::path::{Path, PathBuf};

use crate::runtime_dir::{SessionRecord, endpoint, live_records, sessions_dir};

/// The variable that names a session to the processes started within it.
pub const SESSION_ENV: &str = "TABWIRE_SESSION_ID";
/// A worker's own id, in its environment: the session it runs knows it is a worker.
pub const WORKER_ENV: &str = "TABWIRE_WORKER_ID";

/// The longest session id accepted: it names files.
const MAX_ID_LEN: usize = 64;

/// Where session `id` keeps its socket and record.
pub fn paths(runtime_dir: &Path, id: &str) -> (PathBuf, PathBuf) {
    let dir = sessions_dir(runtime_dir);
    (endpoint(&dir, id), dir.join(format!("{id}.json")))
}

/// The live sessions, by id (records of dead ones are removed on the way).
pub fn live_sessions(runtime_dir: &Path) -> Vec<SessionRecord> {
    live_records::<SessionRecord>(&sessions_dir(runtime_dir)).into_iter().map(|(_, r)| r).collect()
}

/// The live session `id`, if there is one.
pub fn find(runtime_dir: &Path, id: &str) -> Option<SessionRecord> {
    check_id(id).ok()?;
    live_sessions(runtime_dir).into_iter().find(|r| r.session_id == id)
}

/// A session id names files: letters, digits, `.`, `_`, `-`, at most 64, not starting with `.`.
pub fn check_id(id: &str) -> Result<(), String> {
    let ok = !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && !id.starts_with('.')
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{id:?} is not a session id: use letters, digits, '.', '_' and '-' (at most \
             {MAX_ID_LEN}, not starting with '.'), or leave TABWIRE_SESSION_ID unset for a new one"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::check_id;

    #[test]
    fn session_ids_are_safe_file_names() {
        assert!(check_id("7d1c2a9e-0c51-4c8e-9d6f-3b0b1a2c4d5e").is_ok());
        assert!(check_id("build_2.main").is_ok());
        for bad in ["", "../x", "a/b", ".hidden", "sp ace", &"x".repeat(65)] {
            assert!(check_id(bad).is_err(), "{bad:?}");
        }
    }
}
