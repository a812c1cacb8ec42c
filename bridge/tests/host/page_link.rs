//! The link between window.tabwire (the page's world) and tabwire's content script (its
//! isolated world), in real Chromium: a hostile page script cannot get it, cannot offer its
//! own, and cannot post past the SDK; `diagnose` times each hop to a tab's worlds, only on
//! allowed sites.

use serde_json::{Value, json};
use tabwire_testkit::{Chromium, Fixtures, Mcp};

async fn open(mcp: &Mcp, url: String) -> Value {
    mcp.ok("open_tab", json!({ "url": url })).await["tab"]["id"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_script_cannot_reach_or_forge_the_link() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, pages.url("forger.html")).await;

    let got = mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    let held = json!({ "leaked": false, "proof": null, "linkedMine": false, "commandRan": false });
    assert_eq!(got["state"], held, "{got}");
    // The page's command still runs for the assistant, through the real link.
    let ran = mcp.ok("send_command", json!({ "tab_id": tab, "type": "obey" })).await;
    assert_eq!(ran["result"], "obeyed", "{ran}");

    // Only the page's genuine event arrives; the forged ones went nowhere.
    let events = mcp.ok("wait_for_state_change", json!({ "timeout_secs": 5 })).await;
    let data: Vec<&Value> =
        events["events"].as_array().unwrap().iter().map(|e| &e["data"]).collect();
    assert_eq!(data, [&json!({ "genuine": true })], "{events}");
    let more = mcp.ok("wait_for_state_change", json!({ "timeout_secs": 1 })).await;
    assert_eq!(more["timed_out"], true, "{more}");
}

/// What a page sends while it is parsed waits for the relay, up to 1,000 values; beyond that
/// each is refused at once in the page, with `rate_limited`, and the page still works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_sent_before_the_relay_connects_wait_up_to_a_limit() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, pages.url("early-flood.html")).await;
    let mut state = Value::Null;
    for _ in 0..100 {
        state = mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await["state"]
            .clone();
        if state["delivered"].as_u64().unwrap() + state["rate_limited"].as_u64().unwrap() == 1100 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(state["other"], json!([]), "{state}");
    let limited = state["rate_limited"].as_u64().unwrap();
    assert!((100..1100).contains(&limited), "{state}");
    assert_eq!(state["delivered"].as_u64().unwrap() + limited, 1100, "{state}");
}

/// `diagnose` with a tab times each hop a page call takes — the extension's worker, the tab's
/// isolated world, the page's world — with the checks of every page call: on a site the user
/// did not allow the isolated world's hop fails as every page call does, and says so. No tool
/// of a benchmark is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnose_times_each_hop_from_each_world_on_allowed_sites_only() {
    let browser = Chromium::shared();
    let home = Fixtures::serve();
    let stranger = Fixtures::serve_on("127.0.0.2");
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tools = mcp.client.list_all_tools().await.unwrap();
    assert!(!tools.iter().any(|t| t.name == "bench_echo"), "no bench tool is served");

    let tab = open(&mcp, home.url("app.html")).await;
    mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    let got = mcp.ok("diagnose", json!({ "tab_id": tab })).await;
    let to: Vec<&Value> = got["hops"].as_array().unwrap().iter().map(|h| &h["to"]).collect();
    assert_eq!(to, ["worker", "isolated", "page"], "{got}");
    for hop in got["hops"].as_array().unwrap() {
        let ms = hop["median_ms"].as_f64().unwrap();
        assert!(ms > 0.0 && ms <= hop["slowest_ms"].as_f64().unwrap(), "{hop}");
    }
    let finding = |got: &Value| {
        let all = got["findings"].as_array().unwrap();
        all.iter().find(|f| f["check"].as_str().unwrap().starts_with("hops to tab")).cloned()
    };
    let hops = finding(&got).expect("a finding for the hops");
    assert_eq!(hops["ok"], true, "{hops}");
    assert!(hops["detail"].as_str().unwrap().contains("the page's world"), "{hops}");

    // A site the user did not allow: the worker answers, the tab's worlds do not.
    let away = open(&mcp, stranger.url("app.html")).await;
    let got = mcp.ok("diagnose", json!({ "tab_id": away })).await;
    let to: Vec<&Value> = got["hops"].as_array().unwrap().iter().map(|h| &h["to"]).collect();
    assert_eq!(to, ["worker"], "{got}");
    let hops = finding(&got).expect("a finding for the hops");
    assert_eq!(hops["ok"], false, "{hops}");
    let detail = hops["detail"].as_str().unwrap();
    assert!(detail.contains("isolated world") && detail.contains("site_not_allowed"), "{hops}");
}
