//! Sessions: one assistant waits for others. Real `tabwire mcp` processes driven by rmcp's
//! client, and the real `tabwire notify` / `tabwire wait`. No browser is needed to report work,
//! and without one the page-event waits say so at once.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tabwire_testkit::git::git;
use tabwire_testkit::{Mcp, bins, http};

/// An event as wait_for_event returns it, without the fields every event has (id, at_ms).
fn fields(event: &Value) -> Value {
    let mut event = event.clone();
    let at = event.as_object_mut().unwrap();
    assert!(at.remove("id").is_some_and(|id| id.is_u64()) && at.remove("at_ms").is_some());
    event
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

async fn tabwire(
    dir: &Path,
    cwd: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let mut cmd = tokio::process::Command::new(bins::bin("tabwire"));
    cmd.args(args)
        .current_dir(cwd)
        .env("TABWIRE_RUNTIME_DIR", dir)
        .env_remove("TABWIRE_SESSION_ID");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_report_to_the_session_that_started_them() {
    let dir = bins::scratch_dir("ses");
    let lead = Mcp::start_with(&dir, &[("TABWIRE_SESSION_ID", "lead-1")]).await;
    let info = lead.ok("get_session", json!({})).await;
    assert_eq!(info["session_id"], "lead-1");
    assert!(info["how_to_report"].as_str().unwrap().contains("--session lead-1"), "{info}");
    let record = Path::new(info["record"].as_str().unwrap()).to_owned();
    let socket = Path::new(info["socket"].as_str().unwrap()).to_owned();
    // Unix modes; on Windows the session's pipe admits only this user by its DACL (proto's
    // socket/pipe.rs tests that).
    #[cfg(unix)]
    assert_eq!(
        (mode(&record), mode(&socket), mode(socket.parent().unwrap())),
        (0o600, 0o600, 0o700)
    );

    // A worker started with the lead's id in its environment becomes its child.
    let worker = Mcp::start_with(&dir, &[("TABWIRE_SESSION_ID", "lead-1")]).await;
    let w = worker.ok("get_session", json!({})).await;
    assert_ne!(w["session_id"], "lead-1");
    assert_eq!(w["parent_session_id"], "lead-1");
    let delivered = worker
        .ok(
            "notify_completion",
            json!({ "worker_id": "w1", "status": "success", "changes": ["src/a.rs"], "message": "done" }),
        )
        .await;
    assert_eq!(delivered["session_id"], "lead-1");
    let got =
        lead.ok("wait_for_event", json!({ "types": ["worker_complete"], "timeout_secs": 5 })).await;
    assert_eq!(
        fields(&got),
        json!({ "type": "worker_complete", "from": w["session_id"], "worker_id": "w1",
                "status": "success", "changes": ["src/a.rs"], "message": "done" })
    );

    // A hook: `tabwire notify` in a git work tree, with the lead's id in its environment.
    let repo = dir.join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("kept.txt"), "a").unwrap();
    git(&repo, &["add", "kept.txt"]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    std::fs::write(repo.join("kept.txt"), "b").unwrap();
    std::fs::write(repo.join("new.txt"), "c").unwrap();
    let args = [
        "notify",
        "--worker",
        "w2",
        "--status",
        "error",
        "--message",
        "boom",
        "--changes-from-git",
    ];
    let out = tabwire(&dir, &repo, &args, &[("TABWIRE_SESSION_ID", "lead-1")]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("delivered worker_complete to session lead-1")
    );
    let got = lead.ok("wait_for_event", json!({ "timeout_secs": 5 })).await;
    assert_eq!(
        fields(&got),
        json!({ "type": "worker_complete", "from": null, "worker_id": "w2", "status": "error",
                "changes": ["kept.txt", "new.txt"], "message": "boom" })
    );

    // Messages and questions, both ways.
    worker.ok("post_message", json!({ "session_id": "lead-1", "body": "half way" })).await;
    let got = lead.ok("wait_for_event", json!({ "types": ["message"], "timeout_secs": 5 })).await;
    assert_eq!(
        fields(&got),
        json!({ "type": "message", "from": w["session_id"], "body": "half way" })
    );
    let asked = lead
        .ok("ask_question", json!({ "session_id": w["session_id"], "body": "which file?" }))
        .await;
    let got =
        worker.ok("wait_for_event", json!({ "types": ["question"], "timeout_secs": 5 })).await;
    assert_eq!(got["question_id"], asked["question_id"]);
    assert_eq!(got["body"], "which file?");
    assert_eq!(got["from"], "lead-1");

    // Clear errors: nobody by that id, no parent to default to, a bad id.
    let err = worker.err("post_message", json!({ "session_id": "nobody", "body": "x" })).await;
    assert!(err.starts_with("no_such_session") && err.contains("lead-1"), "lists who runs: {err}");
    let err = lead
        .err("notify_completion", json!({ "worker_id": "w", "status": "success", "message": "m" }))
        .await;
    assert!(err.starts_with("bad_request") && err.contains("session_id"), "{err}");
    let err = lead.err("post_message", json!({ "session_id": "../x", "body": "x" })).await;
    assert!(err.starts_with("bad_request"), "{err}");
    let out = tabwire(
        &dir,
        &dir,
        &["notify", "--session", "nobody", "--worker", "w", "--status", "success"],
        &[],
    )
    .await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session has id nobody"), "{out:?}");

    // The lead ends (its client goes away: stdin EOF): its files go, and reporting to it is
    // an error that says so.
    lead.client.cancel().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while record.exists() || socket.exists() {
        assert!(Instant::now() < deadline, "the session's files stayed after it ended");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let err = worker
        .err(
            "notify_completion",
            json!({ "worker_id": "w1", "status": "success", "message": "again" }),
        )
        .await;
    assert!(err.starts_with("no_such_session"), "{err}");
}

// Unix only: SIGTERM; a console program on Windows cannot be asked to end by another.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_removes_the_session_files() {
    use std::process::Stdio;
    let dir = bins::scratch_dir("term");
    let mut child = tokio::process::Command::new(bins::bin("tabwire"))
        .arg("mcp")
        .env("TABWIRE_RUNTIME_DIR", &dir)
        .env("TABWIRE_SESSION_ID", "term-1")
        .stdin(Stdio::piped()) // kept open: only the signal ends it
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let record = dir.join("sessions/term-1.json");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !record.exists() {
        assert!(Instant::now() < deadline, "no session record");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Held open until the end: waiting on the child would close it, and EOF ends a session too.
    let _stdin = child.stdin.take();
    let started = Instant::now();
    // SAFETY: kill(2) on the pid of the child this test started.
    unsafe { libc::kill(child.id().unwrap() as i32, libc::SIGTERM) };
    let out = tokio::time::timeout(Duration::from_secs(3), child.wait_with_output())
        .await
        .expect("exits")
        .unwrap();
    assert!(out.status.success(), "{:?}: {}", out.status, String::from_utf8_lossy(&out.stderr));
    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    assert!(!record.exists() && !dir.join("sessions/term-1.sock").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_for_pages_without_a_browser_fails_at_once() {
    let dir = bins::scratch_dir("nob");
    let mcp = Mcp::start(&dir).await;
    let started = Instant::now();
    let err = mcp.err("wait_for_state_change", json!({ "timeout_secs": 30 })).await;
    assert!(err.contains("no browser is connected"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());

    let session: Value = mcp.session().await;
    let port = session["http_port"].as_u64().unwrap() as u16;
    let bearer = format!("Bearer {}", session["token"].as_str().unwrap());
    let answer = http::get(port, "/wait?timeout=30", &[("Authorization", &bearer)]).await;
    assert_eq!(answer.status, 404, "{answer:?}");
    assert!(answer.body.contains("browser_disconnected"), "{}", answer.body);

    let out = tabwire(&dir, &dir, &["wait", "--once"], &[]).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no browser is connected"), "{out:?}");
}
