//! `GET /wait` under abuse from another program on this machine (no token needed to try):
//! a client that sends half a request head is cut off after the head timeout, and a flood of
//! connections that send no token keeps to a budget of its own, the oldest closed for each
//! newcomer once it had its grace, while a real request gets through in the middle of it.

use std::time::Duration;

use serde_json::json;
use tabwire_testkit::http::until_closed;
use tabwire_testkit::{Chromium, Mcp, http};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// Connect and send half a request head, then stall.
async fn stall(port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.expect("connect to /wait");
    s.write_all(b"GET /wait HTTP/1.1\r\nHost: 127.0.0.1").await.unwrap();
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_headers_are_cut_off_and_a_flood_is_refused_without_blocking_real_requests() {
    let browser = Chromium::shared();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let session = mcp.session().await;
    let port = session["http_port"].as_u64().unwrap() as u16;
    let bearer = format!("Bearer {}", session["token"].as_str().unwrap());

    // Slowloris: one connection sends half a head and stalls; the server closes it.
    let mut slow = stall(port).await;
    let (_, closed) = until_closed(&mut slow, Duration::from_secs(20)).await;
    let closed = closed.expect("a stalled head is closed by the server");
    println!("a half-sent head was closed after {closed:?}");

    // A flood: 64 stalled connections, none with the token. They have 16 places of their own
    // (session/src/gate.rs): past those, a newcomer waits, and takes the oldest's place once
    // that one had half a second to send its request (the oldest is closed, unanswered). So
    // all but the last 16 make way within about two seconds, and those 16 hold their places
    // until the head timeout (5 s). A request with the token is served in the middle of the
    // flood. All are watched at once until 4.5 s after the first connected: what closed by
    // then made way (the head timeout closes none so soon), however a loaded machine spaced
    // the evictions.
    let started = std::time::Instant::now();
    let mut flood = Vec::new();
    for _ in 0..64 {
        flood.push(stall(port).await);
    }
    tokio::time::sleep(Duration::from_millis(600)).await;
    let answer = http::get(port, "/wait?timeout=0", &[("Authorization", &bearer)]).await;
    assert_eq!(answer.status, 204, "served during the flood: {answer:?}");
    let by = started + Duration::from_millis(4500);
    let watched = flood
        .iter_mut()
        .map(|s| until_closed(s, by.saturating_duration_since(std::time::Instant::now())));
    let mut closed = 0;
    for (answer, at) in futures::future::join_all(watched).await {
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 503"), "{answer}");
        closed += usize::from(at.is_some());
    }
    let took = started.elapsed();
    assert!(closed >= 64 - 16, "only {closed} of 64 stalled connections made way in {took:?}");

    // The MCP session is unaffected meanwhile.
    mcp.ok("get_session", json!({})).await;

    // The rest are cut off by the head timeout.
    for mut s in flood {
        let (_, closed) = until_closed(&mut s, Duration::from_secs(20)).await;
        assert!(closed.is_some(), "every stalled connection is closed");
    }
    let answer = http::get(port, "/wait?timeout=0", &[("Authorization", &bearer)]).await;
    assert_eq!(answer.status, 204, "{answer:?}");
}
