//! Where tabwire keeps its own files, and how it keeps them private: the configuration
//! directory (adapters, worker templates, `installed.json`), the data directory (the unpacked
//! extension), the state directory (operations, saved session queues, worker logs), and files in
//! them that only the user can open. Resolved here and nowhere else: install and doctor, the
//! bridge and every feature read the same directories. (The runtime directory of the sockets is
//! [`crate::runtime_dir`].)
//!
//! These hold what the user asked of chat sites, what workers printed, what sessions told each
//! other: every directory is 0700 and every file 0600, checked on every open (not only when
//! created), and written whole (temp file + rename) so a reader never sees half of one.

use std::ffi::OsString;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use directories::BaseDirs;

/// `$TABWIRE_CONFIG_DIR`, else the OS's configuration directory (`~/.config/tabwire`).
pub fn config_dir() -> PathBuf {
    Dirs::from_process().config
}

/// The state directory: `$TABWIRE_STATE_DIR`, else the OS's (`~/.local/state/tabwire` on
/// Linux, the local data directory elsewhere).
pub fn state_dir() -> PathBuf {
    Dirs::from_process().state
}

/// tabwire's own directories: each from its variable when set and not empty, else the OS's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dirs {
    /// `$TABWIRE_CONFIG_DIR`, else `~/.config/tabwire` on Linux: `installed.json`, chat
    /// adapters, worker templates.
    pub config: PathBuf,
    /// `$TABWIRE_DATA_DIR`, else `~/.local/share/tabwire` on Linux, `%LOCALAPPDATA%\tabwire` on
    /// Windows: the unpacked extension (and on Windows the native-host manifest).
    pub data: PathBuf,
    /// `$TABWIRE_STATE_DIR`, else `~/.local/state/tabwire` on Linux (the local data directory
    /// elsewhere): operations, saved session queues, worker logs.
    pub state: PathBuf,
}

impl Dirs {
    /// The directories for this process's environment. Never fails: with no home directory
    /// they fall back to folders under the temporary directory.
    pub fn from_process() -> Dirs {
        Dirs::resolve(var, directories::BaseDirs::new().as_ref())
    }

    /// The directories, given how to read a variable and the OS's base directories.
    pub fn resolve(var: impl Fn(&str) -> Option<OsString>, base: Option<&BaseDirs>) -> Dirs {
        let pick = |name: &str, os: Option<&Path>, fallback: &str| match var(name) {
            Some(dir) => PathBuf::from(dir),
            None => match os {
                Some(dir) => dir.join("tabwire"),
                None => std::env::temp_dir().join(fallback),
            },
        };
        let state = base.map(|b| b.state_dir().unwrap_or(b.data_local_dir()));
        Dirs {
            config: pick("TABWIRE_CONFIG_DIR", base.map(BaseDirs::config_dir), "tabwire-config"),
            // The local one: on Windows `%LOCALAPPDATA%`, not the roaming `%APPDATA%` that
            // would copy the unpacked extension to every machine; the same folder elsewhere.
            data: pick("TABWIRE_DATA_DIR", base.map(BaseDirs::data_local_dir), "tabwire-data"),
            state: pick("TABWIRE_STATE_DIR", state, "tabwire-state"),
        }
    }
}

/// A variable of this process, when set and not empty: an empty `TABWIRE_STATE_DIR=` is unset.
pub fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// Create `dir` (and its parents) with mode 0700 if missing, then check it is the user's own
/// and private ([`keep_private`]).
pub fn private_dir(dir: &Path) -> io::Result<()> {
    create_private_dir(dir)?;
    keep_private(dir, 0o700)
}

/// Create `dir` and its missing parents with mode 0700.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Check that `path` (if it exists) is the user's own and that no one else may open it:
/// another owner or a symlink is an error; looser permissions are tightened to `mode`, with a
/// warning.
pub fn keep_private(path: &Path, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let meta = match fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        let uid = crate::runtime_dir::current_uid();
        if meta.uid() != uid || meta.file_type().is_symlink() {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} is not yours (owner uid {}, you are {uid}) or is a symlink: tabwire does \
                     not keep its state there. Remove it, or set TABWIRE_STATE_DIR to a \
                     directory of your own",
                    path.display(),
                    meta.uid()
                ),
            ));
        }
        if meta.mode() & 0o077 != 0 {
            tracing::warn!(
                path = %path.display(),
                was = format!("{:o}", meta.mode() & 0o777),
                "others could open it; tightened to {mode:o}"
            );
            fs::set_permissions(path, fs::Permissions::from_mode(mode))?;
        }
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
    Ok(())
}

/// Open `path` for appending (created 0600 if missing), after checking it is private.
pub fn open_private(path: &Path) -> io::Result<fs::File> {
    keep_private(path, 0o600)?;
    let mut options = fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Replace `path` with `bytes`, mode 0600, through a temporary file in the same directory and
/// a rename: readers see the old file or the new one, never half of one. No fsync: a power cut
/// may lose the last write, never tear it.
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&tmp).and_then(|mut file| file.write_all(bytes));
    if let Err(e) = written.and_then(|()| fs::rename(&tmp, path)) {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}

/// An exclusive advisory lock (`flock`) on a lock file beside the data, released when dropped
/// (closing the file releases it): writers of one file from several `tabwire mcp` processes take
/// turns at read-modify-write. Separate opens exclude each other within one process too.
/// On Windows the same with `LockFileEx`.
pub struct Lock(#[allow(dead_code)] fs::File);

impl Lock {
    /// Open (creating it, 0600) the lock file at `path` and wait for the lock.
    pub fn exclusive(path: &Path) -> io::Result<Lock> {
        let mut options = fs::OpenOptions::new();
        options.create(true).truncate(false).write(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        Self::take(options.open(path)?)
    }

    #[cfg(unix)]
    fn take(file: fs::File) -> io::Result<Lock> {
        use std::os::fd::AsRawFd;
        loop {
            // SAFETY: flock on a descriptor we own; it stays open as long as the Lock.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(Lock(file));
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Windows: `LockFileEx` on the whole file, waiting for it; released when the handle
    /// closes, and per handle as `flock` is per open.
    #[cfg(windows)]
    fn take(file: fs::File) -> io::Result<Lock> {
        use std::os::windows::io::AsRawHandle;
        use windows_sys::Win32::Storage::FileSystem::{LOCKFILE_EXCLUSIVE_LOCK, LockFileEx};
        // SAFETY: OVERLAPPED is plain data; zeroed, it names offset 0.
        let mut from_start = unsafe { std::mem::zeroed() };
        // SAFETY: a handle we own, open for writing, kept open as long as the Lock; the range
        // is every byte the file can have. A synchronous handle: the call waits for the lock.
        let ok = unsafe {
            LockFileEx(
                file.as_raw_handle() as _,
                LOCKFILE_EXCLUSIVE_LOCK,
                0,
                u32::MAX,
                u32::MAX,
                &mut from_start,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Lock(file))
    }

    #[cfg(not(any(unix, windows)))]
    fn take(file: fs::File) -> io::Result<Lock> {
        Ok(Lock(file))
    }
}

/// Nice 10 for the calling thread (Linux schedules threads one by one); elsewhere nothing.
/// Threads that only write files call it: the disk waits for the messages, not the reverse.
pub fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority on this thread's own id; failure only leaves the priority as it was.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 10);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_variable_wins_and_an_empty_one_is_unset() {
        let vars = |name: &str| match name {
            "TABWIRE_CONFIG_DIR" => Some(OsString::from("/c")),
            "TABWIRE_STATE_DIR" => Some(OsString::new()).filter(|v| !v.is_empty()),
            _ => None,
        };
        let dirs = Dirs::resolve(vars, None);
        assert_eq!(dirs.config, PathBuf::from("/c"));
        assert_eq!(dirs.state, std::env::temp_dir().join("tabwire-state"));
        assert_eq!(dirs.data, std::env::temp_dir().join("tabwire-data"));
    }

    #[cfg(unix)]
    #[test]
    fn private_files_are_written_whole_and_stay_private() {
        let dir = std::env::temp_dir().join(format!("tabwire-dirs-{}", uuid::Uuid::new_v4()));
        use std::os::unix::fs::PermissionsExt;

        let inner = dir.join("a/b");
        private_dir(&inner).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&inner), 0o700);
        let file = inner.join("x.json");
        write_private(&file, b"one").unwrap();
        write_private(&file, b"two").unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"two");
        assert_eq!(mode(&file), 0o600);
        assert_eq!(fs::read_dir(&inner).unwrap().count(), 1, "no temporary file is left");
        fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
        open_private(&file).unwrap();
        assert_eq!(mode(&file), 0o600, "tightened when opened again");
        let _ = fs::remove_dir_all(dir);
    }
}
