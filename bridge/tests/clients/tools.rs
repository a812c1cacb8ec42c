//! The MCP tools, driven through the real `tabwire mcp` and the real host, with the test playing
//! the browser: what the model sees in the tool list, and what each tool does with what the
//! browser answers.

use serde_json::json;
use tabwire_testkit::fake_browser::{Sandbox, tab};
use tabwire_testkit::text;

#[tokio::test]
async fn tools_are_listed_with_schemas_and_annotations() {
    let env = Sandbox::new();
    let mcp = env.mcp().await;
    let tools = mcp.client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    // Exactly the tools specs/tools.md documents: none missing, none undocumented.
    assert_eq!(names, documented_tools(), "the server's tools and specs/tools.md disagree");
    // Tools that act on a tab take the optional `browser` too; the instructions say what it is.
    const TAB_TOOLS: [&str; 5] = ["list_tabs", "open_tab", "close_tab", "activate_tab", "navigate"];
    for tool in &tools {
        let name = &tool.name;
        assert!(tool.description.as_ref().is_some_and(|d| d.len() > 20), "{name}: description");
        // read_page answers with text alone (Claude Code would give its model the structured
        // content as JSON instead of the lines); every other tool describes its result.
        if name == "read_page" {
            assert!(tool.output_schema.is_none(), "read_page declares no structured result");
        } else {
            let output = tool.output_schema.as_ref().unwrap_or_else(|| panic!("{name}: schema"));
            assert_eq!(output["type"], "object", "{name}: {output:?}");
        }
        let notes = tool.annotations.as_ref().unwrap_or_else(|| panic!("{name}: annotations"));
        assert!(notes.title.is_some(), "{name}: a title");
        // A hint is left out where it says what MCP assumes without it (not read-only,
        // destructive, not idempotent, open-world); one that says so in words is a waste.
        for (hint, assumed) in [
            (notes.read_only_hint, false),
            (notes.destructive_hint, true),
            (notes.idempotent_hint, false),
            (notes.open_world_hint, true),
        ] {
            assert_ne!(hint, Some(assumed), "{name}: {notes:?}");
        }
        if TAB_TOOLS.contains(&name.as_ref()) {
            let props = tool.input_schema.get("properties").cloned().unwrap_or_default();
            assert_eq!(props["browser"]["type"], "string", "{name}: it takes `browser`");
        }
    }
    let tool = |n: &str| tools.iter().find(|t| t.name == n).unwrap();
    let open = &tool("open_tab").input_schema;
    assert_eq!(open["required"], json!(["url"]), "{open:?}");
    assert!(open["properties"]["url"]["description"].as_str().unwrap().contains("address"));
    assert_eq!(open["properties"]["active"]["type"], "boolean");
    let navigate = serde_json::to_string(&tool("navigate").input_schema).unwrap();
    assert!(navigate.contains("\"load\"") && navigate.contains("\"none\""), "{navigate}");
    // What each hint means, MCP's assumption standing in for a hint left out.
    let hints = |n: &str| tool(n).annotations.clone().unwrap();
    let read_only = |n: &str| hints(n).read_only_hint.unwrap_or(false);
    let destructive = |n: &str| hints(n).destructive_hint.unwrap_or(true);
    assert!(read_only("list_tabs") && read_only("list_browsers") && !read_only("open_tab"));
    assert!(destructive("close_tab") && !destructive("open_tab"));
    let list_schema = serde_json::to_string(&tool("list_tabs").output_schema).unwrap();
    assert!(list_schema.contains("window_focused"), "the tab's fields are described");

    let info = mcp.client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "tabwire");
    let instructions = info.instructions.as_ref().unwrap();
    assert!(instructions.contains("logged in"));
    for shared in ["`browser`", "host pid", "`tab_id`", "`expected_origin`", "`trusted: true`"] {
        assert!(instructions.contains(shared), "the instructions explain {shared}");
    }
}

/// Without `--tools`, the server offers the sets specs/tools.md marks as the default, and a
/// tool of another set is refused with a message that names its set and how to add it.
#[tokio::test]
async fn the_default_tool_sets_are_served_and_others_are_refused_by_name() {
    let env = Sandbox::new();
    let mut cmd = tokio::process::Command::new(tabwire_testkit::bins::bin("tabwire"));
    cmd.arg("mcp").env("TABWIRE_RUNTIME_DIR", &*env.dir).env_remove("TABWIRE_TOOLS");
    cmd.env_remove("TABWIRE_SESSION_ID").env_remove("TABWIRE_BROWSER");
    let transport = rmcp::transport::TokioChildProcess::new(cmd).unwrap();
    let client = rmcp::ServiceExt::serve((), transport).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    let mut default: Vec<&str> = documented_sets()
        .into_iter()
        .filter(|(_, is_default, _)| *is_default)
        .flat_map(|(_, _, tools)| tools)
        .collect();
    default.sort();
    default.dedup();
    assert_eq!(names, default, "the default sets and specs/tools.md disagree");
    let mut all: Vec<&str> = documented_sets().into_iter().flat_map(|(_, _, t)| t).collect();
    all.sort();
    all.dedup();
    assert_eq!(all, documented_tools(), "every tool is in a set");
    let instructions = client.peer_info().unwrap().instructions.clone().unwrap();
    assert!(!instructions.contains("spawn_worker"), "only the sets served are explained");
    // The listing a client fetches at every start: no output schemas unless asked for
    // (`--output-schemas`), and well under 20 KB.
    assert!(tools.iter().all(|t| t.output_schema.is_none()), "an output schema by default");
    let listing = serde_json::to_string(&json!({ "tools": tools })).unwrap();
    assert!(listing.len() < 20_000, "tools/list is {} bytes", listing.len());
    eprintln!("the default tools/list: {} tools, {} bytes", tools.len(), listing.len());

    let params = rmcp::model::CallToolRequestParams::new("spawn_worker");
    let refused = client.call_tool(params).await.unwrap_err().to_string();
    assert!(
        refused.contains("`workers`")
            && refused.contains("--tools")
            && refused.contains("TABWIRE_TOOLS"),
        "{refused}"
    );
}

/// The tool sets of specs/tools.md's table `| set | default | tools |`.
fn documented_sets() -> Vec<(&'static str, bool, Vec<&'static str>)> {
    let spec = include_str!("../../../specs/tools.md");
    let mut sets = Vec::new();
    let mut in_table = false;
    for line in spec.lines() {
        if line.starts_with("| set |") {
            in_table = true;
            continue;
        }
        if !line.starts_with('|') {
            in_table = false;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if in_table && cells.len() >= 4 && cells[1].starts_with('`') {
            let name = cells[1].trim_matches('`');
            let tools = cells[3].split(',').map(|t| t.trim().trim_matches('`')).collect();
            sets.push((name, cells[2] == "yes", tools));
        }
    }
    assert!(sets.len() >= 7, "the tool sets table of specs/tools.md: {sets:?}");
    sets
}

#[tokio::test]
async fn list_tabs_returns_what_the_browser_answered() {
    let env = Sandbox::new();
    let mut browser = env.host().await;
    browser.hello(&env, "chrome", "3f1c9a77").await;
    let mcp = env.mcp().await;

    let tabs =
        json!([tab(5, "http://127.0.0.1:8080/", "Demo", true), tab(9, "about:blank", "", false)]);
    let (result, _) =
        tokio::join!(mcp.call("list_tabs", json!({})), browser.answer("tabs.list", tabs.clone()));
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    assert_eq!(result.structured_content, Some(json!({ "tabs": tabs })));
    let text = text(&result);
    assert!(text.starts_with("2 tabs:"), "{text}");
    assert!(text.contains("tab 5: Demo — http://127.0.0.1:8080/ (active)"), "{text}");
    assert!(text.contains("tab 9: (no title) — about:blank"), "{text}");

    let browsers = mcp.ok("list_browsers", json!({})).await;
    let list = browsers["browsers"].as_array().unwrap();
    assert_eq!(list.len(), 1, "{browsers}");
    assert_eq!(list[0]["browser"], "chrome");
    assert_eq!(list[0]["profile"], "3f1c9a77");
    assert_eq!(list[0]["host_pid"], browser.pid);
    assert_eq!(list[0]["extension_version"], "0.1.0");
}

#[tokio::test]
async fn tab_tools_pass_their_parameters_and_return_the_tab() {
    let env = Sandbox::new();
    let mut browser = env.host().await;
    browser.hello(&env, "chromium", "p1").await;
    let mcp = env.mcp().await;
    let page = tab(7, "https://example.com/", "Example", true);

    let (opened, params) = tokio::join!(
        mcp.ok("open_tab", json!({ "url": "https://example.com/" })),
        browser.answer("tabs.open", page.clone())
    );
    // In the background unless asked: the user keeps their tab.
    assert_eq!(params, json!({ "url": "https://example.com/", "active": false, "wait": "load" }));
    assert_eq!(opened, json!({ "tab": page }));

    let (_, params) = tokio::join!(
        mcp.ok("open_tab", json!({ "url": "https://example.com/", "active": true })),
        browser.answer("tabs.open", page.clone())
    );
    assert_eq!(params["active"], true);

    let (moved, params) = tokio::join!(
        mcp.ok("navigate", json!({ "tab_id": 7, "url": "https://example.org/", "wait": "none" })),
        browser.answer("tabs.navigate", page.clone())
    );
    assert_eq!(params, json!({ "tab_id": 7, "url": "https://example.org/", "wait": "none" }));
    assert_eq!(moved["tab"]["id"], 7);

    let (_, params) = tokio::join!(
        mcp.ok("navigate", json!({ "tab_id": 7, "url": "https://example.org/" })),
        browser.answer("tabs.navigate", page.clone())
    );
    assert_eq!(params["wait"], "load", "navigate waits for the load by default");

    let (activated, params) = tokio::join!(
        mcp.ok("activate_tab", json!({ "tab_id": 7 })),
        browser.answer("tabs.activate", page.clone())
    );
    assert_eq!(params, json!({ "tab_id": 7 }));
    assert_eq!(activated["tab"], page);

    let (closed, params) = tokio::join!(
        mcp.call("close_tab", json!({ "tab_id": 7 })),
        browser.answer("tabs.close", json!({ "closed": true }))
    );
    assert_eq!(params, json!({ "tab_id": 7 }));
    assert_eq!(closed.structured_content, Some(json!({ "closed": true, "tab_id": 7 })));
    assert_eq!(text(&closed), "closed tab 7");
}

#[tokio::test]
async fn an_extension_error_is_a_tool_error_with_code_and_message() {
    let env = Sandbox::new();
    let mut browser = env.host().await;
    browser.hello(&env, "chromium", "p1").await;
    let mcp = env.mcp().await;

    let message = "no tab has id 99: it was closed or never existed; list_tabs shows the open ones";
    let browser_side = async {
        let request = browser.request().await;
        assert_eq!(request.method, "tabs.close");
        browser.fail(&request.id, "no_such_tab", message).await;
    };
    let (err, ()) = tokio::join!(mcp.err("close_tab", json!({ "tab_id": 99 })), browser_side);
    assert_eq!(err, format!("no_such_tab: {message}"));
}

#[tokio::test]
async fn bad_arguments_are_refused_before_reaching_the_browser() {
    let env = Sandbox::new();
    let mut browser = env.host().await;
    browser.hello(&env, "chromium", "p1").await;
    let mcp = env.mcp().await;

    let err = mcp.err("close_tab", json!({ "tab_id": "seven" })).await;
    assert!(err.contains("\"seven\", expected i64"), "the error says what is wrong: {err}");

    let err = mcp.err("list_tabs", json!({ "browser": "firefox" })).await;
    assert!(err.starts_with("bad_request: no attached browser is \"firefox\""), "{err}");
    assert!(err.contains(&format!("host pid {}", browser.pid)), "it lists what is attached: {err}");
}

/// Tool names specs/tools.md documents: its `### \`name\`` headings and the first column of
/// its `| tool | … |` tables.
fn documented_tools() -> Vec<&'static str> {
    let spec = include_str!("../../../specs/tools.md");
    let mut names = Vec::new();
    let mut in_tool_table = false;
    for line in spec.lines() {
        if let Some(name) = line.strip_prefix("### `").and_then(|l| l.strip_suffix('`')) {
            names.push(name);
        }
        if line.starts_with("| tool |") {
            in_tool_table = true;
        } else if !line.starts_with('|') {
            in_tool_table = false;
        } else if in_tool_table
            && let Some(name) = line.strip_prefix("| `").and_then(|l| l.split('`').next())
        {
            names.push(name);
        }
    }
    names.sort();
    names
}
