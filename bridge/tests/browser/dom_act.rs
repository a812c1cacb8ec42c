//! click, fill, type, press_key, pointer, upload_file, wait_for, handle_dialog and the settle
//! report, on real pages in real Chromium: what the user would see the page do.

use serde_json::{Value, json};
use tabwire_testkit::mcp::text;
use tabwire_testkit::{Chromium, Fixtures, Mcp, bins, npm};

async fn open(mcp: &Mcp, url: String) -> Value {
    mcp.ok("open_tab", json!({ "url": url })).await["tab"]["id"].clone()
}

/// The ref of the first line of read_page (interactive) that starts with `start`.
async fn ref_of(mcp: &Mcp, tab: &Value, start: &str) -> String {
    let page = mcp.read_page(json!({ "tab_id": tab, "budget": 20000 })).await;
    let snapshot = page.lines.as_str();
    let line = snapshot
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no {start} in:\n{snapshot}"));
    line.split("[ref=").nth(1).unwrap().split(']').next().unwrap().to_owned()
}

async fn click(mcp: &Mcp, tab: &Value, start: &str) -> Value {
    let r = ref_of(mcp, tab, start).await;
    mcp.ok("click", json!({ "tab_id": tab, "ref": r })).await
}

/// What the page's status line (#log) says now.
async fn status(mcp: &Mcp, tab: &Value) -> String {
    let found = mcp.ok("find", json!({ "tab_id": tab, "role": "status" })).await;
    found["matches"][0]["line"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clicks_report_what_happened_and_refuse_what_a_user_could_not_click() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, pages.url("dom/widgets.html")).await;

    let done = click(&mcp, &tab, "button \"Clicked 0 times\"").await;
    assert_eq!(done["effect"], "changed", "{done}");
    assert!(done["added"][0].as_str().unwrap().starts_with("button \"Clicked 1 times\""), "{done}");
    assert_eq!(done["navigated"], false);
    assert_eq!(done["new_tab"], Value::Null);

    // A handler that wants a trusted event ignores ours: the report says nothing happened.
    let result = mcp
        .call(
            "click",
            json!({ "tab_id": tab, "ref": ref_of(&mcp, &tab, "button \"Trusted only\"").await }),
        )
        .await;
    let report = result.structured_content.clone().unwrap();
    assert_eq!(report["effect"], "none", "{report}");
    assert!(text(&result).contains("effect: none"), "{}", text(&result));

    // Under the overlay: refused, naming what covers it; once it is gone, the click lands.
    let covered = ref_of(&mcp, &tab, "button \"Under the overlay\"").await;
    let err = mcp.err("click", json!({ "tab_id": tab, "ref": covered })).await;
    assert!(err.starts_with("not_actionable:") && err.contains("covered by"), "{err}");
    assert!(err.contains("div#overlay"), "{err}");
    assert!(!status(&mcp, &tab).await.contains("covered clicked"), "nothing was clicked");
    click(&mcp, &tab, "button \"Accept cookies\"").await;
    mcp.ok("click", json!({ "tab_id": tab, "ref": covered })).await;
    assert!(status(&mcp, &tab).await.contains("covered clicked"));

    // Shadow DOM and both frames.
    mcp.ok(
        "fill",
        json!({ "tab_id": tab, "fields": [{ "ref": ref_of(&mcp, &tab, "textbox \"Shadow input\"").await, "value": "hi" }] }),
    )
    .await;
    let shadow = click(&mcp, &tab, "button \"Shadow button\"").await;
    assert_eq!(shadow["effect"], "changed", "a change inside the shadow root counts: {shadow}");
    let full = mcp.read_page(json!({ "tab_id": tab, "mode": "full", "budget": 20000 })).await;
    assert!(full.lines.as_str().contains("text \"shadow says hi\""), "{full:?}");
    let page = mcp.read_page(json!({ "tab_id": tab })).await;
    let lines = page.lines.as_str();
    let cross = lines.split("iframe \"Cross origin frame\"").nth(1).unwrap();
    let inside = cross.lines().nth(1).unwrap(); // the line below the iframe's own
    let frame_button = inside.split("[ref=").nth(1).unwrap().split(']').next().unwrap();
    assert!(frame_button.starts_with('f'), "{inside}");
    let done = mcp.ok("click", json!({ "tab_id": tab, "ref": frame_button })).await;
    assert!(done["added"][0].as_str().unwrap().contains("Frame clicked in localhost"), "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settling_waits_for_the_fetch_a_click_started_even_a_204() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, pages.url("dom/widgets.html")).await;

    // A fetch whose body the page never reads, one it reads, a 204 and an XHR: each ends when
    // the page has its answer. One whose end is missed is still `pending` at the cap (5 s).
    for (name, answer) in [
        ("button \"Fetch 200\"", "fetched 200"),
        ("button \"Fetch and read\"", "read ok true"),
        ("button \"XHR 200\"", "xhr 200"),
        ("button \"Fetch 204\"", "fetched 204"),
    ] {
        let done = click(&mcp, &tab, name).await;
        assert_eq!(done["requests"], 1, "{done}");
        assert_eq!(done["pending"], json!([]), "{done}");
        // The server answers after 150 ms: the report came after it, not before.
        assert!(done["ms"].as_u64().unwrap() >= 150, "{done}");
        assert!(done["added"].to_string().contains(answer), "{done}");
    }
    let page = mcp.read_page(json!({ "tab_id": tab, "mode": "text" })).await;
    assert!(page.lines.as_str().contains("fetched 204"), "{page:?}");

    // wait_for: what is there returns at once; what never comes fails saying so.
    let met = mcp.ok("wait_for", json!({ "tab_id": tab, "text": "fetched 204" })).await;
    assert_eq!(met["met"], true);
    let err = mcp
        .err("wait_for", json!({ "tab_id": tab, "text": "never there", "timeout_ms": 300 }))
        .await;
    assert!(err.starts_with("timeout:") && err.contains("never there"), "{err}");
    let err = mcp.err("wait_for", json!({ "tab_id": tab })).await;
    assert!(err.starts_with("bad_request:"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dialogs_never_hang_and_handle_dialog_chooses_the_answer() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, pages.url("dom/widgets.html")).await;

    let done = click(&mcp, &tab, "button \"Alert\"").await;
    assert_eq!(done["dialog"]["type"], "alert", "{done}");
    assert_eq!(done["dialog"]["message"], "Hello from alert");
    let done = click(&mcp, &tab, "button \"Confirm\"").await;
    assert_eq!(done["dialog"]["accepted"], false, "{done}");
    assert!(status(&mcp, &tab).await.contains("confirm returned false"));

    let armed = mcp.ok("handle_dialog", json!({ "tab_id": tab, "accept": true })).await;
    assert_eq!(armed["armed"]["accept"], true);
    let done = click(&mcp, &tab, "button \"Confirm\"").await;
    assert_eq!(done["dialog"]["accepted"], true, "{done}");
    assert!(status(&mcp, &tab).await.contains("confirm returned true"));

    mcp.ok("handle_dialog", json!({ "tab_id": tab, "accept": true, "prompt_text": "Ada" })).await;
    click(&mcp, &tab, "button \"Prompt\"").await;
    assert!(status(&mcp, &tab).await.contains("prompt returned Ada"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_report_the_new_tab_or_the_navigation() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    // In front: Chrome opens no tab for a link clicked in a background tab (specs/tools.md,
    // "The user's focus").
    let opened = json!({ "url": pages.url("dom/widgets.html"), "active": true });
    let tab = mcp.ok("open_tab", opened).await["tab"]["id"].clone();

    let before = mcp.ok("list_tabs", json!({})).await["tabs"].as_array().unwrap().len();
    let done = click(&mcp, &tab, "link \"Open form in a new tab\"").await;
    let new_tab = done["new_tab"].as_i64().unwrap_or_else(|| panic!("{done}"));
    // At once, as an assistant would: the new tab may not have committed its page yet, and
    // wait_for waits for it instead of refusing a tab that "shows nothing yet".
    let waited = mcp.ok("wait_for", json!({ "tab_id": new_tab, "text": "Create account" })).await;
    assert_eq!(waited["met"], true, "{waited}");
    let tabs = mcp.ok("list_tabs", json!({})).await;
    let opened = tabs["tabs"].as_array().unwrap().iter().find(|t| t["id"] == new_tab).unwrap();
    assert!(opened["url"].as_str().unwrap().ends_with("dom/form.html"), "{opened}");
    let count = tabs["tabs"].as_array().unwrap().len();
    assert_eq!(count, before + 1, "one tab opened: {tabs}");

    // wait_for follows the tab through the navigation the click starts.
    let same = ref_of(&mcp, &tab, "link \"Go to the form\"").await;
    let wait = json!({ "tab_id": tab, "url": "form.html", "text": "Create account" });
    let (waited, done) = tokio::join!(
        mcp.ok("wait_for", wait),
        mcp.ok("click", json!({ "tab_id": tab, "ref": same }))
    );
    assert_eq!(waited["met"], true, "{waited}");
    assert!(waited["url"].as_str().unwrap().ends_with("dom/form.html"), "{waited}");
    assert_eq!(done["navigated"], true, "{done}");
    assert!(done["navigated_to"].as_str().unwrap().ends_with("dom/form.html"), "{done}");
    let tabs = mcp.ok("list_tabs", json!({})).await;
    assert_eq!(tabs["tabs"].as_array().unwrap().len(), count, "no tab opened twice");
    let page = mcp.read_page(json!({ "tab_id": tab })).await;
    assert!(page.lines.as_str().contains("button \"Create account\""), "{page:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fill_sets_a_react_form_that_keeps_the_values() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, pages.url("dom/form.html")).await;
    mcp.ok("wait_for", json!({ "tab_id": tab, "text": "Create account" })).await;

    let mut fields = Vec::new();
    for (label, value) in [
        ("textbox \"Name\"", json!("Ada Lovelace")),
        ("textbox \"Email\"", json!("ada@example.com")),
        ("textbox \"City\"", json!("London")),
        ("textbox \"Zip\"", json!("NW1")),
        ("textbox \"Phone\"", json!("+44 20")),
        ("textbox \"Company\"", json!("Analytical")),
        ("textbox \"Bio\"", json!("first\nprogrammer")),
        ("combobox \"Country\"", json!("Germany")),
        ("checkbox \"I agree\"", json!(true)),
        ("radio \"Pro\"", json!(true)),
        ("textbox \"Start\"", json!("2026-12-01")),
    ] {
        fields.push(json!({ "ref": ref_of(&mcp, &tab, label).await, "value": value }));
    }
    let done = mcp.ok("fill", json!({ "tab_id": tab, "fields": fields })).await;
    assert_eq!(done["effect"], "changed", "{done}");
    let page = mcp.read_page(json!({ "tab_id": tab, "mode": "text" })).await;
    let md = page.lines.as_str();
    for held in [
        "\"name\":\"Ada Lovelace\"",
        "\"email\":\"ada@example.com\"",
        "\"bio\":\"first\\nprogrammer\"",
        "\"country\":\"de\"",
        "\"agree\":true",
        "\"plan\":\"pro\"",
        "\"start\":\"2026-12-01\"",
    ] {
        assert!(md.contains(held), "React holds {held}: {md}");
    }
    // Typing key by key reaches React too.
    let name = ref_of(&mcp, &tab, "textbox \"Name\"").await;
    mcp.ok("type", json!({ "tab_id": tab, "ref": name, "text": " Jr" })).await;
    // And it submits what it holds.
    click(&mcp, &tab, "button \"Create account\"").await;
    let page = mcp.read_page(json!({ "tab_id": tab, "mode": "text" })).await;
    assert!(page.lines.as_str().contains("Submitted: {\"name\":\"Ada Lovelace Jr\""), "{page:?}");

    let name = ref_of(&mcp, &tab, "textbox \"Name\"").await;
    let country = ref_of(&mcp, &tab, "combobox \"Country\"").await;
    let err = mcp
        .err("fill", json!({ "tab_id": tab, "fields": [{ "ref": country, "value": "Mars" }] }))
        .await;
    assert!(
        err.starts_with("bad_request:") && err.contains("\"Japan\""),
        "names the options: {err}"
    );
    let err = mcp.err("fill", json!({ "tab_id": tab, "fields": [{ "ref": name }] })).await;
    assert!(err.contains("value"), "{err}");
    // A heading has no ref in read_page's interactive lines; find gives one.
    let found = mcp.ok("find", json!({ "tab_id": tab, "role": "heading" })).await;
    let line = found["matches"][0]["line"].as_str().unwrap();
    let heading = line.split("[ref=").nth(1).unwrap().split(']').next().unwrap();
    let err = mcp
        .err("fill", json!({ "tab_id": tab, "fields": [{ "ref": heading, "value": "x" }] }))
        .await;
    assert!(err.starts_with("not_actionable:"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn type_press_key_and_upload_file_act_as_a_user_would() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, pages.url("dom/widgets.html")).await;

    // Typing into a field, then Enter: the page's keydown handler sees it.
    let search = ref_of(&mcp, &tab, "textbox \"Search\"").await;
    mcp.ok("type", json!({ "tab_id": tab, "ref": search, "text": "kittens", "submit": true }))
        .await;
    assert!(status(&mcp, &tab).await.contains("searched kittens"));
    // Select all and delete, then type again.
    mcp.ok("press_key", json!({ "tab_id": tab, "ref": search, "keys": "Control+A Backspace" }))
        .await;
    mcp.ok("type", json!({ "tab_id": tab, "text": "owls" })).await;
    mcp.ok("press_key", json!({ "tab_id": tab, "keys": "Enter" })).await;
    assert!(status(&mcp, &tab).await.contains("searched owls\""), "{}", status(&mcp, &tab).await);
    let err = mcp.err("press_key", json!({ "tab_id": tab, "keys": "Hyper+Q" })).await;
    assert!(err.starts_with("bad_request:"), "{err}");

    // A contenteditable editor takes the text as typing would give it.
    let editor = ref_of(&mcp, &tab, "textbox \"Editor\"").await;
    mcp.ok("fill", json!({ "tab_id": tab, "fields": [{ "ref": editor, "value": "Hello" }] })).await;
    mcp.ok("type", json!({ "tab_id": tab, "ref": editor, "text": " world" })).await;
    let page = mcp.read_page(json!({ "tab_id": tab, "mode": "text" })).await;
    assert!(page.lines.as_str().contains("Editor says: Hello world"), "{page:?}");

    // select through fill
    let size = ref_of(&mcp, &tab, "combobox \"Size\"").await;
    mcp.ok("fill", json!({ "tab_id": tab, "fields": [{ "ref": size, "value": "Large" }] })).await;
    assert!(status(&mcp, &tab).await.contains("size l"));

    // A file from disk into the file input: from the test's working directory, which `tabwire
    // mcp` inherits and takes uploads from by default (specs/tools.md, upload_file).
    let dir = tempfile::Builder::new().prefix("tw-upload-").tempdir_in(".").unwrap();
    let file = std::fs::canonicalize(dir.path()).unwrap().join("notes.txt");
    std::fs::write(&file, "hello").unwrap();
    let input = ref_of(&mcp, &tab, "button \"Attachment\"").await;
    let path = bins::program_path(&file);
    let path = path.as_str();
    mcp.ok("upload_file", json!({ "tab_id": tab, "ref": input, "paths": [path] })).await;
    assert!(status(&mcp, &tab).await.contains("files: notes.txt 5"));
    let err = mcp
        .err("upload_file", json!({ "tab_id": tab, "ref": input, "paths": ["notes.txt"] }))
        .await;
    assert!(err.starts_with("bad_request:") && err.contains("absolute"), "{err}");
    let big = file.with_file_name("big.bin");
    std::fs::write(&big, vec![0u8; 11 * 1024 * 1024]).unwrap();
    let err = mcp
        .err(
            "upload_file",
            json!({ "tab_id": tab, "ref": input, "paths": [bins::program_path(&big)] }),
        )
        .await;
    assert!(err.starts_with("too_large:"), "{err}");
    let err =
        mcp.err("upload_file", json!({ "tab_id": tab, "ref": search, "paths": [path] })).await;
    assert!(err.starts_with("not_actionable:"), "{err}");
    drop(dir);

    // pointer: scroll the page, hover a button.
    let done = mcp.ok("pointer", json!({ "tab_id": tab, "action": "scroll", "dy": 300 })).await;
    assert_eq!(done["effect"], "none", "scrolling changes no content: {done}");
    let alpha = ref_of(&mcp, &tab, "button \"Alpha\"").await;
    mcp.ok("pointer", json!({ "tab_id": tab, "action": "hover", "ref": alpha })).await;
    let err = mcp.err("pointer", json!({ "tab_id": tab, "action": "jump" })).await;
    assert!(err.starts_with("bad_request:"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strict_csp_page_is_read_and_driven() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, pages.url("dom/csp.html")).await;
    let query = ref_of(&mcp, &tab, "textbox \"Query\"").await;
    mcp.ok("fill", json!({ "tab_id": tab, "fields": [{ "ref": query, "value": "tabwire" }] }))
        .await;
    let done = click(&mcp, &tab, "button \"Search\"").await;
    assert_eq!(done["navigated"], true, "{done}");
    assert!(done["navigated_to"].as_str().unwrap().ends_with("csp.html?q=tabwire"), "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selectors_drag_and_what_cannot_be_done() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, pages.url("dom/widgets.html")).await;

    // A CSS selector instead of a ref.
    let done = mcp.ok("click", json!({ "tab_id": tab, "selector": "#counter" })).await;
    assert!(done["added"][0].as_str().unwrap().contains("Clicked 1 times"), "{done}");
    let err = mcp.err("click", json!({ "tab_id": tab, "selector": "#nope" })).await;
    assert!(err.starts_with("no_such_element:") && err.contains("#nope"), "{err}");
    let err = mcp.err("click", json!({ "tab_id": tab, "selector": "##" })).await;
    assert!(err.starts_with("bad_request:"), "{err}");
    let err = mcp.err("click", json!({ "tab_id": tab })).await;
    assert!(err.starts_with("bad_request:") && err.contains("ref"), "{err}");

    // Disabled, and typing with nothing focused.
    let disabled = ref_of(&mcp, &tab, "button \"Not yet\"").await;
    let err = mcp.err("click", json!({ "tab_id": tab, "ref": disabled })).await;
    assert!(err.starts_with("not_actionable:") && err.contains("disabled"), "{err}");
    let err = mcp.err("type", json!({ "tab_id": tab, "text": "x" })).await;
    assert!(err.starts_with("not_actionable:") && err.contains("focused"), "{err}");

    // Drag the card onto the column: the page's drop handler gets the data.
    let card = ref_of(&mcp, &tab, "clickable \"Card\"").await;
    let column = ref_of(&mcp, &tab, "clickable \"Done column\"").await;
    mcp.ok("pointer", json!({ "tab_id": tab, "action": "drag", "ref": card, "to": column })).await;
    assert!(status(&mcp, &tab).await.contains("dropped card"), "{}", status(&mcp, &tab).await);

    // wait_for: a selector and the url hold at once; a text that goes.
    let met = mcp
        .ok("wait_for", json!({ "tab_id": tab, "selector": "#counter", "url": "widgets.html" }))
        .await;
    assert_eq!(met["met"], true);
    click(&mcp, &tab, "button \"Accept cookies\"").await;
    let met = mcp.ok("wait_for", json!({ "tab_id": tab, "text_gone": "Accept cookies" })).await;
    assert_eq!(met["met"], true);
    let err =
        mcp.err("wait_for", json!({ "tab_id": tab, "url": "elsewhere", "timeout_ms": 300 })).await;
    assert!(err.starts_with("timeout:") && err.contains("elsewhere"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fill_and_type_refuse_a_field_under_an_overlay_as_a_user_could_not_reach_it() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, pages.url("dom/covered.html")).await;
    let user = ref_of(&mcp, &tab, "textbox \"User\"").await;
    let plan = ref_of(&mcp, &tab, "combobox \"Plan\"").await;

    for (tool, args) in [
        ("fill", json!({ "tab_id": tab, "fields": [{ "ref": user, "value": "ada" }] })),
        ("fill", json!({ "tab_id": tab, "fields": [{ "ref": plan, "value": "Team" }] })),
        ("type", json!({ "tab_id": tab, "ref": user, "text": "ada" })),
    ] {
        let err = mcp.err(tool, args).await;
        assert!(err.starts_with("not_actionable:") && err.contains("covered by"), "{err}");
        assert!(err.contains("div#banner"), "names what covers it: {err}");
    }
    // A reachable field and a covered one: refused before either is set.
    let note = ref_of(&mcp, &tab, "textbox \"Note\"").await;
    let both = json!([{ "ref": note, "value": "hello" }, { "ref": user, "value": "ada" }]);
    let err = mcp.err("fill", json!({ "tab_id": tab, "fields": both })).await;
    assert!(err.starts_with("not_actionable:") && err.contains("div#banner"), "{err}");
    let page = mcp.read_page(json!({ "tab_id": tab })).await;
    let lines = page.lines.as_str();
    assert!(lines.contains("combobox \"Plan\"") && lines.contains("[value=\"Free\"]"), "{lines}");
    assert!(!lines.contains("[value=\"ada\"]"), "nothing was typed: {lines}");
    assert!(!lines.contains("[value=\"hello\"]"), "not the reachable field either: {lines}");

    // Once the banner is answered, the same calls land.
    click(&mcp, &tab, "button \"Accept cookies\"").await;
    mcp.ok("type", json!({ "tab_id": tab, "ref": user, "text": "ada" })).await;
    let found = mcp.ok("find", json!({ "tab_id": tab, "text": "typed ada" })).await;
    assert_eq!(found["total"], 1, "{found}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_under_the_pages_own_overlay_is_not_clicked_through() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, pages.url("dom/covered-frame.html")).await;
    mcp.ok("wait_for", json!({ "tab_id": tab, "text": "Close the veil", "timeout_ms": 5000 }))
        .await;
    let button = ref_of(&mcp, &tab, "button \"Frame button\"").await;
    let input = ref_of(&mcp, &tab, "textbox \"Frame input\"").await;
    assert!(button.starts_with('f'), "a ref inside the frame: {button}");

    // The frame's own agent sees nothing on top of the button; the page around the frame does.
    for (tool, args) in [
        ("click", json!({ "tab_id": tab, "ref": button })),
        ("fill", json!({ "tab_id": tab, "fields": [{ "ref": input, "value": "ada" }] })),
        ("type", json!({ "tab_id": tab, "ref": input, "text": "ada" })),
    ] {
        let err = mcp.err(tool, args).await;
        assert!(err.starts_with("not_actionable:") && err.contains("covered by"), "{tool}: {err}");
        assert!(
            err.contains("div#veil") && err.contains("iframe#widget"),
            "{tool}: names both: {err}"
        );
    }
    let page = mcp.read_page(json!({ "tab_id": tab, "mode": "full", "budget": 20000 })).await;
    let lines = page.lines.as_str();
    assert!(!lines.contains("Frame clicked"), "nothing was clicked: {lines}");
    assert!(!lines.contains("ada"), "nothing was typed: {lines}");

    // Once the veil is closed, the same click lands in the frame.
    click(&mcp, &tab, "button \"Close the veil\"").await;
    let done = mcp.ok("click", json!({ "tab_id": tab, "ref": button })).await;
    assert!(done["added"][0].as_str().unwrap().contains("Frame clicked in localhost"), "{done}");
}

/// The exported test's code: what export_test's text holds between its ```ts fence.
fn exported_code(text: &str) -> String {
    let code = text.split("```ts\n").nth(1).unwrap_or_else(|| panic!("no code in:\n{text}"));
    code.split("```").next().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_session_did_is_exported_as_a_playwright_test_that_catches_the_broken_build() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, pages.url("dom/shop.html")).await;

    // A session signs in, chooses, types, clicks by test id, places the order, waits for it and
    // reads back what was placed.
    let (email, password) = (
        ref_of(&mcp, &tab, "textbox \"Email\"").await,
        ref_of(&mcp, &tab, "textbox \"Password\"").await,
    );
    let fields = json!([{ "ref": email, "value": "ada@example.com" }, { "ref": password, "value": "hunter2" }]);
    mcp.ok("fill", json!({ "tab_id": tab, "fields": fields })).await;
    let signed_in = click(&mcp, &tab, "button \"Sign in\"").await;
    assert!(signed_in["added"].to_string().contains("Welcome, ada@example.com"), "{signed_in}");
    assert!(
        signed_in["result"].get("targets").is_none(),
        "the facts are not the model's: {signed_in}"
    );
    let fields = json!([
        { "ref": ref_of(&mcp, &tab, "combobox \"Size\"").await, "value": "Large" },
        { "ref": ref_of(&mcp, &tab, "checkbox \"Gift wrap\"").await, "value": true },
        { "ref": ref_of(&mcp, &tab, "textbox \"Quantity\"").await, "value": "2" },
    ]);
    mcp.ok("fill", json!({ "tab_id": tab, "fields": fields })).await;
    let note = ref_of(&mcp, &tab, "textbox \"Note\"").await;
    mcp.ok("type", json!({ "tab_id": tab, "ref": note, "text": "ring twice" })).await;
    let star = ref_of(&mcp, &tab, "clickable \"☆\"").await;
    mcp.ok("click", json!({ "tab_id": tab, "ref": star })).await;
    let placing = click(&mcp, &tab, "button \"Place order\"").await;
    let report = placing["added"].to_string();
    assert!(report.contains("Placing the order") && !report.contains("Order placed"), "{placing}");
    mcp.ok("wait_for", json!({ "tab_id": tab, "text": "Order placed" })).await;
    let placed = "Order placed: 2 × Large, gift wrapped (note: ring twice)";
    assert!(status(&mcp, &tab).await.contains(placed), "find reads the order back");

    let dir = format!("target/tabwire-export-{}", std::process::id());
    let path = format!("{dir}/shop.spec.ts");
    let args = json!({ "tab_id": tab, "name": "orders two large, gift wrapped", "path": path });
    let exported = text(&mcp.call("export_test", args).await);
    assert!(exported.contains("set PASSWORD in the environment"), "{exported}");
    let spec = exported_code(&exported);
    let written = std::fs::read_to_string(&path).expect("export_test wrote the file it named");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(written, spec);
    // Locators are the roles and names tabwire resolved, else the test id; never an index.
    for want in [
        "page.getByRole('button', { name: 'Sign in', exact: true }).click()",
        "page.getByRole('combobox', { name: 'Size', exact: true }).selectOption('Large')",
        "page.getByRole('checkbox', { name: 'Gift wrap', exact: true }).check()",
        "page.getByTestId('favourite').click()",
        "toHaveValue('ring twice')",
        "page.getByRole('textbox', { name: 'Password', exact: true }).fill(secret('PASSWORD'))",
        "getByRole('heading', { name: 'Welcome, ada@example.com', exact: true })).toBeVisible()",
        "toContainText('Order placed')",
    ] {
        assert!(spec.contains(want), "no {want:?} in:\n{spec}");
    }
    // What the session read back after acting is checked on the same role-and-name locators:
    // read_page's first lines after the page loaded, find's match after the order.
    let read = "getByRole('heading', { name: 'Shop', exact: true })).toBeVisible()";
    assert!(spec.contains(read), "no check of what read_page read in:\n{spec}");
    let found = format!(
        "await expect(page.getByRole('status').filter({{ hasText: '{placed}' }})).toHaveText('{placed}');"
    );
    assert!(spec.contains(&found), "no check of what find read in:\n{spec}");
    assert!(!spec.contains("hunter2"), "a password is never written:\n{spec}");
    assert!(!spec.contains("nth(") && !spec.contains("[ref="), "{spec}");

    // It runs green with @playwright/test on the app, and red on its broken build.
    let env = [("PASSWORD", "hunter2")];
    let (passed, out) =
        npm::run_playwright_test(&spec, &env, &[]).unwrap_or_else(|e| panic!("{e}"));
    assert!(passed, "the exported test fails on the working app:\n{out}\n{spec}");
    let broken = [("x-fixture-variant", "broken")];
    let (passed, out) = npm::run_playwright_test(&spec, &env, &broken).unwrap();
    assert!(!passed, "the exported test passes on the broken build:\n{out}");
    // The order is placed (wait_for's check holds); what find read back is what catches it.
    assert!(out.contains("toHaveText(expected) failed") && out.contains(&found), "{out}");
    // Without the password in the environment, it says what to set.
    let (passed, out) = npm::run_playwright_test(&spec, &[], &[]).unwrap();
    assert!(!passed && out.contains("set PASSWORD"), "{out}");

    let err = mcp.err("export_test", json!({ "tab_id": tab, "path": "../escape.spec.ts" })).await;
    assert!(err.contains("without `..`"), "{err}");
}
