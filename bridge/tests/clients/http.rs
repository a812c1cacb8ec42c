//! `tabwire serve --http`: the real server process, driven by rmcp's streamable-HTTP client
//! and by bare HTTP requests whose every header the test controls. The state, event,
//! session and operation flows run over HTTP too: `TABWIRE_TEST_MCP=http` reruns those test
//! files with every client a session of `tabwire serve` (scripts/test.sh does).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};
use tabwire_testkit::serve::Serve;
use tabwire_testkit::{Chromium, Fixtures, Mcp, bins, http};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

fn port(serve: &Serve) -> u16 {
    serve.authority().rsplit(':').next().unwrap().parse().unwrap()
}

/// POST an initialize to the server with these headers (Host defaults to its own).
async fn init(serve: &Serve, headers: &[(&str, &str)]) -> http::Answer {
    let mut all = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    all.extend_from_slice(headers);
    http::request(port(serve), "POST", "/mcp", &all, INIT).await
}

fn session_records(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir.join("sessions")) else { return Vec::new() };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

/// The next `message` event of this client's session: its body.
async fn next_message(client: &Mcp) -> String {
    let got =
        client.ok("wait_for_event", json!({ "types": ["message"], "timeout_secs": 30 })).await;
    assert_eq!(got["type"], "message", "{got}");
    got["body"].as_str().unwrap().to_owned()
}

async fn eventually(what: &str, within: Duration, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !ok() {
        assert!(Instant::now() < deadline, "{what} did not happen within {within:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_this_users_clients_get_in() {
    let dir = bins::scratch_dir("door");
    let serve = Serve::start(&dir, &[]);
    let bearer = format!("Bearer {}", serve.token);

    // The token is in a record only this user can read (mode 0600 on Unix), and nowhere else
    // on disk.
    let record = dir.join("serve").join(format!("{}.json", port(&serve)));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&record).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let saved: Value = serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    assert_eq!(
        (saved["url"].as_str(), saved["token"].as_str()),
        (Some(&*serve.url), Some(&*serve.token))
    );

    // No token, a wrong one, another scheme: 401 with a challenge and what to do.
    for auth in [None, Some("Bearer nope".to_owned()), Some(serve.token.clone())] {
        let headers: Vec<(&str, &str)> =
            auth.iter().map(|a| ("Authorization", a.as_str())).collect();
        let answer = init(&serve, &headers).await;
        assert_eq!(answer.status, 401, "{auth:?}: {answer:?}");
        assert_eq!(answer.header("www-authenticate"), Some("Bearer"));
        assert!(answer.body.contains("Authorization: Bearer <token>"), "{}", answer.body);
    }
    // A web page: its Origin is refused even with the token (403), and so is a Host that is
    // not the server's own (DNS rebinding).
    for origin in ["https://evil.example", "null", "http://localhost:3000"] {
        let answer = init(&serve, &[("Authorization", &bearer), ("Origin", origin)]).await;
        assert_eq!(answer.status, 403, "{origin}: {answer:?}");
        assert!(answer.body.contains("web pages"), "{}", answer.body);
    }
    for host in ["evil.example", "evil.example:80", "127.0.0.1:1"] {
        let answer = init(&serve, &[("Authorization", &bearer), ("Host", host)]).await;
        assert_eq!(answer.status, 403, "{host}: {answer:?}");
        assert!(answer.body.contains("Host must be"), "{}", answer.body);
    }
    let other = http::request(port(&serve), "GET", "/", &[("Authorization", &bearer)], "").await;
    assert_eq!(other.status, 404, "{other:?}");

    // The right token and Host, no Origin: a session, named in Mcp-Session-Id.
    let answer = init(&serve, &[("Authorization", &bearer)]).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.header("mcp-session-id").is_some_and(|id| !id.is_empty()), "{answer:?}");
    assert!(
        answer.body.contains("\"serverInfo\"") && answer.body.contains("tabwire"),
        "{answer:?}"
    );
    // Its own origin is no foreign one (it serves no page, but a client may send it).
    let own = format!("http://{}", serve.authority());
    let answer = init(&serve, &[("Authorization", &bearer), ("Origin", &own)]).await;
    assert_eq!(answer.status, 200, "{answer:?}");

    // Stopped, it removes its record and every session's. Unix only: a console program on
    // Windows cannot be asked to stop by another, only ended (`Serve::stop`).
    #[cfg(unix)]
    {
        let status = serve.stop();
        assert!(status.success(), "{status:?}");
        assert!(!record.exists());
        assert_eq!(session_records(&dir), Vec::<String>::new());
    }
}

/// Connections that never send a whole request are closed: with nothing, a partial head, a
/// head sent a byte at a time, or a head without its body. They cost a descriptor each, so a
/// local process must not be able to hold them for ever (600, more than the 512 connection
/// slots, are all gone within seconds, and a real client is served after them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_that_send_no_whole_request_are_closed() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    let dir = bins::scratch_dir("idle");
    let serve = Serve::start(&dir, &[]);
    let port = port(&serve);
    let bearer = format!("Bearer {}", serve.token);
    let addr = format!("127.0.0.1:{port}");

    // Two bytes a second: a head that never ends.
    let mut slow = TcpStream::connect(&addr).await.unwrap();
    // The token holder's head with a body that never comes.
    let mut bodiless = TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {bearer}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: 1000\r\n\r\n{{"
    );
    bodiless.write_all(head.as_bytes()).await.unwrap();
    // Past these two, more idle connections than there are slots.
    let start = Instant::now();
    let mut idle = Vec::new();
    for i in 0..600 {
        let mut tcp = TcpStream::connect(&addr).await.unwrap();
        if i % 2 == 1 {
            tcp.write_all(format!("POST /mcp HTTP/1.1\r\nHost: {addr}").as_bytes()).await.unwrap();
        }
        idle.push(tcp);
    }

    /// What the server sent before it closed (within `within`), or None if still open.
    async fn closed(tcp: &mut TcpStream, within: Duration) -> Option<String> {
        let mut got = Vec::new();
        let read = tokio::time::timeout(within, tcp.read_to_end(&mut got)).await;
        read.ok().map(|_| String::from_utf8_lossy(&got).into_owned())
    }
    let slow_closed = tokio::spawn(async move {
        for b in b"POST /mcp HTTP/1.1\r\nHost: 127".iter().cycle() {
            if slow.write_all(&[*b]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
            if start.elapsed() > Duration::from_secs(20) {
                return false;
            }
        }
        true
    });
    // The last of them waits at most 2 s for a place (gate::MAX_WAIT), then has 5 s to send
    // its head (HEAD_TIMEOUT): 7 s after it connected, and 5 s more for a machine busy with
    // other tests. "For ever" is what this tells apart, not a second.
    let connected = Instant::now();
    let within = Duration::from_secs(12);
    for (i, tcp) in idle.iter_mut().enumerate() {
        let left = within.saturating_sub(connected.elapsed());
        // Closed without an answer, or (past the places) with 503.
        let answer = closed(tcp, left).await;
        let answer = answer.unwrap_or_else(|| {
            panic!("idle connection {i} still open {} s after the last connected", within.as_secs())
        });
        assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 503"), "{i}: {answer}");
    }
    assert!(slow_closed.await.unwrap(), "a head sent a byte at a time still open after 20 s");
    let answer = closed(&mut bodiless, Duration::from_secs(15)).await;
    let answer = answer.expect("a head without its body still open after 15 s");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not arrive within 10 s"), "{answer}");

    // Nothing was held: a client is served as before.
    let answer = init(&serve, &[("Authorization", &bearer)]).await;
    assert_eq!(answer.status, 200, "{answer:?}");
}

#[test]
fn an_address_other_machines_can_reach_is_refused() {
    let dir = bins::scratch_dir("bind");
    for addr in ["0.0.0.0:0", "[::]:0", "192.168.1.20:8790"] {
        let out = std::process::Command::new(bins::bin("tabwire"))
            .args(["serve", "--http", addr])
            .env("TABWIRE_RUNTIME_DIR", &dir)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{addr}: {stderr}");
        assert!(
            stderr.contains("loopback only") && stderr.contains("127.0.0.1:"),
            "{addr}: {stderr}"
        );
        assert!(!stderr.contains("Bearer"), "no token is made for a refused address: {stderr}");
    }
}

/// 20 clients at once, each calling while the others call: every reply and every event is the
/// client's own. Each posts messages to its neighbour's session and waits in its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_clients_each_get_only_their_own_replies_and_events() {
    const CLIENTS: usize = 20;
    const ROUNDS: usize = 5;
    let dir = bins::scratch_dir("twenty");
    let serve = Arc::new(Serve::start(&dir, &[]));
    let mut clients = Vec::new();
    for _ in 0..CLIENTS {
        clients.push(Arc::new(Mcp::http(&serve).await));
    }
    let mut ids = Vec::new();
    for client in &clients {
        ids.push(
            client.ok("get_session", json!({})).await["session_id"].as_str().unwrap().to_owned(),
        );
    }
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), CLIENTS, "each client is a session of its own: {ids:?}");
    assert_eq!(session_records(&dir).len(), CLIENTS);

    let ids = Arc::new(ids);
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|me| {
            let (client, ids) = (clients[me].clone(), ids.clone());
            tokio::spawn(async move {
                let next = (me + 1) % CLIENTS;
                let mut heard = Vec::new();
                for round in 0..ROUNDS {
                    let body = format!("{me}->{next}#{round}");
                    let sent = client
                        .ok("post_message", json!({ "session_id": ids[next], "body": body }))
                        .await;
                    assert_eq!(sent["session_id"], ids[next], "{sent}");
                    let who = client.ok("get_session", json!({})).await;
                    assert_eq!(who["session_id"], ids[me], "a reply meant for another client");
                    heard.push(next_message(&client).await);
                }
                let from = (me + CLIENTS - 1) % CLIENTS;
                let expected: Vec<String> =
                    (0..ROUNDS).map(|r| format!("{from}->{me}#{r}")).collect();
                assert_eq!(heard, expected, "client {me} heard another's events");
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
}

/// A worker over stdio reports to a session over HTTP, as to any session; `tabwire notify`
/// reaches it too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notify_completion_reaches_an_http_session() {
    let dir = bins::scratch_dir("notify");
    let serve = Arc::new(Serve::start(&dir, &[]));
    let lead = Mcp::http(&serve).await;
    let id = lead.ok("get_session", json!({})).await["session_id"].as_str().unwrap().to_owned();

    let worker = Mcp::start_with(&dir, &[]).await;
    worker
        .ok(
            "notify_completion",
            json!({ "session_id": id, "worker_id": "w1", "status": "success", "message": "done" }),
        )
        .await;
    let out = std::process::Command::new(bins::bin("tabwire"))
        .args(["notify", "--session", &id, "--worker", "w2", "--status", "error", "--message", "x"])
        .env("TABWIRE_RUNTIME_DIR", &dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let mut heard = Vec::new();
    for _ in 0..2 {
        let got = lead
            .ok("wait_for_event", json!({ "types": ["worker_complete"], "timeout_secs": 10 }))
            .await;
        heard.push((got["worker_id"].clone(), got["status"].clone()));
    }
    assert_eq!(heard, [(json!("w1"), json!("success")), (json!("w2"), json!("error"))]);
}

/// A cancelled call stops in the server (its wait takes nothing), and the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_wait_takes_nothing_and_the_session_goes_on() {
    let dir = bins::scratch_dir("cancel");
    let serve = Arc::new(Serve::start(&dir, &[]));
    let mcp = Mcp::http(&serve).await;
    let id = mcp.ok("get_session", json!({})).await["session_id"].as_str().unwrap().to_owned();

    let params = CallToolRequestParams::new("wait_for_event").with_arguments(
        json!({ "types": ["message"], "timeout_secs": 60 }).as_object().unwrap().clone(),
    );
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = mcp
        .client
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    handle.cancel(Some("the test cancels".into())).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;

    // Had the wait gone on, it would take this message; the next wait gets it instead.
    mcp.ok("post_message", json!({ "session_id": id, "body": "after" })).await;
    assert_eq!(next_message(&mcp).await, "after");
    let none = mcp.ok("wait_for_event", json!({ "types": ["message"], "timeout_secs": 0 })).await;
    assert_eq!(none["type"], "timeout", "{none}");
}

/// At the cap, a session with a request in progress is never ended for a newcomer: when every
/// session has one, one more client is told why (503); a client that leaves (DELETE) frees its
/// place and takes its session's files with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_capped_and_a_client_that_leaves_frees_its_place() {
    let dir = bins::scratch_dir("cap");
    let serve = Arc::new(Serve::start(&dir, &["--max-sessions", "2"]));
    let bearer = format!("Bearer {}", serve.token);
    let first = Mcp::http(&serve).await;
    let second = Mcp::http(&serve).await;
    first.ok("get_session", json!({})).await;
    assert_eq!(session_records(&dir).len(), 2);

    let wait = json!({ "types": ["message"], "timeout_secs": 3 });
    let (a, b, answer) = tokio::join!(
        first.ok("wait_for_event", wait.clone()),
        second.ok("wait_for_event", wait.clone()),
        async {
            tokio::time::sleep(Duration::from_millis(500)).await;
            init(&serve, &[("Authorization", &bearer)]).await
        }
    );
    assert_eq!(answer.status, 503, "{answer:?}");
    assert!(
        answer.body.contains("too_many_connections") && answer.body.contains("--max-sessions"),
        "{}",
        answer.body
    );
    assert_eq!((&a["type"], &b["type"]), (&json!("timeout"), &json!("timeout")), "{a} {b}");
    assert_eq!(session_records(&dir).len(), 2, "neither busy session was ended");

    first.client.cancel().await.unwrap();
    eventually("the first session's end", Duration::from_secs(3), || {
        session_records(&dir).len() == 1
    })
    .await;
    let third = Mcp::http(&serve).await;
    third.ok("get_session", json!({})).await;
    second.ok("get_session", json!({})).await;
}

/// POST a JSON-RPC message in `session`.
async fn post_in(serve: &Serve, session: &str, body: &str) -> http::Answer {
    let bearer = format!("Bearer {}", serve.token);
    let headers = [
        ("Authorization", bearer.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Mcp-Session-Id", session),
    ];
    http::request(port(serve), "POST", "/mcp", &headers, body).await
}

/// A short-lived client, as the MCP Inspector CLI, an SDK client's `close()` or `claude mcp
/// list` are: initialize, list the tools, go without ending the session. Its session id.
async fn look_and_leave(serve: &Serve) -> String {
    let answer = init(serve, &[("Authorization", &format!("Bearer {}", serve.token))]).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let id = answer.header("mcp-session-id").expect("a session id").to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post_in(serve, &id, initialized).await.status, 202);
    let list = post_in(serve, &id, r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).await;
    assert!(list.status == 200 && list.body.contains("list_tabs"), "{list:?}");
    id
}

/// Clients that never end their session do not use the server up: 100 in a row, against the
/// default cap of 32, are all served, and the sessions stay within the cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_short_lived_clients_in_a_row_are_all_served() {
    let dir = bins::scratch_dir("many");
    let serve = Arc::new(Serve::start(&dir, &[]));
    for _ in 0..100 {
        look_and_leave(&serve).await;
    }
    eventually("the ended sessions' files going", Duration::from_secs(5), || {
        session_records(&dir).len() <= 32
    })
    .await;
}

/// The place a newcomer takes is that of the session that waited longest for its client, never
/// one with a request in progress, which gets its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newcomer_ends_the_longest_idle_session_not_a_busy_one() {
    let dir = bins::scratch_dir("reclaim");
    let serve = Arc::new(Serve::start(&dir, &["--max-sessions", "2"]));
    let busy = Mcp::http(&serve).await;
    let idle = look_and_leave(&serve).await;
    let wait = json!({ "types": ["message"], "timeout_secs": 2 });
    let (waited, newcomer) = tokio::join!(busy.ok("wait_for_event", wait), async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        look_and_leave(&serve).await
    });
    assert_eq!(waited["type"], "timeout", "the busy session got its answer: {waited}");
    let gone = post_in(&serve, &idle, r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#).await;
    assert_eq!(gone.status, 404, "the idle session was ended: {gone:?}");
    let here = post_in(&serve, &newcomer, r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#).await;
    assert_eq!(here.status, 200, "{here:?}");
    busy.ok("get_session", json!({})).await;
}

/// A client that goes quiet without saying goodbye: its session ends after the idle timeout,
/// its files with it, and its place is free again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_ends() {
    let dir = bins::scratch_dir("idle");
    let serve = Arc::new(Serve::start(&dir, &["--max-sessions", "1", "--idle-timeout", "1"]));
    let quiet = Mcp::http(&serve).await;
    quiet.ok("get_session", json!({})).await;
    assert_eq!(session_records(&dir).len(), 1);
    eventually("the idle session's end", Duration::from_secs(5), || {
        session_records(&dir).is_empty()
    })
    .await;
    let answer = init(&serve, &[("Authorization", &format!("Bearer {}", serve.token))]).await;
    assert_eq!(answer.status, 200, "its place is free again: {answer:?}");
    drop(quiet);
}

/// Two sessions of one server share a process and a state dir: a chat operation one of them
/// sent is followed by it alone, never adopted by the other (as if its bridge had died).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_operation_stays_its_own_in_a_shared_process() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let state = bins::scratch_dir("http-state");
    let serve = Arc::new(Serve::start_with(
        &browser.runtime_dir,
        &[],
        &[("TABWIRE_STATE_DIR", state.to_str().unwrap())],
    ));
    let sender = Mcp::http(&serve).await;
    let url = pages.url("chat.html?words=40&word_ms=40&start_ms=50");
    // In front: Chrome throttles a background tab's timers, which the fixture chat streams by
    // (specs/tools.md, "The user's focus").
    let tab =
        sender.ok("open_tab", json!({ "url": url, "active": true })).await["tab"]["id"].clone();
    let adapter = json!({
        "name": "fixture", "matches": ["http://127.0.0.1:*/*chat.html*"], "input": "#prompt",
        "submit": "#send", "user_message": ".msg.user", "assistant_message": ".msg.assistant",
        "generating": ".typing", "done": ".done", "stable_ms": 300
    });
    let sent = sender
        .ok("send_message_async", json!({ "tab_id": tab, "text": "mine", "adapter": adapter }))
        .await;
    let id = sent["operation_id"].as_str().unwrap().to_owned();

    // A session that starts while the operation runs, in the same process, leaves it alone.
    let other = Mcp::http(&serve).await;
    let listed = other.ok("list_operations", json!({})).await;
    assert_eq!(listed["operations"], json!([]), "{listed}");
    let none =
        other.ok("wait_for_event", json!({ "types": ["operation"], "timeout_secs": 1 })).await;
    assert_eq!(none["type"], "timeout", "another session's milestones leaked: {none}");

    let done =
        sender.ok("wait_for_operation", json!({ "operation_id": id, "timeout_secs": 60 })).await;
    assert_eq!(done["status"], "completed", "{done}");
}

/// The uid of a second local user for attacks from another account (`tabwire-flood`, made
/// with useradd if missing); None, saying why, where no user can be made.
#[cfg(unix)]
fn second_user() -> Option<u32> {
    let id = |name: &str| {
        let out = std::process::Command::new("id").args(["-u", name]).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().parse().ok())?
    };
    if let Some(uid) = id("tabwire-flood") {
        return Some(uid);
    }
    let made = std::process::Command::new("useradd")
        .args(["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "tabwire-flood"])
        .status();
    match made {
        Ok(s) if s.success() => id("tabwire-flood"),
        other => {
            println!(
                "SKIPPED: cannot create a second local user with useradd ({other:?}); run as root"
            );
            None
        }
    }
}

/// Issue 44's flood, from another local user's account: connections to `tabwire serve`'s
/// `/mcp` and to a session's `/wait`, more than either serves at once (512, 64), each held 4 s
/// (under the 5 s head timeout) and opened again, for as long as the test runs. Before, they
/// took the user's slots and the user's own clients were answered 503. Now another user's
/// connections are closed at once (403), and the user's initialize, tool calls and `/wait` are
/// served throughout; the user's own unauthenticated connections get `Connection: close` and a
/// budget of 16 of their own (session/src/gate.rs).
// Unix only: the flood runs as another uid (useradd, bash's /dev/tcp).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_users_flood_does_not_keep_the_users_clients_out() {
    use std::os::unix::process::CommandExt;
    use tokio::io::AsyncReadExt;
    let Some(uid) = second_user() else { return };
    let dir = bins::scratch_dir("flood");
    let serve = Arc::new(Serve::start(&dir, &[]));
    let client = Mcp::http(&serve).await;
    let session = client.session().await;
    let wait_port = session["http_port"].as_u64().unwrap() as u16;
    let wait_bearer = format!("Bearer {}", session["token"].as_str().unwrap());
    let flood = format!(
        r#"while :; do
             fds=()
             for i in $(seq 600); do exec {{fd}}<>/dev/tcp/127.0.0.1/{serve} && fds+=($fd); done
             for i in $(seq 80); do exec {{fd}}<>/dev/tcp/127.0.0.1/{wait} && fds+=($fd); done
             sleep 4
             for fd in "${{fds[@]}}"; do exec {{fd}}>&-; done
           done"#,
        serve = port(&serve),
        wait = wait_port
    );
    /// Ends the flood however the test ends.
    struct Flooder(std::process::Child);
    impl Drop for Flooder {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let flooder = std::process::Command::new("bash")
        .args(["-c", &flood])
        .uid(uid)
        .gid(uid)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the flood as the second user");
    let flooder = Flooder(flooder);
    tokio::time::sleep(Duration::from_secs(2)).await;

    // The user, meanwhile: a new client starts, its tools answer, /wait answers (no browser
    // here: 404 no browser, but never 503).
    let bearer = format!("Bearer {}", serve.token);
    for round in 0..6 {
        let answer = init(&serve, &[("Authorization", &bearer)]).await;
        assert_eq!(answer.status, 200, "round {round}: {answer:?}");
        client.ok("get_session", json!({})).await;
        let auth = [("Authorization", wait_bearer.as_str())];
        let waited = http::get(wait_port, "/wait?timeout=0", &auth).await;
        assert!(waited.status == 204 || waited.status == 404, "round {round}: {waited:?}");
        assert!(!waited.body.contains("too_many_connections"), "{waited:?}");
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
    // What the other user's connections get: 403 at once, and closed.
    let as_other = format!("exec 3<>/dev/tcp/127.0.0.1/{}; timeout 5 cat <&3", port(&serve));
    let out = std::process::Command::new("bash").args(["-c", &as_other]).uid(uid).output();
    let out = out.unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(said.starts_with("HTTP/1.1 403") && said.contains("belongs to uid"), "{said}");

    let fresh = Mcp::http(&serve).await;
    fresh.ok("get_session", json!({})).await;
    drop(flooder);

    // The user's own unauthenticated requests: answered with Connection: close.
    let answer = init(&serve, &[]).await;
    assert_eq!(answer.status, 401, "{answer:?}");
    assert_eq!(answer.header("connection"), Some("close"), "{answer:?}");
    let answer = http::get(wait_port, "/wait", &[]).await;
    assert_eq!((answer.status, answer.header("connection")), (401, Some("close")), "{answer:?}");
    // And a budget of their own: of 40 idle connections, 16 get places (the rest 503 while
    // those are under half a second old), then the oldest makes way for a client with the token.
    let mut idle = Vec::new();
    for _ in 0..40 {
        idle.push(tokio::net::TcpStream::connect(("127.0.0.1", port(&serve))).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(600)).await;
    let answer = init(&serve, &[("Authorization", &bearer)]).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let mut closed = 0;
    for tcp in &mut idle {
        let mut buf = Vec::new();
        let read = tokio::time::timeout(Duration::from_millis(300), tcp.read_to_end(&mut buf));
        if read.await.is_ok() {
            let said = String::from_utf8_lossy(&buf);
            assert!(said.is_empty() || said.starts_with("HTTP/1.1 503"), "{said}");
            closed += 1;
        }
    }
    // 24 refused, one made way for the client (more if the server held idle ones already).
    assert!((25..=27).contains(&closed), "{closed} of 40 idle connections were closed");
}
