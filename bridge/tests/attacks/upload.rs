//! upload_file as an attacker would use it: an assistant steered by what it read tries to hand
//! the user's secrets (`~/.ssh/id_rsa`, the bridge's own environment in `/proc/self/environ`,
//! a symlink in an allowed folder that leads to them) to a page, whose site would send them to
//! its server. Each is refused and the page gets nothing; a file of a folder the user allowed
//! goes through, and the user — where the client can ask — says yes or no to each upload,
//! shown the files, their sizes and where they go. Real Chromium, real `tabwire mcp`.

use std::path::{Path, PathBuf};

use rmcp::model::ElicitationAction;
use serde_json::{Value, json};
use tabwire_testkit::bins::{Scratch, scratch_dir};
use tabwire_testkit::elicit::ElicitMcp;
use tabwire_testkit::mcp::text;
use tabwire_testkit::{Chromium, Fixtures, Mcp};

/// A home of the test's own: `.ssh/id_rsa` (the secret), `Downloads/report.txt` (what the
/// user means to upload), and the configuration directory.
struct Home {
    dir: Scratch,
}

const REPORT: &str = "quarterly numbers";

impl Home {
    fn new() -> Home {
        let dir = scratch_dir("home");
        std::fs::create_dir_all(dir.join(".ssh")).unwrap();
        std::fs::write(dir.join(".ssh/id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY----- s3cret")
            .unwrap();
        std::fs::create_dir_all(dir.join("Downloads")).unwrap();
        std::fs::write(dir.join("Downloads/report.txt"), REPORT).unwrap();
        std::fs::create_dir_all(dir.join("config")).unwrap();
        Home { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// The environment of a `tabwire mcp` that lives in this home.
    fn env(&self) -> Vec<(&'static str, PathBuf)> {
        vec![("HOME", self.dir.to_path_buf()), ("TABWIRE_CONFIG_DIR", self.path("config"))]
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The ref of the page's file input.
async fn file_input(mcp: &Mcp, tab: &Value) -> String {
    let page = mcp.read_page(json!({ "tab_id": tab })).await;
    let line = page.lines.lines().map(str::trim).find(|l| l.starts_with("button \"Attachment\""));
    let line = line.unwrap_or_else(|| panic!("no file input in:\n{}", page.lines));
    line.split("[ref=").nth(1).unwrap().split(']').next().unwrap().to_owned()
}

/// What the page says it received (its status line, without the ref).
async fn received(mcp: &Mcp, tab: &Value) -> String {
    let found = mcp.ok("find", json!({ "tab_id": tab, "role": "status" })).await;
    let line = found["matches"][0]["line"].as_str().unwrap_or_default();
    line.split(" [ref=").next().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_outside_the_users_upload_folders_never_reach_the_page() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let home = Home::new();
    let env = home.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, s(v))).collect();
    let mcp = Mcp::start_with(&browser.runtime_dir, &env).await;
    let tab = mcp.ok("open_tab", json!({ "url": pages.url("dom/upload.html") })).await["tab"]["id"]
        .clone();
    let input = file_input(&mcp, &tab).await;
    let upload = |path: String| json!({ "tab_id": tab, "ref": input, "paths": [path] });

    // The private key, outside every folder the user allowed (by default the session's working
    // directory and ~/Downloads).
    let key = home.path(".ssh/id_rsa");
    let err = mcp.err("upload_file", upload(s(&key).to_owned())).await;
    assert!(err.starts_with("file_not_allowed:"), "{err}");
    assert!(
        err.contains(s(&key)) && err.contains("uploads.json"),
        "names the file and the fix: {err}"
    );
    assert!(err.contains(s(&home.path("Downloads"))), "names the allowed folders: {err}");

    // The bridge's own environment (API keys live there): never, whatever the user allowed.
    // Linux's /proc; no other system has it.
    #[cfg(target_os = "linux")]
    let err = mcp.err("upload_file", upload("/proc/self/environ".into())).await;
    #[cfg(target_os = "linux")]
    assert!(err.starts_with("file_not_allowed:") && err.contains("/proc"), "{err}");

    // A harmless-looking file in an allowed folder that is a symlink to the key: judged by
    // where it leads.
    let link = home.path("Downloads/notes.txt");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&key, &link).unwrap();
    #[cfg(windows)]
    std::os::windows::fs::symlink_file(&key, &link).unwrap();
    let err = mcp.err("upload_file", upload(s(&link).to_owned())).await;
    assert!(err.starts_with("file_not_allowed:"), "{err}");
    assert!(err.contains(s(&link)) && err.contains(s(&key)), "names both paths: {err}");

    // Even with the whole home allowed, hidden files and folders stay out.
    let config = json!({ "directories": [s(&home.dir)] });
    std::fs::write(home.path("config/uploads.json"), config.to_string()).unwrap();
    let err = mcp.err("upload_file", upload(s(&key).to_owned())).await;
    assert!(err.starts_with("file_not_allowed:") && err.contains("hidden"), "{err}");
    assert!(err.contains(".ssh"), "{err}");
    // And a folder is not a file.
    let err = mcp.err("upload_file", upload(s(&home.path("Downloads")).to_owned())).await;
    assert!(err.starts_with("file_not_allowed:") && err.contains("regular file"), "{err}");
    std::fs::remove_file(home.path("config/uploads.json")).unwrap();

    assert_eq!(received(&mcp, &tab).await, "status \"received nothing\"", "the page got nothing");

    // The honest upload: a file the user put in Downloads. The result names where it went.
    let report = home.path("Downloads/report.txt");
    let result = mcp.call("upload_file", upload(s(&report).to_owned())).await;
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    let said = text(&result);
    assert!(said.contains(&pages.origin()) && said.contains("report.txt"), "{said}");
    let want = format!("received report.txt {} \\\"{REPORT}\\\"", REPORT.len());
    assert!(received(&mcp, &tab).await.contains(&want), "{}", received(&mcp, &tab).await);
    // The first thing the page's server heard of is the report: none of the attacks reached it.
    let heard = pages.beacon("upload").await;
    assert!(heard.starts_with("page=upload&files=report.txt"), "{heard}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_user_says_yes_or_no_to_each_upload_seeing_files_sizes_and_origin() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let home = Home::new();
    let env = home.env();
    let env: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
    let user = ElicitMcp::start_with(&browser.runtime_dir, &env, ElicitationAction::Decline).await;
    // A plain session on the same browser reads the page (read_page, find).
    let reader = Mcp::start(&browser.runtime_dir).await;
    // The user's own tab, which both sessions may use.
    let tab =
        tabwire_testkit::mcp::users_tab(&browser.runtime_dir, &pages.url("dom/upload.html")).await;
    let input = file_input(&reader, &tab).await;
    let report = home.path("Downloads/report.txt");
    let upload = json!({ "tab_id": tab, "ref": input, "paths": [s(&report)] });

    // Declined: refused, and the page gets nothing.
    let result = user.call("upload_file", upload.clone()).await;
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert!(text(&result).starts_with("declined_by_user:"), "{}", text(&result));
    let asked = user.asked();
    assert_eq!(asked.len(), 1, "{asked:?}");
    let question = &asked[0];
    assert!(question.contains(s(&report)), "names the file: {question}");
    assert!(question.contains(&format!("{} bytes", REPORT.len())), "its size: {question}");
    assert!(question.contains(&pages.origin()), "where it goes: {question}");
    assert_eq!(received(&reader, &tab).await, "status \"received nothing\"");

    // Dismissed: the same.
    user.answer(ElicitationAction::Cancel);
    let result = user.call("upload_file", upload.clone()).await;
    assert!(text(&result).starts_with("declined_by_user:"), "{}", text(&result));
    assert_eq!(user.asked().len(), 1);
    assert_eq!(received(&reader, &tab).await, "status \"received nothing\"");

    // A refused path is refused before anyone is asked.
    let key = json!({ "tab_id": tab, "ref": input, "paths": [s(&home.path(".ssh/id_rsa"))] });
    let result = user.call("upload_file", key).await;
    assert!(text(&result).starts_with("file_not_allowed:"), "{}", text(&result));
    assert!(user.asked().is_empty(), "the user is not asked about what is never allowed");

    // Accepted: uploaded.
    user.answer(ElicitationAction::Accept);
    let result = user.call("upload_file", upload).await;
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    assert!(text(&result).contains(&pages.origin()), "{}", text(&result));
    assert_eq!(user.asked().len(), 1);
    let want = format!("received report.txt {} \\\"{REPORT}\\\"", REPORT.len());
    assert!(received(&reader, &tab).await.contains(&want));
    let heard = pages.beacon("upload").await;
    assert!(heard.starts_with("page=upload&files=report.txt"), "{heard}");
}

/// Issue 44's race, as an attacker runs it: a process that can write in an allowed folder
/// swaps a folder there (`Downloads/inbox`, holding an innocent `id_rsa`) with a link to
/// `~/.ssh`, atomically and over and over (`renameat2(RENAME_EXCHANGE)`), while the assistant
/// uploads `Downloads/inbox/id_rsa`. Each upload gives the page the innocent file or nothing:
/// never the key. (Before the file was opened from the allowed folder down, following no link,
/// the key went through within tens of tries.)
// renameat2 is Linux's; the unit race in bridge/src/mcp/dom/uploads.rs is Linux-only too.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_swapped_for_a_link_to_the_keys_mid_upload_never_gives_the_key() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let home = Home::new();
    let env = home.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, s(v))).collect();
    let mcp = Mcp::start_with(&browser.runtime_dir, &env).await;
    let tab = mcp.ok("open_tab", json!({ "url": pages.url("dom/upload.html") })).await["tab"]["id"]
        .clone();
    let input = file_input(&mcp, &tab).await;
    let inbox = home.path("Downloads/inbox");
    std::fs::create_dir(&inbox).unwrap();
    std::fs::write(inbox.join("id_rsa"), "innocent").unwrap();
    let key_len = std::fs::metadata(home.path(".ssh/id_rsa")).unwrap().len();
    let swap = home.path("Downloads/swap");
    std::os::unix::fs::symlink(home.path(".ssh"), &swap).unwrap();

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
                assert_eq!(done, 0, "RENAME_EXCHANGE: {}", std::io::Error::last_os_error());
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let path = s(&inbox.join("id_rsa")).to_owned();
    let upload = json!({ "tab_id": tab, "ref": input, "paths": [path] });
    let (mut innocent, mut refused) = (0, 0);
    for _ in 0..150 {
        let result = mcp.call("upload_file", upload.clone()).await;
        let said = text(&result);
        if result.is_error == Some(true) {
            assert!(!said.contains(&format!("({key_len} bytes)")), "{said}");
            refused += 1;
        } else {
            assert!(said.contains("id_rsa (8 bytes)"), "the key was uploaded: {said}");
            innocent += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    eprintln!(
        "{innocent} innocent uploads, {refused} refused, {} swaps",
        swaps.load(Ordering::Relaxed)
    );
    assert!(innocent > 0 && refused > 0, "the race ran both ways");
    let got = received(&mcp, &tab).await;
    assert!(!got.contains("s3cret"), "{got}");
}
