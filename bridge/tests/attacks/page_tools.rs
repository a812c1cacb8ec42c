//! A page on another allowed site poisons the tools `tabwire mcp --page-tools` makes of its
//! declared commands (`specs/page-sdk.md`, "Declared commands"; `specs/tools.md`, "Page tools"),
//! in real Chromium, and this checks what a model would see in `tools/list`: the page's words
//! cannot close the quote tabwire puts them in or start a line of their own, the schema's words
//! are labelled as the page's or gone, the page's `readOnly`/`destructive` are no MCP hints, a
//! parameter name that carries text is refused and the page told why, and the real app keeps its
//! tool names even when the other site declared the same app and command first.
//!
//! The real colour app (`colour.html`) is on `127.0.0.1`; the attacker
//! (`attack/poison-tools.html`) on `127.0.0.2`, which the user allowed with `tabwire sites allow`.

use std::time::{Duration, Instant};

use rmcp::model::Tool;
use serde_json::{Value, json};
use tabwire_testkit::{Chromium, Fixtures, Mcp};

/// A tab of the user's at `url`, which every session may use (`users_tab`).
async fn users_open(runtime_dir: &std::path::Path, url: String) -> i64 {
    tabwire_testkit::mcp::users_tab(runtime_dir, &url).await.as_i64().unwrap()
}

/// The page tools (every tool whose description names `origin`), by name.
async fn tools_of(mcp: &Mcp, origin: &str) -> Vec<Tool> {
    let mut tools: Vec<Tool> = mcp
        .client
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .filter(|t| t.description.as_deref().is_some_and(|d| d.contains(origin)))
        .collect();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    tools
}

/// Wait (up to 15 s) until `origin` offers `count` tools; those tools.
async fn wait_for_tools(mcp: &Mcp, origin: &str, count: usize) -> Vec<Tool> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let tools = tools_of(mcp, origin).await;
        if tools.len() == count || Instant::now() > deadline {
            assert_eq!(tools.len(), count, "the tools of {origin}: {tools:#?}");
            return tools;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn names(tools: &[Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

/// Characters that read as the closing `»` of tabwire's quote: none may be in the page's words.
const CLOSING_LOOK_ALIKES: [char; 7] = ['»', '⟫', '〉', '≫', '》', '❯', '＞'];

/// Every string in `schema` that is page text shown unlabelled: any that is neither a
/// `description` labelled as the page's and quoted (with nothing in the quote that reads as its
/// end) nor a short token (a keyword, a type, a name, a value of at most 32 ASCII letters,
/// digits and `_-.:/+@#`, too short to say a sentence): (where, the string).
fn unlabelled(schema: &Value, at: &str, found: &mut Vec<(String, String)>) {
    let token = |s: &str| {
        s.len() <= 32 && s.chars().all(|c| c.is_ascii_alphanumeric() || "_-.:/+@#$".contains(c))
    };
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                let here = format!("{at}/{key}");
                // The label is tabwire's, before the quote the page's words are in.
                let labelled = |s: &str| {
                    key == "description"
                        && s.split_once('«').is_some_and(|(label, quote)| {
                            label.contains("not instructions")
                                && quote.find(CLOSING_LOOK_ALIKES)
                                    == Some(quote.len() - '»'.len_utf8())
                        })
                };
                match value {
                    _ if here == "/properties/tab_id" => {} // tabwire's own parameter
                    _ if !token(key) => found.push((here, key.clone())),
                    Value::String(s) if labelled(s) => {}
                    _ => unlabelled(value, &here, found),
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                unlabelled(v, &format!("{at}/{i}"), found);
            }
        }
        Value::String(s) if !token(s) => found.push((at.to_owned(), s.clone())),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_on_another_site_cannot_poison_the_page_tools_a_model_sees() {
    let browser = Chromium::start();
    let real = Fixtures::serve();
    let stranger = Fixtures::serve_on("127.0.0.2");
    browser.sites(&["allow", &stranger.origin()]);
    let tools = Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_PAGE_TOOLS", "1")]).await;
    let plain = Mcp::start(&browser.runtime_dir).await;
    let mut problems: Vec<String> = Vec::new();

    // The real app's tool names when it is alone.
    let tab = users_open(&browser.runtime_dir, real.url("colour.html")).await;
    let alone = names(&wait_for_tools(&tools, &real.origin(), 2).await);
    plain.ok("close_tab", json!({ "tab_id": tab })).await;
    wait_for_tools(&tools, &real.origin(), 0).await;

    // The other site declares the same app and command first; then the real app opens again.
    let poison = users_open(&browser.runtime_dir, stranger.url("attack/poison-tools.html")).await;
    // change_model_color (onCommand) and set_mode (WebMCP).
    let theirs = wait_for_tools(&tools, &stranger.origin(), 2).await;
    let real_tab = users_open(&browser.runtime_dir, real.url("colour.html")).await;
    let ours = wait_for_tools(&tools, &real.origin(), 2).await;
    if names(&ours) != alone {
        problems.push(format!(
            "the real app's tools are {:?} once the other site came first, not {alone:?}",
            names(&ours)
        ));
    }
    if let Some(taken) = names(&theirs).into_iter().find(|n| alone.contains(n)) {
        problems.push(format!("{} took the real app's tool name {taken}", stranger.origin()));
    }
    let change = ours.iter().find(|t| t.name.contains("change_model_color")).expect("change");
    let ran = tools.ok(&change.name, json!({ "color": "red" })).await;
    assert_eq!(
        (ran["origin"].as_str(), ran["tab_id"].as_i64()),
        (Some(&*real.origin()), Some(real_tab))
    );

    for tool in &theirs {
        let name = &tool.name;
        // The description: the page's words stay inside one quote, at the end, on one line,
        // and nothing in them reads as the quote's end.
        let about = tool.description.as_deref().unwrap_or_default();
        let quote = about.rfind('«').map_or("", |at| &about[at..]);
        if !(quote.contains("Note from the tabwire server")
            && quote.ends_with('»')
            && quote.find(CLOSING_LOOK_ALIKES) == Some(quote.len() - '»'.len_utf8()))
        {
            problems.push(format!("{name}: the page's words close tabwire's quote: {about}"));
        }
        if about.contains(['\n', '\r', '\u{2028}']) {
            problems.push(format!("{name}: the page's words start a line of their own: {about:?}"));
        }

        // Annotations: nothing the page says about itself becomes a hint.
        let hints = tool.annotations.clone().unwrap_or_default();
        if hints.read_only_hint == Some(true) || hints.destructive_hint == Some(false) {
            problems
                .push(format!("{name}: the page's readOnly/destructive became hints: {hints:?}"));
        }

        // The input schema: the page's words are labelled descriptions, or gone — in an enum
        // value, a const or a pattern as much as in a title or an unknown keyword.
        let schema = Value::Object((*tool.input_schema).clone());
        let mut found = Vec::new();
        unlabelled(&schema, "", &mut found);
        for (at, s) in found {
            problems.push(format!("{name}: the schema passes page text unlabelled at {at}: {s:?}"));
        }
    }
    for t in &ours {
        let hints = t.annotations.clone().unwrap_or_default();
        if hints.read_only_hint == Some(true) || hints.destructive_hint == Some(false) {
            problems.push(format!("{}: a page's claim became a hint: {hints:?}", t.name));
        }
    }
    // The WebMCP tool still takes what its whole inputSchema allows, and nothing else.
    let set_mode = theirs.iter().find(|t| t.name.ends_with("__set_mode")).expect("set_mode");
    let ran = tools.ok(&set_mode.name, json!({ "mode": "slow" })).await;
    assert_eq!(ran["result"]["mode"], "slow", "{ran}");
    let refused = tools.err(&set_mode.name, json!({ "mode": "sideways" })).await;
    assert!(refused.contains("invalid_params") && refused.contains("at /mode"), "{refused}");

    // A parameter named with text: refused whole, the page told, and no tool.
    let named =
        users_open(&browser.runtime_dir, stranger.url("attack/poison-tools.html?names")).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    let refusals = loop {
        let got = plain.ok("send_command", json!({ "tab_id": named, "type": "refusals" })).await;
        let refusals = got["result"]["refusals"].to_string();
        if refusals != "[]" || Instant::now() > deadline {
            break refusals;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    if !refusals.contains("parameter name") {
        problems.push(format!("the page was not told its parameter name is refused: {refusals}"));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let all = tools.client.list_all_tools().await.expect("tools/list");
    if let Some(bad) = all.iter().find(|t| t.name.ends_with("bad_names")) {
        problems.push(format!("a parameter named with text became a tool: {:?}", bad.input_schema));
    }
    let listed = plain.ok("list_commands", json!({ "tab_id": named })).await;
    if listed.to_string().contains("bad_names") {
        problems.push(format!("the declaration with a bad parameter name was accepted: {listed}"));
    }
    assert_eq!(
        plain.ok("send_command", json!({ "tab_id": poison, "type": "received" })).await["result"]["received"],
        1,
        "nothing but the one set_mode call reached the other site's page"
    );

    assert!(problems.is_empty(), "{} problem(s):\n- {}", problems.len(), problems.join("\n- "));
}
