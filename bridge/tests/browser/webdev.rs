//! The webdev tools in real Chromium through the real `tabwire mcp`: a site's cookies, its web
//! storage and its signed-in state saved and put back — only on allowed sites whose "Cookies"
//! switch the user turned on, since a cookie is a credential. What a test checks is what the
//! page itself sees: the fixture's title names who is signed in and every cookie it can read.
//!
//! `127.0.0.2` stands in for any website the user did not allow; so does another port of
//! 127.0.0.1 when the allowed sites name only one.

use std::io::{Read, Write};

use serde_json::{Value, json};
use tabwire_testkit::mcp::assert_refused;
use tabwire_testkit::{Chromium, Fixtures, Mcp, bins};

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
    assert!(bins::local_path(&path).starts_with(state_env), "{path}");
    let file = std::fs::read_to_string(bins::local_path(&path)).unwrap();
    let state: Value = serde_json::from_str(&file).unwrap();
    assert!(state["cookies"].as_array().unwrap().iter().any(|c| c["name"] == "session"), "{file}");
    assert_eq!(state["local_storage"]["theme"], "dark", "{file}");
    // A Unix mode, which a Windows program does not set (under Wine its files get the default).
    #[cfg(unix)]
    if !tabwire_testkit::wine::active() {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(bins::local_path(&path)).unwrap().permissions().mode() & 0o777;
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

/// Another service on a port of 127.0.0.1 of its own, as a user runs several: its `/signin`
/// signs its user in as a server does, with an `HttpOnly` session cookie (which no page script
/// can read) and a `Secure` one; each page's title shows the cookies a script there can read.
/// Its origin.
fn service_with_a_sign_in() -> String {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for sock in listener.incoming() {
            let Ok(mut sock) = sock else { return };
            let mut head = [0u8; 8192];
            let n = sock.read(&mut head).unwrap_or(0);
            let signin = String::from_utf8_lossy(&head[..n]).starts_with("GET /signin");
            let cookies = if signin {
                "set-cookie: b_session=bob-secret; Path=/; HttpOnly\r\n\
                 set-cookie: b_secure=bob-secure; Path=/; Secure\r\n"
            } else {
                ""
            };
            let body = "<!doctype html><title>service</title><script>document.title = `service; cookies: ${document.cookie}`</script>";
            let _ = write!(
                sock,
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\n{cookies}\
                 cache-control: no-store\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://127.0.0.1:{port}")
}

/// `tabwire sites ARGS…` as the user runs it, which must fail: what it said.
fn sites_refused(browser: &Chromium, args: &[&str]) -> String {
    let out = std::process::Command::new(bins::bin("tabwire"))
        .arg("sites")
        .args(args)
        .env("TABWIRE_RUNTIME_DIR", &browser.runtime_dir)
        .output()
        .expect("run tabwire sites");
    let said =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success(), "tabwire sites {args:?} should have been refused: {said}");
    said
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cookies_of_another_port_or_of_https_never_reach_a_page() {
    let browser = Chromium::start();
    let state_dir = tempfile::tempdir().unwrap();
    let state_env = state_dir.path().to_str().unwrap();
    let mcp = Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_STATE_DIR", state_env)]).await;
    let pages = Fixtures::serve();
    let origin = pages.origin();
    let page = pages.url("webdev/signin.html");

    // Port B signs its user in; only port A is allowed.
    let service = service_with_a_sign_in();
    let theirs = mcp.open_tab(&format!("{service}/signin")).await;
    mcp.title_with(theirs, &["service; cookies: b_secure=bob-secure"]).await;
    browser.sites(&["revoke", "http://127.0.0.1:*"]);
    browser.sites(&["allow", &origin]);
    let tab = mcp.open_tab(&format!("{page}?login=ada")).await;
    mcp.title_with(tab, &["signed in as ada"]).await;

    // The Cookies switch for port A alone would hand over port B's sign-in: refused, saying
    // why and what to allow instead.
    let said = sites_refused(&browser, &["allow", "--cookies", &origin]);
    assert!(
        said.contains("per host, not per port")
            && said.contains("tabwire sites allow --cookies http://127.0.0.1:*"),
        "{said}"
    );
    assert!(!browser.sites(&["list"]).contains("(cookies)"), "the switch stayed off");
    let save = json!({ "tab_id": tab, "action": "save", "name": "ada" });
    for (tool, args) in [
        ("cookies", json!({ "tab_id": tab })),
        ("site_state", save.clone()),
        ("site_state", json!({ "tab_id": tab, "action": "clear" })),
    ] {
        let err = mcp.err(tool, args).await;
        assert_refused(&err, "cookies_not_allowed", &origin);
        assert!(
            err.contains("per host, not per port") && err.contains("--cookies http://127.0.0.1:*"),
            "{err}"
        );
    }
    assert!(std::fs::read_dir(state_dir.path()).map_or(true, |d| d.count() == 0), "nothing saved");

    // The user accepts every port of 127.0.0.1. Port B's sign-in is then theirs to hand over;
    // a Secure cookie still is not, to an http page: not listed, saved, cleared or written.
    browser.sites(&["allow", "--cookies", "http://127.0.0.1:*"]);
    let got = mcp.ok("cookies", json!({ "tab_id": tab })).await;
    let listed = names(&got["cookies"]);
    assert!(listed.contains(&"b_session") && !listed.contains(&"b_secure"), "{got}");
    let saved = mcp.ok("site_state", save).await;
    let file = std::fs::read_to_string(bins::local_path(saved["path"].as_str().unwrap())).unwrap();
    assert!(file.contains("b_session") && !file.contains("bob-secure"), "{file}");
    mcp.ok("site_state", json!({ "tab_id": tab, "action": "clear" })).await;
    let got = mcp.ok("cookies", json!({ "tab_id": tab })).await;
    assert!(!names(&got["cookies"]).contains(&"b_session"), "signed out: {got}");
    mcp.reload(theirs, &format!("{service}/"), &["service; cookies: b_secure=bob-secure"]).await;
    let secure = json!({ "name": "planted", "value": "x", "secure": true });
    let err = mcp.err("cookies", json!({ "tab_id": tab, "action": "set", "cookie": secure })).await;
    assert!(
        err.starts_with("bad_request:") && err.contains("Secure") && err.contains("https"),
        "{err}"
    );
}
