//! The any-page tools on real third-party web apps from the npm registry (the packages of
//! `testkit/fixtures/apps/package.json`, their own prebuilt browser builds), served on 127.0.0.1.
//! What each app holds is read back through the debugger protocol, outside tabwire.
//! Unix only: every app runs in a headed Chromium under Xvfb (specs/install.md).
#![cfg(unix)]

use std::time::Duration;

use serde_json::{Value, json};
use tabwire_testkit::mcp::text;
use tabwire_testkit::xvfb::Xvfb;
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp, fixtures, npm};

/// The apps' packages, or a panic saying why they could not be installed.
fn install_apps() {
    npm::install_apps().unwrap_or_else(|e| panic!("{e}\nso no real app can be tested"));
}

/// A headed browser under Xvfb with a CDP pipe (the ground truth), and `tabwire mcp` on it;
/// the app's page open in a tab tabwire knows, with the CDP session on that tab. The tab is
/// opened the default way — in the session's own window, not in front of the user — and then
/// another window is put over that window, so that Chrome takes the page as hidden: no
/// animation frames, timers once a second, no focus events (specs/tools.md, "In the
/// background"). The first element holds the display: it outlives the browser.
async fn open_app(
    page: &str,
    ready: &str,
) -> ((Chromium, Xvfb), Cdp, Mcp, Value, String, Fixtures) {
    install_apps();
    let xvfb = Xvfb::start().unwrap_or_else(|e| panic!("{e}"));
    let mut browser = Chromium::start_headed_with_cdp(&xvfb.display);
    let (to_browser, from_browser) = browser.take_cdp_pipe().unwrap();
    let cdp = Cdp::new(to_browser, from_browser);
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let pages = Fixtures::serve();
    let url = pages.url(&format!("apps/{page}"));
    let tab = mcp.ok("open_tab", json!({ "url": url })).await["tab"]["id"].clone();
    let target = cdp.target_id("page", &format!("apps/{page}")).await.unwrap();
    let session = cdp.attach(&target).await.unwrap();
    // Drawn once while its window was still on top, as a window the user then covers.
    cdp.wait_for(&session, ready, Duration::from_secs(20)).await.unwrap();
    cover(&cdp, &target, &pages).await;
    let hidden = cdp.wait_for(&session, "document.hidden", Duration::from_secs(5)).await;
    hidden.unwrap_or_else(|e| panic!("the app's window is covered, so its page is hidden: {e}"));
    ((browser, xvfb), cdp, mcp, tab, session, pages)
}

/// Put a window of the same size and place over the window of `target` (X stacks the newer on
/// top); Chrome then counts the one below as covered.
async fn cover(cdp: &Cdp, target: &str, pages: &Fixtures) {
    let window = cdp.call("Browser.getWindowForTarget", json!({ "targetId": target }), None);
    let b = window.await.unwrap()["bounds"].clone();
    let over = json!({ "url": pages.url("plain.html"), "newWindow": true, "background": true,
        "left": b["left"], "top": b["top"], "width": b["width"], "height": b["height"] });
    cdp.call("Target.createTarget", over, None).await.unwrap();
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

/// CodeMirror 6 keeps its own selection and takes the DOM's only while its document has the
/// focus: in a window without it, text typed by ref went to the start of the document.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn type_reaches_the_end_of_codemirror_in_a_window_without_focus() {
    let ready = "!!window.view && !!document.querySelector('.cm-line')";
    let (_browser, cdp, mcp, tab, session, _pages) = open_app("codemirror.html", ready).await;
    assert_eq!(cdp.eval(&session, "document.hasFocus()").await.unwrap(), false);
    let page = mcp.read_page(json!({ "tab_id": tab, "budget": 20000 })).await;
    let editor = ref_in(&page.lines, "textbox");
    let result =
        mcp.call("type", json!({ "tab_id": tab, "ref": editor, "text": "greet('you');" })).await;
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    let value = cdp.eval(&session, "view.state.doc.toString()").await.unwrap();
    assert_eq!(
        value, "function greet(name) {\n  return \"hello \" + name;\n}\ngreet('you');",
        "typed at the end of the document, where the caret was sent"
    );
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_pressed_in_one_call_each_reach_prosemirror_as_a_persons_do() {
    let (_browser, cdp, mcp, tab, session, _pages) = open_app(
        "prosemirror.html",
        "!!window.view && !!document.querySelector('.ProseMirror li')",
    )
    .await;
    let page = mcp.read_page(json!({ "tab_id": tab, "budget": 20000 })).await;
    let editor = ref_in(&page.lines, "textbox");
    // ProseMirror learns where the caret went from the page's `selectionchange`, which comes
    // in a task of its own after each key: Enter acts where the caret went with Control+End,
    // at the end of the last item, not where the focus put it.
    let done = mcp
        .ok("press_key", json!({ "tab_id": tab, "ref": editor, "keys": "Control+End Enter" }))
        .await;
    mcp.ok("type", json!({ "tab_id": tab, "text": "Eggs" })).await;
    let doc = cdp.eval(&session, "view.state.doc.toJSON()").await.unwrap();
    let items = cdp
        .eval(&session, "view.state.doc.child(1).content.content.map(i => i.textContent)")
        .await
        .unwrap();
    assert_eq!(items, json!(["Milk", "Bread", "Eggs"]), "{done}\n{doc}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ant_design_form_is_read_past_its_aria_hidden_svg_icons() {
    let (_browser, cdp, mcp, tab, session, _pages) =
        open_app("antd-form.html", "!!document.querySelector('.ant-picker input')").await;
    // Its icons are `<svg aria-hidden="true">`, which have no innerText.
    let icons = "document.querySelectorAll('svg[aria-hidden=true]').length";
    assert!(cdp.eval(&session, icons).await.unwrap().as_u64().unwrap() > 0);
    let found =
        mcp.ok("find", json!({ "tab_id": tab, "role": "textbox", "name": "Traveller" })).await;
    let line = found["matches"][0]["line"].as_str().unwrap_or_default();
    assert!(line.starts_with("textbox \"Traveller\" [ref="), "{found}");
    let full = mcp.read_page(json!({ "tab_id": tab, "mode": "full", "budget": 20000 })).await;
    assert!(full.lines.contains("combobox \"Country\""), "{}", full.lines);
    assert!(full.lines.contains("button \"Save trip\""), "{}", full.lines);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ant_design_select_offers_its_options_as_refs_to_click() {
    let (_browser, cdp, mcp, tab, session, _pages) =
        open_app("antd-form.html", "!!document.querySelector('.ant-picker input')").await;
    let found =
        mcp.ok("find", json!({ "tab_id": tab, "role": "combobox", "name": "Country" })).await;
    let country = ref_in(found["matches"][0]["line"].as_str().unwrap(), "combobox");
    let opened = mcp.ok("click", json!({ "tab_id": tab, "ref": country })).await;
    // Its options are divs with a pointer cursor (the ARIA options beside them are drawn at
    // no size, for screen readers): what a person clicks is what `find` gives a ref for.
    let found = mcp.ok("find", json!({ "tab_id": tab, "name": "Japan" })).await;
    let line = found["matches"][0]["line"].as_str().unwrap_or_default();
    assert!(line.starts_with("clickable \"Japan\" [ref="), "{found}\n{opened}");
    let japan = ref_in(line, "clickable");
    mcp.ok("click", json!({ "tab_id": tab, "ref": japan })).await;
    let shown = "document.querySelector('.ant-select-content')?.innerText";
    assert_eq!(cdp.eval(&session, shown).await.unwrap(), "Japan");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editor_in_an_ag_grid_cell_is_shown_and_takes_the_value() {
    let (_browser, cdp, mcp, tab, session, _pages) = open_app("aggrid.html", AG_GRID_READY).await;
    let found = mcp.ok("find", json!({ "tab_id": tab, "role": "gridcell", "name": "33850" })).await;
    let cell = ref_in(found["matches"][0]["line"].as_str().unwrap(), "gridcell");
    let done = mcp.ok("click", json!({ "tab_id": tab, "ref": cell, "count": 2 })).await;
    // The cell now holds the grid's number editor, a field of its own (as the boolean cells
    // hold a checkbox): shown inside the cell, with a ref.
    let full = mcp.read_page(json!({ "tab_id": tab, "mode": "full", "budget": 20000 })).await;
    let editor = ref_in(&full.lines, "spinbutton \"Input Editor\"");
    assert!(full.lines.contains("checkbox"), "{}", full.lines);
    mcp.ok("fill", json!({ "tab_id": tab, "fields": [{ "ref": editor, "value": "35000" }] })).await;
    mcp.ok("press_key", json!({ "tab_id": tab, "keys": "Enter" })).await;
    let price = "(() => { let p; grid.forEachNode(n => { if (n.data.model === 'F-Series') p = n.data.price; }); return p; })()";
    assert_eq!(cdp.eval(&session, price).await.unwrap(), 35000, "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_that_only_move_the_selection_are_an_effect() {
    let (_browser, cdp, mcp, tab, session, _pages) =
        open_app("quill.html", "!!window.quill && !!document.querySelector('.ql-editor')").await;
    let page = mcp.read_page(json!({ "tab_id": tab, "budget": 20000 })).await;
    let editor = ref_in(&page.lines, "textbox");
    let done = mcp
        .ok("press_key", json!({ "tab_id": tab, "ref": editor, "keys": "Control+Home Shift+End" }))
        .await;
    let selection = cdp.eval(&session, "quill.getSelection()").await.unwrap();
    assert_eq!(selection, json!({ "index": 0, "length": 10 }), "{done}");
    // The person sees "First line" selected, and the next key acts on it: not "nothing in the
    // page changed".
    assert_eq!(done["effect"], "changed", "{done}");
    // A key that moves nothing is not a change: Home at the start of the text. In this hidden
    // tab that is `unknown` rather than `none` (what a hidden page draws may wait until it is
    // shown), and the report says the tab was hidden.
    mcp.ok("press_key", json!({ "tab_id": tab, "keys": "ArrowLeft" })).await;
    let done = mcp.ok("press_key", json!({ "tab_id": tab, "keys": "Home" })).await;
    assert_eq!((&done["effect"], &done["hidden"]), (&json!("unknown"), &json!(true)), "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_in_a_web_components_shadow_root_answers_through_its_adapter() {
    let (_browser, cdp, mcp, tab, session, pages) =
        open_app("deepchat.html", fixtures::DEEP_CHAT_READY).await;
    let asked = "When are you open on Saturdays?";
    let started = mcp
        .ok(
            "send_message_async",
            json!({ "tab_id": tab, "text": asked, "adapter": fixtures::deep_chat_adapter() }),
        )
        .await;
    let id = started["operation_id"].as_str().expect("operation_id").to_owned();
    let done = mcp.call("wait_for_operation", json!({ "operation_id": id })).await;
    assert_ne!(done.is_error, Some(true), "{}", text(&done));
    let op = done.structured_content.clone().unwrap();
    assert_eq!(op["status"], "completed", "{op}");
    // The fake model was asked exactly this; its markdown answer, as Deep Chat shows it (the
    // list's dashes and the code span's backticks rendered away).
    let chats = pages.chats();
    assert_eq!(chats.len(), 1, "{chats:?}");
    assert_eq!(chats[0].0, asked);
    let shown = chats[0].1.replace("\n- ", "\n").replace('`', "");
    assert_eq!(op["response_text"], shown, "{op}");
    let bubble = "document.querySelector('deep-chat').shadowRoot.querySelector('.ai-message-text').innerText.trim()";
    assert_eq!(op["response_text"], cdp.eval(&session, bubble).await.unwrap(), "{op}");
    let milestones: Vec<&str> =
        op["milestones"].as_array().unwrap().iter().filter_map(|m| m["name"].as_str()).collect();
    assert_eq!(milestones.first(), Some(&"message_sent"), "{op}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_chat_answers_through_the_adapter_the_detector_proposes() {
    let (_browser, _cdp, mcp, tab, _session, pages) =
        open_app("deepchat.html", fixtures::DEEP_CHAT_READY).await;
    // No adapter fits the page: list_adapters shows what the detector proposes, before use.
    let listed = mcp.ok("list_adapters", json!({ "tab_id": tab })).await;
    let found = &listed["tab"]["detected"];
    assert_eq!(found["clear"], true, "{listed}");
    let adapter = &found["adapter"];
    assert_eq!(adapter["name"], "detected", "{listed}");
    assert_eq!(adapter["input"], "#text-input", "{listed}");
    assert!(adapter["submit"].as_str().unwrap().contains(".input-button"), "{listed}");
    assert_eq!(adapter["detected"], true, "{listed}");

    let asked = "Do you open on Sundays?";
    let started = mcp.ok("send_message_async", json!({ "tab_id": tab, "text": asked })).await;
    assert_eq!(started["adapter"], "detected", "{started}");
    let id = started["operation_id"].as_str().expect("operation_id").to_owned();
    let done = mcp.call("wait_for_operation", json!({ "operation_id": id })).await;
    assert_ne!(done.is_error, Some(true), "{}", text(&done));
    let op = done.structured_content.clone().unwrap();
    assert_eq!(op["status"], "completed", "{op}");
    let chats = pages.chats();
    assert_eq!(chats.len(), 1, "{chats:?}");
    assert_eq!(chats[0].0, asked);
    let shown = chats[0].1.replace("\n- ", "\n").replace('`', "");
    assert_eq!(op["response_text"], shown, "{op}");
    let sent = &op["milestones"][0];
    assert_eq!((&sent["name"], &sent["data"]["excerpt"]), (&json!("message_sent"), &json!(asked)));
}

/// `cancel_operation` while Deep Chat streams presses its stop control (with the detected
/// adapter, the one that comes in place of the send icon while it answers): the operation ends
/// `stopped` with the part streamed so far, and the app streams no more.
async fn deep_chat_stops(detected: bool) {
    let (_browser, cdp, mcp, tab, session, pages) =
        open_app("deepchat.html", fixtures::DEEP_CHAT_READY).await;
    let mut args = json!({ "tab_id": tab, "text": "Tell me a long story" });
    if !detected {
        args["adapter"] = fixtures::deep_chat_adapter();
    }
    let started = mcp.ok("send_message_async", args).await;
    assert_eq!(started["adapter"] == "detected", detected, "{started}");
    let id = started["operation_id"].as_str().expect("operation_id").to_owned();
    let bubble = "(document.querySelector('deep-chat').shadowRoot.querySelector('.ai-message-text')?.innerText ?? '').trim()";
    let streaming = format!("{bubble}.includes('word10 ')");
    cdp.wait_for(&session, &streaming, Duration::from_secs(30)).await.unwrap();
    let stopped = mcp.ok("cancel_operation", json!({ "operation_id": id })).await;
    assert_eq!(stopped["status"], "stopped", "{stopped}");
    let last = stopped["milestones"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (&last["name"], &last["data"]["by"]),
        (&json!("response_stopped"), &json!("cancel_operation"))
    );
    let said = stopped["response_text"].as_str().expect("the text so far").to_owned();
    let whole = &pages.chats()[0].1;
    assert!(whole.starts_with(&said) && said.len() < whole.len(), "{said:?} of {whole:?}");
    // The app itself stopped: the page shows what the operation says, and stays so.
    let shown = cdp.eval(&session, bubble).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(cdp.eval(&session, bubble).await.unwrap(), shown, "it streams no more");
    assert_eq!(shown, json!(said));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_chat_stops_at_cancel_operation() {
    deep_chat_stops(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_chat_stops_at_cancel_operation_with_the_detected_adapter() {
    deep_chat_stops(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ant_design_date_picker_offers_its_days_as_refs_to_click() {
    let (_browser, cdp, mcp, tab, session, _pages) =
        open_app("antd-form.html", "!!document.querySelector('.ant-picker input')").await;
    let found =
        mcp.ok("find", json!({ "tab_id": tab, "role": "textbox", "name": "Start date" })).await;
    let date = ref_in(found["matches"][0]["line"].as_str().unwrap(), "textbox");
    mcp.ok("click", json!({ "tab_id": tab, "ref": date })).await;
    let page = mcp.read_page(json!({ "tab_id": tab, "budget": 20000 })).await;
    let lines = page.lines.as_str();
    // The panel is a table of days, each a cell a person clicks, under a header of the month
    // and year between prev/next controls: each day is a line with a ref of its own, not one
    // line named by the whole panel's text.
    let day = lines
        .lines()
        .map(str::trim)
        .find(|l| l.contains(" \"14\" [ref="))
        .unwrap_or_else(|| panic!("no day 14 with a ref in:\n{lines}"));
    assert!(!lines.contains("\"Last year Previous month"), "{lines}");
    assert!(lines.contains("button \"Next month"), "{lines}");
    // The month and year the panel shows are read as the user sees them.
    for shown in ["month", "year"] {
        let js = format!("document.querySelector('.ant-picker-{shown}-btn').innerText");
        let said = cdp.eval(&session, &js).await.unwrap();
        assert!(lines.contains(&format!("[text={said}]")), "{said}\n{lines}");
    }
    let want = "document.querySelector('.ant-picker-cell-in-view[title$=\"-14\"]').title";
    let want = cdp.eval(&session, want).await.unwrap();
    let done = mcp.ok("click", json!({ "tab_id": tab, "ref": ref_in(day, "") })).await;
    let value = "document.querySelector('.ant-picker input').value";
    assert_eq!(cdp.eval(&session, value).await.unwrap(), want, "{done}\n{lines}");
}

const AG_GRID_READY: &str = "!!window.grid && !!document.querySelector('[role=gridcell]')";

/// AG Grid, which draws only the rows in view (and a few more): a click on a column's header,
/// then typing into the grid's filter field. Each result says what happened to the rows in a
/// few lines — the order, how many rows, the first ones now — instead of every line of every
/// row drawn anew; and typing returns the rows the grid shows once it applied the filter, which
/// it does 500 ms after the last key (its own debounce), not before.
async fn sort_then_filter_ag_grid(cdp: &Cdp, mcp: &Mcp, tab: &Value, session: &str) {
    let found =
        mcp.ok("find", json!({ "tab_id": tab, "role": "columnheader", "name": "Price" })).await;
    let price = ref_in(found["matches"][0]["line"].as_str().unwrap(), "columnheader");
    let sorted = mcp.call("click", json!({ "tab_id": tab, "ref": price })).await;
    let said = text(&sorted);
    let sort = "grid.getColumnState().find(c => c.colId === 'price').sort";
    assert_eq!(cdp.eval(session, sort).await.unwrap(), "asc", "{said}");
    // The order, and the cheapest cars first: Playwright MCP's click says 262 characters; the
    // changed lines of every row drawn anew were about 2,800.
    let order = format!(
        "rows of grid [ref=e3]: re-ordered by columnheader \"Price\" [ref={price}] (ascending); 50 rows; first 5 in view:\n  row [ref="
    );
    assert!(said.contains(&order), "{said}");
    let first = said.find("\"Fiat\" \"500\" \"15774\"").unwrap_or_else(|| panic!("{said}"));
    let second = said.find("\"Toyota\" \"Series 1\" \"18000\"").unwrap_or_else(|| panic!("{said}"));
    assert!(first < second, "{said}");
    assert!(short(&said), "{said}");

    let found = mcp.ok("find", json!({ "tab_id": tab, "role": "textbox", "name": "Make" })).await;
    let field = ref_in(found["matches"][0]["line"].as_str().unwrap(), "textbox");
    let filtered = mcp.call("type", json!({ "tab_id": tab, "ref": field, "text": "Toyota" })).await;
    let said = text(&filtered);
    assert_eq!(cdp.eval(session, "grid.getDisplayedRowCount()").await.unwrap(), 5, "{said}");
    // Every Toyota, cheapest first, in the result of the typing itself.
    assert!(said.contains("rows of grid [ref=e3]: 5 rows now, 50 before; all:"), "{said}");
    let shown: Vec<&str> = said
        .lines()
        .filter(|l| l.starts_with("  row [ref="))
        .map(|l| l.split(": ").nth(1).unwrap_or_default())
        .collect();
    assert_eq!(
        shown,
        [
            "\"Toyota\" \"Series 1\" \"18000\" \"checked\"",
            "\"Toyota\" \"Series 4\" \"19327\" \"unchecked\"",
            "\"Toyota\" \"Corolla\" \"29600\" \"unchecked\"",
            "\"Toyota\" \"Series 3\" \"36218\" \"unchecked\"",
            "\"Toyota\" \"Series 2\" \"53109\" \"unchecked\"",
        ],
        "{said}"
    );
    assert!(
        said.contains("textbox \"Make Filter Input\" [ref=") && said.contains("[value=\"Toyota\"]")
    );
    assert!(short(&said), "{said}");
}

/// Whether a sort's or a filter's result is short: at most 700 characters, besides the note a
/// result in a hidden tab has (about 400). Both are about 620 now.
fn short(said: &str) -> bool {
    said.lines().filter(|l| !l.starts_with("note: ")).map(|l| l.len() + 1).sum::<usize>() <= 700
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sorting_and_filtering_ag_grid_is_told_in_a_few_lines_in_a_background_tab() {
    let (_browser, cdp, mcp, tab, session, _pages) = open_app("aggrid.html", AG_GRID_READY).await;
    sort_then_filter_ag_grid(&cdp, &mcp, &tab, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sorting_and_filtering_ag_grid_is_told_in_a_few_lines_in_front() {
    install_apps();
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().unwrap();
    let cdp = Cdp::new(to_browser, from_browser);
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let pages = Fixtures::serve();
    let url = pages.url("apps/aggrid.html");
    let tab = mcp.ok("open_tab", json!({ "url": url, "active": true })).await["tab"]["id"].clone();
    let target = cdp.target_id("page", "apps/aggrid.html").await.unwrap();
    let session = cdp.attach(&target).await.unwrap();
    cdp.wait_for(&session, AG_GRID_READY, Duration::from_secs(20)).await.unwrap();
    assert_eq!(cdp.eval(&session, "document.hidden").await.unwrap(), false);
    sort_then_filter_ag_grid(&cdp, &mcp, &tab, &session).await;
}
