//! The webdev tools in real Chromium through the real `tabwire mcp`: a site's cookies, its web
//! storage and its signed-in state saved and put back — only on allowed sites whose "Cookies"
//! switch the user turned on, since a cookie is a credential. What a test checks is what the
//! page itself sees: the fixture's title names who is signed in and every cookie it can read.
//!
//! `127.0.0.2` stands in for any website the user did not allow.

use serde_json::{Value, json};
use tabwire_tests::mcp::assert_refused;
use tabwire_tests::{Chromium, Fixtures, Mcp};

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
    let tab = mcp.open_tab(&pages.url("webdev/signin.html?login=ada")).await;
    mcp.title_with(tab, &["signed in as ada"]).await;
    let list = json!({ "tab_id": tab });

    // Off by default, even on an allowed site: each tool says so and how the user turns it on.
    for (tool, args) in [
        ("cookies", list.clone()),
        ("web_storage", list.clone()),
        ("site_state", json!({ "tab_id": tab, "action": "save", "name": "ada" })),
    ] {
        let err = mcp.err(tool, args).await;
        assert_refused(&err, "cookies_not_allowed", &origin);
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
    mcp.reload(tab, &page, &["greeting=hello"]).await;

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
    let title = mcp.reload(tab, &page, &["signed out"]).await;
    assert!(title.contains("theme none") && !title.contains("greeting"), "{title}");
    let got = mcp.ok("cookies", list.clone()).await;
    assert_eq!(got["cookies"], json!([]), "{got}");
    let restore = json!({ "tab_id": tab, "action": "restore", "name": "ada" });
    let restored = mcp.ok("site_state", restore.clone()).await;
    assert_eq!(restored["cookies"], 2, "{restored}");
    let title = mcp.reload(tab, &page, &["signed in as ada"]).await;
    assert!(title.contains("theme dark") && title.contains("greeting=hello"), "{title}");

    // Clear one cookie only.
    let clear = json!({ "tab_id": tab, "action": "clear", "name": "greeting" });
    assert_eq!(mcp.ok("cookies", clear).await["removed"], 1);
    mcp.reload(tab, &page, &["signed in as ada"]).await;
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
    let near = mcp.open_tab(&elsewhere).await;
    mcp.title_with(near, &["signed out"]).await;
    let got = mcp.ok("cookies", json!({ "tab_id": near })).await;
    assert_eq!(got["cookies"], json!([]), "{got}");
    let err =
        mcp.err("site_state", json!({ "tab_id": near, "action": "restore", "name": "ada" })).await;
    assert!(err.starts_with("origin_changed:") && err.contains(&origin), "{err}");
    mcp.reload(near, &elsewhere, &["signed out"]).await;

    // A site not allowed: site_not_allowed, and nothing of its cookies is read or written —
    // not even the saved state of another origin.
    let stranger = Fixtures::serve_on("127.0.0.2");
    let other = mcp.open_tab(&stranger.url("webdev/signin.html?login=eve")).await;
    let err = mcp.err("cookies", json!({ "tab_id": other })).await;
    assert_refused(&err, "site_not_allowed", &stranger.origin());
    let err =
        mcp.err("site_state", json!({ "tab_id": other, "action": "restore", "name": "ada" })).await;
    assert_refused(&err, "site_not_allowed", &stranger.origin());

    // Allowing the site again without the flag turns the switch off.
    browser.sites(&["allow", "http://127.0.0.1:*"]);
    let err = mcp.err("site_state", restore).await;
    assert_refused(&err, "cookies_not_allowed", &origin);
}
