//! Every tool's schemas as a strict client sees them: the real `tabwire mcp --page-tools`, with
//! the colour fixture open in real Chromium (so its page tools are listed too), listed by the
//! official MCP TypeScript SDK client; every input and output schema must compile in Ajv's
//! JSON Schema 2020-12 validator in strict mode (standard formats only) with no warning, and
//! the SDK client must print none (it printed 66 "unknown format" warnings per listing before).
//! Every built-in tool's description stays within three sentences and names another tool.

use std::time::Duration;

use serde_json::{Value, json};
use tabwire_testkit::{Chromium, Fixtures, Mcp, bins, js};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_schema_passes_a_strict_validator_and_the_sdk_client_warns_of_nothing() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab =
        mcp.ok("open_tab", json!({ "url": pages.url("colour.html") })).await["tab"]["id"].clone();
    // The page has declared its commands once the bridge lists them.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while mcp.ok("list_commands", json!({ "tab_id": tab })).await["pages"][0]["commands"]
        == json!([])
    {
        assert!(std::time::Instant::now() < deadline, "the colour page never declared");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let tabwire = bins::bin("tabwire");
    let out = js::tools_list(
        &["check"],
        &[tabwire.to_str().unwrap(), "mcp", "--page-tools", "--tools", "all", "--output-schemas"],
        &[("TABWIRE_RUNTIME_DIR", &browser.runtime_dir)],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!("no report ({e}): {stdout}\n{}", String::from_utf8_lossy(&out.stderr))
    });
    assert_eq!(report["problems"], json!([]), "{report}");
    assert!(out.status.success(), "{report}");
    assert!(report["tools"].as_u64().unwrap() > 30, "the page tools were listed too: {report}");
}

#[tokio::test]
async fn every_built_in_tool_says_when_to_use_it_in_three_sentences_at_most() {
    let dir = bins::scratch_dir("desc");
    // The tool it names is served beside it, in the default sets too.
    let default = Mcp::start_with(&dir, &[("TABWIRE_TOOLS", "default")]).await;
    let tools = default.client.list_all_tools().await.unwrap();
    let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    for tool in &tools {
        let about = tool.description.as_deref().unwrap_or_default();
        let others = names.iter().filter(|n| *n != &tool.name && about.contains(n.as_str()));
        assert!(others.count() > 0, "{} names no tool of its sets: {about}", tool.name);
    }
    drop(default);
    let mcp = Mcp::start(&dir).await;
    let tools = mcp.client.list_all_tools().await.unwrap();
    let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    for tool in &tools {
        let about = tool.description.as_deref().unwrap_or_default();
        // A sentence ends with `.`, `?` or `!` before a space or the end (not `e.g.`).
        let text = about.replace("e.g. ", "e.g.,").replace("i.e. ", "i.e.,");
        let chars: Vec<char> = text.trim_end().chars().collect();
        let sentences = (0..chars.len())
            .filter(|&i| ['.', '?', '!'].contains(&chars[i]))
            .filter(|&i| chars.get(i + 1).is_none_or(|c| c.is_whitespace()))
            .count()
            .max(1);
        assert!(sentences <= 3, "{}: {sentences} sentences: {about}", tool.name);
        let others = names.iter().filter(|n| *n != &tool.name && about.contains(n.as_str()));
        assert!(others.count() > 0, "{} names no other tool to use instead: {about}", tool.name);
    }
    let info = mcp.client.peer_info().unwrap();
    let instructions = info.instructions.as_deref().unwrap();
    for family in ["Tabs", "Pages", "Any page", "Sessions", "Workers", "Chat", "Workflows"] {
        assert!(instructions.contains(family), "the instructions list the {family} family");
    }
    drop(mcp);
    let _ = std::fs::remove_dir_all(&dir);
}
