//! The core as the other parts of the bridge use it (`tabwire_bridge::core::Core`), in this
//! process, against the real host: events fan out to every subscriber, and the page methods
//! carry their parameters.

use std::time::Duration;

use serde_json::{Value, json};
use tabwire_bridge::core::Core;
use tabwire_bridge::methods::{Echo, Ping};
use tabwire_proto::wire::{self, Event, Message};
use tabwire_tests::Sandbox;

#[tokio::test]
async fn events_reach_every_subscriber_in_order() {
    let env = Sandbox::new();
    let mut browser = env.host().await;
    browser.hello(&env, "chromium", "p1").await;
    let core = Core::start_in(&env.dir, None).unwrap();
    core.ready().await;
    assert_eq!(core.browsers().len(), 1);
    let (mut first, mut second) = (core.events(), core.events());

    for n in 0..3 {
        let event = Event::new("state_update", Some(5), wire::raw(&json!({ "count": n })));
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
    event.origin = Some("https://app.example.com".into());
    event.url = Some("https://app.example.com/".into());
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
