//! The demo's lab page: a tool the page registers the web's own way (WebMCP,
//! `navigator.modelContext`), which tabwire offers as one of the page's commands; and a request
//! of the page answered by tabwire (`network_rules` mock, applied in the page, no debugger)
//! until the rule is removed; and a hand-over to the person at the browser
//! (`ask_user`), during which the assistant's calls on that tab are refused.

use anyhow::{Context, Result};
use serde_json::json;

use super::Session;

pub(super) async fn show(session: &Session, base: &str, headed: bool) -> Result<()> {
    let opened = session.call("open_tab", json!({ "url": format!("{base}lab.html") })).await?;
    let tab = opened["tab"]["id"].clone();

    let listed = session.call("list_commands", json!({ "tab_id": tab })).await?;
    let command = &listed["pages"][0]["commands"][0];
    println!(
        "      the page registered {:?} with navigator.modelContext: {}",
        command["type"].as_str().unwrap_or("?"),
        command["description"].as_str().unwrap_or("")
    );
    let args = json!({ "tab_id": tab, "type": "greet", "payload": { "name": "demo" } });
    let greeted = session.call("send_command", args).await?;
    println!("      its execute() answered {}", greeted["result"]);

    let mock = json!({
        "action": "mock",
        "tab_id": tab,
        "url_pattern": format!("{base}news.json"),
        "body": r#"{"headline":"mocked by tabwire"}"#,
        "content_type": "application/json",
    });
    let made = session.call("network_rules", mock).await?;
    let rule = made["rules"][0]["id"].clone();
    let report = session.call("click", json!({ "tab_id": tab, "selector": "#news" })).await?;
    println!("      the page's fetch got the mock: {}", report["added"]);
    session.call("network_rules", json!({ "action": "remove", "rule_id": rule })).await?;
    let report = session.call("click", json!({ "tab_id": tab, "selector": "#news" })).await?;
    let added = report["added"].as_array().context("the click's added lines")?;
    println!("      rule removed, the site answers again: {}", json!(added));

    // The hand-over: the bar on the page points to tabwire's toolbar popup, where only the
    // person can answer. Headless, nobody does, so it times out; with `tabwire demo --headed`,
    // open tabwire's popup (its icon in the toolbar) and press Done there.
    let message =
        "tabwire demo: when you have read this page, press Done in tabwire's toolbar popup";
    let secs = if headed { 60 } else { 10 };
    let ask = json!({ "tab_id": tab, "message": message, "timeout_secs": secs });
    let meanwhile = async {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        session.call_err("read_page", json!({ "tab_id": tab })).await
    };
    let (handed_back, refused) = tokio::join!(session.call("ask_user", ask), meanwhile);
    println!("      meanwhile, refused: {}", super::first_line(&refused?));
    println!("      the user's answer: {}", handed_back?["answer"].as_str().unwrap_or("?"));
    Ok(())
}
