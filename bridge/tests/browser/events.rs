//! Events from real pages to a waiting assistant or script: wait_for_state_change (at once,
//! together, timeout, exactly once with two waiters, onDrained), wait_for_event (filter, FIFO,
//! cancellation), `tabwire wait` and `GET /wait`.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tabwire_testkit::{Chromium, Fixtures, Mcp, bins, http, process};
use tokio::io::AsyncBufReadExt;

async fn open(mcp: &Mcp, url: String) -> Value {
    mcp.ok("open_tab", json!({ "url": url })).await["tab"]["id"].clone()
}

async fn burst(mcp: &Mcp, tab: &Value, n: u64) {
    let done =
        mcp.ok("send_command", json!({ "tab_id": tab, "type": "burst", "payload": { "n": n } }));
    assert_eq!(done.await["result"]["pushed"], n);
}

fn burst_index(event: &Value) -> u64 {
    assert_eq!(event["type"], "page_event", "{event}");
    assert_eq!(event["data"]["kind"], "burst", "{event}");
    event["data"]["i"].as_u64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_events_reach_a_waiting_assistant_and_scripts() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let tab = open(&mcp, pages.url("app.html")).await;

    // Queued before the wait: all of them at once, in one array, in order.
    burst(&mcp, &tab, 3).await;
    let started = Instant::now();
    let got = mcp.ok("wait_for_state_change", json!({ "timeout_secs": 10 })).await;
    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    assert_eq!(got["timed_out"], false);
    let events = got["events"].as_array().unwrap();
    assert_eq!(events.iter().map(burst_index).collect::<Vec<_>>(), [0, 1, 2], "{got}");
    assert!(events.iter().all(|e| e["tab_id"] == tab));
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");

    // The page heard that 3 were taken: its onDrained callback updated #drained.
    let drained = mcp.ok("send_command", json!({ "tab_id": tab, "type": "drained" })).await;
    assert_eq!(drained["result"], json!({ "total": 3, "text": "drained: 3" }));

    // Nothing queued: the timeout.
    let started = Instant::now();
    let got = mcp.ok("wait_for_state_change", json!({ "timeout_secs": 1 })).await;
    assert_eq!(got, json!({ "events": [], "timed_out": true }));
    assert!(started.elapsed() >= Duration::from_secs(1));

    // An event during the wait ends it.
    let (got, ()) =
        tokio::join!(mcp.ok("wait_for_state_change", json!({ "timeout_secs": 20 })), async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            burst(&mcp, &tab, 1).await;
        });
    assert_eq!(got["events"].as_array().unwrap().len(), 1, "{got}");

    // One tab's events only; the other tab's stay queued.
    let other = open(&mcp, pages.url("app.html")).await;
    burst(&mcp, &other, 2).await;
    let got = mcp.ok("wait_for_state_change", json!({ "tab_id": tab, "timeout_secs": 0 })).await;
    assert_eq!(got["timed_out"], true, "{got}");
    let got = mcp.ok("wait_for_state_change", json!({ "tab_id": other, "timeout_secs": 5 })).await;
    assert_eq!(got["events"].as_array().unwrap().len(), 2);

    // `tabwire wait` over the session socket: one JSON line per event.
    burst(&mcp, &tab, 2).await;
    let out = tokio::process::Command::new(bins::bin("tabwire"))
        .args(["wait", "--once", "--timeout", "5"])
        .env("TABWIRE_RUNTIME_DIR", &browser.runtime_dir)
        .env_remove("TABWIRE_SESSION_ID")
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(lines.iter().map(burst_index).collect::<Vec<_>>(), [0, 1]);

    // scripts/wait-for-state.sh: the same lines, with curl over GET /wait.
    let mut script = std::process::Command::new("bash");
    script
        .arg(bins::repo_root().join("scripts/wait-for-state.sh"))
        .env("TABWIRE_RUNTIME_DIR", &browser.runtime_dir)
        .env("TIMEOUT", "2")
        .env_remove("TABWIRE_SESSION_ID")
        .stdout(std::process::Stdio::piped());
    process::own_tree(&mut script); // so that its curl goes with it
    let mut script = tokio::process::Command::from(script).kill_on_drop(true).spawn().unwrap();
    burst(&mcp, &tab, 2).await;
    let mut lines = tokio::io::BufReader::new(script.stdout.take().unwrap()).lines();
    for i in 0..2 {
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("the script printed the event")
            .unwrap()
            .expect("a line");
        assert_eq!(burst_index(&serde_json::from_str(&line).unwrap()), i, "{line}");
    }
    process::kill_tree(script.id().unwrap());
    script.wait().await.unwrap();
    // The session noticed that curl hung up: its wait took nothing (the next waits see that).

    // GET /wait: every status code, and the token.
    let session = mcp.session().await;
    let port = session["http_port"].as_u64().unwrap() as u16;
    let token = session["token"].as_str().unwrap();
    let bearer = format!("Bearer {token}");
    let auth = [("Authorization", bearer.as_str())];
    assert_eq!(http::get(port, "/wait?timeout=0", &auth).await.status, 204);
    burst(&mcp, &tab, 2).await;
    let answer = http::get(port, "/wait?timeout=5", &auth).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let events: Vec<Value> = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(events.iter().map(burst_index).collect::<Vec<_>>(), [0, 1]);
    let answer = http::get(port, "/wait?timeout=0", &[]).await;
    assert_eq!(answer.status, 401, "no token: {answer:?}");
    assert!(answer.body.contains("Authorization"), "{}", answer.body);
    let wrong = [("Authorization", "Bearer 0123")];
    assert_eq!(http::get(port, "/wait?timeout=0", &wrong).await.status, 401);
    let rebound = [auth[0], ("Host", "attacker.example")];
    assert_eq!(http::get(port, "/wait?timeout=0", &rebound).await.status, 403, "foreign Host");
    let from_page = [auth[0], ("Origin", "http://127.0.0.1:9")];
    assert_eq!(http::get(port, "/wait?timeout=0", &from_page).await.status, 403, "Origin");
    assert_eq!(http::get(port, "/wait?timeout=121", &auth).await.status, 400);
    assert_eq!(http::get(port, "/wait?timeout=soon", &auth).await.status, 400);
    assert_eq!(http::get(port, "/other", &auth).await.status, 404);
    let localhost = format!("localhost:{port}");
    let by_name = [auth[0], ("Host", localhost.as_str())];
    assert_eq!(http::get(port, "/wait?timeout=0", &by_name).await.status, 204);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_waiters_share_a_thousand_events_exactly_once() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Arc::new(Mcp::start(&browser.runtime_dir).await);
    let tab = open(&mcp, pages.url("app.html")).await;

    const N: usize = 1000;
    let total = Arc::new(AtomicUsize::new(0));
    let waiter = |mcp: Arc<Mcp>, total: Arc<AtomicUsize>| async move {
        let mut mine: Vec<(u64, u64)> = Vec::new(); // (i, seq)
        let deadline = Instant::now() + Duration::from_secs(30);
        while total.load(Ordering::SeqCst) < N && Instant::now() < deadline {
            let got = mcp.ok("wait_for_state_change", json!({ "timeout_secs": 1 })).await;
            let events = got["events"].as_array().unwrap();
            for e in events {
                mine.push((burst_index(e), e["seq"].as_u64().unwrap()));
            }
            total.fetch_add(events.len(), Ordering::SeqCst);
        }
        mine
    };
    let (a, b, ()) = tokio::join!(
        tokio::spawn(waiter(mcp.clone(), total.clone())),
        tokio::spawn(waiter(mcp.clone(), total.clone())),
        burst(&mcp, &tab, N as u64)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    for mine in [&a, &b] {
        assert!(mine.windows(2).all(|w| w[0].1 < w[1].1), "each waiter's events are in seq order");
    }
    let mut seen: HashMap<u64, usize> = HashMap::new();
    for (i, _) in a.iter().chain(&b) {
        *seen.entry(*i).or_default() += 1;
    }
    assert_eq!(a.len() + b.len(), N, "{} + {} events", a.len(), b.len());
    assert!((0..N as u64).all(|i| seen.get(&i) == Some(&1)), "every event exactly once");
    eprintln!("waiter A took {}, waiter B took {}", a.len(), b.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_event_filters_keeps_order_and_can_be_cancelled() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;

    // Everything that happened since the session started is queued, in order: the browser
    // attaching, the tab opening and loading, the page publishing its state.
    let tab = open(&mcp, pages.url("app.html")).await;
    let mut ids = Vec::new();
    let mut kinds = Vec::new();
    let every = ["browser", "tab", "state_update", "page_event", "worker_complete", "dropped"];
    loop {
        let got = mcp.ok("wait_for_event", json!({ "types": every, "timeout_secs": 0 })).await;
        if got["type"] == "timeout" {
            break;
        }
        ids.push(got["id"].as_u64().unwrap());
        kinds.push(got["type"].as_str().unwrap().to_owned());
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "oldest first: {ids:?}");
    for kind in ["browser", "tab", "state_update"] {
        assert!(kinds.iter().any(|k| k == kind), "{kind} missing from {kinds:?}");
    }

    // A command that pushes two events and then publishes its state: [pe0, pe1, state_update].
    burst(&mcp, &tab, 2).await;
    let update =
        mcp.ok("wait_for_event", json!({ "types": ["state_update"], "timeout_secs": 5 })).await;
    assert_eq!(update["type"], "state_update");
    assert_eq!(update["tab_id"], tab);
    assert_eq!(update["data"]["items"], json!(["first"]));
    // The page events it skipped are still there, in order.
    // (Not `tab`: the browser may report a tab's status at any moment, e.g. its first blank tab.)
    let page_kinds = json!({ "types": ["page_event", "state_update"], "timeout_secs": 5 });
    let first = mcp.ok("wait_for_event", page_kinds).await;
    let second = mcp
        .ok("wait_for_event", json!({ "types": ["page_event", "dropped"], "timeout_secs": 5 }))
        .await;
    assert_eq!((burst_index(&first), burst_index(&second)), (0, 1));

    let nothing =
        mcp.ok("wait_for_event", json!({ "types": ["message"], "timeout_secs": 0 })).await;
    assert_eq!(nothing, json!({ "type": "timeout" }));
    let err = mcp.err("wait_for_event", json!({ "types": ["pageevent"] })).await;
    assert!(err.starts_with("bad_request") && err.contains("page_event"), "{err}");
    let err = mcp.err("wait_for_event", json!({ "timeout_secs": 3601 })).await;
    assert!(err.starts_with("bad_request") && err.contains("3600"), "{err}");

    // A cancelled wait takes nothing: the next event goes to the next wait.
    let cancelled = tokio::time::timeout(
        Duration::from_millis(300),
        mcp.call("wait_for_event", json!({ "types": ["page_event"], "timeout_secs": 60 })),
    )
    .await;
    assert!(cancelled.is_err(), "the wait was still waiting");
    tokio::time::sleep(Duration::from_millis(100)).await;
    burst(&mcp, &tab, 1).await;
    let got = mcp.ok("wait_for_event", json!({ "types": ["page_event"], "timeout_secs": 5 })).await;
    assert_eq!(burst_index(&got), 0);
}
