//! Which files upload_file may give a page, and the user's yes or no to each upload.
//!
//! A file given to a page goes wherever its site sends it, and the assistant that names the
//! file may be steered by what some page told it. So the assistant does not get to pick any
//! file it can name (`~/.ssh/id_rsa`; `/proc/self/environ`, this bridge's environment, API keys
//! and all). A file is uploaded only when, judged by where it really is (symlinks resolved
//! first, so a link in an allowed folder to the key counts as the key):
//! - it is below a directory the user allows uploads from: `$TABWIRE_CONFIG_DIR/uploads.json`,
//!   `{"directories": ["{cwd}", "~/Downloads", "/any/absolute/dir"]}`, read at each call; with
//!   no file, the session's working directory and `~/Downloads`;
//! - nothing on its way down from that directory is hidden (`.ssh`, `.env`, `.git`): where keys
//!   and credentials live;
//! - it is not in `/proc`, `/sys` or `/dev`, whatever the user allowed;
//! - it is a regular file of the user's own;
//! - no folder from the allowed directory down to it can be written by another user.
//!
//! A path is only a question, which another process may change the answer to between two
//! looks (swap a folder for a link to `~/.ssh`). So the file is opened from the allowed
//! directory down, one part at a time, following no link, and then what was opened is judged
//! again: its kind and owner from the open file, where it is from the open file's own path.
//! The bytes read are those of that open file, and the whole upload is read before the user is
//! asked, so what the user agrees to is what the page gets. Where the client can ask the user (MCP elicitation),
//! each upload waits for their yes, seeing every file with its size and the origin it goes to.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema, ProtocolVersion};
use rmcp::service::{ElicitationMode, ServiceError};
use rmcp::{Peer, RoleServer};
use serde::Deserialize;
use tabwire_proto::wire::code;

use tabwire_link::core::Core;
use tabwire_link::error::CallError;
use tabwire_link::methods::TabsList;

/// The file, in the configuration directory.
const FILE: &str = "uploads.json";
/// What one upload_file reads, all files together.
const MAX_TOTAL: u64 = 10 * 1024 * 1024;
/// The directories when the user wrote no file: the session's working directory (the project
/// the assistant works on) and the browser's downloads.
const DEFAULT: [&str; 2] = ["{cwd}", "~/Downloads"];
/// Never uploaded, whatever the user allowed: the kernel's views of processes (environments,
/// memory) and devices.
const NEVER: [&str; 3] = ["/proc", "/sys", "/dev"];
/// How long the user has to answer.
const ASK_TIMEOUT: Duration = Duration::from_secs(600);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    directories: Vec<String>,
}

/// A directory the user named, as it is.
enum Root {
    Usable(PathBuf),
    /// Another user can write in it (why), so it is not used: they could put there, or swap
    /// in, whatever they like while a file of it is read.
    Shared(PathBuf, String),
}

/// The directories uploads may come from, now.
pub struct Allowed {
    /// Each as the user wrote it, and the directory it is (None: it does not exist).
    dirs: Vec<(String, Option<Root>)>,
    /// The file that says so (absent: the default).
    file: PathBuf,
}

impl Allowed {
    /// The directories `config_dir`'s uploads.json names, or the default.
    pub fn load(config_dir: &Path) -> Result<Allowed, CallError> {
        let file = config_dir.join(FILE);
        let named = match std::fs::read(&file) {
            Ok(bytes) => parse(&file, &bytes)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                DEFAULT.map(str::to_owned).to_vec()
            }
            Err(e) => {
                return Err(CallError::new(
                    code::INTERNAL,
                    format!("cannot read the upload directories {} ({e})", file.display()),
                ));
            }
        };
        let cwd = std::env::current_dir().ok();
        let home = directories::BaseDirs::new().map(|b| b.home_dir().to_owned());
        Ok(Allowed::resolve(file, named, cwd.as_deref(), home.as_deref()))
    }

    fn resolve(
        file: PathBuf,
        named: Vec<String>,
        cwd: Option<&Path>,
        home: Option<&Path>,
    ) -> Allowed {
        let dirs = named
            .into_iter()
            .map(|name| {
                let dir = expand(&name, cwd, home).and_then(|d| std::fs::canonicalize(d).ok());
                let dir = dir.and_then(|d| std::fs::metadata(&d).ok().map(|m| (d, m)));
                let dir = dir.filter(|(_, m)| m.is_dir()).map(|(d, m)| match shared(&m) {
                    None => Root::Usable(d),
                    Some(by) => Root::Shared(d, by),
                });
                (name, dir)
            })
            .collect();
        Allowed { dirs, file }
    }

    fn roots(&self) -> Vec<PathBuf> {
        let usable = self.dirs.iter().filter_map(|(_, dir)| match dir {
            Some(Root::Usable(d)) => Some(d.clone()),
            _ => None,
        });
        usable.collect()
    }

    /// `{cwd} (/home/me/proj), ~/Downloads (missing)`
    fn describe(&self) -> String {
        let each = self.dirs.iter().map(|(name, dir)| match dir {
            Some(Root::Usable(d)) if d.as_os_str() == name.as_str() => name.clone(),
            Some(Root::Usable(d)) => format!("{name} ({})", d.display()),
            Some(Root::Shared(d, by)) => {
                format!("{name} ({}, not used: {by}, so they could swap files in it)", d.display())
            }
            None if name == "{cwd}" => format!("{name} (/, which allows nothing)"),
            None => format!("{name} (missing)"),
        });
        let all = each.collect::<Vec<_>>().join(", ");
        if all.is_empty() { "none".into() } else { all }
    }
}

/// `{cwd}`, `~`, `~/x`, or an absolute path; anything else is refused when the file is read.
/// A session started in `/` (some clients start their servers there) is no project: its `{cwd}`
/// allows nothing rather than the whole disk.
fn expand(name: &str, cwd: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    match name {
        "{cwd}" => cwd.filter(|c| c.parent().is_some()).map(Path::to_owned),
        "~" => home.map(Path::to_owned),
        _ => match name.strip_prefix("~/") {
            Some(rest) => home.map(|h| h.join(rest)),
            None => Some(PathBuf::from(name)),
        },
    }
}

fn parse(file: &Path, bytes: &[u8]) -> Result<Vec<String>, CallError> {
    let bad = |what: String| {
        CallError::new(
            code::BAD_REQUEST,
            format!(
                "the upload directories in {} are not usable: {what}. The file is a JSON object \
                 like {{\"directories\": [\"{{cwd}}\", \"~/Downloads\", \"/an/absolute/dir\"]}} \
                 ({{cwd}}: the session's working directory)",
                file.display()
            ),
        )
    };
    let config: Config = serde_json::from_slice(bytes).map_err(|e| bad(e.to_string()))?;
    for name in &config.directories {
        if name != "{cwd}"
            && name != "~"
            && !name.starts_with("~/")
            && !Path::new(name).is_absolute()
        {
            return Err(bad(format!("{name:?} is not {{cwd}}, ~/… or an absolute path")));
        }
    }
    Ok(config.directories)
}

/// Why a file is not uploaded.
#[derive(Debug, PartialEq)]
enum Refusal {
    /// In /proc, /sys or /dev.
    System,
    /// Below no allowed directory.
    Outside,
    /// This part of its path below the allowed directory is hidden.
    Hidden(String),
    /// What it is instead of a regular file.
    NotAFile(&'static str),
    /// Its owner's uid.
    NotYours(u32),
    /// A folder on its way down that another user can write in, and who (Unix only: on
    /// Windows the file is judged by its handle's final path, not by its folders).
    #[cfg_attr(not(unix), allow(dead_code))]
    Shared(PathBuf, String),
}

/// What the rules need to know of a file besides where it really is.
#[derive(Debug, Clone, Copy)]
struct Facts {
    /// `regular file`, `directory`, …
    kind: &'static str,
    uid: u32,
}

impl Facts {
    fn of(meta: &std::fs::Metadata) -> Facts {
        #[cfg(unix)]
        let uid = std::os::unix::fs::MetadataExt::uid(meta);
        #[cfg(not(unix))]
        let uid = tabwire_proto::runtime_dir::current_uid();
        let kind = if meta.is_file() {
            "regular file"
        } else if meta.is_dir() {
            "directory"
        } else {
            "special file (a device, pipe or socket)"
        };
        Facts { kind, uid }
    }
}

/// The rules, over a path with every symlink resolved (`real`); Ok is the allowed directory it
/// is reached from.
fn judge<'r>(
    real: &Path,
    facts: Facts,
    roots: &'r [PathBuf],
    me: u32,
) -> Result<&'r Path, Refusal> {
    if NEVER.iter().any(|n| real.starts_with(n)) {
        return Err(Refusal::System);
    }
    let below: Vec<(&Path, &Path)> = roots
        .iter()
        .filter_map(|r| real.strip_prefix(r).ok().map(|rest| (r.as_path(), rest)))
        .collect();
    if below.is_empty() {
        return Err(Refusal::Outside);
    }
    // Allowed through any one root whose way down to the file shows nothing hidden: refused
    // only when every way down has a hidden part.
    let Some(root) = below.iter().find(|(_, rest)| hidden_part(rest).is_none()).map(|b| b.0) else {
        let part = hidden_part(below[0].1).expect("every way down has a hidden part");
        return Err(Refusal::Hidden(part));
    };
    if facts.kind != "regular file" {
        return Err(Refusal::NotAFile(facts.kind));
    }
    if facts.uid != me {
        return Err(Refusal::NotYours(facts.uid));
    }
    Ok(root)
}

/// The first part of `rest` whose name starts with a dot.
fn hidden_part(rest: &Path) -> Option<String> {
    rest.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .find(|name| name.starts_with('.'))
        .map(|name| name.into_owned())
}

/// Who besides the user can write in a directory (`mode`), if anyone: a folder others can
/// write in is one whose files they can swap while they are read. Root's own folders
/// (`/srv/share`) count as the user's; a group-writable folder of the user's own primary group
/// (Debian's private groups, umask 002) too.
#[cfg(unix)]
fn shared(meta: &std::fs::Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let me = tabwire_proto::runtime_dir::current_uid();
    // SAFETY: getgid cannot fail.
    let my_group = unsafe { libc::getgid() };
    let mode = meta.mode() & 0o7777;
    if mode & 0o002 != 0 {
        Some(format!("every user can write in it (mode {mode:o})"))
    } else if meta.uid() != me && meta.uid() != 0 {
        Some(format!("it belongs to another user (uid {})", meta.uid()))
    } else if mode & 0o020 != 0 && meta.gid() != my_group {
        Some(format!("the users of group {} can write in it (mode {mode:o})", meta.gid()))
    } else {
        None
    }
}

/// On Windows, a folder's access list decides, which this does not read: the user's own
/// folders (their profile) are not writable by other users unless the user made them so.
#[cfg(not(unix))]
fn shared(_meta: &std::fs::Metadata) -> Option<String> {
    None
}

fn refused(asked: &str, real: &Path, why: Refusal, allowed: &Allowed) -> CallError {
    let what = if Path::new(asked) == real {
        asked.to_owned()
    } else {
        format!("{asked} (which leads to {})", real.display())
    };
    let never = "no setting allows it; if the user means to share it, they can copy it into a \
                 directory they allow uploads from";
    let reason = match why {
        Refusal::System => {
            format!("{what} is in /proc, /sys or /dev, which are never uploaded: {never}")
        }
        Refusal::Outside => format!(
            "{what} is not in a directory the user allows uploads from: {}. Only the user can \
             allow another, in {} (e.g. {{\"directories\": [\"{{cwd}}\", \"~/Downloads\", \
             \"/path/to/dir\"]}}; {{cwd}} is the session's working directory)",
            allowed.describe(),
            allowed.file.display()
        ),
        Refusal::Hidden(part) => format!(
            "{what} is hidden ({part}): hidden files and folders, where keys and credentials \
             live, are never uploaded; {never}"
        ),
        Refusal::NotAFile(kind) => {
            format!("{what} is a {kind}, not a regular file: only regular files are uploaded")
        }
        Refusal::NotYours(uid) => format!(
            "{what} belongs to another user (uid {uid}): only the user's own files are uploaded"
        ),
        Refusal::Shared(dir, by) => format!(
            "{what} is in {}, and {by}: they could swap files in it while it is read, so \
             nothing below it is uploaded. The user can make it theirs alone (chmod go-w) or \
             copy the file into a folder that is",
            dir.display()
        ),
    };
    CallError::new(code::FILE_NOT_ALLOWED, format!("nothing was uploaded: {reason}"))
}

/// One file to upload: the name the page sees, where it really is, and its bytes.
#[derive(Debug)]
pub struct Upload {
    pub name: String,
    pub real: PathBuf,
    pub bytes: Vec<u8>,
}

/// Check every file of `paths`, then read them all: refused or unreadable, nothing is read.
pub fn read(paths: &[String], allowed: &Allowed) -> Result<Vec<Upload>, CallError> {
    if paths.is_empty() {
        return Err(CallError::new(code::BAD_REQUEST, "paths is empty: give the files to upload"));
    }
    let roots = allowed.roots();
    let me = tabwire_proto::runtime_dir::current_uid();
    let mut opened = Vec::new();
    for p in paths {
        let path = Path::new(p);
        if !path.is_absolute() {
            return Err(CallError::new(
                code::BAD_REQUEST,
                format!("{p:?} is not an absolute path; give the full path of the file"),
            ));
        }
        let cannot = |e: std::io::Error| {
            CallError::new(code::BAD_REQUEST, format!("cannot read {p}: {e}; check the path"))
        };
        // First by its path, for an answer that names where it leads and the allowed
        // directory to open it from; then by what was opened, which is what counts.
        let real = std::fs::canonicalize(path).map_err(cannot)?;
        let meta = std::fs::metadata(&real).map_err(cannot)?;
        let root = judge(&real, Facts::of(&meta), &roots, me)
            .map_err(|why| refused(p, &real, why, allowed))?;
        let file = open_below(root, &real).map_err(|e| match e {
            Opened::Refused(why) => refused(p, &real, why, allowed),
            Opened::Failed(e) => cannot(e),
        })?;
        let facts = Facts::of(&file.metadata().map_err(cannot)?);
        let now = where_open(&file).unwrap_or_else(|| real.clone());
        judge(&now, facts, &roots, me).map_err(|why| refused(p, &now, why, allowed))?;
        if now != real {
            let changed = std::io::Error::other("it moved while being checked; try again");
            return Err(cannot(changed));
        }
        opened.push((p, real, file));
    }
    let mut left = MAX_TOTAL;
    let mut out = Vec::new();
    for (p, real, file) in opened {
        let mut bytes = Vec::new();
        file.take(left + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| CallError::new(code::BAD_REQUEST, format!("cannot read {p}: {e}")))?;
        let Some(rest) = left.checked_sub(bytes.len() as u64) else {
            return Err(CallError::new(
                code::TOO_LARGE,
                format!(
                    "the files are over {} MiB together; upload fewer or smaller files",
                    MAX_TOTAL >> 20
                ),
            ));
        };
        left = rest;
        let name = Path::new(p).file_name().map(|n| n.to_string_lossy().into_owned());
        out.push(Upload { name: name.unwrap_or_default(), real, bytes });
    }
    Ok(out)
}

enum Opened {
    /// A folder on the way is one others can write in.
    #[cfg_attr(not(unix), allow(dead_code))]
    Refused(Refusal),
    /// It could not be opened as judged: gone, or no longer what it was (a part became a link).
    Failed(std::io::Error),
}

impl From<std::io::Error> for Opened {
    fn from(e: std::io::Error) -> Opened {
        Opened::Failed(e)
    }
}

/// `real` (below `root`), opened from `root` down one part at a time, following no link and
/// waiting on no pipe: a part swapped for a link since it was judged fails the open (ELOOP,
/// ENOTDIR) rather than leading elsewhere. Each folder on the way is checked, as an open
/// folder, to be writable by no other user.
#[cfg(unix)]
fn open_below(root: &Path, real: &Path) -> Result<std::fs::File, Opened> {
    use std::ffi::CString;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;

    fn at(
        dir: Option<&OwnedFd>,
        name: &std::ffi::OsStr,
        flags: libc::c_int,
    ) -> std::io::Result<OwnedFd> {
        let name = CString::new(name.as_bytes()).map_err(std::io::Error::other)?;
        let dir = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
        // SAFETY: a valid C string; the fd returned is ours alone.
        let fd = unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_CLOEXEC) };
        if fd < 0 {
            let e = std::io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::ELOOP | libc::ENOTDIR) => std::io::Error::other(
                    "a part of its path was replaced by a link while it was being checked; try again",
                ),
                _ => e,
            });
        }
        // SAFETY: fd is a fresh descriptor nobody else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
    #[cfg(target_os = "linux")]
    const DIR: libc::c_int = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW;
    #[cfg(not(target_os = "linux"))]
    const DIR: libc::c_int = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;

    let rest = real.strip_prefix(root).map_err(std::io::Error::other)?;
    let parts: Vec<&std::ffi::OsStr> = rest.iter().collect();
    let Some((last, folders)) = parts.split_last() else {
        return Err(Opened::Refused(Refusal::NotAFile("directory")));
    };
    // The allowed directory itself by its path: a link above it is the user's own doing, and
    // the open file's own path is judged at the end.
    let mut dir = at(None, root.as_os_str(), DIR & !libc::O_NOFOLLOW)?;
    let mut here = root.to_owned();
    for folder in folders {
        check_folder(&dir, &here)?;
        dir = at(Some(&dir), folder, DIR)?;
        here.push(folder);
    }
    check_folder(&dir, &here)?;
    let file = at(Some(&dir), last, libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK)?;
    Ok(std::fs::File::from(file))
}

#[cfg(unix)]
fn check_folder(dir: &std::os::fd::OwnedFd, here: &Path) -> Result<(), Opened> {
    let meta = std::fs::File::from(dir.try_clone()?).metadata()?;
    match shared(&meta) {
        Some(by) => Err(Opened::Refused(Refusal::Shared(here.to_owned(), by))),
        None => Ok(()),
    }
}

/// On Windows, by handle: the file itself opened (a link at its end is opened as the link,
/// and refused as no regular file), then judged by the path its handle really has.
#[cfg(not(unix))]
fn open_below(_root: &Path, real: &Path) -> Result<std::fs::File, Opened> {
    use std::os::windows::fs::OpenOptionsExt;
    use windows_sys::Win32::Storage::FileSystem::FILE_FLAG_OPEN_REPARSE_POINT;
    let mut options = std::fs::OpenOptions::new();
    options.read(true).custom_flags(FILE_FLAG_OPEN_REPARSE_POINT);
    Ok(options.open(real)?)
}

/// Where the open file really is now, as the kernel has it.
#[cfg(target_os = "linux")]
fn where_open(file: &std::fs::File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

#[cfg(target_os = "macos")]
fn where_open(file: &std::fs::File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: F_GETPATH writes at most PATH_MAX bytes, NUL-terminated.
    let done = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETPATH, buf.as_mut_ptr()) };
    if done < 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0)?;
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(&buf[..end])))
}

/// Elsewhere on Unix the walk alone vouches for the path.
#[cfg(all(unix, not(any(target_os = "linux", target_os = "macos"))))]
fn where_open(_file: &std::fs::File) -> Option<PathBuf> {
    None
}

/// The handle's final path, in the form `std::fs::canonicalize` gives the allowed
/// directories (`\\?\C:\…`).
#[cfg(windows)]
fn where_open(file: &std::fs::File) -> Option<PathBuf> {
    use std::os::windows::ffi::OsStringExt;
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Storage::FileSystem::{
        FILE_NAME_NORMALIZED, GetFinalPathNameByHandleW,
    };
    let mut buf = vec![0u16; 32_768];
    // SAFETY: the handle is open; buf holds buf.len() wide characters.
    let n = unsafe {
        GetFinalPathNameByHandleW(
            file.as_raw_handle(),
            buf.as_mut_ptr(),
            buf.len() as u32,
            FILE_NAME_NORMALIZED,
        )
    } as usize;
    if n == 0 || n >= buf.len() {
        return None;
    }
    Some(PathBuf::from(std::ffi::OsString::from_wide(&buf[..n])))
}

/// `report.txt (17 bytes), notes.md (2 bytes)`
pub fn summary(files: &[Upload]) -> String {
    let each = files.iter().map(|f| format!("{} ({} bytes)", f.name, f.bytes.len()));
    each.collect::<Vec<_>>().join(", ")
}

/// Whether the client can put a question to the user now: it declared form elicitation, on a
/// protocol revision that lets a server ask mid-call (from 2026-07-28 a server may not).
pub fn can_ask(peer: &Peer<RoleServer>) -> bool {
    peer.supported_elicitation_modes().contains(&ElicitationMode::Form)
        && peer.peer_info().is_some_and(|i| i.protocol_version < ProtocolVersion::V_2026_07_28)
}

/// The origin tab `tab_id` shows now, where the files will go; `origin_changed` if it is not
/// the one the caller expected.
pub async fn destination(
    core: &Core,
    browser: Option<&str>,
    tab_id: i64,
    expected: Option<&str>,
) -> Result<String, CallError> {
    let tabs = core.invoke::<TabsList>(browser, &()).await?;
    let Some(tab) = tabs.iter().find(|t| t.id == tab_id) else {
        return Err(CallError::new(
            code::NO_SUCH_TAB,
            format!(
                "no tab has id {tab_id}: it was closed or never existed; list_tabs shows the open ones"
            ),
        ));
    };
    let Some(origin) = tabwire_operations::origin_of(&tab.url) else {
        return Err(CallError::new(
            code::NOT_SCRIPTABLE,
            format!("tab {tab_id} shows {}, not a web page; nothing was uploaded", tab.url),
        ));
    };
    if let Some(expected) = expected {
        let expected = tabwire_operations::origin_of(expected).unwrap_or_else(|| expected.into());
        if expected != origin {
            return Err(CallError::new(
                code::ORIGIN_CHANGED,
                format!(
                    "tab {tab_id} now shows {origin} (expected {expected}); nothing was done. \
                     list_tabs shows what each tab holds"
                ),
            ));
        }
    }
    Ok(origin)
}

/// Ask the user whether `files` may go to `origin` (tab `tab_id`, file input `input`): Ok on
/// their yes, `declined_by_user` on anything else.
pub async fn confirm(
    peer: &Peer<RoleServer>,
    files: &[Upload],
    origin: &str,
    tab_id: i64,
    input: &str,
) -> Result<(), CallError> {
    let mut message = format!(
        "Upload to {origin}? The assistant asks to give the page in tab {tab_id} (its file \
         input {input}) these files, which the site may send to its server:"
    );
    for f in files {
        message.push_str(&format!("\n- {} ({} bytes)", f.real.display(), f.bytes.len()));
        if f.real.file_name().is_some_and(|n| n.to_string_lossy() != f.name) {
            message.push_str(&format!(", named {} for the page", f.name));
        }
    }
    if input.starts_with('f') {
        message.push_str(
            "\nThe input is inside a frame of that page, which may be of another allowed site.",
        );
    }
    message.push_str(&format!("\nDecline unless you mean {origin} to have them."));
    let ask = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: ElicitationSchema::new(BTreeMap::new()),
    };
    let refused = |why: String| {
        CallError::new(
            code::DECLINED_BY_USER,
            format!("{why}; nothing was uploaded to {origin}. Do not retry unless the user asks"),
        )
    };
    match peer.create_elicitation_with_timeout(ask, Some(ASK_TIMEOUT)).await {
        Ok(answer) if answer.action == ElicitationAction::Accept => Ok(()),
        Ok(answer) if answer.action == ElicitationAction::Decline => {
            Err(refused("the user declined the upload".into()))
        }
        Ok(_) => Err(refused("the user dismissed the question about the upload".into())),
        Err(ServiceError::Timeout { .. }) => Err(refused(format!(
            "the user did not answer the question about the upload within {} minutes",
            ASK_TIMEOUT.as_secs() / 60
        ))),
        Err(e) => Err(refused(format!("the client could not ask the user to confirm ({e})"))),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    const ME: u32 = 1000;

    fn file() -> Facts {
        Facts { kind: "regular file", uid: ME }
    }

    fn roots() -> Vec<PathBuf> {
        vec![PathBuf::from("/home/me/proj"), PathBuf::from("/home/me/Downloads")]
    }

    fn judge_at(path: &str, facts: Facts) -> Result<(), Refusal> {
        judge(Path::new(path), facts, &roots(), ME).map(|_| ())
    }

    #[test]
    fn only_visible_regular_files_of_ones_own_below_an_allowed_directory_pass() {
        assert_eq!(judge_at("/home/me/proj/src/main.rs", file()), Ok(()));
        assert_eq!(judge_at("/home/me/Downloads/a.pdf", file()), Ok(()));
        assert_eq!(judge_at("/home/me/.ssh/id_rsa", file()), Err(Refusal::Outside));
        assert_eq!(judge_at("/home/me/project2/x", file()), Err(Refusal::Outside), "not a prefix");
        assert_eq!(judge_at("/home/me/proj/.env", file()), Err(Refusal::Hidden(".env".into())));
        assert_eq!(
            judge_at("/home/me/proj/.git/config", file()),
            Err(Refusal::Hidden(".git".into()))
        );
        let dir = Facts { kind: "directory", uid: ME };
        assert_eq!(judge_at("/home/me/proj/src", dir), Err(Refusal::NotAFile("directory")));
        let theirs = Facts { kind: "regular file", uid: 0 };
        assert_eq!(judge_at("/home/me/proj/x", theirs), Err(Refusal::NotYours(0)));
    }

    #[test]
    fn proc_sys_and_dev_are_never_uploaded_even_under_an_allowed_root() {
        for path in ["/proc/self/environ", "/proc/1/mem", "/sys/kernel/x", "/dev/sda"] {
            assert_eq!(
                judge(Path::new(path), file(), &[PathBuf::from("/")], ME).map(|_| ()),
                Err(Refusal::System)
            );
        }
        // A hidden part above the allowed directory does not count; one below it does.
        let root = [PathBuf::from("/home/me/.config/proj")];
        let at = Path::new("/home/me/.config/proj/a.txt");
        assert_eq!(judge(at, file(), &root, ME), Ok(root[0].as_path()));
        // Any one root that reaches the file with nothing hidden is enough.
        let both = [PathBuf::from("/home/me"), PathBuf::from("/home/me/.local/share/x")];
        let at = Path::new("/home/me/.local/share/x/a");
        assert_eq!(judge(at, file(), &both, ME), Ok(both[1].as_path()));
    }

    struct Temp(PathBuf);

    impl Drop for Temp {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A temp home: allowed/ok.txt, allowed/link → ../secret.txt, allowed/.hidden.
    fn home() -> (Temp, Allowed) {
        let dir = std::env::temp_dir().join(format!("tabwire-uploads-{}", uuid::Uuid::new_v4()));
        let allowed = dir.join("allowed");
        std::fs::create_dir_all(&allowed).unwrap();
        std::fs::write(allowed.join("ok.txt"), "fine").unwrap();
        std::fs::write(dir.join("secret.txt"), "key").unwrap();
        std::fs::write(allowed.join(".hidden"), "key").unwrap();
        std::os::unix::fs::symlink(dir.join("secret.txt"), allowed.join("link.txt")).unwrap();
        std::os::unix::fs::symlink(allowed.join("ok.txt"), allowed.join("alias.txt")).unwrap();
        let named = vec!["~/allowed".to_owned(), "/nowhere/at/all".to_owned()];
        let rules = Allowed::resolve(dir.join(FILE), named, None, Some(&dir));
        (Temp(dir), rules)
    }

    fn s(p: &Path) -> String {
        p.to_str().unwrap().to_owned()
    }

    #[test]
    fn symlinks_are_judged_by_where_they_lead() {
        let (dir, allowed) = home();
        let got = read(&[s(&dir.0.join("allowed/ok.txt"))], &allowed).unwrap();
        assert_eq!((got[0].name.as_str(), got[0].bytes.as_slice()), ("ok.txt", &b"fine"[..]));
        // A link to a file inside: fine, under the link's name.
        let got = read(&[s(&dir.0.join("allowed/alias.txt"))], &allowed).unwrap();
        assert_eq!(got[0].name, "alias.txt");
        assert_eq!(got[0].real, std::fs::canonicalize(dir.0.join("allowed/ok.txt")).unwrap());
        // A link out: refused, naming both paths, the allowed directories and the file to edit.
        let err = read(&[s(&dir.0.join("allowed/link.txt"))], &allowed).unwrap_err();
        assert!(err.is(code::FILE_NOT_ALLOWED), "{err:?}");
        let m = err.message();
        assert!(m.contains("link.txt (which leads to") && m.contains("secret.txt"), "{m}");
        assert!(m.contains("~/allowed (") && m.contains("/nowhere/at/all (missing)"), "{m}");
        assert!(m.contains(&s(&dir.0.join(FILE))), "{m}");
        // One bad file among good ones: nothing is read.
        let both = [s(&dir.0.join("allowed/ok.txt")), s(&dir.0.join("allowed/.hidden"))];
        let err = read(&both, &allowed).unwrap_err();
        assert!(err.is(code::FILE_NOT_ALLOWED) && err.message().contains("hidden"), "{err:?}");
    }

    /// The race of issue 44: a folder inside an allowed one swapped, atomically and over and
    /// over, with a link to a folder of keys (`renameat2(RENAME_EXCHANGE)`, which any process
    /// that can write in the allowed folder may do) while upload_file reads `inbox/id_rsa`.
    /// Whatever moment the swap lands, what is read is the innocent file or nothing.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_folder_swapped_for_a_link_mid_upload_never_yields_what_it_leads_to() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        let (dir, allowed) = home();
        let inbox = dir.0.join("allowed/inbox");
        std::fs::create_dir(&inbox).unwrap();
        std::fs::write(inbox.join("id_rsa"), "innocent").unwrap();
        std::fs::create_dir(dir.0.join("keys")).unwrap();
        std::fs::write(dir.0.join("keys/id_rsa"), "PRIVATE KEY").unwrap();
        let swap = dir.0.join("allowed/swap");
        std::os::unix::fs::symlink(dir.0.join("keys"), &swap).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicU64::new(0));
        let swapper = {
            let (stop, swaps) = (stop.clone(), swaps.clone());
            let a = std::ffi::CString::new(s(&inbox)).unwrap();
            let b = std::ffi::CString::new(s(&swap)).unwrap();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    // SAFETY: two valid C strings.
                    let done = unsafe {
                        libc::renameat2(
                            libc::AT_FDCWD,
                            a.as_ptr(),
                            libc::AT_FDCWD,
                            b.as_ptr(),
                            libc::RENAME_EXCHANGE,
                        )
                    };
                    assert_eq!(done, 0, "{}", std::io::Error::last_os_error());
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        let path = [s(&inbox.join("id_rsa"))];
        let (mut innocent, mut other) = (0, 0);
        for _ in 0..20_000 {
            match read(&path, &allowed) {
                Ok(got) => {
                    assert_eq!(got[0].bytes, b"innocent", "the key was read");
                    innocent += 1;
                }
                Err(_) => other += 1,
            }
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        eprintln!(
            "{innocent} innocent reads, {other} refused, {} swaps",
            swaps.load(Ordering::Relaxed)
        );
        assert!(innocent > 0 && other > 0, "the race ran both ways");
    }

    #[test]
    fn folders_other_users_can_write_in_give_nothing() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, allowed) = home();
        let open = dir.0.join("allowed/open");
        std::fs::create_dir(&open).unwrap();
        std::fs::write(open.join("a.txt"), "x").unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = read(&[s(&open.join("a.txt"))], &allowed).unwrap_err();
        assert!(err.is(code::FILE_NOT_ALLOWED), "{err:?}");
        let m = err.message();
        assert!(m.contains(&s(&open)) && m.contains("every user can write in it"), "{m}");
        assert!(m.contains("chmod go-w"), "says what to do: {m}");
        // An allowed directory others can write in is not used, and the refusal says why.
        let named = vec![s(&open)];
        let shared = Allowed::resolve(dir.0.join(FILE), named, None, None);
        assert!(shared.roots().is_empty());
        let err = read(&[s(&open.join("a.txt"))], &shared).unwrap_err();
        assert!(err.message().contains("not used: every user can write in it"), "{err:?}");
    }

    #[test]
    fn the_config_names_directories_the_user_can_read_back() {
        let file = Path::new("/c/uploads.json");
        let ok = br#"{"directories": ["{cwd}", "~", "~/Downloads", "/srv/share"]}"#;
        assert_eq!(parse(file, ok).unwrap().len(), 4);
        for bad in [&br#"{"directories": ["Downloads"]}"#[..], br#"{"dirs": []}"#, b"[]"] {
            let err = parse(file, bad).unwrap_err();
            assert!(err.message().contains("/c/uploads.json"), "{err:?}");
        }
        let cwd = Path::new("/w");
        let home = Path::new("/h");
        assert_eq!(expand("{cwd}", Some(cwd), Some(home)), Some(PathBuf::from("/w")));
        assert_eq!(expand("~/D", Some(cwd), Some(home)), Some(PathBuf::from("/h/D")));
        assert_eq!(expand("~/D", Some(cwd), None), None);
        assert_eq!(expand("{cwd}", Some(Path::new("/")), Some(home)), None, "not the whole disk");
    }
}
