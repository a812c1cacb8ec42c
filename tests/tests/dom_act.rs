//! click, fill, type, press_key, pointer, upload_file, handle_dialog and the settle report,
//! on real pages in real Chromium: what the user would see the page do.

use serde_json::{Value, json};
use tabwire_tests::mcp::text;
use tabwire_tests::{Chromium, Fixtures, Mcp};

async fn open(mcp: &Mcp, url: String) -> Value {
    mcp.ok("open_tab", json!({ "url": url })).await["tab"]["id"].clone()
}

/// The ref of the first line of `read_page` (interactive) that starts with `role "name"`.
async fn ref_of(mcp: &Mcp, tab: &Value, role_name: &str) -> String {
    let page = mcp.ok("read_page", json!({ "tab_id": tab, "budget": 20000 })).await;
    let snapshot = page["text"].as_str().unwrap();
    let line = snapshot
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(role_name))
        .unwrap_or_else(|| panic!("no {role_name} in:\n{snapshot}"));
    line.split("[ref=").nth(1).unwrap().split(']').next().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explore() {
    let browser = Chromium::start();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, pages.url("dom/widgets.html")).await;
    for (name, args) in [
        ("button \"Clicked 0 times\"", json!({})),
        ("button \"Under the overlay\"", json!({})),
        ("button \"Trusted only\"", json!({})),
        ("button \"Fetch 200\"", json!({})),
        ("button \"Fetch 204\"", json!({})),
        ("button \"Confirm\"", json!({})),
        ("button \"Prompt\"", json!({})),
        ("link \"Open form in a new tab\"", json!({})),
        ("button \"Shadow button\"", json!({})),
        ("button \"Frame button\"", json!({})),
    ] {
        let r = ref_of(&mcp, &tab, name).await;
        let mut a = json!({ "tab_id": tab, "ref": r });
        a.as_object_mut().unwrap().extend(args.as_object().unwrap().clone());
        let res = mcp.call("click", a).await;
        println!("== {name}\n{}\n{}\n", text(&res), res.structured_content.as_ref().map(|v| { let mut v = v.clone(); v.as_object_mut().unwrap().remove("added"); v.as_object_mut().unwrap().remove("removed"); v.to_string() }).unwrap_or_default());
    }
}
