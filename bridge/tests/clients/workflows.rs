//! Workflows (`specs/workflows.md`) through the real `tabwire mcp`, the real `tabwire` CLI and,
//! for what the browser shows, real Chromium: two bridges completing skills in one session keep
//! one consistent file; paths that would lead elsewhere are refused; a page that follows the
//! session with `tabwire.onWorkflow` sees each change (and only while its site is allowed); the
//! extension's `workflow.html` shows where the session stands (and a screenshot of it is kept
//! in `target/tabwire-workflow.png`).

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tabwire_proto::extension_id::EXTENSION_ID;
use tabwire_testkit::mcp::text;
use tabwire_testkit::{Cdp, Chromium, Fixtures, Mcp, bins};

/// How long a change may take to show in a page.
const WITHIN: Duration = Duration::from_secs(5);

/// A scratch project, config dir (no user workflows but the test's) and runtime dir.
struct Scene {
    project: PathBuf,
    config: PathBuf,
    runtime: bins::Scratch,
    _root: bins::Scratch,
}

impl Scene {
    fn new(tag: &str) -> Scene {
        let root = bins::scratch_dir(tag);
        let dir = |name: &str| {
            let d = root.join(name);
            std::fs::create_dir_all(&d).unwrap();
            d
        };
        // The runtime dir must be private (0700), as scratch_dir makes it.
        Scene {
            project: dir("project"),
            config: dir("config"),
            runtime: bins::scratch_dir(&format!("{tag}-run")),
            _root: root,
        }
    }

    async fn mcp(&self, runtime: &Path) -> Mcp {
        let config = self.config.to_str().unwrap();
        Mcp::start_with(runtime, &[("TABWIRE_CONFIG_DIR", config)]).await
    }

    fn at(&self, session: &str) -> Value {
        json!({ "project": self.project, "session": session })
    }

    fn with(&self, session: &str, more: Value) -> Value {
        let mut args = self.at(session);
        args.as_object_mut().unwrap().extend(more.as_object().unwrap().clone());
        args
    }

    fn file(&self, session: &str) -> PathBuf {
        self.project.join(".collab").join(session).join("collab-state.json")
    }

    fn saved(&self, session: &str) -> Value {
        serde_json::from_slice(&std::fs::read(self.file(session)).unwrap()).unwrap()
    }

    /// `tabwire workflow ARGS` as the user would run it.
    fn cli(&self, args: &[&str]) -> Output {
        std::process::Command::new(bins::bin("tabwire"))
            .arg("workflow")
            .args(args)
            .env("TABWIRE_CONFIG_DIR", &self.config)
            .output()
            .expect("run tabwire workflow")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_bridges_completing_skills_in_one_session_keep_one_consistent_file() {
    let scene = Scene::new("wf-two");
    let (a, b) = (scene.mcp(&scene.runtime).await, scene.mcp(&scene.runtime).await);
    let items = json!([{ "title": "Export as CSV", "type": "task" }, { "title": "Crash on save", "type": "bugfix" }]);
    let first = a.ok("start_workflow", scene.with("shared", json!({ "items": items }))).await;
    assert_eq!(first["next_skill"], "collab-start");

    // Each round both bridges report the skill the session waits for, at the same moment:
    // exactly one call moves the session, the other is told it is late and what is expected.
    let mut walked = Vec::new();
    loop {
        let now = b.ok("get_workflow_state", scene.at("shared")).await;
        let Some(skill) = now["next_skill"].as_str().map(str::to_owned) else { break };
        if skill == "ready-to-implement" {
            // Two bridges record different facts at once: both are kept.
            let plan =
                json!({ "batches": [{ "id": "b1", "tasks": [{ "id": "t1" }, { "id": "t2" }] }] });
            a.ok("update_workflow", scene.with("shared", plan)).await;
        }
        if skill == "log-batch-complete" {
            let done = |t: &str| {
                scene.with("shared", json!({ "tasks": [{ "id": t, "status": "completed" }] }))
            };
            let (x, y) = tokio::join!(
                a.call("update_workflow", done("t1")),
                b.call("update_workflow", done("t2"))
            );
            assert!(
                x.is_error != Some(true) && y.is_error != Some(true),
                "{}\n{}",
                text(&x),
                text(&y)
            );
            assert_eq!(
                scene.saved("shared")["completedTasks"],
                json!(["t1", "t2"]),
                "neither update lost the other"
            );
        }
        let args = scene.with("shared", json!({ "skill": skill }));
        let (x, y) =
            tokio::join!(a.call("complete_skill", args.clone()), b.call("complete_skill", args));
        let (won, lost) = match (x.is_error == Some(true), y.is_error == Some(true)) {
            (false, true) => (x, y),
            (true, false) => (y, x),
            _ => panic!(
                "exactly one of two calls for {skill} moves the session:\n{}\n{}",
                text(&x),
                text(&y)
            ),
        };
        let next = won.structured_content.clone().unwrap();
        let said = text(&lost);
        assert!(said.starts_with("wrong_skill: "), "{said}");
        let expected = next["next_skill"]
            .as_str()
            .map_or("no skill is expected".into(), |s| format!("waits for skill {s:?}"));
        assert!(said.contains(&expected) && said.contains("nothing was changed"), "{said}");
        walked.push(next["state"].as_str().unwrap().to_owned());
    }

    let brainstorm: Vec<&str> = "brainstorm-exploring clear-bs1 brainstorm-clarifying clear-bs2 \
        brainstorm-designing clear-bs3 brainstorm-validating"
        .split_whitespace()
        .collect();
    let mut expected = vec!["gather-goals", "clear-pre-item"];
    expected.extend(&brainstorm);
    expected.extend(["task-planning", "clear-post-item"]);
    expected.extend(&brainstorm);
    expected.extend([
        "systematic-debugging",
        "clear-post-item",
        "ready-to-implement",
        "clear-pre-execute",
        "execute-batch",
        "log-batch-complete",
        "clear-post-batch",
        "workflow-complete",
        "cleanup",
        "done",
    ]);
    assert_eq!(walked, expected);

    // One file, and it says what happened: a revision per change (start, 3 updates, each skill).
    let saved = scene.saved("shared");
    assert_eq!(saved["state"], "done");
    assert_eq!(saved["revision"], json!(1 + 3 + walked.len()));
    assert_eq!(
        (saved["documentedItems"].clone(), saved["totalItems"].clone()),
        (json!(2), json!(2))
    );
    assert_eq!(saved["batches"][0]["status"], "completed");
    for (name, bridge) in [("a", &a), ("b", &b)] {
        let seen = bridge.ok("get_workflow_state", scene.at("shared")).await;
        assert_eq!(
            (seen["state"].clone(), seen["revision"].clone()),
            (saved["state"].clone(), saved["revision"].clone()),
            "bridge {name}"
        );
        assert_eq!(seen["next_skill"], Value::Null);
    }
    let leftovers: Vec<_> = std::fs::read_dir(scene.project.join(".collab/shared"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "no temp file left behind: {leftovers:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_an_error_that_names_the_field_and_changes_nothing() {
    let scene = Scene::new("wf-bad");
    let mcp = scene.mcp(&scene.runtime).await;

    // Path traversal through `session`, and projects that are not absolute existing directories.
    for session in ["../escape", "a/b", "..", ".hidden", ""] {
        let err = mcp.err("start_workflow", scene.at(session)).await;
        assert!(err.starts_with("bad_request: `session`: "), "{session:?}: {err}");
    }
    assert!(
        !scene.project.join("..").join("escape").exists(),
        "nothing written beside the project"
    );
    assert!(!scene.project.join(".collab").exists(), "nothing written at all");
    for project in ["relative/dir", "/no/such/project/dir"] {
        let err = mcp.err("start_workflow", json!({ "project": project, "session": "s" })).await;
        assert!(err.starts_with("bad_request: `project`"), "{project}: {err}");
    }

    // A session never started; an unknown workflow; starting twice.
    let err = mcp.err("get_workflow_state", scene.at("nope")).await;
    assert!(err.starts_with("no_workflow: no workflow was started in session \"nope\""), "{err}");
    let err = mcp.err("start_workflow", scene.with("s", json!({ "workflow": "colab" }))).await;
    assert!(
        err.starts_with(
            "bad_request: `workflow`: there is no workflow named \"colab\"; there are: collab"
        ),
        "{err}"
    );
    mcp.ok("start_workflow", scene.at("s")).await;
    let err = mcp.err("start_workflow", scene.at("s")).await;
    assert!(
        err.contains("already follows workflow \"collab\"") && err.contains("restart: true"),
        "{err}"
    );

    // The wrong skill: refused, naming the expected one; the file is untouched.
    let before = std::fs::read(scene.file("s")).unwrap();
    let err = mcp
        .err("complete_skill", scene.with("s", json!({ "skill": "brainstorm-exploring" })))
        .await;
    assert!(err.starts_with("wrong_skill: session \"s\" is in state collab-start, which waits for skill \"collab-start\", not \"brainstorm-exploring\""), "{err}");
    assert_eq!(std::fs::read(scene.file("s")).unwrap(), before);

    // Facts that fail their checks name the field; nothing is recorded.
    let err = mcp
        .err(
            "update_workflow",
            scene.with(
                "s",
                json!({ "batches": [{ "id": "b", "tasks": [{ "id": "t", "dependsOn": ["x"] }] }] }),
            ),
        )
        .await;
    assert_eq!(
        err,
        "bad_request: `batches[0].tasks[0].dependsOn`: \"x\" is not a task of this plan"
    );
    let err = mcp
        .err(
            "update_workflow",
            scene.with("s", json!({ "items": [{ "title": "x", "type": "feature" }] })),
        )
        .await;
    assert!(err.contains("feature"), "{err}");
    let err = mcp.err("update_workflow", scene.at("s")).await;
    assert!(err.starts_with("bad_request: nothing to record"), "{err}");
    assert_eq!(std::fs::read(scene.file("s")).unwrap(), before);

    // A corrupt file: moved aside with a clear error, never silently reset.
    std::fs::write(scene.file("s"), b"{ not json").unwrap();
    let err = mcp.err("complete_skill", scene.with("s", json!({ "skill": "collab-start" }))).await;
    assert!(
        err.starts_with("corrupt_state: ")
            && err.contains("it was moved to")
            && err.contains(".corrupt-"),
        "{err}"
    );
    assert!(!scene.file("s").exists());
    let err = mcp.err("get_workflow_state", scene.at("s")).await;
    assert!(err.starts_with("no_workflow:"), "{err}");

    // A user workflow: a valid one can be started, a broken one is listed with what is wrong.
    let dir = scene.config.join("workflows");
    std::fs::create_dir_all(&dir).unwrap();
    let review = json!({ "name": "review", "start": "read", "states": [
        { "id": "read", "skill": "read-diff", "transitions": [{ "to": "comment" }] },
        { "id": "comment", "skill": "write-comments", "transitions": [{ "to": "end" }] },
        { "id": "end", "skill": null, "transitions": [] }
    ] });
    std::fs::write(dir.join("review.json"), review.to_string()).unwrap();
    let broken = json!({ "name": "broken", "start": "a", "states": [{ "id": "a", "skill": "x", "transitions": [{ "to": "b" }] }] });
    std::fs::write(dir.join("broken.json"), broken.to_string()).unwrap();
    let listed = mcp.ok("list_workflows", json!({})).await;
    let names: Vec<&str> = listed["workflows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["review", "collab"]);
    let problem = &listed["problems"][0];
    assert!(problem["path"].as_str().unwrap().ends_with("broken.json"), "{listed}");
    assert!(
        problem["error"]
            .as_str()
            .unwrap()
            .contains("state \"a\", field `transitions[0].to`: \"b\" is not a state"),
        "{listed}"
    );
    let started = mcp.ok("start_workflow", scene.with("r", json!({ "workflow": "review" }))).await;
    assert_eq!(started["next_skill"], "read-diff");
    let done = mcp.ok("complete_skill", scene.with("r", json!({ "skill": "read-diff" }))).await;
    assert_eq!(done["next_skill"], "write-comments");

    // The CLI prints the same as the tools; a bad session is an error (exit 1) saying why.
    let out = scene.cli(&["show", "--project", scene.project.to_str().unwrap(), "--session", "r"]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        shown.contains("workflow review: state comment, revision 2")
            && shown.contains("next: run write-comments"),
        "{shown}"
    );
    assert!(
        shown.contains("▶ comment") && shown.contains("→ end"),
        "the graph, the current state marked:\n{shown}"
    );
    let out = scene.cli(&[
        "show",
        "--project",
        scene.project.to_str().unwrap(),
        "--session",
        "r",
        "--json",
    ]);
    let json: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        (json["state"].clone(), json["next_skill"].clone(), json["graph"]["name"].clone()),
        (json!("comment"), json!("write-comments"), json!("review"))
    );
    let out =
        scene.cli(&["show", "--project", scene.project.to_str().unwrap(), "--session", "../r"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("`session`"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Evaluate `expression` in a page until it is neither null nor false; fail with `what`.
async fn until(cdp: &Cdp, page: &str, what: &str, expression: &str) -> Value {
    match cdp.wait_for(page, expression, WITHIN).await {
        Ok(value) => value,
        Err(e) => panic!("{what}: {e}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_shows_each_change_to_pages_that_follow_and_in_workflow_html() {
    let scene = Scene::new("wf-browser");
    let mut browser = Chromium::start_with_cdp();
    let (to_browser, from_browser) = browser.take_cdp_pipe().expect("started with a CDP pipe");
    let cdp = Cdp::new(to_browser, from_browser);
    let mcp = scene.mcp(&browser.runtime_dir).await;
    let pages = Fixtures::serve();
    let project = scene.project.canonicalize().unwrap();
    let follow = |session: &str| {
        pages.url(&format!(
            "workflow.html?project={}&session={session}&other=another",
            project.display()
        ))
    };
    let page = cdp.open(&follow("s")).await.unwrap();
    until(&cdp, &page, "the page has window.tabwire", "window.__ready === true").await;

    // Every change, in order, reaches the page: start, then each completed skill.
    let items = json!([{ "title": "Login page", "type": "code" }, { "title": "Crash on save", "type": "bugfix" }]);
    let started = mcp.ok("start_workflow", scene.with("s", json!({ "items": items }))).await;
    let mut expected = vec![
        json!({ "state": started["state"], "revision": 1, "workflow": "collab", "states": 34 }),
    ];
    let seen_last = |revision: usize| format!("window.__seen.at(-1)?.revision === {revision}");
    until(&cdp, &page, "the page sees the start", &seen_last(1)).await;
    for _ in 0..4 {
        let now = mcp.ok("get_workflow_state", scene.at("s")).await;
        let next =
            mcp.ok("complete_skill", scene.with("s", json!({ "skill": now["next_skill"] }))).await;
        let revision = expected.len() + 1;
        expected.push(json!({ "state": next["state"], "revision": revision, "workflow": "collab", "states": 34 }));
        until(&cdp, &page, &format!("the page sees revision {revision}"), &seen_last(revision))
            .await;
    }
    assert_eq!(
        cdp.eval(&page, "window.__seen").await.unwrap(),
        json!(expected),
        "each change, once, in order"
    );
    assert_eq!(expected.last().unwrap()["state"], "clear-bs1");
    assert_eq!(
        cdp.eval(&page, "window.__other").await.unwrap(),
        json!([]),
        "another session's follower hears nothing of this one"
    );
    let shown = cdp.eval(&page, "document.body.innerText").await.unwrap();
    assert!(shown.as_str().unwrap().contains("Now: clear-bs1 (revision 5)"), "{shown}");

    // A page that starts following later gets the current state at once.
    let late = cdp.open(&follow("s")).await.unwrap();
    until(
        &cdp,
        &late,
        "a late follower gets the current state",
        &format!("window.__seen.length === 1 && {}", seen_last(5)),
    )
    .await;

    // The extension's own page: the graph with the current state highlighted, items, batches.
    let plan = json!({
        "batches": [
            { "id": "b1", "tasks": [{ "id": "login-form" }, { "id": "session-cookie", "dependsOn": ["login-form"] }] },
            { "id": "b2", "tasks": [{ "id": "fix-save", "dependsOn": ["session-cookie"] }] }
        ],
        "tasks": [{ "id": "login-form", "status": "completed" }]
    });
    mcp.ok("update_workflow", scene.with("s", plan)).await;
    let view =
        cdp.open(&format!("chrome-extension://{EXTENSION_ID}/ui/workflow.html")).await.unwrap();
    let card = format!(
        "document.querySelector('section.workflow[data-session=\"s\"][data-project={:?}]')",
        project.display().to_string()
    );
    until(
        &cdp,
        &view,
        "workflow.html shows the session at revision 6",
        &format!("{card}?.dataset.revision === '6'"),
    )
    .await;
    let current = cdp
        .eval(
            &view,
            &format!("[...{card}.querySelectorAll('.node.current')].map((n) => n.dataset.state)"),
        )
        .await
        .unwrap();
    assert_eq!(current, json!(["clear-bs1"]), "exactly the current state is highlighted");
    let nodes = cdp.eval(&view, &format!("{card}.querySelectorAll('.node').length")).await.unwrap();
    assert_eq!(nodes, 34, "the whole graph is drawn");
    let card_text = cdp.eval(&view, &format!("{card}.innerText")).await.unwrap();
    let card_text = card_text.as_str().unwrap();
    for shown in [
        "Now: clear-bs1",
        "run collab-clear after clearing the context",
        "item 1 of 2: Login page (code)",
        "Crash on save",
        "Items — 0 of 2 documented",
        "Batches — 0 of 2 completed",
        "login-form completed",
        "session-cookie pending ← login-form",
        "fix-save pending ← session-cookie",
    ] {
        assert!(card_text.contains(shown), "workflow.html shows {shown:?}:\n{card_text}");
    }
    let current_item = cdp
        .eval(&view, &format!("{card}.querySelector('tr.current')?.dataset.item"))
        .await
        .unwrap();
    assert_eq!(current_item, "1");
    cdp.call(
        "Emulation.setDeviceMetricsOverride",
        json!({ "width": 1480, "height": 900, "deviceScaleFactor": 1, "mobile": false }),
        Some(&view),
    )
    .await
    .unwrap();
    // Beside the build (the target dir), wherever CARGO_TARGET_DIR puts it.
    let target = bins::bin("tabwire").parent().and_then(|d| d.parent()).unwrap().to_owned();
    let shot = target.join("tabwire-workflow.png");
    let size = cdp.screenshot(&view, &shot).await.unwrap();
    assert!(size > 20_000, "a screenshot of the page, not a blank one: {size} bytes");
    eprintln!("workflow.html screenshot: {}", shot.display());

    // The popup links to it: a click opens another workflow.html.
    let pages_of_view = async || {
        let targets = cdp.call("Target.getTargets", json!({}), None).await.unwrap();
        let infos = targets["targetInfos"].as_array().cloned().unwrap_or_default();
        infos
            .iter()
            .filter(|t| t["url"].as_str().is_some_and(|u| u.ends_with("/workflow.html")))
            .count()
    };
    assert_eq!(pages_of_view().await, 1);
    let popup =
        cdp.open(&format!("chrome-extension://{EXTENSION_ID}/ui/popup.html")).await.unwrap();
    // Click once the popup has drawn its lists, so the link does not move under the pointer.
    let drawn = r##"document.querySelectorAll("#sites li").length > 0
        && document.getElementById("site").textContent !== "…""##;
    cdp.wait_for(&popup, drawn, WITHIN).await.unwrap();
    cdp.click(&popup, "#workflows").await.unwrap();
    let deadline = Instant::now() + WITHIN;
    while pages_of_view().await < 2 {
        assert!(Instant::now() < deadline, "the popup's Workflows link opened no workflow.html");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The user revokes the page's site: it hears nothing more, at once, while workflow.html does.
    let out = std::process::Command::new(bins::bin("tabwire"))
        .args(["sites", "revoke", "http://127.0.0.1:*"])
        .env("TABWIRE_RUNTIME_DIR", &browser.runtime_dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    mcp.ok("complete_skill", scene.with("s", json!({ "skill": "collab-clear" }))).await;
    until(
        &cdp,
        &view,
        "workflow.html shows revision 7",
        &format!("{card}?.dataset.revision === '7'"),
    )
    .await;
    let settle = Instant::now() + Duration::from_millis(500);
    while Instant::now() < settle {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let last = cdp.eval(&page, "window.__seen.at(-1).revision").await.unwrap();
    assert_eq!(last, 6, "a page of a revoked site is told nothing more");
}
