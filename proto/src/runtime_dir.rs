//! Where the sockets live, with which permissions, and how stale ones are cleaned up.
//!
//! Layout (see specs/protocol.md, "Sockets"):
//!
//! ```text
//! <runtime>/                 0700, owned by the user
//!   hosts/<pid>.sock         0600  one per running tabwire-host (one per browser profile)
//!   hosts/<pid>.json         0600  who that host is (HostRecord)
//!   sessions/<id>.sock       0600  one per `tabwire mcp` session
//!   sessions/<id>.json       0600  who that session is
//!   serve/<port>.json        0600  a `tabwire serve --http`: its URL and bearer token
//! ```
//!
//! `<runtime>` is `$TABWIRE_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/tabwire`, else
//! `/tmp/tabwire-<uid>`. A directory that another user owns, or that others may enter, is
//! refused: anyone who can reach the socket can drive the user's logged-in browser.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize, de::DeserializeOwned};

/// Why the runtime directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeDirError {
    #[error("cannot create or open the runtime directory {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error(
        "the runtime directory {path} belongs to uid {owner}, not to you (uid {me}); \
         remove it or set TABWIRE_RUNTIME_DIR to a directory of your own"
    )]
    WrongOwner { path: PathBuf, owner: u32, me: u32 },
    #[error(
        "the runtime directory {path} has mode {mode:04o}: other users could reach the browser \
         through it; fix it with `chmod 700 {path}`"
    )]
    TooOpen { path: PathBuf, mode: u32 },
    #[error("{path} is not a directory")]
    NotADirectory { path: PathBuf },
}

/// The runtime directory chosen by the environment (not created).
pub fn resolve() -> PathBuf {
    resolve_explained().0
}

/// [`resolve`], and why it is not the usual place when it is not: in the shared temp folder,
/// `/tmp/tabwire-<uid>` can be created first by another user. That would stop tabwire (the
/// directory is refused, never used), so everyone of this user — host, bridges, doctor — falls
/// back to the same private place in the home folder instead, and says so.
pub fn resolve_explained() -> (PathBuf, Option<String>) {
    if let Some(dir) = std::env::var_os("TABWIRE_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        return (PathBuf::from(dir), None);
    }
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        return (PathBuf::from(dir).join("tabwire"), None);
    }
    // Windows: the user's own local app data (only the user and SYSTEM may enter it); the
    // channels themselves are named pipes (`endpoint`), the folder holds their records.
    #[cfg(windows)]
    if let Some(dir) = std::env::var_os("LOCALAPPDATA").filter(|d| !d.is_empty()) {
        return (PathBuf::from(dir).join("tabwire").join("run"), None);
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    choose_shared(&std::env::temp_dir(), home.as_deref(), current_uid(), SUN_PATH)
}

/// The longest name a socket has under the runtime directory: a session's, whose id may have
/// 64 characters (`/sessions/<id>.sock`).
pub const LONGEST_SOCKET_NAME: usize = "/sessions/".len() + 64 + ".sock".len();

/// The size of `sun_path`, which holds a socket's path and a NUL: 108 bytes on Linux, 104 on
/// macOS and the BSDs.
pub const SUN_PATH: usize =
    if cfg!(any(target_os = "linux", target_os = "android")) { 108 } else { 104 };

/// Whether every socket under `root` fits in a `sun_path` of `sun_path` bytes.
pub fn sockets_fit(root: &Path, sun_path: usize) -> bool {
    root.as_os_str().len() + LONGEST_SOCKET_NAME < sun_path
}

/// In the shared temp folder `tmp`: `tabwire-<uid>`, unless something there is not ours (or
/// is a symlink); then `<home>/.cache/tabwire/run`, and the reason. A `tmp` under which the
/// sockets would not fit is replaced by `/tmp`: macOS gives each user a `$TMPDIR` of 49 bytes
/// (`/var/folders/xx/<28>/T/`), which leaves too little of its 104-byte `sun_path`.
/// `sun_path` is [`SUN_PATH`] but for tests.
fn choose_shared(
    tmp: &Path,
    home: Option<&Path>,
    uid: u32,
    sun_path: usize,
) -> (PathBuf, Option<String>) {
    let name = format!("tabwire-{uid}");
    let tmp = if sockets_fit(&tmp.join(&name), sun_path) { tmp } else { Path::new("/tmp") };
    let usual = tmp.join(name);
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let taken = fs::symlink_metadata(&usual)
            .is_ok_and(|m| m.uid() != uid || m.file_type().is_symlink());
        if let (true, Some(home)) = (taken, home) {
            let fallback = home.join(".cache").join("tabwire").join("run");
            let mut why = format!(
                "{} belongs to another user (or is a symlink), so tabwire uses {} instead; \
                 remove the other one or set XDG_RUNTIME_DIR to go back",
                usual.display(),
                fallback.display()
            );
            if !sockets_fit(&fallback, sun_path) {
                why.push_str(&format!(
                    ". But that folder's path is too long for a socket's ({} bytes at most \
                     under it): set TABWIRE_RUNTIME_DIR to a short folder of your own",
                    sun_path - 1 - LONGEST_SOCKET_NAME
                ));
            }
            return (fallback, Some(why));
        }
    }
    let _ = (home, uid, sun_path);
    (usual, None)
}

/// Directory of the host sockets.
pub fn hosts_dir(root: &Path) -> PathBuf {
    root.join("hosts")
}

/// Directory of the session sockets.
pub fn sessions_dir(root: &Path) -> PathBuf {
    root.join("sessions")
}

/// Where the process whose record is `dir/<stem>.json` listens. On Unix its socket beside the
/// record, `dir/<stem>.sock`. On Windows a named pipe ([`pipe_name`]), with a random part drawn
/// here: each call names a new pipe, so call it once and keep the name in the record. Clients
/// read it from the record, never derive it.
pub fn endpoint(dir: &Path, stem: &str) -> PathBuf {
    #[cfg(not(windows))]
    {
        dir.join(format!("{stem}.sock"))
    }
    #[cfg(windows)]
    {
        let user = std::env::var("USERNAME").unwrap_or_default();
        pipe_name(&user, dir, stem, crate::win::random_bytes())
    }
}

/// `\\.\pipe\tabwire-<user>-<hash of dir>-<dir's name>-<stem>-<32 random hex digits>`, well
/// within the 256 characters a pipe name may have. Pipes live in one namespace for the whole
/// machine, which every user can create names in: the name says whose it is and which runtime
/// directory it belongs to, and its random part, known only from the record (in the user's
/// private runtime directory), keeps another user from creating it first to stop the host or
/// session from starting (a name taken first is refused, never joined: `socket::bind_private`).
#[cfg_attr(not(windows), allow(dead_code))]
fn pipe_name(user: &str, dir: &Path, stem: &str, random: [u8; 16]) -> PathBuf {
    let short = |s: &str, max: usize| -> String {
        s.chars().filter(|c| c.is_alphanumeric() || "-_.".contains(*c)).take(max).collect()
    };
    let folder = short(&dir.file_name().unwrap_or_default().to_string_lossy(), 16);
    // FNV-1a of the whole path: two runtime directories never share a pipe.
    let hash =
        dir.as_os_str().as_encoded_bytes().iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        });
    let random: String = random.iter().map(|b| format!("{b:02x}")).collect();
    PathBuf::from(format!(
        r"\\.\pipe\tabwire-{}-{:08x}-{folder}-{}-{random}",
        short(user, 32),
        hash as u32,
        short(stem, 80)
    ))
}

/// Create `dir` (and its parents) with mode 0700 if missing, then check that it is ours and
/// closed to others. Used for the root and for `hosts/` and `sessions/`.
pub fn ensure_private_dir(dir: &Path) -> Result<(), RuntimeDirError> {
    let io_err = |source| RuntimeDirError::Io { path: dir.to_owned(), source };
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
        match fs::DirBuilder::new().recursive(true).mode(0o700).create(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io_err(e)),
        }
        let meta = fs::symlink_metadata(dir).map_err(io_err)?;
        if !meta.is_dir() {
            return Err(RuntimeDirError::NotADirectory { path: dir.to_owned() });
        }
        let me = current_uid();
        if meta.uid() != me {
            return Err(RuntimeDirError::WrongOwner {
                path: dir.to_owned(),
                owner: meta.uid(),
                me,
            });
        }
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            return Err(RuntimeDirError::TooOpen { path: dir.to_owned(), mode });
        }
    }
    #[cfg(not(unix))]
    fs::create_dir_all(dir).map_err(io_err)?;
    Ok(())
}

/// Create the root and its `hosts/` and `sessions/` folders, all checked. Returns the root.
pub fn prepare(root: &Path) -> Result<PathBuf, RuntimeDirError> {
    ensure_private_dir(root)?;
    ensure_private_dir(&hosts_dir(root))?;
    ensure_private_dir(&sessions_dir(root))?;
    Ok(root.to_owned())
}

/// What a running host writes beside its socket, so bridges and `tabwire doctor` know who it is.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostRecord {
    pub pid: u32,
    pub socket: PathBuf,
    /// Browser name from the extension's hello (`chromium`, `chrome`, `edge`, …); empty until
    /// the hello arrived.
    pub browser: String,
    pub profile: String,
    pub extension_id: String,
    pub extension_version: String,
    pub protocol: u32,
    /// Milliseconds since the Unix epoch.
    pub started_at: u64,
}

/// What a session (a `tabwire mcp`) writes beside its socket (`sessions/<id>.json`, mode 0600),
/// so that workers, hooks and scripts can find it: its pid, its socket, and its HTTP long-poll
/// with the token that opens it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SessionRecord {
    pub session_id: String,
    pub pid: u32,
    pub socket: PathBuf,
    /// `GET /wait` on 127.0.0.1 at this port (`specs/protocol.md`, "Session sockets").
    pub http_port: u16,
    /// The bearer token `GET /wait` requires.
    pub token: String,
    /// The session that was named by `TABWIRE_SESSION_ID` when this one started while it was
    /// alive: where `notify_completion` reports by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub started_at: u64,
    /// Where `tabwire call` reaches this session from a shell ([`endpoint`] of `<id>.call`):
    /// on Windows a named pipe whose random part only this record tells. Absent in records
    /// written before it was kept here, where it is `<id>.call.sock` beside the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub door: Option<PathBuf>,
}

impl SessionRecord {
    /// `http://127.0.0.1:<port>/wait`
    pub fn wait_url(&self) -> String {
        format!("http://127.0.0.1:{}/wait", self.http_port)
    }
}

impl HasPid for SessionRecord {
    fn pid(&self) -> u32 {
        self.pid
    }
}

/// Write `value` as JSON to `path` with mode 0600, atomically (temp file + rename), so a
/// reader never sees half a record.
pub fn write_record<T: Serialize>(path: &Path, value: &T) -> io::Result<()> {
    let tmp = path.with_extension(format!("json.tmp{}", std::process::id()));
    {
        let mut opts = fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        let file = opts.open(&tmp)?;
        serde_json::to_writer_pretty(&file, value)?;
        file.sync_all().ok();
    }
    // Windows will not replace a file another process has open (as a bridge reading the record
    // does for a moment) unless the rename has POSIX semantics, which Wine and older Windows
    // lack: try again for up to a second.
    let mut tries = 0;
    loop {
        match fs::rename(&tmp, path) {
            Err(e)
                if cfg!(windows) && e.kind() == io::ErrorKind::PermissionDenied && tries < 100 =>
            {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            done => return done,
        }
    }
}

/// Every record in `dir` (files `*.json`) whose process is alive. Records of dead processes are
/// removed together with their socket, so whoever looks next cleans up after a crash.
pub fn live_records<T: DeserializeOwned + HasPid>(dir: &Path) -> Vec<(PathBuf, T)> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let Ok(text) = fs::read(&path) else { continue };
        let Ok(record) = serde_json::from_slice::<T>(&text) else { continue };
        if pid_alive(record.pid()) {
            out.push((path, record));
        } else {
            tracing::info!(path = %path.display(), pid = record.pid(), "removing the socket of a process that is gone");
            let _ = fs::remove_file(path.with_extension("sock"));
            let _ = fs::remove_file(&path);
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Live hosts in the runtime directory `root`.
pub fn live_hosts(root: &Path) -> Vec<HostRecord> {
    live_records::<HostRecord>(&hosts_dir(root)).into_iter().map(|(_, r)| r).collect()
}

/// Records that name the process they belong to.
pub trait HasPid {
    fn pid(&self) -> u32;
}

impl HasPid for HostRecord {
    fn pid(&self) -> u32 {
        self.pid
    }
}

/// Whether a process with this pid exists (it may belong to another user). A zombie — dead,
/// not yet reaped by its parent — does not count: it holds no socket and follows nothing.
pub fn pid_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        if pid == 0 || pid > i32::MAX as u32 {
            return false;
        }
        // SAFETY: kill with signal 0 only checks for existence and permission.
        let rc = unsafe { libc::kill(pid as libc::pid_t, 0) };
        let exists = rc == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        exists && !zombie(pid)
    }
    #[cfg(windows)]
    {
        crate::win::pid_alive(pid)
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = pid;
        true
    }
}

/// Linux's `/proc/<pid>/stat` state `Z`; elsewhere never.
#[cfg(unix)]
fn zombie(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // `pid (comm) S …`: the state follows the last `)`, since comm may hold any character.
    stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
}

/// The current user's uid (0 on systems without uids).
pub fn current_uid() -> u32 {
    #[cfg(unix)]
    {
        // SAFETY: getuid cannot fail.
        unsafe { libc::getuid() }
    }
    #[cfg(not(unix))]
    {
        0
    }
}

/// Milliseconds since the Unix epoch, for records and event timestamps.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(all(test, unix))]
mod tests {
    #[test]
    fn a_pipe_name_says_whose_it_is_and_ends_in_a_part_no_one_else_can_know() {
        let dir = &Path::new("tabwire").join("run").join("hosts");
        let name = pipe_name("ann", dir, "4242", [0xab; 16]);
        let name = name.to_str().unwrap();
        let prefix = r"\\.\pipe\tabwire-ann-";
        assert!(name.starts_with(prefix) && name.contains("-hosts-4242-"), "{name}");
        assert!(name.ends_with(&"ab".repeat(16)), "{name}");
        // The same user, folder and pid: another random part, another name. A squatter who
        // knows all but the random part (pids are easy to guess) cannot make the host's first.
        let other = pipe_name("ann", dir, "4242", [0xac; 16]);
        assert_ne!(other.to_str().unwrap(), name);
        // Whatever the user's and folder's names, well within 256 characters.
        let long = "x".repeat(300);
        let name = pipe_name(&long, &Path::new("C:").join(&long), &long, [0xff; 16]);
        assert!(name.as_os_str().len() < 256, "{}", name.display());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_dead_unreaped_child_is_not_alive() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let t = std::time::Instant::now();
        while !super::zombie(pid) && t.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(!super::pid_alive(pid), "a zombie follows nothing");
        child.wait().unwrap();
        assert!(super::pid_alive(std::process::id()));
    }

    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A `sun_path` no scratch folder's path outgrows (the lengths are tested on their own).
    const ROOMY: usize = 4096;

    #[test]
    fn a_shared_dir_taken_by_another_user_sends_everyone_to_the_same_private_place() {
        use std::os::unix::fs::MetadataExt;
        let tmp = scratch("shared");
        let home = scratch("home");
        let me = current_uid();
        let (usual, why) = choose_shared(&tmp, Some(&home), me, ROOMY);
        assert_eq!((usual.clone(), why), (tmp.join(format!("tabwire-{me}")), None));
        fs::create_dir(&usual).unwrap();
        assert_eq!(choose_shared(&tmp, Some(&home), me, ROOMY).1, None, "our own dir is used");
        // Another user's: only root can make one; without root, a symlink stands in for it.
        let other = 4242;
        let path = std::ffi::CString::new(usual.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: chown of a directory this test created; it fails harmlessly without root.
        if unsafe { libc::chown(path.as_ptr(), other, other) } == 0 {
            assert_eq!(fs::metadata(&usual).unwrap().uid(), other);
        } else {
            fs::remove_dir(&usual).unwrap();
            std::os::unix::fs::symlink(&home, &usual).unwrap();
        }
        let (dir, why) = choose_shared(&tmp, Some(&home), me, ROOMY);
        assert_eq!(dir, home.join(".cache/tabwire/run"));
        let why = why.expect("a reason");
        assert!(why.contains("another user") && why.contains("XDG_RUNTIME_DIR"), "{why}");
        prepare(&dir).expect("the fallback is usable");
        let _ = fs::remove_dir_all(&tmp);
        let _ = fs::remove_dir_all(&home);
    }

    /// A Mac's per-user `$TMPDIR` (`/var/folders/<2>/<28>/T/`) and a 64-character user name.
    const MAC_TMPDIR: &str = "/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/";

    fn long_home() -> PathBuf {
        PathBuf::from("/Users").join("a".repeat(64))
    }

    #[test]
    fn on_a_mac_the_longest_socket_fits_in_sun_path() {
        let (dir, why) = choose_shared(Path::new(MAC_TMPDIR), Some(&long_home()), 501, 104);
        let longest = dir.join("sessions").join(format!("{}.sock", "s".repeat(64)));
        assert!(
            longest.as_os_str().len() < 104,
            "{} is {} bytes; macOS's sun_path holds 103 and a NUL",
            longest.display(),
            longest.as_os_str().len()
        );
        assert_eq!((dir, why), (PathBuf::from("/tmp/tabwire-501"), None));
        // Linux: XDG_RUNTIME_DIR is used as it is; /tmp is short enough for either system.
        assert!(sockets_fit(Path::new("/run/user/4294967294/tabwire"), 108));
        assert!(sockets_fit(Path::new("/tmp/tabwire-4294967294"), 104));
    }

    #[test]
    fn a_fallback_too_long_for_a_socket_says_what_to_do() {
        // Short, so the shared folder itself is kept: /tmp/tw<pid>/tabwire-<uid>.
        let tmp = PathBuf::from(format!("/tmp/tw{}", std::process::id()));
        fs::create_dir_all(&tmp).unwrap();
        let me = current_uid();
        std::os::unix::fs::symlink(&tmp, tmp.join(format!("tabwire-{me}"))).unwrap();
        let (dir, why) = choose_shared(&tmp, Some(&long_home()), me, 104);
        assert_eq!(dir, long_home().join(".cache/tabwire/run"));
        let why = why.expect("a reason");
        assert!(why.contains("too long for a socket's (24 bytes at most under it)"), "{why}");
        assert!(why.contains("set TABWIRE_RUNTIME_DIR to a short folder"), "{why}");
        let _ = fs::remove_dir_all(&tmp);
    }

    fn scratch(tag: &str) -> PathBuf {
        let name = format!("tw-rd-{tag}-{}-{}", std::process::id(), now_ms());
        let dir = std::env::temp_dir().join(name);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tabwire-rt-{}-{}", name, std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn prepare_creates_private_dirs() {
        let root = temp("create");
        prepare(&root).unwrap();
        for d in [root.clone(), hosts_dir(&root), sessions_dir(&root)] {
            assert_eq!(fs::metadata(&d).unwrap().permissions().mode() & 0o777, 0o700);
        }
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn open_dir_is_refused_with_the_fix() {
        let root = temp("open");
        fs::create_dir_all(&root).unwrap();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
        let err = prepare(&root).unwrap_err();
        assert!(matches!(err, RuntimeDirError::TooOpen { mode: 0o755, .. }));
        assert!(err.to_string().contains("chmod 700"));
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn stale_records_are_removed() {
        let root = temp("stale");
        prepare(&root).unwrap();
        let dead = HostRecord {
            pid: i32::MAX as u32 - 7,
            socket: hosts_dir(&root).join("x.sock"),
            browser: "chromium".into(),
            profile: String::new(),
            extension_id: String::new(),
            extension_version: String::new(),
            protocol: 1,
            started_at: 0,
        };
        let json = hosts_dir(&root).join("x.json");
        write_record(&json, &dead).unwrap();
        fs::write(hosts_dir(&root).join("x.sock"), b"").unwrap();
        let alive = HostRecord { pid: std::process::id(), ..dead.clone() };
        write_record(&hosts_dir(&root).join("y.json"), &alive).unwrap();
        assert_eq!(fs::metadata(&json).unwrap().permissions().mode() & 0o777, 0o600);

        let live = live_hosts(&root);
        assert_eq!(live, vec![alive]);
        assert!(!json.exists());
        assert!(!hosts_dir(&root).join("x.sock").exists());
        fs::remove_dir_all(&root).unwrap();
    }
}

#[cfg(all(test, windows))]
mod windows_tests {
    use super::*;

    #[test]
    fn each_endpoint_is_a_new_name() {
        let dir = Path::new(r"C:\run\hosts");
        assert_ne!(endpoint(dir, "1"), endpoint(dir, "1"));
    }

    /// A bridge reading a host's record while the host rewrites it (the hello's browser name
    /// arrives): the rewrite goes through once the reader lets go.
    #[test]
    fn a_record_is_replaced_while_a_reader_holds_it() {
        let dir = std::env::temp_dir().join(format!("tw-rec-{}-{}", std::process::id(), now_ms()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("1.json");
        write_record(&path, &1u32).unwrap();
        let reader = fs::File::open(&path).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            drop(reader);
        });
        let written = write_record(&path, &2u32);
        release.join().unwrap();
        written.expect("the record is rewritten");
        assert_eq!(fs::read_to_string(&path).unwrap(), "2");
        fs::remove_dir_all(&dir).unwrap();
    }
}
