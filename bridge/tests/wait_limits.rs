//! `GET /wait` under abuse from another program on this machine (no token needed to try):
//! a client that sends half a request head is cut off after the head timeout, a flood of
//! connections past the cap is answered 503 at once, and a real request still gets through
//! once the flood is gone.

use std::time::Duration;

use serde_json::json;
use tabwire_tests::http::until_closed;
use tabwire_tests::{Chromium, Mcp, http};
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
    let browser = Chromium::start();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let session = mcp.session().await;
    let port = session["http_port"].as_u64().unwrap() as u16;
    let bearer = format!("Bearer {}", session["token"].as_str().unwrap());

    // Slowloris: one connection sends half a head and stalls; the server closes it.
    let mut slow = stall(port).await;
    let (_, closed) = until_closed(&mut slow, Duration::from_secs(20)).await;
    let closed = closed.expect("a stalled head is closed by the server");
    println!("a half-sent head was closed after {closed:?}");

    // A flood: 64 stalled connections fill the cap; the next one is refused at once.
    let mut flood = Vec::new();
    for _ in 0..64 {
        flood.push(stall(port).await);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut extra = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (answer, closed) = until_closed(&mut extra, Duration::from_secs(5)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(closed.is_some(), "the 65th connection is answered and closed at once");
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("too_many_connections"), "{answer}");

    // The MCP session is unaffected meanwhile.
    mcp.ok("get_session", json!({})).await;

    // Once the flood is cut off (head timeout), a real request gets its answer.
    for mut s in flood {
        let (_, closed) = until_closed(&mut s, Duration::from_secs(20)).await;
        assert!(closed.is_some(), "every stalled connection is closed");
    }
    let answer = http::get(port, "/wait?timeout=0", &[("Authorization", &bearer)]).await;
    assert_eq!(answer.status, 204, "{answer:?}");
}
