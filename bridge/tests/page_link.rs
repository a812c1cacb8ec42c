//! The link between window.tabwire (the page's world) and tabwire's content script (its
//! isolated world), in real Chromium: a hostile page script cannot get it, cannot offer its
//! own, and cannot post past the SDK; the echo floors the benchmark measures answer from each
//! world, only on allowed sites and only when the bench tools are switched on.

use serde_json::{Value, json};
use tabwire_tests::{Chromium, Fixtures, Mcp};

async fn open(mcp: &Mcp, url: String) -> Value {
    mcp.ok("open_tab", json!({ "url": url })).await["tab"]["id"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_script_cannot_reach_or_forge_the_link() {
    let browser = Chromium::start();
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
    let browser = Chromium::start();
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_echo_floors_answer_from_each_world_on_allowed_sites_only() {
    let browser = Chromium::start();
    let home = Fixtures::serve();
    let stranger = Fixtures::serve_on("127.0.0.2");
    let served = async |mcp: &Mcp| {
        let tools = mcp.client.list_all_tools().await.unwrap();
        tools.iter().any(|t| t.name == "bench_echo")
    };
    let plain = Mcp::start(&browser.runtime_dir).await;
    assert!(!served(&plain).await, "bench_echo is served only with TABWIRE_BENCH=1");

    let mcp = Mcp::start_with(&browser.runtime_dir, &[("TABWIRE_BENCH", "1")]).await;
    assert!(served(&mcp).await);
    let tab = open(&mcp, home.url("app.html")).await;
    mcp.ok("get_state", json!({ "tab_id": tab, "force_refresh": true })).await;
    for floor in ["bridge", "worker", "content", "page"] {
        let got = mcp.ok("bench_echo", json!({ "floor": floor, "tab_id": tab })).await;
        assert_eq!(got, json!({ "floor": floor, "echo": null }));
    }

    // A site the user did not allow: the page floors fail there as every page call does.
    let away = open(&mcp, stranger.url("app.html")).await;
    for floor in ["content", "page"] {
        let err = mcp.err("bench_echo", json!({ "floor": floor, "tab_id": away })).await;
        assert!(err.contains("site_not_allowed"), "{err}");
    }
}
