//! Routing through the real `tabwire-host`: the test is the browser (the host's stdio) and
//! several bridges (its socket).

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tabwire_proto::chunk::Reassembler;
use tabwire_proto::limits::MAX_TO_BROWSER;
use tabwire_proto::wire::Message;
use tabwire_testkit::host::{Bridge, Host, extension_hello};

fn respond(host: &mut Host, id: &Value, result: &Value) {
    host.send(&json!({"type": "response", "id": id, "result": result}).to_string());
}

fn event(host: &mut Host, n: u64) {
    host.send(&format!(r#"{{"type":"event","event":"page_event","tab_id":1,"data":{{"n":{n}}}}}"#));
}

#[test]
fn bridges_get_the_hello_first_and_the_record_names_the_browser() {
    let host = Host::start_with_hello();
    let mut bridge = host.connect();
    let hello = bridge.recv_hello();
    assert_eq!(hello["host_pid"], host.pid);
    assert_eq!(hello["browser"], "chromium");
    assert_eq!(hello["profile"], "test-profile");
    assert_eq!(hello["protocol"], 1);

    let deadline = Instant::now() + tabwire_testkit::host::PATIENCE;
    loop {
        let record: Value = serde_json::from_slice(&std::fs::read(host.record()).unwrap()).unwrap();
        if record["browser"] == "chromium" {
            assert_eq!(record["profile"], "test-profile");
            assert_eq!(record["extension_version"], "0.1.0");
            assert_eq!(record["pid"], host.pid);
            assert_eq!(record["socket"], host.socket().to_str().unwrap());
            break;
        }
        assert!(Instant::now() < deadline, "record never updated: {record}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_bridge_that_attaches_before_the_hello_gets_it_when_it_comes() {
    let mut host = Host::start();
    let mut bridge = host.connect();
    host.wait_bridges(1);
    host.send(&extension_hello());
    assert_eq!(bridge.recv_hello()["host_pid"], host.pid);
}

#[test]
fn an_extension_of_another_protocol_is_refused_and_told_why() {
    let mut host = Host::start();
    let mut bridge = host.connect();
    host.wait_bridges(1);
    host.send(&extension_hello().replace(r#""protocol":1"#, r#""protocol":2"#));
    let status = loop {
        let status = host.recv_status();
        if status.get("refused").is_some() {
            break status;
        }
    };
    let why = status["refused"].as_str().unwrap();
    assert!(why.contains("protocol 2") && why.contains("speaks 1"), "{why}");
    assert!(why.contains("tabwire install"), "says what to do: {why}");
    assert_eq!(status["host_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(bridge.try_recv(Duration::from_millis(200)), None, "no bridge is introduced to it");
}

#[test]
fn replies_go_only_to_the_bridge_that_asked_with_its_own_id() {
    let mut host = Host::start_with_hello();
    let mut a = host.connect();
    let mut b = host.connect();
    a.recv_hello();
    b.recv_hello();
    // Both bridges use the same request id.
    a.request("1", "echo", r#"{"from":"a"}"#);
    b.request("1", "echo", r#"{"from":"b"}"#);
    let first = host.recv();
    let second = host.recv();
    assert_eq!(first["type"], "request");
    assert_ne!(first["id"], "1", "the host rewrites ids");
    assert_ne!(first["id"], second["id"]);
    // Answer in the opposite order.
    respond(&mut host, &second["id"], &second["params"]);
    respond(&mut host, &first["id"], &first["params"]);

    let ra = a.recv();
    let rb = b.recv();
    assert_eq!(ra, json!({"type": "response", "id": "1", "result": {"from": "a"}}));
    assert_eq!(rb, json!({"type": "response", "id": "1", "result": {"from": "b"}}));
    assert_eq!(a.try_recv(Duration::from_millis(100)), None);
    assert_eq!(b.try_recv(Duration::from_millis(10)), None);
}

#[test]
fn errors_from_the_extension_reach_the_bridge_unchanged() {
    let mut host = Host::start_with_hello();
    let mut a = host.connect();
    a.recv_hello();
    a.request("x", "tabs.close", r#"{"tab_id":99}"#);
    let req = host.recv();
    assert_eq!(req["method"], "tabs.close");
    assert_eq!(req["params"], json!({"tab_id": 99}));
    let error = json!({"code": "no_such_tab", "message": "no tab has id 99"});
    host.send(&json!({"type": "response", "id": req["id"], "error": error}).to_string());
    assert_eq!(a.recv(), json!({"type": "response", "id": "x", "error": error}));
}

#[test]
fn events_reach_every_bridge_in_order_with_a_seq() {
    let mut host = Host::start_with_hello();
    let mut a = host.connect();
    let mut b = host.connect();
    a.recv_hello();
    b.recv_hello();
    host.wait_bridges(2);
    for n in 1..=200 {
        event(&mut host, n);
    }
    for bridge in [&mut a, &mut b] {
        for n in 1..=200u64 {
            let e = bridge.recv();
            assert_eq!(e["type"], "event");
            assert_eq!(e["seq"], n);
            assert_eq!(e["data"]["n"], n);
            assert_eq!(e["tab_id"], 1);
        }
    }
}

/// A tab in a session's group: its events go to that session's bridges and to those of no
/// session (the CLI), not to the others' — except the event that first names the owner, which
/// every bridge gets, so that the others forget the page they knew there.
#[test]
fn events_of_a_sessions_tab_go_to_its_bridges_and_a_new_owner_is_told_to_all() {
    let mut host = Host::start_with_hello();
    let session = |id: &str| {
        let mut bridge = Bridge::connect(&host.socket());
        let hello = json!({"type": "hello", "protocol": 1, "subscribe": true,
                           "session": {"id": id, "name": id}});
        bridge.send(&hello.to_string());
        bridge.recv_hello();
        bridge
    };
    let (mut a, mut b) = (session("a"), session("b"));
    let mut cli = host.connect();
    cli.recv_hello();
    host.wait_bridges(3);
    host.sync_browser("bridges");
    let owned = |host: &mut Host, tab: u64, owner: Option<&str>, n: u64| {
        let mut e =
            json!({"type": "event", "event": "page_event", "tab_id": tab, "data": {"n": n}});
        if let Some(owner) = owner {
            e["owner"] = json!(owner);
        }
        host.send(&e.to_string());
    };
    owned(&mut host, 7, Some("a"), 1); // tab 7 joins a's group: told to all
    owned(&mut host, 7, Some("a"), 2); // a's page at work: a and the CLI
    owned(&mut host, 8, None, 3); // the user's tab: all
    owned(&mut host, 7, Some("a"), 4);
    owned(&mut host, 7, None, 5); // back to the user: all
    owned(&mut host, 7, Some("b"), 6); // handed to b: all
    owned(&mut host, 7, Some("b"), 7); // b's: b and the CLI
    host.sync_browser("sent");
    let heard = |bridge: &mut Bridge| -> Vec<u64> {
        std::iter::from_fn(|| bridge.try_recv(Duration::from_millis(200)))
            .map(|e| e["data"]["n"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(heard(&mut a), [1, 2, 3, 4, 5, 6]);
    assert_eq!(heard(&mut b), [1, 3, 5, 6, 7]);
    assert_eq!(heard(&mut cli), [1, 2, 3, 4, 5, 6, 7]);
}

#[test]
fn events_are_kept_while_no_bridge_is_attached_and_replayed_with_seq_continuity() {
    let mut host = Host::start_with_hello();
    for n in 1..=5 {
        event(&mut host, n);
    }
    host.sync_browser("a");
    let mut a = host.connect();
    a.recv_hello();
    for n in 1..=5u64 {
        assert_eq!(a.recv()["seq"], n);
    }
    host.wait_bridges(1);
    event(&mut host, 6);
    assert_eq!(a.recv()["seq"], 6);
    drop(a);
    host.wait_bridges(0);

    for n in 7..=9 {
        event(&mut host, n);
    }
    host.sync_browser("b");
    let mut b = host.connect();
    b.recv_hello();
    for n in 7..=9u64 {
        let e = b.recv();
        assert_eq!((e["seq"].clone(), e["data"]["n"].clone()), (json!(n), json!(n)));
    }
    assert_eq!(b.try_recv(Duration::from_millis(50)), None, "no `dropped` when nothing was lost");
}

#[test]
fn page_events_of_a_site_revoked_while_no_bridge_listened_are_not_replayed() {
    let mut host = Host::start_with_hello();
    let from = |host: &mut Host, origin: &str, n: u64| {
        host.send(
            &json!({
                "type": "event", "event": "page_event", "tab_id": n, "origin": origin,
                "url": format!("{origin}/app"), "data": { "n": n },
            })
            .to_string(),
        );
    };
    from(&mut host, "https://evil.example", 1);
    from(&mut host, "http://localhost:5173", 2);
    from(&mut host, "https://evil.example", 3);
    // The user revokes https://evil.example: the extension sends the new list.
    host.send(
        &json!({"type": "event", "event": "sites", "data": { "sites": ["http://localhost:*"] }})
            .to_string(),
    );
    host.sync_browser("a");
    let mut a = host.connect();
    a.recv_hello();
    let known = a.recv();
    assert_eq!(known["event"], "sites", "a bridge learns the list right after the hello");
    assert_eq!(known["data"]["sites"], json!(["http://localhost:*"]));
    let kept = a.recv();
    assert_eq!(kept["data"]["n"], 2);
    assert_eq!(kept["origin"], "http://localhost:5173", "provenance survives the relay");
    assert_eq!(kept["url"], "http://localhost:5173/app");
    assert_eq!(a.recv()["event"], "sites");
    assert_eq!(a.try_recv(Duration::from_millis(50)), None, "nothing of the revoked site");
}

#[test]
fn a_bridge_that_does_not_subscribe_neither_gets_events_nor_takes_the_replay() {
    let mut host = Host::start_with_hello();
    for n in 1..=3 {
        event(&mut host, n);
    }
    host.sync_browser("a");
    // `tabwire status` or `tabwire doctor`: hello from the host, answers, and no events.
    let mut probe = host.connect_probe();
    probe.recv_hello();
    host.wait_bridges(1);
    event(&mut host, 4);
    host.sync_browser("b");
    assert_eq!(probe.try_recv(Duration::from_millis(100)), None, "a probe gets no events");
    drop(probe);
    host.wait_bridges(0);

    // The next real session still gets every event, in order.
    let mut session = host.connect();
    session.recv_hello();
    for n in 1..=4u64 {
        assert_eq!(session.recv()["seq"], n);
    }
}

#[test]
fn overflow_drops_the_oldest_and_the_replay_says_which() {
    let mut host = Host::start_with_hello();
    for n in 1..=10_005 {
        event(&mut host, n);
    }
    host.sync_browser("count");
    let mut a = host.connect();
    a.recv_hello();
    let dropped = a.recv();
    assert_eq!(dropped["event"], "dropped");
    assert_eq!(dropped["data"], json!({"count": 5, "first_seq": 1, "last_seq": 5}));
    assert!(dropped.get("seq").is_none());
    for n in 6..=10_005u64 {
        assert_eq!(a.recv()["seq"], n);
    }
    drop(a);
    host.wait_bridges(0);

    // Over the byte limit: 20 events of 1 MiB each, 16 MiB kept.
    let big = "x".repeat(1024 * 1024);
    for _ in 0..20 {
        host.send(&format!(r#"{{"type":"event","event":"state_update","data":"{big}"}}"#));
    }
    host.sync_browser("bytes");
    let mut b = host.connect();
    b.recv_hello();
    let dropped = b.recv();
    assert_eq!(dropped["data"], json!({"count": 5, "first_seq": 10_006, "last_seq": 10_010}));
    for seq in 10_011..=10_025u64 {
        let e = b.recv();
        assert_eq!(e["seq"], seq);
        assert_eq!(e["data"].as_str().unwrap().len(), big.len());
    }
}

#[test]
fn host_status_tells_the_extension_how_many_bridges_are_attached() {
    let host = Host::start_with_hello();
    let mut a = host.connect();
    assert_eq!(
        host.recv_status(),
        json!({"host_pid": host.pid, "bridges": 1, "host_version": env!("CARGO_PKG_VERSION"),
               "sessions": []})
    );
    let mut b = host.connect();
    assert_eq!(host.recv_status()["bridges"], 2);
    // A request made for a session: the extension hears the session is attached first, then
    // the request, which carries it unchanged.
    let session = json!({"id": "lead-1", "name": "lead"});
    let request = json!({"type": "request", "id": "1", "method": "tabs.list", "session": session});
    a.send(&request.to_string());
    assert_eq!(host.recv_status()["sessions"], json!(["lead-1"]));
    assert_eq!(host.recv()["session"], session);
    drop(a);
    let status = host.recv_status();
    assert_eq!((&status["bridges"], &status["sessions"]), (&json!(1), &json!([])));
    // A bridge's hello may name its session too (one that attaches to a host started after it).
    let hello = json!({"type": "hello", "protocol": 1, "session": {"id": "w-2", "name": "w"}});
    b.send(&hello.to_string());
    assert_eq!(host.recv_status()["sessions"], json!(["w-2"]));
    drop(b);
    assert_eq!(host.recv_status()["bridges"], 0);
}

#[test]
fn a_bridge_that_leaves_has_its_requests_cancelled_and_only_those() {
    let mut host = Host::start_with_hello();
    let mut a = host.connect();
    let mut b = host.connect();
    a.recv_hello();
    b.recv_hello();
    a.request("1", "page.command", r#"{"who":"a"}"#);
    a.request("2", "page.command", r#"{"who":"a"}"#);
    b.request("1", "page.command", r#"{"who":"b"}"#);
    // Requests of different bridges may reach the browser in either order.
    let reqs: Vec<Value> = (0..3).map(|_| host.recv()).collect();
    let ids_of = |who: &str| -> Vec<Value> {
        reqs.iter().filter(|r| r["params"]["who"] == who).map(|r| r["id"].clone()).collect()
    };
    let (mut of_a, of_b) = (ids_of("a"), ids_of("b"));
    drop(a);
    let mut cancelled = vec![host.recv()["id"].clone(), host.recv()["id"].clone()];
    cancelled.sort_by_key(|id| id.to_string());
    of_a.sort_by_key(|id| id.to_string());
    assert_eq!(cancelled, of_a);
    assert_eq!(host.try_recv(Duration::from_millis(100)), None, "b's request is not cancelled");
    respond(&mut host, &of_b[0], &json!("still here"));
    assert_eq!(b.recv(), json!({"type": "response", "id": "1", "result": "still here"}));
}

#[test]
fn an_unanswered_request_times_out_is_cancelled_and_its_late_answer_dropped() {
    let mut host = Host::start_with_hello();
    let mut a = host.connect();
    a.recv_hello();
    let sent = Instant::now();
    a.send(
        r#"{"type":"request","id":"slow","method":"page.command","params":{},"timeout_ms":200}"#,
    );
    let req = host.recv();
    assert_eq!(req["timeout_ms"], 200);
    let reply = a.recv();
    let waited = sent.elapsed();
    assert_eq!(reply["id"], "slow");
    assert_eq!(reply["error"]["code"], "timeout");
    assert!(reply["error"]["message"].as_str().unwrap().contains("within 200 ms"));
    assert!(waited >= Duration::from_millis(200), "timed out early: {waited:?}");
    assert!(waited < Duration::from_secs(2), "timed out late: {waited:?}");
    assert_eq!(host.recv(), json!({"type": "cancel", "id": req["id"]}));

    respond(&mut host, &req["id"], &json!("too late"));
    host.wait_for_log("dropped a response to no request in flight");
    assert_eq!(a.try_recv(Duration::from_millis(100)), None);
}

#[test]
fn a_huge_timeout_is_cut_to_a_day_not_a_crash() {
    let mut host = Host::start_with_hello();
    let mut a = host.connect();
    a.recv_hello();
    a.send(&format!(
        r#"{{"type":"request","id":"long","method":"ping","timeout_ms":{}}}"#,
        u64::MAX
    ));
    let req = host.recv();
    respond(&mut host, &req["id"], &json!("pong"));
    assert_eq!(a.recv(), json!({"type": "response", "id": "long", "result": "pong"}));
}

#[test]
fn a_cancel_from_the_bridge_reaches_the_extension_with_the_host_id() {
    let mut host = Host::start_with_hello();
    let mut a = host.connect();
    a.recv_hello();
    a.request("7", "tabs.open", r#"{"url":"about:blank"}"#);
    let req = host.recv();
    a.send(r#"{"type":"cancel","id":"7"}"#);
    assert_eq!(host.recv(), json!({"type": "cancel", "id": req["id"]}));
    respond(&mut host, &req["id"], &json!(null));
    assert_eq!(a.try_recv(Duration::from_millis(100)), None, "no response after a cancel");
}

#[test]
fn big_messages_reach_the_browser_in_chunks_and_the_bridge_whole() {
    let mut host = Host::start_with_hello();
    let mut a = host.connect();
    a.recv_hello();
    // Escapes and multibyte characters make the escaped size differ from the raw one.
    let text = "quote\" back\\slash \u{1} é 😀 \n".repeat(100_000);
    let params = json!({ "text": text });
    a.send(
        &json!({"type": "request", "id": "big", "method": "echo", "params": params}).to_string(),
    );

    let mut reassembler = Reassembler::new(usize::MAX);
    let mut frames = 0;
    let whole = loop {
        let frame = host.recv_frame();
        assert!(frame.len() <= MAX_TO_BROWSER, "a frame of {} bytes", frame.len());
        match Message::parse(&frame).unwrap() {
            Message::Chunk(c) => {
                frames += 1;
                if let Some(whole) = reassembler.push(c).unwrap() {
                    break whole;
                }
            }
            Message::Event(_) => continue, // host_status
            other => panic!("expected chunks, got {}", other.kind()),
        }
    };
    assert!(frames >= 4, "{frames} chunks");
    let req: Value = serde_json::from_str(&whole).unwrap();
    assert_eq!(req["type"], "request");
    assert_eq!(req["params"], params);

    // The way back needs no chunks.
    respond(&mut host, &req["id"], &params);
    let resp = a.recv();
    assert_eq!(resp["id"], "big");
    // Not assert_eq: a failure would print the 3 MB twice; the error, if any, is short.
    assert!(resp["result"] == params, "{}", resp["error"]);
}

#[test]
fn a_bridge_that_stops_reading_is_closed_and_the_others_go_on() {
    let mut host = Host::start_with_hello();
    let mut stuck = host.connect();
    stuck.recv_hello();
    let mut good = host.connect();
    good.recv_hello();
    host.wait_bridges(2);
    // 70 events of 1 MiB: more than the 64 MiB a bridge may fall behind.
    let count = 70;
    let reader = std::thread::spawn(move || {
        let mut got = 0;
        while got < count {
            let frame = tabwire_testkit::host::read_frame(&mut good.stream)
                .unwrap()
                .expect("the good bridge stays");
            assert!(frame.starts_with(br#"{"type":"event","event":"state_update""#));
            got += 1;
        }
        good
    });
    let big = "y".repeat(1 << 20);
    for _ in 0..count {
        host.send(&format!(r#"{{"type":"event","event":"state_update","data":"{big}"}}"#));
    }
    let mut good = reader.join().unwrap();
    host.wait_for_log("the bridge stopped reading");
    assert_eq!(host.recv_status()["bridges"], 1);
    // What reached the stuck bridge's socket before it was closed is readable; then it ends.
    let mut before_close = 0;
    loop {
        match tabwire_testkit::host::read_frame(&mut stuck.stream) {
            Ok(Some(_)) => before_close += 1,
            Ok(None) => break,
            // Cut off mid-frame, or reset: closed either way.
            Err(e) if e.kind() != std::io::ErrorKind::WouldBlock => break,
            Err(e) => panic!("the stuck bridge was not closed: {e}"),
        }
    }
    assert!(before_close < count, "{before_close} events reached the stuck bridge");
    good.request("after", "ping", "null");
    let req = host.recv();
    respond(&mut host, &req["id"], &json!("pong"));
    assert_eq!(good.recv()["result"], "pong");
}
