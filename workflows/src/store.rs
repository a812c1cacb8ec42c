//! Where a session's state lives: `<project>/.collab/<session>/collab-state.json`, beside what
//! the skills write for that session, so a project carries its sessions with it.
//!
//! Several bridges (two assistants in one project, a restarted one) may work on one session.
//! Every change is a read-modify-write under an exclusive `flock` on `collab-state.lock`, and the
//! file is replaced atomically (temp file + rename, 0600): no reader sees half a file, no writer
//! loses another's change, and `revision` counts every change whoever made it.
//!
//! `project` and `session` come from the assistant, so they are the way a path traversal would
//! come: `project` must be an absolute path to an existing directory, `session` a plain name
//! (no `/`, no `..`, not hidden), and neither `.collab` nor the session's directory nor the
//! file may be a symlink or another user's. A file that is not a state tabwire can read is moved
//! aside with an error that says so — never silently replaced by a fresh one.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use tabwire_proto::runtime_dir::now_ms;
use tabwire_proto::wire::code;

use super::CORRUPT_STATE;
use super::graph::plain_name;
use super::limits::MAX_STATE_FILE;
use super::state::SessionState;
use tabwire_link::error::CallError;
use tabwire_proto::dirs::{self, Lock};

const DIR: &str = ".collab";
const FILE: &str = "collab-state.json";
const LOCK: &str = "collab-state.lock";

/// One session of one project, its paths checked.
#[derive(Debug, Clone)]
pub struct Place {
    /// The project's directory, canonical (symlinks and `..` resolved).
    pub project: PathBuf,
    pub session: String,
    dir: PathBuf,
}

impl Place {
    /// Check `project` and `session` as the assistant gave them.
    pub fn resolve(project: &str, session: &str) -> Result<Place, CallError> {
        plain_name(session).map_err(|why| {
            bad(format!(
                "`session`: {why}. The session's state is kept under <project>/.collab/<session>"
            ))
        })?;
        let given = Path::new(project);
        if project.trim().is_empty() || !given.is_absolute() {
            return Err(bad(format!(
                "`project` must be the absolute path of the project's directory, got {project:?}"
            )));
        }
        let canonical = match fs::canonicalize(given) {
            Ok(path) if path.is_dir() => path,
            Ok(_) => return Err(bad(format!("`project`: {project} is not a directory"))),
            Err(e) => {
                return Err(bad(format!(
                    "`project`: {project} is not an existing directory ({e})"
                )));
            }
        };
        let dir = canonical.join(DIR).join(session);
        Ok(Place { project: canonical, session: session.to_owned(), dir })
    }

    pub fn file(&self) -> PathBuf {
        self.dir.join(FILE)
    }

    /// The session's state; `None` when no workflow was started in it. Creates nothing.
    pub fn read(&self) -> Result<Option<SessionState>, CallError> {
        if !self.dir.exists() {
            return Ok(None);
        }
        self.check_dirs()?;
        let _lock = self.lock()?;
        self.load()
    }

    /// Read the state, let `change` make the next one (or refuse), and write it — all under the
    /// lock, so no other bridge's change falls in between. The new state gets the next
    /// revision and the time.
    pub fn change<T>(
        &self,
        change: impl FnOnce(Option<SessionState>) -> Result<(SessionState, T), CallError>,
    ) -> Result<(SessionState, T), CallError> {
        self.check_dirs()?;
        dirs::create_private_dir(&self.dir).map_err(|e| self.io("create", &self.dir, e))?;
        let _lock = self.lock()?;
        let before = self.load()?;
        let revision = before.as_ref().map_or(0, |s| s.revision);
        let (mut after, extra) = change(before)?;
        after.revision = revision.max(after.revision) + 1;
        after.last_activity = now_ms();
        let text = serde_json::to_vec_pretty(&after)
            .map_err(|e| CallError::new(code::INTERNAL, format!("cannot encode the state: {e}")))?;
        dirs::write_private(&self.file(), &text).map_err(|e| self.io("write", &self.file(), e))?;
        Ok((after, extra))
    }

    /// Neither `.collab` nor the session's directory may lead elsewhere.
    fn check_dirs(&self) -> Result<(), CallError> {
        self.private(&self.project.join(DIR), 0o700)?;
        self.private(&self.dir, 0o700)
    }

    fn lock(&self) -> Result<Lock, CallError> {
        let path = self.dir.join(LOCK);
        self.private(&path, 0o600)?;
        Lock::exclusive(&path).map_err(|e| self.io("lock", &path, e))
    }

    fn load(&self) -> Result<Option<SessionState>, CallError> {
        let file = self.file();
        self.private(&file, 0o600)?;
        let bytes = match fs::metadata(&file) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.io("read", &file, e)),
            Ok(meta) if meta.len() > MAX_STATE_FILE => {
                let why =
                    format!("it is {} bytes, larger than any state tabwire writes", meta.len());
                return Err(self.corrupt(&why));
            }
            Ok(_) => fs::read(&file).map_err(|e| self.io("read", &file, e))?,
        };
        match serde_json::from_slice::<SessionState>(&bytes) {
            Ok(state) => Ok(Some(state)),
            Err(e) => Err(self.corrupt(&e.to_string())),
        }
    }

    /// Move the unreadable file aside and say what happened and what to do.
    fn corrupt(&self, why: &str) -> CallError {
        let file = self.file();
        let mut aside = file.clone().into_os_string();
        aside.push(format!(".corrupt-{}", now_ms()));
        let aside = PathBuf::from(aside);
        if let Err(e) = fs::rename(&file, &aside) {
            return self.io("move aside", &file, e);
        }
        tracing::warn!(file = %file.display(), moved_to = %aside.display(), "a workflow state that cannot be read ({why})");
        CallError::new(
            CORRUPT_STATE,
            format!(
                "{} is not a workflow state tabwire can read ({why}); it was moved to {} and \
                 nothing else was changed. start_workflow starts session {:?} afresh; to go on \
                 from the old state, repair that file and move it back",
                file.display(),
                aside.display(),
                self.session
            ),
        )
    }

    /// `path`, if it exists, must be the user's own and not a symlink; tightened to `mode`.
    fn private(&self, path: &Path, mode: u32) -> Result<(), CallError> {
        dirs::keep_private(path, mode).map_err(|e| match e.kind() {
            io::ErrorKind::PermissionDenied => bad(format!(
                "{} is a symlink or not yours: tabwire does not write a workflow state through \
                 it. Remove it, or use another session name",
                path.display()
            )),
            _ => self.io("check", path, e),
        })
    }

    fn io(&self, what: &str, path: &Path, e: io::Error) -> CallError {
        CallError::new(
            code::INTERNAL,
            format!("cannot {what} {} ({e}); the session's state is kept there", path.display()),
        )
    }
}

fn bad(message: String) -> CallError {
    CallError::new(code::BAD_REQUEST, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::built_in;

    fn project() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tabwire-project-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn fresh(_: Option<SessionState>) -> Result<(SessionState, ()), CallError> {
        let mut s = SessionState::new(&built_in("collab").unwrap(), 1);
        s.state = "collab-start".into();
        Ok((s, ()))
    }

    #[test]
    fn sessions_and_projects_that_would_lead_elsewhere_are_refused() {
        let p = project();
        let root = p.to_str().unwrap();
        for session in ["..", "../x", "a/b", ".hidden", "", "x\0y", &"s".repeat(65)] {
            let err = Place::resolve(root, session).unwrap_err();
            assert!(err.to_string().starts_with("bad_request: `session`: "), "{session:?}: {err}");
        }
        for project in ["relative/dir", "", "/no/such/dir/anywhere"] {
            let err = Place::resolve(project, "s").unwrap_err();
            assert!(err.to_string().starts_with("bad_request: `project`"), "{project:?}: {err}");
        }
        let file = p.join("file");
        fs::write(&file, "x").unwrap();
        let err = Place::resolve(file.to_str().unwrap(), "s").unwrap_err();
        assert!(err.to_string().contains("is not a directory"), "{err}");
        let dotted = format!("{root}/sub/..");
        fs::create_dir(p.join("sub")).unwrap();
        assert_eq!(Place::resolve(&dotted, "s").unwrap().project, fs::canonicalize(&p).unwrap());
        let _ = fs::remove_dir_all(p);
    }

    // Unix-only: it reads the files' modes (Windows has none).
    #[cfg(unix)]
    #[test]
    fn the_state_is_written_private_with_a_revision_per_change() {
        use std::os::unix::fs::PermissionsExt;
        let p = project();
        let place = Place::resolve(p.to_str().unwrap(), "s1").unwrap();
        assert_eq!(place.read().unwrap(), None);
        assert!(!p.join(".collab").exists(), "reading creates nothing");
        let (first, ()) = place.change(fresh).unwrap();
        let (second, ()) = place.change(|s| Ok((s.unwrap(), ()))).unwrap();
        assert_eq!((first.revision, second.revision), (1, 2));
        assert_eq!(place.read().unwrap(), Some(second));
        let file = p.join(".collab/s1/collab-state.json");
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&file), mode(&p.join(".collab/s1"))), (0o600, 0o700));
        let _ = fs::remove_dir_all(p);
    }

    #[test]
    fn a_corrupt_file_is_moved_aside_with_a_clear_error_never_reset() {
        let p = project();
        let place = Place::resolve(p.to_str().unwrap(), "s").unwrap();
        place.change(fresh).unwrap();
        fs::write(place.file(), b"{\"workflow\": \"collab\", \"sta").unwrap();
        let err = place.change(|s| Ok((s.expect("never called with a state"), ()))).unwrap_err();
        let said = err.to_string();
        assert!(
            said.starts_with("corrupt_state: ")
                && said.contains("it was moved to")
                && said.contains("start_workflow"),
            "{said}"
        );
        assert!(!place.file().exists());
        let aside: Vec<_> = fs::read_dir(p.join(".collab/s"))
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.starts_with("collab-state.json.corrupt-"))
            .collect();
        assert_eq!(aside.len(), 1);
        assert_eq!(
            place.read().unwrap(),
            None,
            "the session is empty now, not reset behind the user's back"
        );
        let _ = fs::remove_dir_all(p);
    }

    // Unix-only: making a symlink on Windows takes a privilege a user usually lacks.
    #[cfg(unix)]
    #[test]
    fn a_symlinked_session_directory_is_refused() {
        let p = project();
        let elsewhere = project();
        fs::create_dir_all(p.join(".collab")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, p.join(".collab/s")).unwrap();
        let place = Place::resolve(p.to_str().unwrap(), "s").unwrap();
        let err = place.change(fresh).unwrap_err().to_string();
        assert!(
            err.starts_with("bad_request: ") && err.contains("is a symlink or not yours"),
            "{err}"
        );
        assert_eq!(
            fs::read_dir(&elsewhere).unwrap().count(),
            0,
            "nothing written through the link"
        );
        let _ = fs::remove_dir_all(p);
        let _ = fs::remove_dir_all(elsewhere);
    }

    #[test]
    fn concurrent_changes_lose_nothing() {
        let p = project();
        let place = Place::resolve(p.to_str().unwrap(), "s").unwrap();
        place.change(fresh).unwrap();
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let place = place.clone();
                std::thread::spawn(move || {
                    for _ in 0..25 {
                        place
                            .change(|s| {
                                let mut s = s.unwrap();
                                s.documented_items += 1;
                                Ok((s, ()))
                            })
                            .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let s = place.read().unwrap().unwrap();
        assert_eq!((s.documented_items, s.revision), (100, 101));
        let _ = fs::remove_dir_all(p);
    }
}
