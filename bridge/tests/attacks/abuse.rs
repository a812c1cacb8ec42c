//! Faults and abuse, as another program of the same user or a crash would cause them, against
//! the real binaries: a stopped or killed session, a flood of trickling connections on a
//! session socket, a `/wait` client that hangs up. For each: the expected error reaches the
//! caller within about a second, nothing queued is lost, and everything else keeps working.
//! Each test prints its figures.

use std::path::Path;
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use tabwire_proto::socket;
use tabwire_testkit::http::until_closed;
use tabwire_testkit::{Chromium, Fixtures, Mcp, bins, process};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// SIGSTOP or SIGCONT to a process this test started (Windows has neither).
#[cfg(unix)]
fn signal(pid: u64, signal: libc::c_int) {
    // SAFETY: a signal to a `tabwire mcp` child or a host this test started.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, signal) }, 0, "kill {pid}");
}

/// Start a session with a chosen id in `dir` (its saved queue there too, not in the user's
/// state dir); it and its record (pid, socket, port, token).
async fn session(dir: &Path, id: &str) -> (Mcp, Value) {
    let state = dir.join("state").display().to_string();
    let env = [("TABWIRE_SESSION_ID", id), ("TABWIRE_STATE_DIR", state.as_str())];
    let mcp = Mcp::start_with(dir, &env).await;
    let record = mcp.session().await;
    (mcp, record)
}

// Unix only: a process stopped and resumed (SIGSTOP, SIGCONT).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_session_delays_no_other_and_loses_nothing() {
    let dir = bins::scratch_dir("abuse-stop");
    let (a, _) = session(&dir, "abuse-a").await;
    let (b, b_record) = session(&dir, "abuse-b").await;
    let (c, _) = session(&dir, "abuse-c").await;
    // A keeps a connection to B open from an earlier message, as a real session would.
    a.ok("post_message", json!({ "session_id": "abuse-b", "body": "before" })).await;

    let b_pid = b_record["pid"].as_u64().unwrap();
    signal(b_pid, libc::SIGSTOP);
    let started = Instant::now();
    let to_b = async {
        let err =
            a.err("post_message", json!({ "session_id": "abuse-b", "body": "while stopped" }));
        let err = err.await;
        (err, started.elapsed())
    };
    let to_c = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let t = Instant::now();
        a.ok("post_message", json!({ "session_id": "abuse-c", "body": "meanwhile" })).await;
        t.elapsed()
    };
    let ((err, b_took), c_took) = tokio::join!(to_b, to_c);
    println!("stopped session: the error after {b_took:?}; a message to another took {c_took:?}");
    assert!(err.starts_with("timeout") && err.contains("abuse-b"), "{err}");
    assert!(b_took < Duration::from_millis(1500), "the caller heard after {b_took:?}");
    assert!(c_took < Duration::from_millis(500), "another session waited {c_took:?}");

    // A second message while B is still stopped fails as fast, on a fresh connection.
    let t = Instant::now();
    let err = a.err("post_message", json!({ "session_id": "abuse-b", "body": "again" })).await;
    assert!(err.starts_with("timeout"), "{err}");
    assert!(t.elapsed() < Duration::from_millis(1500), "{:?}", t.elapsed());

    // Resumed, B has every message it was sent — those whose answer came too late included —
    // and A reaches it again.
    signal(b_pid, libc::SIGCONT);
    let mut bodies = Vec::new();
    while bodies.len() < 3 {
        let got = b.ok("wait_for_event", json!({ "types": ["message"], "timeout_secs": 5 })).await;
        bodies.push(got["body"].as_str().expect("a message within 5 s").to_owned());
    }
    assert_eq!(bodies, ["before", "while stopped", "again"]);
    a.ok("post_message", json!({ "session_id": "abuse-b", "body": "after" })).await;
    let got = c.ok("wait_for_event", json!({ "types": ["message"], "timeout_secs": 5 })).await;
    assert_eq!(got["body"], "meanwhile");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_session_is_reported_at_once() {
    let dir = bins::scratch_dir("abuse-kill");
    let (a, _) = session(&dir, "abuse-a").await;
    let (_b, b_record) = session(&dir, "abuse-b").await;
    a.ok("post_message", json!({ "session_id": "abuse-b", "body": "hello" })).await;
    process::kill(b_record["pid"].as_u64().unwrap() as u32).expect("kill session b");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let t = Instant::now();
    let err = a.err("post_message", json!({ "session_id": "abuse-b", "body": "gone?" })).await;
    let took = t.elapsed();
    println!("killed session: the error after {took:?}: {err}");
    assert!(err.starts_with("no_such_session") && err.contains("abuse-b"), "{err}");
    assert!(took < Duration::from_secs(1), "{took:?}");
    a.ok("get_session", json!({})).await;
}

/// A frame header announcing `len` bytes and the first few of them, then nothing.
async fn trickle(socket: &Path) -> socket::Stream {
    let mut s = socket::open(socket).await.expect("connect to the session socket");
    let len: u32 = 100;
    s.write_all(&len.to_ne_bytes()).await.unwrap();
    s.write_all(br#"{"type":"pu"#).await.unwrap();
    s
}

async fn notify(dir: &Path, id: &str, message: &str) -> std::process::Output {
    tokio::process::Command::new(bins::bin("tabwire"))
        .args(["notify", "--session", id, "--worker", "w", "--status", "success"])
        .args(["--message", message])
        .env("TABWIRE_RUNTIME_DIR", dir)
        .env_remove("TABWIRE_SESSION_ID")
        .output()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_socket_sheds_a_flood_of_trickling_connections() {
    let dir = bins::scratch_dir("abuse-flood");
    let (a, record) = session(&dir, "abuse-flood").await;
    let socket = Path::new(record["socket"].as_str().unwrap()).to_owned();

    // One connection that trickles a frame is closed by the session.
    let mut slow = trickle(&socket).await;
    let (_, closed) = until_closed(&mut slow, Duration::from_secs(15)).await;
    let closed = closed.expect("a trickled frame is cut off");
    println!("a trickled frame was cut off after {closed:?}");
    assert!(closed < Duration::from_secs(7), "{closed:?}");

    // 64 fill the cap; the next is told so at once, and so is `tabwire notify`.
    let started = Instant::now();
    let mut flood = Vec::new();
    for _ in 0..64 {
        flood.push(trickle(&socket).await);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut extra = socket::open(&socket).await.unwrap();
    let (answer, closed) = until_closed(&mut extra, Duration::from_secs(2)).await;
    assert!(closed.is_some(), "the 65th connection is answered and closed at once");
    let answer = String::from_utf8_lossy(answer.get(4..).unwrap_or_default()).into_owned();
    assert!(answer.contains("too_many_connections"), "{answer}");
    let t = Instant::now();
    let out = notify(&dir, "abuse-flood", "during the flood").await;
    let refused_in = t.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("flood of 64: `tabwire notify` refused in {refused_in:?}: {}", stderr.trim());
    assert!(!out.status.success() && stderr.contains("too_many_connections"), "{stderr}");

    // The assistant's own session is unaffected.
    a.ok("get_session", json!({})).await;

    // The flood is cut off, and reports get through again.
    for mut s in flood {
        let (_, closed) = until_closed(&mut s, Duration::from_secs(15)).await;
        assert!(closed.is_some(), "every trickling connection is closed");
    }
    let cleared = started.elapsed();
    let out = notify(&dir, "abuse-flood", "after the flood").await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got =
        a.ok("wait_for_event", json!({ "types": ["worker_complete"], "timeout_secs": 5 })).await;
    assert_eq!(got["message"], "after the flood");
    println!("the flood was cleared after {cleared:?}; the next report got through");
}

async fn burst(mcp: &Mcp, tab: &Value, n: u64) {
    let done =
        mcp.ok("send_command", json!({ "tab_id": tab, "type": "burst", "payload": { "n": n } }));
    assert_eq!(done.await["result"]["pushed"], n);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_client_that_hangs_up_takes_nothing() {
    let browser = Chromium::start();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    let record = mcp.session().await;
    let port = record["http_port"].as_u64().unwrap() as u16;
    let token = record["token"].as_str().unwrap().to_owned();
    let tab =
        mcp.ok("open_tab", json!({ "url": pages.url("app.html") })).await["tab"]["id"].clone();

    // Three waiters over GET /wait hang up mid-wait (one closes, one shuts its side, one
    // resets), then the page pushes events.
    for how in ["close", "shutdown", "reset"] {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let head = format!(
            "GET /wait?timeout=30 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\r\n"
        );
        s.write_all(head.as_bytes()).await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        match how {
            "close" => drop(s),
            "shutdown" => {
                s.shutdown().await.unwrap();
                std::mem::forget(s);
            }
            _ => {
                // A zero linger resets at once; it cannot block the drop.
                #[allow(deprecated)]
                s.set_linger(Some(Duration::ZERO)).unwrap();
                drop(s);
            }
        }
    }
    // The same over the session socket (`tabwire wait`), killed mid-wait.
    let mut wait = tokio::process::Command::new(bins::bin("tabwire"))
        .args(["wait", "--timeout", "30"])
        .env("TABWIRE_RUNTIME_DIR", &browser.runtime_dir)
        .env_remove("TABWIRE_SESSION_ID")
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    wait.kill().await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;

    burst(&mcp, &tab, 3).await;
    // (A client that asks while events are already queued and resets at that very moment is
    // not tested: its answer may reach its kernel before the reset reaches ours, and no server
    // can tell that apart from a client that read it.)
    let got = mcp.ok("wait_for_state_change", json!({ "timeout_secs": 5 })).await;
    let events = got["events"].as_array().unwrap();
    println!("after 4 waiters hung up mid-wait, the next wait got {} of 3 events", events.len());
    let order: Vec<_> = events.iter().map(|e| e["data"]["i"].as_u64().unwrap()).collect();
    assert_eq!(order, [0, 1, 2], "{got}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_outlives_trickling_and_killed_bridges_and_its_own_death_is_told_at_once() {
    let browser = Chromium::start();
    let pages = Fixtures::serve();
    let mcp = Mcp::start(&browser.runtime_dir).await;
    // The user's tab, which both sessions below may use.
    let tab = tabwire_testkit::mcp::users_tab(&browser.runtime_dir, &pages.url("app.html")).await;
    let pid = browser.host_pid() as u32;
    let socket = browser.host().expect("a live host").socket;

    // A "bridge" that trickles a frame is cut off with a `timeout` error; the real one works on.
    let mut slow = trickle(&socket).await;
    let t = Instant::now();
    mcp.ok("list_tabs", json!({})).await;
    let (said, closed) = until_closed(&mut slow, Duration::from_secs(15)).await;
    let closed = closed.expect("the host cuts a trickling bridge off");
    println!("host socket: a trickled frame was cut off after {closed:?}");
    assert!(String::from_utf8_lossy(&said).contains("\"timeout\""), "{said:?}");
    assert!(t.elapsed() < Duration::from_secs(7));

    // A bridge killed in the middle of a call: the host and the other bridge carry on.
    let doomed = Mcp::start(&browser.runtime_dir).await;
    let doomed_pid = doomed.session().await["pid"].as_u64().unwrap();
    let slow_call = json!({ "tab_id": tab, "type": "slow", "payload": { "ms": 1000 } });
    let call = tokio::spawn(async move {
        let Value::Object(args) = slow_call else { unreachable!() };
        let params = CallToolRequestParams::new("send_command").with_arguments(args);
        doomed.client.call_tool(params).await.is_err()
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    process::kill(doomed_pid as u32).expect("kill the bridge");
    assert!(call.await.unwrap(), "the killed bridge's call did not complete");
    let t = Instant::now();
    let tabs = mcp.ok("list_tabs", json!({})).await;
    println!("a bridge killed mid-call: the other's next call took {:?}", t.elapsed());
    assert!(tabs["tabs"].as_array().is_some_and(|t| !t.is_empty()), "{tabs}");

    // The host killed in the middle of a call: the caller hears at once, and once Chrome has
    // started a new host the same session works again.
    let slow_call = json!({ "tab_id": tab, "type": "slow", "payload": { "ms": 3000 } });
    let (err, killed) = tokio::join!(mcp.err("send_command", slow_call), async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        process::kill(pid).expect("kill the host");
        Instant::now()
    });
    let heard = Instant::now();
    println!("the host killed mid-call: the caller heard after {:?}: {err}", heard - killed);
    assert!(err.starts_with("browser_disconnected"), "{err}");
    assert!(heard - killed < Duration::from_secs(1), "{:?}", heard - killed);
    let mut back = None;
    while heard.elapsed() < Duration::from_secs(30) {
        if mcp.call("list_tabs", json!({})).await.is_error != Some(true) {
            back = Some(heard.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let back = back.expect("a new host attaches within 30 s");
    println!("a new host served the same session {back:?} after the old one died");
}

/// Resumes a stopped process when dropped, also when the test fails: a host left stopped would
/// outlive its browser.
#[cfg(unix)]
struct Stopped(u64);

#[cfg(unix)]
impl Stopped {
    fn stop(pid: u64) -> Stopped {
        signal(pid, libc::SIGSTOP);
        Stopped(pid)
    }
}

#[cfg(unix)]
impl Drop for Stopped {
    fn drop(&mut self) {
        signal(self.0, libc::SIGCONT);
    }
}

// Unix only: a host stopped and resumed (SIGSTOP, SIGCONT).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_host_times_calls_out_by_name_and_recovers() {
    let browser = Chromium::start();
    let pages = Fixtures::serve();
    let run = &browser.runtime_dir;
    let a = Mcp::start_with(run, &[("TABWIRE_SESSION_ID", "abuse-host-a")]).await;
    let b = Mcp::start_with(run, &[("TABWIRE_SESSION_ID", "abuse-host-b")]).await;
    a.ok("open_tab", json!({ "url": pages.url("app.html") })).await;
    let pid = browser.host_pid() as u64;

    // Both bridges call the stopped host at once; each hears `timeout` naming the browser
    // within the call's own limit (5 s, and the half second given to the host's own answer),
    // and neither waits for the other. Sessions talk to each other meanwhile.
    let stopped = Stopped::stop(pid);
    let t = Instant::now();
    async fn timed<'a>(who: &'a str, m: &Mcp, t: Instant) -> (&'a str, String, Duration) {
        (who, m.err("list_tabs", json!({})).await, t.elapsed())
    }
    let (one, two, talk) = tokio::join!(timed("a", &a, t), timed("b", &b, t), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let t = Instant::now();
        b.ok("post_message", json!({ "session_id": "abuse-host-a", "body": "meanwhile" })).await;
        t.elapsed()
    });
    for (who, err, took) in [&one, &two] {
        println!("host stopped: bridge {who} heard after {took:?}: {err}");
        assert!(err.starts_with("timeout") && err.contains(&format!("host pid {pid}")), "{err}");
        assert!(*took < Duration::from_secs(7), "{took:?}");
    }
    println!("host stopped: a message between the sessions took {talk:?}");
    assert!(talk < Duration::from_secs(1), "{talk:?}");
    let got = a.ok("wait_for_event", json!({ "types": ["message"], "timeout_secs": 5 })).await;
    assert_eq!(got["body"], "meanwhile");

    // Resumed, the same host serves both bridges again.
    drop(stopped);
    let t = Instant::now();
    for m in [&a, &b] {
        let tabs = m.ok("list_tabs", json!({})).await;
        assert!(tabs["tabs"].as_array().is_some_and(|t| !t.is_empty()), "{tabs}");
    }
    println!("host resumed: both bridges served again within {:?}", t.elapsed());
    assert_eq!(browser.host_pid() as u64, pid, "the same host");
}

/// The soak's CI guard (testkit/harness/soak.rs; the long run is scripts/soak.sh): sessions each
/// working on their own tabs and a shared one for a minute, then beside a session refused on
/// every call. Nothing is lost, misrouted or timed out; the refused session hears only
/// refusals; and nothing is kept per call: the worker's JS heap after a collection (read with
/// no call under way) and the extension's CPU per reply stay where they were after the first
/// period, however many calls were made since. A per-call leak of a small object (a Map entry,
/// a closure) adds tens of bytes a call, which the heap bound catches: with an object of two
/// fields kept per call in extension/worker/activity.js, it failed at 42 bytes a call
/// (docs/performance.md, "Soak").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_soak_loses_nothing_and_keeps_nothing_per_call() {
    use tabwire_testkit::soak::{self, Load};
    let load = Load {
        bridges: 4,
        in_flight: 20,
        quiet: Duration::from_secs(40),
        refused: Duration::from_secs(20),
        refused_in_flight: 20,
        period: Duration::from_secs(10),
        profile: false,
    };
    let mut browser = Chromium::start_with_cdp();
    let r = soak::run(&mut browser, &load, |p| {
        println!(
            "soak: {:>3.0} s: {} replies, {} refused, ext {:.1} µs/reply, worker heap {} KiB, \
             host {} KiB, bridges {:?} KiB",
            p.at_secs,
            p.replies,
            p.refusals,
            p.cpu_per_reply_us(),
            p.worker_heap / 1024,
            p.host_rss_kib,
            p.bridge_rss_kib
        )
    })
    .await;
    println!(
        "soak: {} replies, failures {:?}, refusals {:?}, the refused session heard {:?}, \
         events pushed {} / drained {}",
        r.replies, r.failures, r.refusals, r.flood, r.events_pushed, r.events_drained
    );
    assert_eq!((r.lost, r.misrouted), (0, 0), "lost and misrouted replies");
    assert!(r.failures.is_empty(), "the working sessions' calls failed: {:?}", r.failures);
    assert!(r.refusals.is_empty(), "a working session was refused its own tab: {:?}", r.refusals);
    assert!(r.replies > 1000, "too few replies to judge: {}", r.replies);
    let refused: u64 = r.flood.get("tab_owned_by_other_session").copied().unwrap_or(0);
    assert!(
        refused > 100 && refused == r.flood.values().sum::<u64>(),
        "the refused session: {:?}",
        r.flood
    );
    assert!(r.events_drained > 0, "no page event reached a session");

    // Per call: from the end of the first period (warm) to the end of the later of the last two
    // quiet ones that held less (the refused session's arrival adds a session's state once,
    // which is not per call). A heap read after a collection still holds what was in flight
    // then (page events on their way, tens of KiB either way); what is kept per call is in
    // both of the last two.
    let quiet: Vec<_> = r.periods.iter().filter(|p| !p.flooded).collect();
    let first = quiet[0];
    let at = (quiet.len() - 2..quiet.len()).min_by_key(|&i| quiet[i].worker_heap).unwrap();
    let last = quiet[at];
    let calls: u64 = quiet[1..=at].iter().map(|p| p.replies).sum();
    let grew = last.worker_heap as f64 - first.worker_heap as f64;
    assert!(first.worker_heap > 0 && last.worker_heap > 0, "the worker's heap was not read");
    assert!(
        grew / (calls as f64) < 16.0,
        "the worker's heap grew by {} KiB over {calls} calls ({:.1} bytes a call): something is kept \
         per call",
        grew as i64 / 1024,
        grew / calls as f64
    );
    // The same for the CPU per reply: a cost kept per call is in both of the last two periods;
    // a period the machine was taken from (another test's browser, the hypervisor) is in one.
    let second = quiet[1].cpu_per_reply_us();
    let end =
        quiet[quiet.len() - 2..].iter().map(|p| p.cpu_per_reply_us()).fold(f64::MAX, f64::min);
    assert!(
        end < second * 2.0,
        "the extension's CPU per reply grew from {second:.1} to {end:.1} µs while the sessions worked"
    );
}
