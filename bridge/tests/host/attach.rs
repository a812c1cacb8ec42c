//! Browsers coming and going: no browser at all, a host that dies mid-call, a host that starts
//! after the session, several sessions and several browsers at once.

use std::time::{Duration, Instant};

use serde_json::json;
use tabwire_proto::wire::Message;
use tabwire_testkit::fake_browser::{Sandbox, tab};
use tabwire_testkit::text;

const NO_BROWSER: &str =
    "no browser is connected: start Chrome with the tabwire extension, then run `tabwire doctor`";

#[tokio::test]
async fn without_a_browser_every_tool_answers_at_once() {
    let env = Sandbox::new();
    let mcp = env.mcp().await;
    let calls = [
        ("list_tabs", json!({})),
        ("open_tab", json!({ "url": "https://example.com/" })),
        ("close_tab", json!({ "tab_id": 1 })),
        ("activate_tab", json!({ "tab_id": 1 })),
        ("navigate", json!({ "tab_id": 1, "url": "https://example.com/" })),
    ];
    for (tool, args) in calls {
        let started = Instant::now();
        let err = mcp.err(tool, args).await;
        let took = started.elapsed();
        assert_eq!(err, NO_BROWSER, "{tool}");
        assert!(took < Duration::from_millis(200), "{tool} took {took:?}");
    }
    let listed = mcp.call("list_browsers", json!({})).await;
    assert_eq!(listed.structured_content, Some(json!({ "browsers": [] })));
    assert_eq!(text(&listed), NO_BROWSER);
}

#[tokio::test]
async fn a_call_fails_at_once_when_its_host_is_killed() {
    let env = Sandbox::new();
    let mut browser = env.host().await;
    browser.hello(&env, "chromium", "p1").await;
    let mcp = env.mcp().await;

    let call = mcp.call("list_tabs", json!({}));
    let kill = async {
        browser.request().await; // the request reached the browser, which never answers
        browser.kill();
        Instant::now()
    };
    let (result, killed_at) = tokio::join!(call, kill);
    let took = killed_at.elapsed();
    assert_eq!(result.is_error, Some(true));
    let err = text(&result);
    assert!(err.starts_with("browser_disconnected: "), "{err}");
    assert!(took < Duration::from_secs(1), "failed {took:?} after the kill");
    eprintln!("call failed {took:?} after SIGKILL");

    let err = mcp.err("list_tabs", json!({})).await;
    assert_eq!(err, NO_BROWSER, "the dead browser is no longer attached");
}

#[tokio::test]
async fn a_host_that_starts_later_is_picked_up() {
    let env = Sandbox::new();
    let mcp = env.mcp().await;
    assert_eq!(mcp.err("list_tabs", json!({})).await, NO_BROWSER);

    let mut browser = env.host().await;
    browser.hello(&env, "chromium", "p1").await;
    let started = Instant::now();
    loop {
        let listed = mcp.ok("list_browsers", json!({})).await;
        if listed["browsers"].as_array().unwrap().len() == 1 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(2), "never picked up");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let took = started.elapsed();
    eprintln!("picked up {took:?} after its record appeared");
    assert!(took <= Duration::from_millis(250), "picked up after {took:?}");

    let (result, _) = tokio::join!(
        mcp.ok("list_tabs", json!({})),
        browser.answer("tabs.list", json!([tab(1, "about:blank", "", true)]))
    );
    assert_eq!(result["tabs"][0]["id"], 1);
}

#[tokio::test]
async fn two_sessions_on_one_host_each_get_their_own_replies() {
    let env = Sandbox::new();
    let mut browser = env.host().await;
    browser.hello(&env, "chromium", "p1").await;
    let (a, b) = tokio::join!(env.mcp(), env.mcp());

    let browser_side = async {
        // Take both requests, then answer in the opposite order, each with its own url.
        let first = browser.request().await;
        let second = browser.request().await;
        for request in [second, first] {
            let params: serde_json::Value = serde_json::from_str(request.params.get()).unwrap();
            let url = params["url"].as_str().unwrap().to_owned();
            browser.reply(&request.id, tab(url.len() as i64, &url, "", true)).await;
        }
    };
    let (from_a, from_b, ()) = tokio::join!(
        a.ok("open_tab", json!({ "url": "https://a.example/" })),
        b.ok("open_tab", json!({ "url": "https://bb.example/" })),
        browser_side
    );
    assert_eq!(from_a["tab"]["url"], "https://a.example/");
    assert_eq!(from_b["tab"]["url"], "https://bb.example/");
}

#[tokio::test]
async fn several_browsers_the_newest_is_the_default_and_any_can_be_named() {
    let env = Sandbox::new();
    let mut old = env.host().await;
    old.hello(&env, "chrome", "aaaa1111").await;
    let mcp = env.mcp().await;
    let mut new = env.host().await;
    new.hello(&env, "edge", "bbbb2222").await;
    let started = Instant::now();
    while mcp.ok("list_browsers", json!({})).await["browsers"].as_array().unwrap().len() < 2 {
        assert!(started.elapsed() < Duration::from_secs(2), "the second browser was not picked up");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let listed = mcp.ok("list_browsers", json!({})).await;
    assert_eq!(listed["browsers"][1]["browser"], "edge", "newest last: {listed}");

    let (tabs, _) = tokio::join!(
        mcp.ok("list_tabs", json!({})),
        new.answer("tabs.list", json!([tab(2, "https://edge/", "", true)]))
    );
    assert_eq!(tabs["tabs"][0]["url"], "https://edge/", "the default is the newest");

    for name in ["chrome", "aaaa", &old.pid.to_string()] {
        let (tabs, _) = tokio::join!(
            mcp.ok("list_tabs", json!({ "browser": name })),
            old.answer("tabs.list", json!([tab(1, "https://chrome/", "", true)]))
        );
        assert_eq!(tabs["tabs"][0]["url"], "https://chrome/", "named {name}");
    }
}

#[tokio::test]
async fn a_cancelled_tool_call_is_cancelled_in_the_browser() {
    let env = Sandbox::new();
    let mut browser = env.host().await;
    browser.hello(&env, "chromium", "p1").await;
    let mcp = env.mcp().await;

    // Dropping rmcp's call_tool future sends notifications/cancelled.
    let mut call = Box::pin(mcp.call("open_tab", json!({ "url": "https://slow.example/" })));
    let request = tokio::select! {
        _ = &mut call => panic!("the call ended before the browser saw it"),
        request = browser.request() => request,
    };
    drop(call);
    match browser.next().await {
        Message::Cancel(cancel) => assert_eq!(cancel.id, request.id),
        other => panic!("expected a cancel, got a {}", other.kind()),
    }
}
