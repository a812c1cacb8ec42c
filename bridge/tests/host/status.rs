//! `tabwire status`, as a person and a script see it.

use serde_json::{Value, json};
use tabwire_proto::wire::{Event, Message};
use tabwire_testkit::fake_browser::{Sandbox, tab};

#[tokio::test]
async fn status_without_a_browser_says_what_to_do() {
    let env = Sandbox::new();
    let out = env.tabwire(&["status"]).await;
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        stdout,
        format!(
            "runtime dir: {}\nno browser is connected: start Chrome with the tabwire extension, \
             then run `tabwire doctor`\n",
            env.dir.display()
        )
    );
    let out = env.tabwire(&["status", "--json"]).await;
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json, json!({ "runtime_dir": env.dir, "browsers": [] }));
}

#[tokio::test]
async fn status_lists_browsers_with_their_tab_counts() {
    let env = Sandbox::new();
    let mut browser = env.host().await;
    browser.hello(&env, "chromium", "3f1c9a77").await;
    let tabs =
        json!([tab(1, "about:blank", "", true), tab(2, "https://example.com/", "Ex", false)]);

    let (out, _) =
        tokio::join!(env.tabwire(&["status"]), browser.answer("tabs.list", tabs.clone()));
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        stdout,
        format!(
            "runtime dir: {}\nchromium: host pid {}, profile 3f1c9a77, extension 0.1.0, 2 tabs, \
             default\n",
            env.dir.display(),
            browser.pid
        )
    );

    let (out, _) =
        tokio::join!(env.tabwire(&["status", "--json"]), browser.answer("tabs.list", tabs));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let b = &json["browsers"][0];
    assert_eq!(json["browsers"].as_array().unwrap().len(), 1, "{json}");
    assert_eq!(
        (&b["browser"], &b["profile"], &b["tabs"]),
        (&json!("chromium"), &json!("3f1c9a77"), &json!(2))
    );
    assert_eq!(b["host_pid"], browser.pid);

    // --browser that names no attached browser: nothing listed.
    let out = env.tabwire(&["status", "--browser", "edge", "--json"]).await;
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["browsers"], json!([]));
}

#[tokio::test]
async fn status_does_not_take_the_events_kept_for_the_next_session() {
    let env = Sandbox::new();
    let mut browser = env.host().await;
    browser.hello(&env, "chromium", "3f1c9a77").await;
    // A page pushes an event while no session runs: the host keeps it.
    browser
        .send(Message::Event(Event::new(
            "page_event",
            Some(7),
            tabwire_proto::wire::raw(&json!({ "kind": "clicked" })),
        )))
        .await;
    let (out, _) = tokio::join!(env.tabwire(&["status"]), browser.answer("tabs.list", json!([])));
    assert!(out.status.success(), "{out:?}");

    // The next session still gets it.
    let mcp = env.mcp().await;
    let got = mcp.ok("wait_for_event", json!({ "types": ["page_event"], "timeout_secs": 5 })).await;
    assert_eq!(got["type"], "page_event", "{got}");
    assert_eq!(got["data"]["kind"], "clicked", "{got}");
}
