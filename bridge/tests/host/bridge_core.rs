//! The core as the other parts of the bridge use it (`tabwire_link::core::Core`), in this
//! process, against the real host: events reach the session's queue in the order they arrived,
//! milestones reach the operations on the same path, and the page methods carry their
//! parameters.

use std::time::Duration;

use serde_json::{Value, json};
use tabwire_link::core::Core;
use tabwire_link::events::Filter;
use tabwire_link::methods::{Echo, Ping};
use tabwire_operations::machine::OperationStatus;
use tabwire_operations::{Operations, SendRequest};
use tabwire_proto::wire::{self, Event, Message};
use tabwire_testkit::bins::scratch_dir;
use tabwire_testkit::fake_browser::tab;
use tabwire_testkit::{FakeBrowser, Sandbox};

#[tokio::test]
async fn events_join_the_session_queue_in_order() {
    let env = Sandbox::new();
    let mut browser = env.host().await;
    browser.hello(&env, "chromium", "p1").await;
    let core = Core::start_in(&env.dir, None).unwrap();
    core.ready().await;
    assert_eq!(core.browsers().len(), 1);

    for n in 0..3 {
        let event = Event::new("page_event", Some(5), wire::raw(&json!({ "count": n })));
        browser.send(Message::Event(event)).await;
    }
    let mut got = Vec::new();
    while got.len() < 3 {
        let more = core.queue().drain(&Filter::kinds(&["page_event"]), SECOND * 2).await;
        assert!(!more.is_empty(), "only {} of 3 events reached the queue", got.len());
        got.extend(more);
    }
    for (n, event) in got.iter().enumerate() {
        assert_eq!(event.host_pid, Some(browser.pid));
        assert_eq!(event.kind, "page_event");
        assert_eq!(event.tab_id, Some(5));
        assert_eq!(event.seq, Some(n as u64 + 1), "the host numbers events from 1");
        assert_eq!(event.data_value(), json!({ "count": n }));
    }
}

/// What the extension sends for milestone `n` of `operation` in tab 5.
fn milestone(operation: &str, n: u64, name: &str, data: Value) -> Message {
    let data = json!({ "operation_id": operation, "milestone": name, "n": n, "data": data });
    Message::Event(Event::new("operation", Some(5), wire::raw(&data)))
}

/// A page event (not a `state_update`: a tab keeps only its newest state waiting).
fn page_state(count: usize) -> Message {
    Message::Event(Event::new("page_event", Some(7), wire::raw(&json!({ "count": count }))))
}

/// Milestones take the path every other event takes, handed to the operations by the reader
/// itself: an operation's events sit in the queue where the milestones arrived among the page's
/// events, and a flood of page events larger than any backlog costs the operation nothing (no
/// catch-up: the page is never asked `chat.status`).
#[tokio::test]
async fn milestones_are_applied_in_arrival_order_and_a_flood_around_them_loses_none() {
    let env = Sandbox::new();
    let mut browser = env.host().await;
    browser.hello(&env, "chromium", "p1").await;
    let core = Core::start_in(&env.dir, None).unwrap();
    let (state, config) = (scratch_dir("ops"), scratch_dir("cfg"));
    let ops = Operations::start_with(core.clone(), state.to_path_buf(), config.to_path_buf());
    core.ready().await;

    let send = ops.send(SendRequest {
        browser: None,
        tab_id: Some(5),
        text: "hello".into(),
        adapter: None,
        timeout: Duration::from_secs(60),
    });
    let answer = async {
        browser.answer("tabs.list", json!([tab(5, "https://claude.ai/new", "Claude", true)])).await;
        browser.answer("chat.send", json!({ "sent": true })).await
    };
    let (sent, _) = tokio::join!(send, answer);
    let id = sent.unwrap().operation_id;

    // More page events than the 4,096 the old broadcast kept for a subscriber that fell behind.
    const FLOOD: usize = 6_000;
    let mut n = 0;
    browser.send(page_state(n)).await;
    browser.send(milestone(&id, 1, "message_sent", json!({}))).await;
    n += 1;
    browser.send(page_state(n)).await;
    browser.send(milestone(&id, 2, "response_started", json!({}))).await;
    for _ in 0..FLOOD {
        n += 1;
        browser.send(page_state(n)).await;
    }
    let text = json!({ "text": "hi there", "chars": 8 });
    browser.send(milestone(&id, 3, "response_completed", text)).await;
    n += 1;
    browser.send(page_state(n)).await;

    let until = std::time::Instant::now() + Duration::from_secs(20);
    while ops.get(&id).unwrap().status != OperationStatus::Completed {
        assert!(std::time::Instant::now() < until, "never completed: {:?}", ops.get(&id));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let op = ops.get(&id).unwrap();
    let names: Vec<&str> = op.milestones.iter().map(|m| m.name.name()).collect();
    assert_eq!(names, ["message_sent", "response_started", "response_completed"]);

    // In the queue: each operation event right where its milestone arrived.
    let filter = Filter::kinds(&["page_event", "operation"]);
    let mut order = Vec::new();
    while order.len() < n + 1 + 3 {
        let more = core.queue().drain(&filter, SECOND * 5).await;
        assert!(!more.is_empty(), "only {} events reached the queue", order.len());
        order.extend(more.into_iter().map(|e| match e.kind.as_str() {
            "operation" => e.data_value()["milestone"].as_str().unwrap().to_owned(),
            _ => format!("state {}", e.data_value()["count"]),
        }));
    }
    let expected: Vec<String> = ["state 0", "message_sent", "state 1", "response_started"]
        .into_iter()
        .map(String::from)
        .chain((2..=n - 1).map(|c| format!("state {c}")))
        .chain(["response_completed".to_owned(), format!("state {n}")])
        .collect();
    assert_eq!(order.len(), expected.len());
    if let Some(i) = order.iter().zip(&expected).position(|(a, b)| a != b) {
        panic!("queued out of order at {i}: {:?} where {:?} arrived", order[i], expected[i]);
    }

    // Nothing was asked of the page: the next request it sees is this ping.
    expect_only_ping(&core, &mut browser).await;
}

async fn expect_only_ping(core: &Core, browser: &mut FakeBrowser) {
    let (pong, params) = tokio::join!(
        core.invoke_within::<Ping>(None, &(), SECOND),
        browser.answer("ping", json!({ "pong": true }))
    );
    assert_eq!(params, Value::Null);
    assert!(pong.unwrap().pong);
}

#[tokio::test]
async fn page_methods_carry_their_parameters() {
    let env = Sandbox::new();
    let mut browser = env.host().await;
    browser.hello(&env, "chromium", "p1").await;
    let core = Core::start_in(&env.dir, None).unwrap();

    let origin = "http://localhost:5173";
    let answered = json!({ "origin": origin, "url": "http://localhost:5173/app", "state": { "items": ["bread"] } });
    let (state, params) = tokio::join!(
        core.read_state(None, Some(5), true, Some(origin), SECOND),
        browser.answer("page.get_state", answered)
    );
    assert_eq!(params, json!({ "tab_id": 5, "expected_origin": origin }));
    let state = state.unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(state.state.get()).unwrap(),
        json!({ "items": ["bread"] })
    );
    assert_eq!(state.from.origin.as_deref(), Some(origin));
    assert_eq!(state.from.url.as_deref(), Some("http://localhost:5173/app"));

    let answered =
        json!({ "origin": origin, "url": "http://localhost:5173/app", "result": { "items": 2 } });
    let payload = json!({ "item": "milk" });
    let (run, params) = tokio::join!(
        core.send_command(None, 5, "add_item", &payload, None, SECOND),
        browser.answer("page.command", answered)
    );
    assert_eq!(
        params,
        json!({ "tab_id": 5, "type": "add_item", "payload": { "item": "milk" }, "expected_origin": null })
    );
    let run = run.unwrap();
    assert_eq!(run.result, json!({ "items": 2 }));
    assert_eq!(run.from.origin.as_deref(), Some(origin));

    let pid = browser.pid.to_string();
    let (pong, _) = tokio::join!(
        core.invoke_within::<Ping>(Some(&pid), &(), Duration::from_secs(1)),
        browser.answer("ping", json!({ "pong": true, "extension_version": "0.1.0" }))
    );
    let pong = pong.unwrap();
    assert!(pong.pong);
    assert_eq!(pong.extension_version.as_deref(), Some("0.1.0"));
}

const SECOND: Duration = Duration::from_secs(1);

#[tokio::test]
async fn a_cached_state_of_another_origin_is_not_read_and_a_revoked_sites_is_forgotten() {
    let env = Sandbox::new();
    let mut browser = env.host().await;
    browser.hello(&env, "chromium", "p1").await;
    let core = Core::start_in(&env.dir, None).unwrap();
    core.ready().await;
    let mut event = Event::new("state_update", Some(5), wire::raw(&json!({ "n": 1 })));
    event.from.origin = Some("https://app.example.com".into());
    event.from.url = Some("https://app.example.com/".into());
    browser.send(Message::Event(event)).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    while core.state_cache().get(&core.browsers()[0].key(), 5).is_none() {
        assert!(std::time::Instant::now() < deadline, "the state_update never reached the cache");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let read = core.read_state(None, Some(5), false, None, SECOND).await.unwrap();
    assert_eq!(read.from.origin.as_deref(), Some("https://app.example.com"));
    let err = core
        .read_state(None, Some(5), false, Some("https://other.example.com"), SECOND)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "origin_changed", "{err}");
    assert!(err.message().contains("https://app.example.com"), "{err}");

    let sites = Event::new("sites", None, wire::raw(&json!({ "sites": ["http://localhost:*"] })));
    browser.send(Message::Event(sites)).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    while core.state_cache().get(&core.browsers()[0].key(), 5).is_some() {
        assert!(std::time::Instant::now() < deadline, "the revoked site's state is still cached");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_browser_that_does_not_answer_times_out() {
    let env = Sandbox::new();
    let mut browser = env.host().await;
    browser.hello(&env, "chromium", "p1").await;
    let core = Core::start_in(&env.dir, None).unwrap();

    let started = std::time::Instant::now();
    let x = json!("x");
    let (result, _) = tokio::join!(
        core.invoke_within::<Echo>(None, &x, Duration::from_millis(200)),
        browser.request()
    );
    let err = result.unwrap_err();
    assert_eq!(err.code(), "timeout", "{err}");
    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
}
