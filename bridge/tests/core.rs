//! The core as the other parts of the bridge use it (`tabwire_bridge::core::Core`), in this
//! process, against the real host: events fan out to every subscriber, and the page methods
//! carry their parameters.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::Env;
use tabwire_bridge::core::Core;
use tabwire_host::wire::{self, Event, Message};

#[tokio::test]
async fn events_reach_every_subscriber_in_order() {
    let env = Env::new();
    let mut browser = env.host().await;
    browser.hello(&env, "chromium", "p1").await;
    let core = Core::start_in(&env.dir, None).unwrap();
    core.ready().await;
    assert_eq!(core.browsers().len(), 1);
    let (mut first, mut second) = (core.events(), core.events());

    for n in 0..3 {
        let event = Event {
            event: "state_update".into(),
            tab_id: Some(5),
            data: wire::raw(&json!({ "count": n })),
            seq: None,
        };
        browser.send(Message::Event(event)).await;
    }
    for events in [&mut first, &mut second] {
        for n in 0..3 {
            let got =
                tokio::time::timeout(Duration::from_secs(2), events.recv()).await.unwrap().unwrap();
            assert_eq!(got.host_pid, browser.pid);
            assert_eq!(got.event.event, "state_update");
            assert_eq!(got.event.tab_id, Some(5));
            assert_eq!(got.event.seq, Some(n + 1), "the host numbers events from 1");
            let data: Value = serde_json::from_str(got.event.data.get()).unwrap();
            assert_eq!(data, json!({ "count": n }));
        }
    }
}

#[tokio::test]
async fn page_methods_carry_their_parameters() {
    let env = Env::new();
    let mut browser = env.host().await;
    browser.hello(&env, "chromium", "p1").await;
    let core = Core::start_in(&env.dir, None).unwrap();

    let (state, params) = tokio::join!(
        core.get_state(None, 5),
        browser.answer("page.get_state", json!({ "items": ["bread"] }))
    );
    assert_eq!(params, json!({ "tab_id": 5 }));
    assert_eq!(state.unwrap(), json!({ "items": ["bread"] }));

    let (result, params) = tokio::join!(
        core.page_command(None, 5, "add_item", json!({ "item": "milk" })),
        browser.answer("page.command", json!({ "items": 2 }))
    );
    assert_eq!(params, json!({ "tab_id": 5, "type": "add_item", "payload": { "item": "milk" } }));
    assert_eq!(result.unwrap(), json!({ "items": 2 }));

    let pid = browser.pid.to_string();
    let (pong, _) = tokio::join!(
        core.call(Some(&pid), "ping", Value::Null, Duration::from_secs(1)),
        browser.answer("ping", json!({ "pong": true }))
    );
    assert_eq!(pong.unwrap(), json!({ "pong": true }));
}

#[tokio::test]
async fn a_browser_that_does_not_answer_times_out() {
    let env = Env::new();
    let mut browser = env.host().await;
    browser.hello(&env, "chromium", "p1").await;
    let core = Core::start_in(&env.dir, None).unwrap();

    let started = std::time::Instant::now();
    let (result, _) = tokio::join!(
        core.call(None, "echo", json!("x"), Duration::from_millis(200)),
        browser.request()
    );
    let err = result.unwrap_err();
    assert_eq!(err.code(), "timeout", "{err}");
    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
}
