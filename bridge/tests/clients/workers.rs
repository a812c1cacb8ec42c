//! Workers: a lead session spawns worker processes and blocks until each reports — the loop
//! `spawn_worker …; spawn_worker …; wait_for_event; wait_for_event`. Real `tabwire mcp`
//! processes driven by rmcp's client, real worker processes (shell scripts from a workers.json
//! template, and the real Claude Code CLI), real git repositories; no network.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tabwire_testkit::git::repo_with;
use tabwire_testkit::{Chromium, Fixtures, Mcp, bins, claude};

/// A lead's world: its runtime, config (workers.json) and state directories.
struct World {
    root: bins::Scratch,
}

impl World {
    /// A world whose workers.json holds `templates`, plus `sh`: the prompt is the script.
    fn new(tag: &str, templates: Value) -> World {
        let root = bins::scratch_dir(tag);
        let mut all = json!({ "sh": ["sh", "-c", "{prompt}"] });
        all.as_object_mut().unwrap().extend(templates.as_object().unwrap().clone());
        std::fs::create_dir_all(root.join("config")).unwrap();
        std::fs::write(root.join("config/workers.json"), all.to_string()).unwrap();
        World { root }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// `tabwire mcp` in this world; its workers find the real `tabwire` as `$TW`.
    async fn lead(&self, env: &[(&str, &str)]) -> Mcp {
        let (config, state) = (self.path("config"), self.path("state"));
        let tw = bins::bin("tabwire");
        let mut all = vec![
            ("TABWIRE_CONFIG_DIR", config.to_str().unwrap()),
            ("TABWIRE_STATE_DIR", state.to_str().unwrap()),
            ("TW", tw.to_str().unwrap()),
        ];
        all.extend_from_slice(env);
        Mcp::start_with(&self.path("run"), &all).await
    }
}

/// Start a worker running `script` with `sh` in `cwd`; its worker_id and pid.
async fn spawn(lead: &Mcp, name: &str, cwd: &Path, script: &str, extra: Value) -> (String, u32) {
    let mut args = json!({ "name": name, "command": "sh", "prompt": script, "cwd": cwd });
    args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    let started = lead.ok("spawn_worker", args).await;
    assert_eq!(started["state"], "running", "{started}");
    (started["worker_id"].as_str().unwrap().to_owned(), started["pid"].as_u64().unwrap() as u32)
}

/// The next `n` events a bare wait_for_event returns, by worker name.
async fn reports(lead: &Mcp, n: usize, within_secs: u64) -> HashMap<String, Value> {
    let mut got = HashMap::new();
    for _ in 0..n {
        let event = lead.ok("wait_for_event", json!({ "timeout_secs": within_secs })).await;
        assert_eq!(event["type"], "worker_complete", "{event}");
        got.insert(event["name"].as_str().unwrap().to_owned(), event);
    }
    got
}

async fn nothing_more(lead: &Mcp) {
    let none = lead.ok("wait_for_event", json!({ "timeout_secs": 1 })).await;
    assert_eq!(none, json!({ "type": "timeout" }), "one report per worker");
}

/// Whether the process exists (on Unix a zombie too: its parent has not reaped it).
fn alive(pid: u32) -> bool {
    #[cfg(unix)]
    // SAFETY: signal 0 only asks whether the process exists.
    return unsafe { libc::kill(pid as i32, 0) == 0 };
    #[cfg(windows)]
    return tabwire_proto::runtime_dir::pid_alive(pid);
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[cfg(unix)]
async fn until(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within {within:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_report_how_they_ended_and_what_they_changed() {
    let world = World::new("wk2", json!({}));
    let lead = world.lead(&[("TABWIRE_SESSION_ID", "lead-w")]).await;
    let bridge_pid = lead.session().await["pid"].as_u64().unwrap();
    let (a, b) = (world.path("a"), world.path("b"));
    repo_with(&a, &[("kept.txt", "one\n"), ("mine.txt", "x\n")]);
    repo_with(&b, &[("gone.txt", "1\n2\n3\n")]);
    // The user's own change, made before the worker starts, is not the worker's.
    std::fs::write(a.join("mine.txt"), "x\ny\n").unwrap();

    let ok = r#"printf 'two\nthree\n' >> kept.txt; echo new > new.txt
        echo "I am $TABWIRE_WORKER_ID of $TABWIRE_SESSION_ID, started by $TABWIRE_PARENT_PID"
        echo done"#;
    let (ok_id, _) = spawn(&lead, "test-1", &a, ok, json!({})).await;
    let (bad_id, _) =
        spawn(&lead, "test-2", &b, "rm gone.txt; echo oops >&2; exit 3", json!({})).await;
    assert!(ok_id.starts_with("test-1-") && bad_id.starts_with("test-2-"), "{ok_id} {bad_id}");

    // The lead's loop: a bare wait_for_event returns each worker_complete.
    let got = reports(&lead, 2, 30).await;
    let ok = &got["test-1"];
    assert_eq!(
        (&ok["worker_id"], &ok["status"], &ok["exit_code"]),
        (&json!(ok_id), &json!("success"), &json!(0))
    );
    assert_eq!(ok["changes"], json!(["kept.txt", "new.txt"]), "{ok}");
    assert_eq!(
        ok["diff_stat"],
        json!([{ "path": "kept.txt", "added": 2, "removed": 0 },
               { "path": "new.txt", "added": 1, "removed": 0 }])
    );
    let said = format!("I am {ok_id} of lead-w, started by {bridge_pid}\ndone");
    assert_eq!(ok["message"], said, "the last lines of its output, and its environment");
    assert_eq!(ok["from"], Value::Null);

    let bad = &got["test-2"];
    assert_eq!((&bad["status"], &bad["exit_code"]), (&json!("error"), &json!(3)), "{bad}");
    assert_eq!(bad["message"], "exited with code 3. Its last output:\noops");
    assert_eq!(bad["diff_stat"], json!([{ "path": "gone.txt", "added": 0, "removed": 3 }]));
    nothing_more(&lead).await;

    // Its whole output is in a log only the user can read (Unix modes).
    let log = PathBuf::from(ok["log"].as_str().unwrap());
    #[cfg(unix)]
    assert_eq!((mode(&log), mode(log.parent().unwrap())), (0o600, 0o700));
    assert!(std::fs::read_to_string(&log).unwrap().ends_with("done\n"));
    let listed = lead.ok("list_workers", json!({})).await;
    let states: Vec<(&str, &str)> = listed["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["name"].as_str().unwrap(), w["state"].as_str().unwrap()))
        .collect();
    assert_eq!(states, [("test-1", "success"), ("test-2", "error")]);
}

// Unix only: signals (Windows ends a worker's job with an exit code: workers/src/os_windows.rs).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_by_a_signal_or_out_of_time_reports_an_error() {
    let world = World::new("wksig", json!({}));
    let lead = world.lead(&[]).await;
    let dir = world.path("work");
    std::fs::create_dir_all(&dir).unwrap();
    let started = Instant::now();
    spawn(&lead, "killed", &dir, "echo about to go; kill -KILL $$", json!({})).await;
    let (_, slow) =
        spawn(&lead, "slow", &dir, "echo started; sleep 30", json!({ "timeout_secs": 1 })).await;
    // It ignores SIGTERM (and so does the sleep it runs): SIGKILL comes 5 s later.
    let stubborn = "trap '' TERM; echo ignoring TERM; sleep 30";
    let (_, deaf) = spawn(&lead, "deaf", &dir, stubborn, json!({ "timeout_secs": 1 })).await;
    // It exits at once, but what it left running holds its output pipe open.
    let (_, leaver) =
        spawn(&lead, "leaver", &dir, "sleep 30 & echo left one behind", json!({})).await;

    let got = reports(&lead, 4, 30).await;
    assert_eq!(
        (&got["leaver"]["status"], &got["leaver"]["message"]),
        (&json!("success"), &json!("left one behind"))
    );
    // SAFETY: kill(2) on the process group of a worker this test started (its sleeper).
    unsafe { libc::kill(-(leaver as i32), libc::SIGKILL) };
    let killed = &got["killed"];
    assert_eq!(
        (&killed["status"], &killed["signal"], &killed["exit_code"]),
        (&json!("error"), &json!("SIGKILL"), &Value::Null)
    );
    assert_eq!(killed["message"], "killed by SIGKILL. Its last output:\nabout to go");

    let slow_report = &got["slow"];
    assert_eq!(
        (&slow_report["status"], &slow_report["stopped"], &slow_report["signal"]),
        (&json!("error"), &json!("timeout"), &json!("SIGTERM"))
    );
    assert_eq!(
        slow_report["message"],
        "timed out after 1 s and was stopped (SIGTERM). Its last output:\nstarted"
    );
    let deaf_report = &got["deaf"];
    assert_eq!(
        (&deaf_report["stopped"], &deaf_report["signal"]),
        (&json!("timeout"), &json!("SIGKILL"))
    );
    assert!(
        deaf_report["message"]
            .as_str()
            .unwrap()
            .starts_with("timed out after 1 s and was stopped (SIGTERM, then SIGKILL 5 s later)")
    );
    let took = started.elapsed();
    assert!(took >= Duration::from_secs(6) && took < Duration::from_secs(12), "{took:?}");
    assert!(!alive(slow) && !alive(deaf), "stopped workers are gone");
    nothing_more(&lead).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_that_reports_itself_is_reported_once() {
    let world = World::new("wkself", json!({}));
    let lead = world.lead(&[]).await;
    let dir = world.path("work");
    std::fs::create_dir_all(&dir).unwrap();
    // `tabwire notify` finds the session and its own id in the environment spawn_worker set.
    let by_id = r#""$TW" notify --status success --message "did it myself" >/dev/null; echo after"#;
    let (id, _) = spawn(&lead, "self", &dir, by_id, json!({})).await;
    // Told its name in the prompt, a worker may report under that name.
    let by_name = r#""$TW" notify --worker named --status error --message "could not" >/dev/null"#;
    spawn(&lead, "named", &dir, by_name, json!({})).await;

    let mut got = Vec::new();
    for _ in 0..2 {
        got.push(lead.ok("wait_for_event", json!({ "timeout_secs": 20 })).await);
    }
    got.sort_by_key(|e| e["message"].as_str().unwrap().to_owned());
    assert_eq!((&got[0]["worker_id"], &got[0]["message"]), (&json!("named"), &json!("could not")));
    assert_eq!((&got[1]["worker_id"], &got[1]["message"]), (&json!(id), &json!("did it myself")));
    let ended = || async {
        let listed = lead.ok("list_workers", json!({})).await;
        listed["workers"].as_array().unwrap().iter().all(|w| w["state"] == "success")
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ended().await {
        assert!(Instant::now() < deadline, "the workers did not end");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    nothing_more(&lead).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_say_what_went_wrong_and_start_nothing() {
    let world = World::new("wkbad", json!({ "ghost": ["no-such-program-tw", "{prompt}"] }));
    let lead = world.lead(&[]).await;
    let dir = world.path("work");
    std::fs::create_dir_all(&dir).unwrap();
    let cwd = dir.to_str().unwrap();
    let err = |args: Value| {
        let lead = &lead;
        async move { lead.err("spawn_worker", args).await }
    };

    let e = err(json!({ "name": "w", "prompt": "p", "command": "nope", "cwd": cwd })).await;
    assert!(e.starts_with("bad_request: no worker template is named \"nope\"; the templates are: default, ghost, sh"), "{e}");
    let e = err(json!({ "name": "w", "prompt": "p", "command": "ghost", "cwd": cwd })).await;
    assert!(
        e.contains("\"no-such-program-tw\" is not on PATH") && e.contains("workers.json"),
        "{e}"
    );
    let e =
        err(json!({ "name": "w", "prompt": "p", "command": "sh", "cwd": "/no/such/dir" })).await;
    assert!(e.starts_with("bad_request: cwd /no/such/dir cannot be used"), "{e}");
    let e = err(json!({ "name": "a/b", "prompt": "p", "command": "sh", "cwd": cwd })).await;
    assert!(e.starts_with("bad_request: \"a/b\" is not a worker name"), "{e}");
    let env = json!({ "TABWIRE_SESSION_ID": "x" });
    let e =
        err(json!({ "name": "w", "prompt": "p", "command": "sh", "cwd": cwd, "env": env })).await;
    assert!(e.contains("TABWIRE_SESSION_ID is set by tabwire"), "{e}");
    let big = "x".repeat(200 * 1024);
    let e = err(json!({ "name": "w", "prompt": big, "command": "sh", "cwd": cwd })).await;
    assert!(e.contains("more than the 102400 a worker takes"), "{e}");
    let e =
        err(json!({ "name": "w", "prompt": "p", "command": "sh", "cwd": cwd, "timeout_secs": 0 }))
            .await;
    assert!(e.contains("timeout_secs must be from 1"), "{e}");

    // The names of running workers are their own.
    spawn(&lead, "busy", &dir, "sleep 30", json!({})).await;
    let e = err(json!({ "name": "busy", "prompt": "p", "command": "sh", "cwd": cwd })).await;
    assert!(e.contains("a worker named \"busy\" is running already"), "{e}");
    let e = lead.err("stop_worker", json!({ "worker_id": "nobody" })).await;
    assert!(
        e.starts_with("bad_request: this session has no worker \"nobody\"; its workers: busy-"),
        "{e}"
    );

    // A template that would pass the prompt inside a longer argument is refused.
    std::fs::write(world.path("config/workers.json"), r#"{"sh": ["sh", "-c", "echo {prompt}"]}"#)
        .unwrap();
    let e = err(json!({ "name": "w2", "prompt": "p", "command": "sh", "cwd": cwd })).await;
    assert!(e.contains("has {prompt} inside the argument \"echo {prompt}\""), "{e}");

    // Nothing was started but `busy`, and stopping it returns once it is gone.
    let listed = lead.ok("list_workers", json!({})).await;
    assert_eq!(listed["workers"].as_array().unwrap().len(), 1, "{listed}");
    let pid = listed["workers"][0]["pid"].as_u64().unwrap() as u32;
    let id = listed["workers"][0]["worker_id"].clone();
    let stopped = lead.ok("stop_worker", json!({ "worker_id": id })).await;
    // SIGTERM on Unix; Windows has no signals, its job is ended (workers/src/os_windows.rs).
    let signal = if cfg!(unix) { json!("SIGTERM") } else { Value::Null };
    assert_eq!((&stopped["state"], &stopped["signal"]), (&json!("error"), &signal), "{stopped}");
    assert!(!alive(pid));
    let report = lead.ok("wait_for_event", json!({ "timeout_secs": 5 })).await;
    assert_eq!((&report["worker_id"], &report["stopped"]), (&id, &json!("stop_worker")));
    nothing_more(&lead).await;
}

// Unix only: the worker hears the session end as SIGTERM (a shell trap); on Windows its job
// is ended.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_end_stops_its_workers_and_a_restart_still_has_their_reports() {
    let world = World::new("wkend", json!({}));
    let lead = world.lead(&[("TABWIRE_SESSION_ID", "keep-1")]).await;
    let dir = world.path("work");
    std::fs::create_dir_all(&dir).unwrap();
    let script = "trap 'echo term > term.txt; exit 0' TERM; echo ready > ready.txt
        while :; do sleep 0.1; done";
    let (id, pid) = spawn(&lead, "long", &dir, script, json!({})).await;
    until("the worker is ready", Duration::from_secs(5), || dir.join("ready.txt").exists()).await;
    // Events nobody took yet: a message to itself, and two from another session.
    let other = world.lead(&[]).await;
    lead.ok("post_message", json!({ "session_id": "keep-1", "body": "note to self" })).await;
    let report =
        json!({ "session_id": "keep-1", "worker_id": "w", "status": "success", "message": "m" });
    other.ok("notify_completion", report).await;
    let taken = lead.ok("wait_for_event", json!({ "timeout_secs": 5 })).await;
    assert_eq!(taken["worker_id"], "w");

    // The lead's client goes away (stdin EOF): its worker gets SIGTERM.
    lead.client.cancel().await.unwrap();
    until("the worker got SIGTERM", Duration::from_secs(5), || dir.join("term.txt").exists()).await;
    until("the worker is gone", Duration::from_secs(5), || !alive(pid)).await;
    let saved = world.path("state/sessions/keep-1.queue.json");
    until("the session ended", Duration::from_secs(5), || {
        !world.path("run/sessions/keep-1.sock").exists()
    })
    .await;
    assert_eq!(mode(&saved), 0o600);

    // The same session again: what it had not taken is there, in order, and only that.
    let again = world.lead(&[("TABWIRE_SESSION_ID", "keep-1")]).await;
    let ended = again.ok("wait_for_event", json!({ "timeout_secs": 5 })).await;
    assert_eq!(
        (&ended["worker_id"], &ended["stopped"]),
        (&json!(id), &json!("session_ended")),
        "{ended}"
    );
    let message = ended["message"].as_str().unwrap();
    assert!(message.starts_with("stopped: the session that started it ended"), "{message}");
    let note = again.ok("wait_for_event", json!({ "types": ["message"], "timeout_secs": 5 })).await;
    assert_eq!(note["body"], "note to self");
    let all = json!({ "types": ["worker_complete", "message", "question", "answer", "operation"], "timeout_secs": 0 });
    assert_eq!(again.ok("wait_for_event", all).await, json!({ "type": "timeout" }));
    until("the emptied queue's file goes", Duration::from_secs(5), || !saved.exists()).await;
    // A session whose id was made up keeps no file: no later run can be it.
    let sessions = std::fs::read_dir(world.path("state/sessions")).unwrap().count();
    assert_eq!(sessions, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_gets_its_answer_and_the_asker_can_wait_for_it() {
    let world = World::new("wkask", json!({}));
    let lead = world.lead(&[("TABWIRE_SESSION_ID", "asker")]).await;
    let helper = world.lead(&[("TABWIRE_SESSION_ID", "helper")]).await;
    let ask =
        json!({ "session_id": "helper", "body": "which port?", "wait": true, "timeout_secs": 20 });
    let answering = async {
        let q =
            helper.ok("wait_for_event", json!({ "types": ["question"], "timeout_secs": 10 })).await;
        assert_eq!((&q["from"], &q["body"]), (&json!("asker"), &json!("which port?")));
        helper
            .ok("answer_question", json!({ "question_id": q["question_id"], "answer": "8080" }))
            .await
    };
    let (asked, answered) = tokio::join!(lead.ok("ask_question", ask), answering);
    assert_eq!(answered["session_id"], "asker");
    assert_eq!(asked["timed_out"], false);
    assert_eq!(asked["answer"]["answer"], "8080");
    assert_eq!(asked["answer"]["from"], "helper");
    assert_eq!(asked["answer"]["question_id"], asked["question_id"]);

    // Without waiting, the answer is an event.
    let asked =
        lead.ok("ask_question", json!({ "session_id": "helper", "body": "and the host?" })).await;
    helper
        .ok(
            "answer_question",
            json!({ "question_id": asked["question_id"], "answer": "localhost" }),
        )
        .await;
    let got = lead.ok("wait_for_event", json!({ "types": ["answer"], "timeout_secs": 5 })).await;
    assert_eq!((&got["answer"], &got["question_id"]), (&json!("localhost"), &asked["question_id"]));
    let err = helper.err("answer_question", json!({ "question_id": "42", "answer": "x" })).await;
    assert!(err.starts_with("bad_request: \"42\" is not a question id"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_template_runs_claude_code_with_the_prompt_and_the_session() {
    let claude = claude::claude_cli();
    let world = World::new("wkcc", json!({}));
    // The user's file without a `default`: the built-in one, `claude -p {prompt}`, is used.
    let home = world.path("home");
    std::fs::create_dir_all(&home).unwrap();
    let path = format!("{}:{}", claude.parent().unwrap().display(), std::env::var("PATH").unwrap());
    let mut env = vec![("HOME", home.to_str().unwrap()), ("PATH", path.as_str())];
    env.extend(claude::QUIET_ENV);
    env.push(("TABWIRE_SESSION_ID", "cc-lead"));
    let lead = world.lead(&env).await;
    let bridge_pid = lead.session().await["pid"].as_u64().unwrap();
    let prompt = "Write \"hello\" to test1.txt; don't ask";
    let started =
        lead.ok("spawn_worker", json!({ "name": "cc", "prompt": prompt, "cwd": home })).await;
    assert_eq!(started["template"], "default");
    let pid = started["pid"].as_u64().unwrap();

    // What the process really runs with, read from /proc while it starts up.
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).expect("the worker is running");
    let args: Vec<String> = cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into())
        .collect();
    assert_eq!(args[args.len() - 2..], ["-p".to_owned(), prompt.to_owned()], "{args:?}");
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let environ: Vec<String> =
        environ.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).into()).collect();
    for want in [
        "TABWIRE_SESSION_ID=cc-lead".to_owned(),
        format!("TABWIRE_WORKER_ID={}", started["worker_id"].as_str().unwrap()),
        format!("TABWIRE_PARENT_PID={bridge_pid}"),
        // It waits for tabwire's MCP connection before its first turn.
        "MCP_CONNECTION_NONBLOCKING=0".to_owned(),
    ] {
        assert!(environ.contains(&want), "{want} missing from the worker's environment");
    }

    // Offline and logged out, it fails: its own words come back in the report.
    let report = lead.ok("wait_for_event", json!({ "timeout_secs": 60 })).await;
    assert_eq!(
        (&report["worker_id"], &report["status"]),
        (&started["worker_id"], &json!("error")),
        "{report}"
    );
    let message = report["message"].as_str().unwrap();
    assert!(message.starts_with("exited with code 1. Its last output:\n"), "{message}");
    assert!(message.contains("Not logged in"), "the CLI's own message: {message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bare_wait_returns_the_workers_report_not_the_browsers_events() {
    let browser = Chromium::shared();
    let pages = Fixtures::serve();
    let config = bins::scratch_dir("wkbrc");
    std::fs::write(config.join("workers.json"), r#"{"sh": ["sh", "-c", "{prompt}"]}"#).unwrap();
    let env = [
        ("TABWIRE_CONFIG_DIR", config.to_str().unwrap()),
        ("TABWIRE_STATE_DIR", config.to_str().unwrap()),
    ];
    let lead = Mcp::start_with(&browser.runtime_dir, &env).await;
    // The browser attaching, a tab opening and loading, its page publishing its state.
    lead.ok("open_tab", json!({ "url": pages.url("app.html") })).await;
    let started = lead
        .ok("spawn_worker", json!({ "name": "quick", "command": "sh", "prompt": "sleep 0.2; echo ok", "cwd": config }))
        .await;
    let got = lead.ok("wait_for_event", json!({ "timeout_secs": 10 })).await;
    assert_eq!(
        (&got["type"], &got["worker_id"]),
        (&json!("worker_complete"), &started["worker_id"]),
        "{got}"
    );
    assert_eq!(got["message"], "ok");
    // The browser's events are still there for whoever names them.
    let tab = lead.ok("wait_for_event", json!({ "types": ["tab"], "timeout_secs": 0 })).await;
    assert_eq!(tab["type"], "tab", "{tab}");
}
