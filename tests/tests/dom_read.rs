//! read_page and find on real pages in real Chromium: what the assistant reads.

use serde_json::{Value, json};
use tabwire_tests::{Chromium, Fixtures, Mcp};

async fn open(mcp: &Mcp, url: String) -> Value {
    mcp.ok("open_tab", json!({ "url": url })).await["tab"]["id"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explore() {
    let browser = Chromium::start();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, pages.url("dom/widgets.html")).await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let r = mcp.call("read_page", json!({ "tab_id": tab })).await;
    println!("{}", tabwire_tests::mcp::text(&r));
    let r = mcp.call("read_page", json!({ "tab_id": tab, "mode": "text" })).await;
    println!("{}", tabwire_tests::mcp::text(&r));
}
