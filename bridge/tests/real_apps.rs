//! The any-page tools on real third-party web apps from the npm registry (the packages of
//! `tests/fixtures/apps/package.json`, their own prebuilt browser builds), served on 127.0.0.1.
//! What each app holds is read back through the debugger protocol, outside tabwire.

use std::time::Duration;

use serde_json::{Value, json};
use tabwire_tests::mcp::text;
use tabwire_tests::{Cdp, Chromium, Fixtures, Mcp, bins, npm};

/// `tests/fixtures/apps/node_modules`, installed from the committed lock file when a package
/// of `package.json` is missing.
fn install_apps() {
    let dir = bins::repo_root().join("tests/fixtures/apps");
    // The lock file lives in the target dir, out of the repository.
    let _lock = npm::lock(&bins::bin("tabwire").parent().unwrap().join("real-apps"));
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("package.json")).unwrap()).unwrap();
    let missing = manifest["dependencies"]
        .as_object()
        .unwrap()
        .keys()
        .any(|name| !dir.join("node_modules").join(name).join("package.json").exists());
    if missing {
        npm::install(&dir, &[], &[])
            .unwrap_or_else(|e| panic!("{e}\nso no real app can be tested"));
    }
}

/// A browser with a CDP pipe (the ground truth), and `tabwire mcp` on it; the app's page open
/// in a tab tabwire knows, with the CDP session on that tab.
async fn open_app(page: &str, ready: &str) -> (Chromium, Cdp, Mcp, Value, String, Fixtures) {
    install_apps();
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().unwrap();
    let cdp = Cdp::new(to_browser, from_browser);
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let pages = Fixtures::serve();
    let url = pages.url(&format!("apps/{page}"));
    // In front, as a person works in it: a background tab runs no animation frames, which
    // editors draw in.
    let tab = mcp.ok("open_tab", json!({ "url": url, "active": true })).await["tab"]["id"].clone();
    let target = cdp.target_id("page", &format!("apps/{page}")).await.unwrap();
    let session = cdp.attach(&target).await.unwrap();
    cdp.wait_for(&session, ready, Duration::from_secs(20)).await.unwrap();
    (browser, cdp, mcp, tab, session, pages)
}

/// The ref of the first line of `snapshot` that starts with `start`.
fn ref_in(snapshot: &str, start: &str) -> String {
    let line = snapshot
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no {start} in:\n{snapshot}"));
    line.split("[ref=").nth(1).unwrap().split(']').next().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn monaco_code_marked_aria_hidden_is_read_as_the_user_sees_it() {
    let (_browser, _cdp, mcp, tab, _session, _pages) = open_app("monaco.html", MONACO_READY).await;
    let full = mcp.read_page(json!({ "tab_id": tab, "mode": "full", "budget": 20000 })).await;
    let lines = full.lines.as_str();
    // Monaco draws the code in `.view-lines`, which it marks aria-hidden: the user sees it, so
    // the model reads it, each line as laid out (indentation kept), marked as hidden from
    // assistive technology.
    assert!(lines.contains("text \"function greet(name) {\" [aria-hidden]"), "{lines}");
    assert!(lines.contains("text \"  return \\\"hello \\\" + name;\" [aria-hidden]"), "{lines}");
    // Not in interactive mode, which lists controls.
    let page = mcp.read_page(json!({ "tab_id": tab, "budget": 20000 })).await;
    assert!(!page.lines.contains("function greet"), "{}", page.lines);
}

const MONACO_READY: &str = "!!window.editor && !!document.querySelector('.view-line')";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn type_reaches_monaco_through_its_edit_context() {
    let (_browser, cdp, mcp, tab, session, _pages) = open_app("monaco.html", MONACO_READY).await;
    let uses = "!!document.querySelector('#editor .native-edit-context')?.editContext";
    assert_eq!(
        cdp.eval(&session, uses).await.unwrap(),
        true,
        "Monaco takes text through an EditContext here"
    );
    let page = mcp.read_page(json!({ "tab_id": tab, "budget": 20000 })).await;
    let editor = ref_in(&page.lines, "textbox");

    let result =
        mcp.call("type", json!({ "tab_id": tab, "ref": editor, "text": "greet('you');" })).await;
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    let value = cdp.eval(&session, "editor.getValue()").await.unwrap();
    assert_eq!(
        value, "function greet(name) {\n  return \"hello \" + name;\n}\ngreet('you');",
        "typed at the end of the document, as a person's Control+End then typing does"
    );
    let report = result.structured_content.clone().unwrap();
    assert_eq!(report["effect"], "changed", "{report}");
    let full = mcp.read_page(json!({ "tab_id": tab, "mode": "full", "budget": 20000 })).await;
    assert!(full.lines.contains("text \"greet('you');\" [aria-hidden]"), "{}", full.lines);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caret_keys_move_in_quill_as_a_persons_do() {
    let (_browser, cdp, mcp, tab, session, _pages) =
        open_app("quill.html", "!!window.quill && !!document.querySelector('.ql-editor')").await;
    let text = async || cdp.eval(&session, "quill.getText()").await.unwrap();
    // The user selected "First" (the page's own API, outside tabwire).
    cdp.eval(&session, "quill.setSelection(0, 5)").await.unwrap();

    // End leaves the selection for the end of the line: typing appends there, not over "First".
    mcp.ok("press_key", json!({ "tab_id": tab, "keys": "End" })).await;
    mcp.ok("type", json!({ "tab_id": tab, "text": " one" })).await;
    assert_eq!(text().await, "First line one\nOne\nTwo\n");

    // A word back with Control+ArrowLeft.
    mcp.ok("press_key", json!({ "tab_id": tab, "keys": "Control+ArrowLeft" })).await;
    mcp.ok("type", json!({ "tab_id": tab, "text": "number " })).await;
    assert_eq!(text().await, "First line number one\nOne\nTwo\n");

    // Shift+Home selects back to the start of the line; typing replaces it.
    mcp.ok("press_key", json!({ "tab_id": tab, "keys": "Shift+Home" })).await;
    mcp.ok("type", json!({ "tab_id": tab, "text": "X" })).await;
    assert_eq!(text().await, "Xone\nOne\nTwo\n");

    // Down a line, to its end, and on into the list.
    mcp.ok("press_key", json!({ "tab_id": tab, "keys": "ArrowDown End" })).await;
    mcp.ok("type", json!({ "tab_id": tab, "text": "!" })).await;
    assert_eq!(text().await, "Xone\nOne!\nTwo\n");
    let full = mcp.read_page(json!({ "tab_id": tab, "mode": "full", "budget": 20000 })).await;
    assert!(full.lines.contains("One!"), "{}", full.lines);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_double_click_on_a_ref_lands_on_what_is_under_the_pointer() {
    let (_browser, cdp, mcp, tab, session, _pages) =
        open_app("react-todos.html", "!!document.querySelector('li label')").await;
    let full = mcp.read_page(json!({ "tab_id": tab, "mode": "full", "budget": 20000 })).await;
    let item = ref_in(&full.lines, "listitem \"Buy milk\"");
    let done = mcp.ok("click", json!({ "tab_id": tab, "ref": item, "count": 2 })).await;
    // The item's centre is its label: a person's double click there runs the label's
    // onDoubleClick, which React finds from the element the events target.
    assert_eq!(cdp.eval(&session, "window.editing").await.unwrap(), true, "{done}");
    assert_eq!(done["effect"], "changed", "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swagger_operations_are_named_as_a_person_reads_them() {
    let (_browser, _cdp, mcp, tab, _session, _pages) =
        open_app("swagger.html", "!!document.querySelector('.opblock-summary-path')").await;
    let page = mcp.read_page(json!({ "tab_id": tab, "budget": 20000 })).await;
    let lines = page.lines.as_str();
    // The method, the path and the summary are boxes of their own, side by side: a person
    // reads them apart. The zero-width spaces Swagger UI puts before each "/" are not seen.
    assert!(lines.contains("button \"GET /pets/{petId} Find a pet by id\""), "{lines}");
    assert!(lines.contains("button \"GET /pets List all pets\""), "{lines}");
    assert!(!lines.contains('\u{200b}') && !lines.contains("\\u200b"), "{lines}");
    // A name found by what a person reads finds the operation, and opens it.
    let op = ref_in(lines, "button \"GET /pets/{petId} Find a pet by id\"");
    let done = mcp.ok("click", json!({ "tab_id": tab, "ref": op })).await;
    assert_eq!(done["effect"], "changed", "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enter_splitting_a_prosemirror_list_item_is_a_change() {
    let (_browser, cdp, mcp, tab, session, _pages) = open_app(
        "prosemirror.html",
        "!!window.view && !!document.querySelector('.ProseMirror li')",
    )
    .await;
    let items = async || {
        cdp.eval(&session, "view.state.doc.child(1).content.content.map(i => i.textContent)")
            .await
            .unwrap()
    };
    let page = mcp.read_page(json!({ "tab_id": tab, "budget": 20000 })).await;
    let editor = ref_in(&page.lines, "textbox");
    mcp.ok("type", json!({ "tab_id": tab, "ref": editor, "text": " rolls" })).await;
    assert_eq!(items().await, json!(["Milk", "Bread rolls"]));
    mcp.ok(
        "press_key",
        json!({ "tab_id": tab, "keys": "ArrowLeft ArrowLeft ArrowLeft ArrowLeft ArrowLeft" }),
    )
    .await;

    // Enter splits the item at the caret: the editor's text reads the same, squashed to one
    // line, but the page changed, and the report says so.
    let done = mcp.ok("press_key", json!({ "tab_id": tab, "keys": "Enter" })).await;
    assert_eq!(items().await, json!(["Milk", "Bread ", "rolls"]), "{done}");
    assert_eq!(done["effect"], "changed", "{done}");

    // Enter at the end of the last item: a new, empty item, which has no text at all.
    mcp.ok("press_key", json!({ "tab_id": tab, "keys": "End" })).await;
    let done = mcp.ok("press_key", json!({ "tab_id": tab, "keys": "Enter" })).await;
    assert_eq!(items().await, json!(["Milk", "Bread ", "rolls", ""]), "{done}");
    assert_eq!(done["effect"], "changed", "{done}");
}
