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
//! - it is a regular file of the user's own.
//!
//! The bytes read are those of the file judged (opened without following a link, then checked
//! to be the same file), and the whole upload is read before the user is asked, so what the
//! user agrees to is what the page gets. Where the client can ask the user (MCP elicitation),
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

/// The directories uploads may come from, now.
pub struct Allowed {
    /// Each as the user wrote it, and the directory it is (None: it does not exist).
    dirs: Vec<(String, Option<PathBuf>)>,
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
                (name, dir.filter(|d| d.is_dir()))
            })
            .collect();
        Allowed { dirs, file }
    }

    fn roots(&self) -> Vec<PathBuf> {
        self.dirs.iter().filter_map(|(_, dir)| dir.clone()).collect()
    }

    /// `{cwd} (/home/me/proj), ~/Downloads (missing)`
    fn describe(&self) -> String {
        let each = self.dirs.iter().map(|(name, dir)| match dir {
            Some(d) if d.as_os_str() == name.as_str() => name.clone(),
            Some(d) => format!("{name} ({})", d.display()),
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

/// The rules, over a path with every symlink resolved (`real`).
fn judge(real: &Path, facts: Facts, roots: &[PathBuf], me: u32) -> Result<(), Refusal> {
    if NEVER.iter().any(|n| real.starts_with(n)) {
        return Err(Refusal::System);
    }
    let below: Vec<&Path> = roots.iter().filter_map(|r| real.strip_prefix(r).ok()).collect();
    if below.is_empty() {
        return Err(Refusal::Outside);
    }
    // Allowed through any one root whose way down to the file shows nothing hidden: refused
    // only when every way down has a hidden part (collecting gives Some only then).
    let hidden: Option<Vec<String>> = below.iter().map(|rest| hidden_part(rest)).collect();
    if let Some(parts) = hidden {
        return Err(Refusal::Hidden(parts[0].clone()));
    }
    if facts.kind != "regular file" {
        return Err(Refusal::NotAFile(facts.kind));
    }
    if facts.uid != me {
        return Err(Refusal::NotYours(facts.uid));
    }
    Ok(())
}

/// The first part of `rest` whose name starts with a dot.
fn hidden_part(rest: &Path) -> Option<String> {
    rest.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .find(|name| name.starts_with('.'))
        .map(|name| name.into_owned())
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
    let mut judged = Vec::new();
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
        let real = std::fs::canonicalize(path).map_err(cannot)?;
        let meta = std::fs::metadata(&real).map_err(cannot)?;
        judge(&real, Facts::of(&meta), &roots, me)
            .map_err(|why| refused(p, &real, why, allowed))?;
        judged.push((p, real, meta));
    }
    let mut left = MAX_TOTAL;
    let mut out = Vec::new();
    for (p, real, meta) in judged {
        let bytes = read_judged(&real, &meta, left)
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

/// The bytes of the file judged, at most `limit` + 1 of them: opened without following a link
/// or waiting on a pipe, and refused if it is no longer the regular file that was judged.
fn read_judged(real: &Path, judged: &std::fs::Metadata, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK,
    );
    let file = options.open(real)?;
    let now = file.metadata()?;
    #[cfg(unix)]
    let same = {
        use std::os::unix::fs::MetadataExt;
        (now.dev(), now.ino(), now.uid()) == (judged.dev(), judged.ino(), judged.uid())
    };
    #[cfg(not(unix))]
    let same = judged.is_file();
    if !now.is_file() || !same {
        return Err(std::io::Error::other("it changed while being checked; try again"));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
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
        judge(Path::new(path), facts, &roots(), ME)
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
                judge(Path::new(path), file(), &[PathBuf::from("/")], ME),
                Err(Refusal::System)
            );
        }
        // A hidden part above the allowed directory does not count; one below it does.
        let root = [PathBuf::from("/home/me/.config/proj")];
        assert_eq!(judge(Path::new("/home/me/.config/proj/a.txt"), file(), &root, ME), Ok(()));
        // Any one root that reaches the file with nothing hidden is enough.
        let both = [PathBuf::from("/home/me"), PathBuf::from("/home/me/.local/share/x")];
        assert_eq!(judge(Path::new("/home/me/.local/share/x/a"), file(), &both, ME), Ok(()));
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
