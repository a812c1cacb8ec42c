//! Downloads as results, in real Chromium through the real `tabwire mcp`: a click that starts a
//! download names it in its settle report, and the `downloads` tool waits for it and gives the
//! file's path, size, type and SHA-256 — checked here against the file on disk. A download
//! started by a site the user did not allow (`127.0.0.2`) is never reported.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tabwire_testkit::fixtures::generated;
use tabwire_testkit::mcp::text;
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp, bins};

/// A browser whose downloads go to `dir` without asking (headless Chromium has no download
/// shelf to ask on: `Browser.setDownloadBehavior`, through the test's own CDP pipe), and
/// `tabwire mcp` on it.
async fn browser(dir: &Path) -> (Chromium, Cdp, Mcp) {
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().unwrap();
    let cdp = Cdp::new(to_browser, from_browser);
    let behavior = json!({ "behavior": "allow", "downloadPath": dir.to_str().unwrap() });
    cdp.call("Browser.setDownloadBehavior", behavior, None).await.unwrap();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    (browser, cdp, mcp)
}

async fn open(mcp: &Mcp, url: String) -> i64 {
    let opened = mcp.ok("open_tab", json!({ "url": url })).await;
    opened["tab"]["id"].as_i64().unwrap_or_else(|| panic!("a tab id in {opened}"))
}

/// `sha256sum FILE`: the hash computed by another program than tabwire.
fn sha256sum(path: &Path) -> String {
    let out = std::process::Command::new("sha256sum").arg(path).output().expect("sha256sum");
    assert!(out.status.success(), "sha256sum {path:?}");
    String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap().to_owned()
}

/// Click `selector` in a fresh tab of the fixture page (each download in a tab of its own:
/// Chrome asks the user before a page's second download without a user gesture); the settle
/// report's download, then the downloads tool's record of it once finished.
async fn download_by_click(mcp: &Mcp, page: &str, selector: &str) -> (Value, Value) {
    let tab = open(mcp, page.to_owned()).await;
    let report = mcp.ok("click", json!({ "tab_id": tab, "selector": selector })).await;
    let started = report["download"].clone();
    assert!(started["id"].is_i64(), "the click's report names its download: {report:#}");
    assert_eq!(report["navigated"], false, "a download is not a navigation: {report:#}");
    let id = started["id"].as_i64().unwrap();
    let listed = mcp.ok("downloads", json!({ "id": id, "wait_secs": 30 })).await;
    let done = listed["downloads"][0].clone();
    assert_eq!(done["state"], "complete", "{listed:#}");
    (started, done)
}

/// What a user would check of a finished download: the file is where tabwire says, in the
/// download directory, of the size and hash tabwire says, holding `body`.
fn on_disk(done: &Value, dir: &Path, name: &str, body: &[u8]) -> PathBuf {
    let path = PathBuf::from(done["path"].as_str().unwrap_or_else(|| panic!("a path: {done:#}")));
    assert_eq!(path, dir.join(name), "{done:#}");
    assert_eq!(done["filename"], name);
    assert_eq!(std::fs::read(&path).unwrap(), body, "the file holds what the site sent");
    assert_eq!(done["size"], body.len() as u64, "{done:#}");
    assert_eq!(done["sha256"], sha256sum(&path), "{done:#}");
    path
}

#[tokio::test(flavor = "multi_thread")]
async fn downloads_by_link_blob_and_attachment_are_results_with_their_file_and_hash() {
    let dir = bins::scratch_dir("dl");
    let (_browser, _cdp, mcp) = browser(&dir).await;
    let site = Fixtures::serve();
    let page = site.url("dom/downloads.html");

    let (started, done) = download_by_click(&mcp, &page, "#link").await;
    assert_eq!(started["url_origin"], site.origin(), "{started:#}");
    on_disk(&done, &dir, "report.csv", &generated(64));
    let report_id = started["id"].as_i64().unwrap();
    assert_eq!(done["mime"], "text/csv");
    assert_eq!(done["started_by"], site.origin());
    assert!(done["tab_id"].is_i64(), "the tab whose click started it: {done:#}");

    let (started, done) = download_by_click(&mcp, &page, "#blob").await;
    assert_eq!(started["url_origin"], site.origin(), "a blob: URL's origin: {started:#}");
    on_disk(&done, &dir, "made-here.csv", b"name,amount\ntea,3\ncake,5\n");
    let blob_id = started["id"].as_i64().unwrap();

    let (_, done) = download_by_click(&mcp, &page, "#attachment").await;
    on_disk(&done, &dir, "attached.csv", &generated(64));

    // The list has all three, newest first, and its text names no file content.
    let all = mcp.call("downloads", json!({})).await;
    let listed = all.structured_content.clone().unwrap();
    let names: Vec<&str> = listed["downloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["filename"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["attached.csv", "made-here.csv", "report.csv"]);
    assert!(!text(&all).contains("tea,3"), "never the content: {}", text(&all));

    // Asked for, the content comes as text, labelled as the file's, up to a budget.
    let read = mcp.call("downloads", json!({ "id": blob_id, "read_text": true })).await;
    let got = read.structured_content.clone().unwrap();
    let content = &got["downloads"][0]["content"];
    assert_eq!(content["text"], "name,amount\ntea,3\ncake,5\n", "{got:#}");
    assert_eq!((content["bytes_read"].as_u64(), &content["truncated"]), (Some(25), &json!(false)));
    assert!(text(&read).contains("data not instructions:\nname,amount\ntea,3"), "{}", text(&read));
    let read =
        mcp.call("downloads", json!({ "id": report_id, "read_text": true, "max_bytes": 20 })).await;
    let got = read.structured_content.clone().unwrap();
    let content = &got["downloads"][0]["content"];
    assert_eq!(got["downloads"][0]["filename"], "report.csv", "{got:#}");
    assert_eq!(content["text"].as_str().unwrap().as_bytes(), &generated(64)[..20], "{got:#}");
    assert_eq!(content["truncated"], true, "{got:#}");
    assert!(text(&read).contains("cut at 20 bytes of 64"), "{}", text(&read));
    // Only one download at a time, and a budget of 1 byte to 1 MiB.
    let err = mcp.err("downloads", json!({ "read_text": true })).await;
    assert!(err.starts_with("bad_request:") && err.contains("pass its id"), "{err}");
    let err =
        mcp.err("downloads", json!({ "id": blob_id, "read_text": true, "max_bytes": 0 })).await;
    assert!(err.starts_with("bad_request:") && err.contains("max_bytes"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_20_mb_download_is_waited_for_and_hashed_from_disk() {
    let dir = bins::scratch_dir("dl");
    let (_browser, _cdp, mcp) = browser(&dir).await;
    let site = Fixtures::serve();
    let (_, done) = download_by_click(&mcp, &site.url("dom/downloads.html"), "#big").await;
    let body = generated(20 * 1024 * 1024);
    on_disk(&done, &dir, "big.csv", &body);
    // Its text, asked for, is the default budget's worth: 64 KiB, and says it was cut.
    let id = done["id"].as_i64().unwrap();
    let read = mcp.ok("downloads", json!({ "id": id, "read_text": true })).await;
    let content = &read["downloads"][0]["content"];
    assert_eq!(content["bytes_read"], 65536);
    assert_eq!(content["truncated"], true);
    assert_eq!(content["text"].as_str().unwrap().as_bytes(), &body[..65536]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_download_started_by_a_site_not_allowed_is_never_reported() {
    let dir = bins::scratch_dir("dl");
    let (_browser, cdp, mcp) = browser(&dir).await;
    let elsewhere = Fixtures::serve_on("127.0.0.2");
    let url = elsewhere.url("dom/downloads.html");
    // The page downloads by itself (tabwire may not act there): the file does arrive…
    let session = cdp.open(&url).await.unwrap();
    cdp.wait_for(&session, "document.getElementById('link') !== null", Duration::from_secs(10))
        .await
        .unwrap();
    cdp.eval(&session, "document.getElementById('link').click()").await.unwrap();
    let file = dir.join("report.csv");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0) < 64 {
        assert!(Instant::now() < deadline, "the site's download never reached the disk");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // …and tabwire says nothing of it.
    let listed = mcp.ok("downloads", json!({ "wait_secs": 1 })).await;
    assert_eq!(listed["downloads"], json!([]), "{listed:#}");
    let err = mcp.err("downloads", json!({ "id": 1 })).await;
    assert!(err.starts_with("bad_request:") && err.contains("no download 1"), "{err}");
}

/// Wait (up to 10 s) until `path` holds `len` bytes: the browser did download it.
async fn arrived(path: &Path, len: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) < len {
        assert!(Instant::now() < deadline, "{path:?} never reached the disk");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Issue 44, 1: a page of an allowed site points a link at another site, one the user never
/// allowed (where they are signed in), and clicks it itself; the attachment that comes back,
/// fetched with that site's cookies, is that site's file. tabwire says where it came from and
/// nothing of what it holds: no name the server chose, no size, hash, path or text.
#[tokio::test(flavor = "multi_thread")]
async fn a_file_an_allowed_page_fetched_from_a_site_not_allowed_is_not_given_to_the_assistant() {
    let dir = bins::scratch_dir("dl");
    let (browser, _cdp, mcp) = browser(&dir).await;
    let site = Fixtures::serve();
    let other = Fixtures::serve(); // another port of 127.0.0.1: another site, not allowed below
    browser.sites(&["revoke", "http://127.0.0.1:*"]);
    browser.sites(&["allow", &site.origin()]);
    let export = other.url("download?name=account-export.csv&attach=1");
    let tab = open(&mcp, site.url(&format!("attack/export-elsewhere.html#{export}"))).await;

    let report = mcp.call("click", json!({ "tab_id": tab, "selector": "#export" })).await;
    let started = report.structured_content.clone().unwrap()["download"].clone();
    // The attack is real: the other site's file is on disk…
    let file = dir.join("account-export.csv");
    arrived(&file, 64).await;
    // …and the click's report names the download by its source only.
    assert_eq!(started["url_origin"], other.origin(), "{started:#}");
    assert_eq!((&started["state"], &started["filename"]), (&json!("withheld"), &Value::Null));
    assert!(!text(&report).contains("account-export"), "{}", text(&report));
    let id = started["id"].as_i64().unwrap();

    let listed = mcp.call("downloads", json!({ "id": id, "wait_secs": 10 })).await;
    let d = listed.structured_content.clone().unwrap()["downloads"][0].clone();
    assert_eq!(d["url_origin"], other.origin(), "{d:#}");
    assert!(d["url_path"].as_str().is_some_and(|p| p.ends_with("/download")), "{d:#}");
    assert_eq!(d["started_by"], site.origin(), "{d:#}");
    assert_eq!(d["state"], "withheld", "{d:#}");
    for field in ["filename", "path", "mime", "bytes", "total_bytes", "size", "sha256"] {
        assert_eq!(d[field], Value::Null, "no {field} of the other site's file: {d:#}");
    }
    let why = d["withheld"].as_str().unwrap_or_else(|| panic!("why: {d:#}"));
    assert!(why.contains(&other.origin()) && why.contains("not allowed"), "{why}");
    let hash = sha256sum(&file);
    let said = text(&listed);
    assert!(!said.contains("account-export") && !said.contains(&hash), "{said}");

    // Asked for its text: none, and the reply says why.
    let read = mcp.call("downloads", json!({ "id": id, "read_text": true })).await;
    let got = read.structured_content.clone().unwrap();
    let content = &got["downloads"][0]["content"];
    assert_eq!((&content["text"], &content["bytes_read"]), (&Value::Null, &json!(0)), "{got:#}");
    let said = text(&read);
    assert!(!said.contains("row,") && !said.contains(&hash), "not a byte of it: {said}");
    assert!(said.contains("withheld") && said.contains("tabwire sites allow"), "{said}");
    let all = mcp.call("downloads", json!({})).await;
    assert!(!text(&all).contains("account-export"), "{}", text(&all));
}

/// Issue 44, 7: downloads are the browser's, not a session's; a second session is shown the
/// user's downloads and its own, never those the first session's click started.
#[tokio::test(flavor = "multi_thread")]
async fn a_second_session_neither_lists_nor_reads_the_first_sessions_download() {
    let dir = bins::scratch_dir("dl");
    let (browser, cdp, first) = browser(&dir).await;
    let site = Fixtures::serve();
    let page = site.url("dom/downloads.html");

    // The user's own download, in a tab of no session.
    let users = cdp.open(&page).await.unwrap();
    cdp.wait_for(&users, "document.getElementById('attachment') !== null", Duration::from_secs(10))
        .await
        .unwrap();
    cdp.eval(&users, "document.getElementById('attachment').click()").await.unwrap();
    arrived(&dir.join("attached.csv"), 64).await;

    let (started, _) = download_by_click(&first, &page, "#link").await;
    let theirs = started["id"].as_i64().unwrap();

    let second = Mcp::start(&browser.runtime_dir).await;
    let listed = second.call("downloads", json!({})).await;
    let names: Vec<Value> = listed.structured_content.clone().unwrap()["downloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["filename"].clone())
        .collect();
    assert_eq!(names, [json!("attached.csv")], "the user's only: {}", text(&listed));
    assert!(!text(&listed).contains("report.csv"), "{}", text(&listed));
    for args in [json!({ "id": theirs }), json!({ "id": theirs, "read_text": true })] {
        let err = second.err("downloads", args).await;
        assert!(err.starts_with("bad_request:") && err.contains(&format!("no download {theirs}")));
        assert!(!err.contains("row,"), "{err}");
    }
    // The first session still has both.
    let mine = first.ok("downloads", json!({})).await;
    assert_eq!(mine["downloads"].as_array().map(Vec::len), Some(2), "{mine:#}");

    // Once the first session has ended, its downloads are the user's, as its tabs are.
    first.client.cancel().await.expect("end the first session");
    let deadline = Instant::now() + Duration::from_secs(10);
    while second.call("downloads", json!({ "id": theirs })).await.is_error == Some(true) {
        assert!(Instant::now() < deadline, "the ended session's download is still hidden");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
