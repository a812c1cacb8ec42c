//! Any page: success rate over the fixture suite, tabwire and Playwright MCP side by
//! side. Each task is done as an assistant would do it with each server's own tools (refs from
//! `find` for tabwire, the selectors Playwright MCP takes as `target`), on a freshly loaded
//! page, and judged only by what the page shows afterwards, read through that server's own
//! snapshot (`read_page` full, `browser_snapshot`). Not a test: it prints ok/fail per task.

use std::time::Instant;

use serde_json::{Value, json};
use tabwire_testkit::mcp::text;
use tabwire_testkit::{Chromium, Fixtures, Mcp, bins, peers};

/// The tasks, in the order they run: (name, page, what the page must show afterwards).
const TASKS: [(&str, &str, &str); 11] = [
    ("fill the React form, submit, read it back", "dom/form.html", "Submitted: {\"name\":\"Ada\""),
    ("click a button that checks isTrusted", "dom/widgets.html", "trusted click"),
    ("same, trusted input allowed for the site", "dom/widgets.html", "trusted click"),
    ("click under an overlay: dismiss it first", "dom/widgets.html", "covered clicked"),
    ("type into a contenteditable editor", "dom/widgets.html", "Editor says: Hello"),
    ("follow a link that opens a new tab", "dom/widgets.html", "Sign up"),
    ("answer a confirm", "dom/widgets.html", "confirm returned true"),
    ("upload a file", "dom/widgets.html", "files: note.txt 5"),
    ("select an option", "dom/widgets.html", "size l"),
    ("click, fetch answers 204: result shown on return", "dom/widgets.html", "fetched 204"),
    ("click a button in a cross-origin iframe", "dom/widgets.html", "Frame clicked in localhost"),
];

pub async fn run() {
    println!("\nany page: success rate over the fixture suite (judged by what the page shows)");
    let browser = Chromium::start();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    // In the working directory, which `tabwire mcp` inherits and takes uploads from by default.
    let scratch = tempfile::Builder::new().prefix("tw-tasks-").tempdir_in(".").unwrap();
    let file = std::fs::canonicalize(scratch.path()).unwrap().join("note.txt");
    std::fs::write(&file, "hello").unwrap();
    let file = file.to_str().unwrap().to_owned();
    let peer = peers::Peer::Playwright { settle_ms: None }.start().await;
    if let Err(why) = &peer {
        println!("  Playwright MCP did not run, so only tabwire's column: {why}");
    }

    println!("  {:<50} {:>8} {:>9} {:>15} {:>9}", "task", "tabwire", "ms", "Playwright MCP", "ms");
    let (mut ours_ok, mut theirs_ok) = (0, 0);
    for (i, (task, page, shows)) in TASKS.iter().enumerate() {
        let url = pages.url(page);
        let t = Instant::now();
        let ours = tabwire(&mcp, &browser, i, &url, &file, shows).await;
        let ours_ms = t.elapsed().as_millis();
        let t = Instant::now();
        let theirs = match &peer {
            Ok(p) => {
                // It reads files only under its own directory.
                let file = p.dir().join("note.txt");
                std::fs::write(&file, "hello").unwrap();
                let result = playwright(p, i, &url, file.to_str().unwrap(), shows).await;
                if result.is_err() {
                    unblock(p).await;
                }
                Some(result)
            }
            Err(_) => None,
        };
        let theirs_ms = t.elapsed().as_millis();
        ours_ok += ours.is_ok() as usize;
        theirs_ok += matches!(theirs, Some(Ok(()))) as usize;
        let verdict = |r: &Result<(), String>| if r.is_ok() { "ok" } else { "fail" };
        println!(
            "  {task:<50} {:>8} {ours_ms:>9} {:>15} {:>9}",
            verdict(&ours),
            theirs.as_ref().map_or("-", verdict),
            if theirs.is_some() { theirs_ms.to_string() } else { "-".into() },
        );
        for (who, r) in [("tabwire", Some(&ours)), ("Playwright MCP", theirs.as_ref())] {
            if let Some(Err(why)) = r {
                println!("      {who}: {}", why.chars().take(200).collect::<String>());
            }
        }
    }
    println!(
        "  {:<50} {:>8} {:>9} {:>15}",
        "succeeded",
        format!("{ours_ok}/{}", TASKS.len()),
        "",
        if peer.is_ok() { format!("{theirs_ok}/{}", TASKS.len()) } else { "-".into() }
    );
    if let Ok(p) = peer {
        p.stop().await;
    }
}

/// A tool call of tabwire's: its structured result, or the error's text.
async fn call(mcp: &Mcp, tool: &str, args: Value) -> Result<Value, String> {
    let result = mcp.call(tool, args).await;
    if result.is_error == Some(true) {
        return Err(format!("{tool}: {}", text(&result)));
    }
    Ok(result.structured_content.unwrap_or_default())
}

/// The ref of the first element `find` gives for `role` and `name`.
async fn find(mcp: &Mcp, tab: &Value, role: &str, name: &str) -> Result<String, String> {
    let found = call(mcp, "find", json!({ "tab_id": tab, "role": role, "name": name })).await?;
    let line = found["matches"][0]["line"].as_str().ok_or(format!("no {role} {name:?}"))?;
    Ok(line.split("[ref=").nth(1).unwrap().split(']').next().unwrap().to_owned())
}

/// Whether a page's snapshot text shows `shows` (quotes unescaped: both servers quote text).
fn judge(snapshot: &str, shows: &str) -> Result<(), String> {
    if snapshot.replace("\\\"", "\"").contains(shows) {
        Ok(())
    } else {
        Err(format!("the page does not show {shows:?}"))
    }
}

async fn tabwire(
    mcp: &Mcp,
    browser: &Chromium,
    task: usize,
    url: &str,
    file: &str,
    shows: &str,
) -> Result<(), String> {
    let opened = call(mcp, "open_tab", json!({ "url": url })).await?;
    let mut tab = opened["tab"]["id"].clone();
    call(mcp, "wait_for", json!({ "tab_id": tab, "selector": "button" })).await?;
    let click = async |tab: &Value, role: &str, name: &str| {
        let r = find(mcp, tab, role, name).await?;
        call(mcp, "click", json!({ "tab_id": tab, "ref": r })).await
    };
    match task {
        0 => {
            let r = find(mcp, &tab, "textbox", "Name").await?;
            let fields = json!([{ "ref": r, "value": "Ada" }]);
            call(mcp, "fill", json!({ "tab_id": tab, "fields": fields })).await?;
            click(&tab, "button", "Create account").await?;
        }
        1 | 2 => {
            if task == 2 {
                allow_trusted_input(browser);
            }
            // The ordinary click first; `effect: none` says it did nothing, then real input.
            let done = click(&tab, "button", "Trusted only").await?;
            if done["effect"] == "none" {
                let r = find(mcp, &tab, "button", "Trusted only").await?;
                call(mcp, "click", json!({ "tab_id": tab, "ref": r, "trusted": true })).await?;
            }
        }
        3 => {
            // Refused, naming what covers it: dismiss that, then click again.
            if let Err(e) = click(&tab, "button", "Under the overlay").await {
                if !e.contains("covered by") {
                    return Err(e);
                }
                click(&tab, "button", "Accept cookies").await?;
                click(&tab, "button", "Under the overlay").await?;
            }
        }
        4 => {
            let r = find(mcp, &tab, "textbox", "Editor").await?;
            call(mcp, "type", json!({ "tab_id": tab, "ref": r, "text": "Hello" })).await?;
        }
        5 => {
            let done = click(&tab, "link", "Open form in a new tab").await?;
            tab = done["new_tab"].clone();
            if tab.is_null() {
                return Err("the click reported no new tab".into());
            }
            call(mcp, "wait_for", json!({ "tab_id": tab, "text": "Sign up" })).await?;
        }
        6 => {
            call(mcp, "handle_dialog", json!({ "tab_id": tab, "accept": true })).await?;
            click(&tab, "button", "Confirm").await?;
        }
        7 => {
            let r = find(mcp, &tab, "button", "Attachment").await?;
            call(mcp, "upload_file", json!({ "tab_id": tab, "ref": r, "paths": [file] })).await?;
        }
        8 => {
            let r = find(mcp, &tab, "combobox", "Size").await?;
            let fields = json!([{ "ref": r, "value": "Large" }]);
            call(mcp, "fill", json!({ "tab_id": tab, "fields": fields })).await?;
        }
        9 => drop(click(&tab, "button", "Fetch 204").await?),
        10 => {
            // Both frames have one; the cross-origin one is the second.
            let found =
                call(mcp, "find", json!({ "tab_id": tab, "role": "button", "name": "Frame" }))
                    .await?;
            let line = found["matches"][1]["line"].as_str().ok_or("no second frame button")?;
            let r = line.split("[ref=").nth(1).unwrap().split(']').next().unwrap();
            call(mcp, "click", json!({ "tab_id": tab, "ref": r })).await?;
        }
        _ => unreachable!(),
    }
    let page = mcp.call("read_page", json!({ "tab_id": tab, "mode": "full", "budget": 20000 }));
    let page = text(&page.await);
    let _ = call(mcp, "close_tab", json!({ "tab_id": tab })).await;
    judge(&page, shows)
}

/// The user's switch for trusted input on the fixtures' site (`tabwire sites allow`).
fn allow_trusted_input(browser: &Chromium) {
    let out = std::process::Command::new(bins::bin("tabwire"))
        .args(["sites", "allow", "--trusted-input", "http://127.0.0.1:*"])
        .env("TABWIRE_RUNTIME_DIR", &browser.runtime_dir)
        .output()
        .expect("run tabwire sites");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// After a failed task: a file chooser or dialog left open blocks Playwright MCP's next calls
/// ("modal state"), so close it.
async fn unblock(p: &peers::Running) {
    let _ = p.call("browser_file_upload", json!({})).await;
    let _ = p.call("browser_handle_dialog", json!({ "accept": false })).await;
}

async fn playwright(
    p: &peers::Running,
    task: usize,
    url: &str,
    file: &str,
    shows: &str,
) -> Result<(), String> {
    p.open(url).await?;
    let click = async |target: &str| {
        p.call("browser_click", json!({ "element": target, "target": target })).await
    };
    match task {
        0 => {
            let fields = json!([{ "name": "Name", "type": "textbox", "target": "input[name=name]", "value": "Ada" }]);
            p.call("browser_fill_form", json!({ "fields": fields })).await?;
            click("button[type=submit]").await?;
        }
        1 | 2 => drop(click("#trusted").await?),
        3 => {
            if click("#covered").await.is_err() {
                click("#overlay button").await?;
                click("#covered").await?;
            }
        }
        4 => drop(p.call("browser_type", json!({ "target": "#editor", "text": "Hello" })).await?),
        5 => {
            click("a[target=_blank]").await?;
            p.call("browser_tabs", json!({ "action": "select", "index": 1 })).await?;
        }
        6 => {
            click("button:has-text('Confirm')").await?;
            p.call("browser_handle_dialog", json!({ "accept": true })).await?;
        }
        7 => {
            click("#file").await?;
            p.call("browser_file_upload", json!({ "paths": [file] })).await?;
        }
        8 => {
            let args = json!({ "target": "#size", "values": ["Large"] });
            p.call("browser_select_option", args).await?;
        }
        9 => drop(click("button:has-text('Fetch 204')").await?),
        10 => {
            // Inside a frame it takes its own refs: the second frame's button, from its snapshot.
            let snapshot = p.call("browser_snapshot", json!({})).await?;
            let line = snapshot.lines().filter(|l| l.contains("button \"Frame button\"")).nth(1);
            let line = line.ok_or("no second frame button in its snapshot")?;
            let r = line.split("[ref=").nth(1).unwrap().split(']').next().unwrap();
            click(r).await?;
        }
        _ => unreachable!(),
    }
    let snapshot = p.call("browser_snapshot", json!({})).await;
    if task == 5 {
        let _ = p.call("browser_tabs", json!({ "action": "close", "index": 1 })).await;
    }
    judge(&snapshot?, shows)
}
