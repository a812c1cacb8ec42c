//! The webdev tools in real Chromium through the real `tabwire mcp`: a site's cookies, its web
//! storage and its signed-in state saved and put back — only on allowed sites whose "Cookies"
//! switch the user turned on, since a cookie is a credential. What a test checks is what the
//! page itself sees: the fixture's title names who is signed in and every cookie it can read.
//!
//! `127.0.0.2` stands in for any website the user did not allow.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tabwire_tests::{Chromium, Fixtures, Mcp};

async fn open(mcp: &Mcp, url: String) -> i64 {
    let opened = mcp.ok("open_tab", json!({ "url": url })).await;
    opened["tab"]["id"].as_i64().unwrap_or_else(|| panic!("a tab id in {opened}"))
}

/// The tab's title as list_tabs shows it, once it holds `part` (up to 5 s).
async fn title_with(mcp: &Mcp, tab: i64, part: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let tabs = mcp.ok("list_tabs", json!({})).await;
        let listed = tabs["tabs"].as_array().unwrap().iter().find(|t| t["id"] == tab).cloned();
        let title = listed.map(|t| t["title"].as_str().unwrap_or_default().to_owned());
        let title = title.unwrap_or_default();
        if title.contains(part) {
            return title;
        }
        assert!(Instant::now() < deadline, "tab {tab} never showed {part:?}; it shows {title:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Load `url` again in `tab`, as the user reloading it, and wait for its title to hold `part`.
async fn reload(mcp: &Mcp, tab: i64, url: &str, part: &str) -> String {
    mcp.ok("navigate", json!({ "tab_id": tab, "url": url, "wait": "load" })).await;
    title_with(mcp, tab, part).await
}

fn refused_as(err: &str, code: &str, origin: &str) {
    assert!(err.starts_with(&format!("{code}:")), "{err}");
    assert!(err.contains(origin), "names the origin: {err}");
}

fn names(v: &Value) -> Vec<&str> {
    v.as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cookies_and_signed_in_state_only_where_the_user_turned_cookies_on() {
    let browser = Chromium::start();
    let state_dir = tempfile::tempdir().unwrap();
    let state_env = state_dir.path().to_str().unwrap();
    let mcp = Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_STATE_DIR", state_env)]).await;
    let pages = Fixtures::serve();
    let origin = pages.origin();
    let page = pages.url("webdev/signin.html");
    let tab = open(&mcp, pages.url("webdev/signin.html?login=ada")).await;
    title_with(&mcp, tab, "signed in as ada").await;
    let list = json!({ "tab_id": tab });

    // Off by default, even on an allowed site: each tool says so and how the user turns it on.
    for (tool, args) in [
        ("cookies", list.clone()),
        ("web_storage", list.clone()),
        ("site_state", json!({ "tab_id": tab, "action": "save", "name": "ada" })),
    ] {
        let err = mcp.err(tool, args).await;
        refused_as(&err, "cookies_not_allowed", &origin);
        assert!(
            err.contains("credential")
                && err.contains("popup")
                && err.contains("tabwire sites allow --cookies http://127.0.0.1:*"),
            "{err}"
        );
    }

    // The user turns it on for the site.
    let said = browser.sites(&["allow", "--cookies", "http://127.0.0.1:*"]);
    assert!(said.contains("cookies"), "{said}");
    assert!(browser.sites(&["list"]).contains("http://127.0.0.1:* (cookies)"));

    // The cookie the page set, read by the tool.
    let got = mcp.ok("cookies", list.clone()).await;
    assert_eq!(got["origin"], origin.as_str());
    let session = got["cookies"].as_array().unwrap().iter().find(|c| c["name"] == "session");
    assert_eq!(session.unwrap_or_else(|| panic!("the session cookie in {got}"))["value"], "ada");
    let got = mcp.ok("cookies", json!({ "tab_id": tab, "action": "get", "name": "session" })).await;
    assert_eq!(names(&got["cookies"]), ["session"]);

    // A cookie the tool sets, read by the page.
    let cookie = json!({ "name": "greeting", "value": "hello" });
    mcp.ok("cookies", json!({ "tab_id": tab, "action": "set", "cookie": cookie })).await;
    reload(&mcp, tab, &page, "greeting=hello").await;

    // The storage names the page made.
    let got = mcp.ok("web_storage", list.clone()).await;
    assert_eq!(got["local_storage"], json!(["theme"]), "{got}");
    assert!(got["indexed_db"].as_array().unwrap().contains(&json!("appdb")), "{got}");

    // Saved to a private file, cleared (the page shows the user signed out), restored (signed
    // in again, with its storage).
    let save = json!({ "tab_id": tab, "action": "save", "name": "ada" });
    let saved = mcp.ok("site_state", save).await;
    let path = saved["path"].as_str().unwrap().to_owned();
    assert!(path.starts_with(state_env), "{path}");
    let file = std::fs::read_to_string(&path).unwrap();
    assert!(file.contains("\"session\"") && file.contains("\"theme\""), "{file}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the state file is the user's alone");
    }
    mcp.ok("site_state", json!({ "tab_id": tab, "action": "clear" })).await;
    let title = reload(&mcp, tab, &page, "signed out").await;
    assert!(title.contains("theme none") && !title.contains("greeting"), "{title}");
    let got = mcp.ok("cookies", list.clone()).await;
    assert_eq!(got["cookies"], json!([]), "{got}");
    let restore = json!({ "tab_id": tab, "action": "restore", "name": "ada" });
    let restored = mcp.ok("site_state", restore.clone()).await;
    assert_eq!(restored["cookies"], 2, "{restored}");
    let title = reload(&mcp, tab, &page, "signed in as ada").await;
    assert!(title.contains("theme dark") && title.contains("greeting=hello"), "{title}");

    // Clear one cookie only.
    let clear = json!({ "tab_id": tab, "action": "clear", "name": "greeting" });
    assert_eq!(mcp.ok("cookies", clear).await["removed"], 1);
    reload(&mcp, tab, &page, "signed in as ada").await;
    assert_eq!(names(&mcp.ok("cookies", list.clone()).await["cookies"]), ["session"]);

    // Bad names, said clearly.
    let err =
        mcp.err("site_state", json!({ "tab_id": tab, "action": "save", "name": "../x" })).await;
    assert!(err.starts_with("bad_request:") && err.contains("letters, digits"), "{err}");
    let err = mcp
        .err("site_state", json!({ "tab_id": tab, "action": "restore", "name": "nobody" }))
        .await;
    assert!(err.starts_with("bad_request:") && err.contains("save one first"), "{err}");

    // Never across origins: another allowed site with the switch on, served by the same
    // server under another host name, sees none of 127.0.0.1's cookies, and a state saved
    // there does not go back into it.
    browser.sites(&["allow", "--cookies", "http://localhost:*"]);
    let elsewhere = page.replace("127.0.0.1", "localhost");
    let near = open(&mcp, elsewhere.clone()).await;
    title_with(&mcp, near, "signed out").await;
    let got = mcp.ok("cookies", json!({ "tab_id": near })).await;
    assert_eq!(got["cookies"], json!([]), "{got}");
    let err =
        mcp.err("site_state", json!({ "tab_id": near, "action": "restore", "name": "ada" })).await;
    assert!(err.starts_with("origin_changed:") && err.contains(&origin), "{err}");
    reload(&mcp, near, &elsewhere, "signed out").await;

    // A site not allowed: site_not_allowed, and nothing of its cookies is read or written —
    // not even the saved state of another origin.
    let stranger = Fixtures::serve_on("127.0.0.2");
    let other = open(&mcp, stranger.url("webdev/signin.html?login=eve")).await;
    let err = mcp.err("cookies", json!({ "tab_id": other })).await;
    refused_as(&err, "site_not_allowed", &stranger.origin());
    let err =
        mcp.err("site_state", json!({ "tab_id": other, "action": "restore", "name": "ada" })).await;
    refused_as(&err, "site_not_allowed", &stranger.origin());

    // Allowing the site again without the flag turns the switch off.
    browser.sites(&["allow", "http://127.0.0.1:*"]);
    let err = mcp.err("site_state", restore).await;
    refused_as(&err, "cookies_not_allowed", &origin);
}
