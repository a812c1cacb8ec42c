//! Faults under operations, against real Chromium, the real extension, host and `tabwire mcp`:
//! a full disk under the operations store (a tmpfs of 16 KiB), a corrupt store, the wall clock
//! set back and forward (libfaketime under the bridge), the browser killed mid-answer, and its
//! host killed mid-answer. For each: what the user sees reaches the MCP client at once (the
//! figures are printed), nothing is lost, and the rest keeps working.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tabwire_testkit::{Chromium, Fixtures, Mcp, bins, process};

/// The site adapter of the fixture chat (testkit/fixtures/chat.html).
fn adapter() -> Value {
    json!({
        "name": "fixture",
        "matches": ["http://127.0.0.1:*/*chat.html*"],
        "input": "#prompt:not([hidden])",
        "submit": "#send",
        "user_message": ".msg.user",
        "assistant_message": ".msg.assistant",
        "generating": ".typing",
        "done": ".done",
        "stable_ms": 100
    })
}

async fn open_chat(mcp: &Mcp, pages: &Fixtures, query: &str) -> i64 {
    // In front: Chrome throttles a background tab's timers, which the fixture chat streams by
    // (specs/tools.md, "The user's focus").
    let url = pages.url(&format!("chat.html?{query}"));
    let tab = mcp.ok("open_tab", json!({ "url": url, "active": true })).await;
    tab["tab"]["id"].as_i64().expect("tab id")
}

async fn send(mcp: &Mcp, tab: i64, text: &str, timeout_secs: u64) -> Value {
    let args =
        json!({ "tab_id": tab, "text": text, "adapter": adapter(), "timeout_secs": timeout_secs });
    mcp.ok("send_message_async", args).await
}

async fn wait(mcp: &Mcp, id: &str, secs: u64) -> Value {
    mcp.ok("wait_for_operation", json!({ "operation_id": id, "timeout_secs": secs })).await
}

/// `tabwire mcp` with this state directory (and extra environment).
async fn bridge(runtime_dir: &Path, state: &Path, env: &[(&str, &str)]) -> Mcp {
    let state = state.display().to_string();
    let mut all = vec![("TABWIRE_STATE_DIR", state.as_str())];
    all.extend_from_slice(env);
    Mcp::start_with(runtime_dir, &all).await
}

/// The stored operations, once `ready` holds for them (checked every 20 ms, for at most 5 s).
async fn stored_when(state: &Path, ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let path = state.join("operations.json");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let text = std::fs::read(&path).unwrap_or_default();
        let ops = serde_json::from_slice::<Value>(&text).ok().and_then(|v| {
            let ops = v["operations"].as_array()?.clone();
            ready(&ops).then_some(ops)
        });
        match ops {
            Some(ops) => return ops,
            None if Instant::now() > deadline => panic!("{} never got there", path.display()),
            None => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

fn has(ops: &[Value], id: &str, status: &str) -> bool {
    ops.iter().any(|o| o["operation_id"] == id && o["status"] == status)
}

/// A tmpfs of a few KiB, unmounted when dropped. `None` (said on stderr) when this process may
/// not mount one: not root, or a container without the right. Unix only.
#[cfg(unix)]
struct Tmpfs {
    dir: PathBuf,
    _scratch: bins::Scratch,
}

#[cfg(unix)]
impl Tmpfs {
    fn mount(kib: u32) -> Option<Tmpfs> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: mounting a small tmpfs needs root (the CI machine is root)");
            return None;
        }
        let scratch = bins::scratch_dir("abuse-disk");
        let dir = scratch.join("disk");
        std::fs::create_dir_all(&dir).unwrap();
        let size = format!("size={kib}k,mode=0700");
        let mut mount = std::process::Command::new("mount");
        let out = mount.args(["-t", "tmpfs", "-o", &size, "tmpfs"]).arg(&dir).output();
        let out = out.expect("run mount");
        if !out.status.success() {
            eprintln!("skipped: cannot mount a tmpfs: {}", String::from_utf8_lossy(&out.stderr));
            return None;
        }
        Some(Tmpfs { dir, _scratch: scratch })
    }

    /// Fill it with a file of its own until the disk says no; that file.
    fn fill(&self) -> PathBuf {
        use std::io::Write;
        let path = self.dir.join("filler");
        let mut file = std::fs::File::create(&path).unwrap();
        while file.write_all(&[b'x'; 512]).and_then(|()| file.flush()).is_ok() {}
        path
    }
}

#[cfg(unix)]
impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

// Unix only: the full disk is a tmpfs, mounted as root.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_under_the_store_is_told_and_loses_nothing() {
    let Some(disk) = Tmpfs::mount(16) else { return };
    let state = disk.dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let filler = disk.fill();
    let (browser, pages) = (Chromium::start(), Fixtures::serve());
    let mcp = bridge(&browser.runtime_dir, &state, &[]).await;
    let tab = open_chat(&mcp, &pages, "words=40&word_ms=20&start_ms=50").await;

    let sent = Instant::now();
    let first = send(&mcp, tab, "while the disk is full", 60).await;
    let id = first["operation_id"].as_str().unwrap().to_owned();
    // The user hears of it on the next look at the operation (the write is off the runtime).
    let problem = loop {
        let op = mcp.ok("get_operation", json!({ "operation_id": id })).await;
        if let Some(p) = op["store_problem"].as_str() {
            break p.to_owned();
        }
        assert!(sent.elapsed() < Duration::from_secs(5), "never told: {op}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let told = sent.elapsed();
    println!("full disk: told {told:?} after the send: {problem}");
    let file = state.join("operations.json").display().to_string();
    assert!(problem.contains("cannot be written") && problem.contains(&file), "{problem}");
    assert!(problem.contains("No space left on device"), "{problem}");

    // The operation went on in memory, and its result says the store is failing.
    let done = wait(&mcp, &id, 20).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert!(done["response_text"].as_str().unwrap().starts_with("Answer 1 to while the disk"));
    assert!(done["store_problem"].as_str().is_some_and(|p| p.contains(&file)), "{done}");
    let listed = mcp.ok("list_operations", json!({})).await;
    assert!(listed["store_problem"].is_string(), "{listed}");

    // Room again: the next write holds the earlier operation too, and the problem is gone.
    std::fs::remove_file(filler).unwrap();
    let second = send(&mcp, tab, "after", 60).await;
    let second = second["operation_id"].as_str().unwrap().to_owned();
    assert_eq!(wait(&mcp, &second, 20).await["status"], "completed");
    let ops =
        stored_when(&state, |ops| has(ops, &id, "completed") && has(ops, &second, "completed"))
            .await;
    println!("room again: both operations on disk ({} stored)", ops.len());
    let op = mcp.ok("get_operation", json!({ "operation_id": id })).await;
    assert!(op.get("store_problem").is_none(), "{op}");
}

/// An operation record as the store holds it.
fn record(id: &str, status: &str) -> Value {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let now = now.as_millis() as u64;
    json!({
        "operation_id": id, "status": status, "tab_id": 1, "browser": "gone", "adapter": "fixture",
        "text": "kept", "milestones": [], "response_text": "an old answer", "error": null,
        "created_at": now, "updated_at": now, "deadline_at": now + 60_000,
        "owner_pid": 2_000_000_000u32
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_store_is_set_aside_and_the_bridge_works() {
    let dir = bins::scratch_dir("abuse-corrupt");
    let runtime = dir.join("run");
    let kept = record("op_kept", "completed");
    let cases: [(&str, Vec<u8>, usize); 5] = [
        ("truncated", br#"{"format":1,"operations":[{"operation_id":"op_a","sta"#.to_vec(), 0),
        ("garbage", vec![0xff, 0x00, 0x13, 0x37, b'{', 0xfe], 0),
        ("empty", Vec::new(), 0),
        ("wrong types", br#"{"format":1,"operations":{"op_a":5}}"#.to_vec(), 0),
        (
            "one bad record among good ones",
            serde_json::to_vec(&json!({ "format": 1, "operations":
                [kept, { "operation_id": 5, "status": ["x"] }] }))
            .unwrap(),
            1,
        ),
    ];
    for (i, (what, bytes, readable)) in cases.into_iter().enumerate() {
        let state = dir.join(format!("state-{i}"));
        std::fs::create_dir_all(&state).unwrap();
        std::fs::write(state.join("operations.json"), &bytes).unwrap();
        let t = Instant::now();
        let mcp = bridge(&runtime, &state, &[]).await;
        let listed = mcp.ok("list_operations", json!({})).await;
        let took = t.elapsed();
        let problem =
            listed["store_problem"].as_str().unwrap_or_else(|| panic!("{what}: {listed}"));
        println!("corrupt store ({what}): started and told in {took:?}: {problem}");
        let aside: Vec<PathBuf> = std::fs::read_dir(&state)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().contains("operations.json.corrupt-"))
            .collect();
        assert_eq!(aside.len(), 1, "{what}: set aside once: {aside:?}");
        assert!(problem.contains(&aside[0].display().to_string()), "{what}: names it: {problem}");
        assert_eq!(std::fs::read(&aside[0]).unwrap(), bytes, "{what}: kept as it was");
        let ops = listed["operations"].as_array().unwrap();
        assert_eq!(ops.len(), readable, "{what}: {listed}");
        if readable > 0 {
            assert_eq!(ops[0]["operation_id"], "op_kept");
            stored_when(&state, |ops| has(ops, "op_kept", "completed")).await;
        }
        // And it keeps working: its tools answer as without a store.
        mcp.ok("get_session", json!({})).await;
        let err = mcp.err("send_message_async", json!({ "text": "hi" })).await;
        assert!(err.contains("no browser is connected"), "{err}");
    }
}

#[cfg(unix)]
const LIBFAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

/// Sends to a fixture chat whose answer takes minutes: only its deadline ends it.
const ENDLESS: &str = "words=2000&word_ms=100&start_ms=50";

async fn until_status(mcp: &Mcp, id: &str, status: &str) {
    let t = Instant::now();
    while mcp.ok("get_operation", json!({ "operation_id": id })).await["status"] != status {
        assert!(t.elapsed() < Duration::from_secs(10), "{id} never became {status}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

// Unix only: the bridge's clock is moved by libfaketime, preloaded into it.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadlines_hold_when_the_wall_clock_jumps() {
    if !Path::new(LIBFAKETIME).exists() {
        eprintln!("skipped: libfaketime is not installed (scripts/setup.sh installs faketime)");
        return;
    }
    let (browser, pages) = (Chromium::start(), Fixtures::serve());
    let dir = bins::scratch_dir("abuse-clock");
    let state = dir.join("state");
    // The bridge's wall clock: this file's offset, read at every call (libfaketime). Its
    // monotonic clock is left alone, as a real clock change leaves it.
    let clock = dir.join("offset");
    let set_clock = |offset: &str| std::fs::write(&clock, format!("{offset}\n")).unwrap();
    set_clock("+0");
    let clock_file = clock.display().to_string();
    let env = [
        ("LD_PRELOAD", LIBFAKETIME),
        ("FAKETIME_TIMESTAMP_FILE", clock_file.as_str()),
        ("FAKETIME_NO_CACHE", "1"),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
    ];
    let mcp = bridge(&browser.runtime_dir, &state, &env).await;
    let tab = open_chat(&mcp, &pages, ENDLESS).await;

    // Set back an hour while an operation runs: it times out after its 3 s all the same.
    let t = Instant::now();
    let back = send(&mcp, tab, "set back", 3).await["operation_id"].as_str().unwrap().to_owned();
    until_status(&mcp, &back, "streaming").await;
    set_clock("-1h");
    let done = wait(&mcp, &back, 20).await;
    println!("clock set back 1 h mid-operation: timed_out after {:?} (deadline 3 s)", t.elapsed());
    assert_eq!(done["status"], "timed_out", "{done}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());

    // Set forward a day: a 30 s operation is not given up at once.
    set_clock("+0");
    let tab = open_chat(&mcp, &pages, ENDLESS).await;
    let ahead =
        send(&mcp, tab, "set forward", 30).await["operation_id"].as_str().unwrap().to_owned();
    until_status(&mcp, &ahead, "streaming").await;
    set_clock("+1d");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let op = mcp.ok("get_operation", json!({ "operation_id": ahead })).await;
    println!("clock set forward 1 d mid-operation: after 1.5 s it is {}", op["status"]);
    assert_eq!(op["status"], "streaming", "{op}");
    mcp.ok("cancel_operation", json!({ "operation_id": ahead })).await;

    // Set back a day while no bridge runs: the bridge that picks the operation up keeps its
    // deadline (4 s), not one a day away.
    set_clock("+0");
    let tab = open_chat(&mcp, &pages, ENDLESS).await;
    let t = Instant::now();
    let kept = send(&mcp, tab, "across", 4).await["operation_id"].as_str().unwrap().to_owned();
    until_status(&mcp, &kept, "streaming").await;
    stored_when(&state, |ops| has(ops, &kept, "streaming")).await;
    let pid = mcp.session().await["pid"].as_u64().unwrap();
    // SAFETY: the positive pid of the `tabwire mcp` this test started.
    assert!(pid > 0 && unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) } == 0);
    set_clock("-1d");
    let second = bridge(&browser.runtime_dir, &state, &env).await;
    let done = wait(&second, &kept, 20).await;
    println!(
        "clock set back 1 d across a restart: timed_out after {:?} (deadline 4 s)",
        t.elapsed()
    );
    assert_eq!(done["status"], "timed_out", "{done}");
    assert!(t.elapsed() < Duration::from_secs(12), "{:?}", t.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_killed_mid_answer_fails_the_operation_at_once() {
    let (browser, pages) = (Chromium::start(), Fixtures::serve());
    let dir = bins::scratch_dir("abuse-crash");
    let state = dir.join("state");
    let mcp = bridge(&browser.runtime_dir, &state, &[]).await;
    let tab = open_chat(&mcp, &pages, ENDLESS).await;
    let id =
        send(&mcp, tab, "about to crash", 60).await["operation_id"].as_str().unwrap().to_owned();
    until_status(&mcp, &id, "streaming").await;

    // Two waiters; the browser is killed outright (SIGKILL: no goodbye from it).
    let (one, two, killed) = tokio::join!(wait(&mcp, &id, 30), wait(&mcp, &id, 30), async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        process::kill(browser.pid()).expect("kill the browser");
        Instant::now()
    });
    let heard = killed.elapsed();
    println!("browser killed mid-answer: both waiters heard within {heard:?}: {}", one["error"]);
    for op in [&one, &two] {
        assert_eq!(op["status"], "failed", "{op}");
        assert_eq!(op["error"]["reason"], "browser_disconnected", "{op}");
        let message = op["error"]["message"].as_str().unwrap();
        assert!(message.contains("went away") && message.contains("send the message again"));
    }
    assert!(heard < Duration::from_secs(5), "{heard:?}");

    // Nothing lost: the store has it as failed; and the session works on.
    stored_when(&state, |ops| has(ops, &id, "failed")).await;
    mcp.ok("get_session", json!({})).await;
    let err = mcp.err("list_tabs", json!({})).await;
    println!("then list_tabs: {err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_killed_mid_answer_loses_nothing_once_the_browser_starts_another() {
    let (browser, pages) = (Chromium::start(), Fixtures::serve());
    let dir = bins::scratch_dir("abuse-host-kill");
    let mcp = bridge(&browser.runtime_dir, &dir.join("state"), &[]).await;
    // An answer short enough to end while no host runs (the extension waits 250 ms before it
    // starts another): no later milestone reveals a gap, only asking the page can.
    let words = 5;
    let tab = open_chat(&mcp, &pages, &format!("words={words}&word_ms=40&start_ms=50")).await;
    let id =
        send(&mcp, tab, "outlive the host", 60).await["operation_id"].as_str().unwrap().to_owned();
    until_status(&mcp, &id, "streaming").await;

    // The host dies without a word (SIGKILL) while the page streams on; the extension starts a
    // new one and the bridge attaches to it. The milestones the page sent in between went
    // nowhere: the bridge must ask the page for them.
    let pid = browser.host_pid();
    process::kill(pid as u32).expect("kill the host");
    let killed = Instant::now();
    let done = wait(&mcp, &id, 30).await;
    println!(
        "host killed mid-answer: the operation ended {} after {:?} (the answer takes about {} ms)",
        done["status"],
        killed.elapsed(),
        words * 40
    );
    assert_eq!(done["status"], "completed", "{done}");
    let want: Vec<String> = (1..=words).map(|i| format!("w{i}")).collect();
    let want = format!("Answer 1 to outlive the host: {}.", want.join(" "));
    assert_eq!(done["response_text"], want, "{done}");
    assert!(killed.elapsed() < Duration::from_secs(15), "{:?}", killed.elapsed());
    assert_ne!(browser.host_pid(), pid, "a new host serves the browser");
}
