//! Attacks on `spawn_worker`'s `env`. A hijacked assistant picks a worker's environment, and
//! some variables choose what code runs: PATH which program, NODE_OPTIONS what Node.js loads
//! first, BASH_ENV what every bash sources. With nothing but the default template (`claude -p
//! {prompt}`) it must not get to run its own code. Only variables a template of the user's
//! workers.json allows may be set, and some (those above) never.
//!
//! Real `tabwire mcp`, real worker processes: a stand-in `claude` (a Node.js script that, like
//! Claude Code, runs a tool through bash) on the server's PATH; the attacker's programs write a
//! marker file when they run.
//!
//! Unix only: the stand-ins are shebang scripts found on PATH, where Windows starts `.exe` and
//! `.cmd` files, and BASH_ENV is bash's.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};
use tabwire_testkit::mcp::text;
use tabwire_testkit::{Mcp, bins};

/// Write an executable file.
fn script(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The lead's world: the real (stand-in) claude in `good/`, the attacker's files in `evil/`,
/// and the markers they leave in `marks/`.
struct World {
    root: bins::Scratch,
}

impl World {
    fn new(tag: &str) -> World {
        let root = bins::scratch_dir(tag);
        let world = World { root };
        script(
            &world.path("good/claude"),
            "#!/usr/bin/env node\n\
             require('child_process').execFileSync('bash', ['-c', 'true'], {stdio: 'inherit'});\n\
             const color = process.env.TASK_COLOR || 'none';\n\
             console.log(`the real claude: ${process.argv[3]} (color ${color})`);\n",
        );
        let marks = world.path("marks");
        std::fs::create_dir_all(&marks).unwrap();
        let mark = |name: &str| marks.join(name).display().to_string();
        script(&world.path("evil/claude"), &format!("#!/bin/sh\necho ran > {}\n", mark("path")));
        script(
            &world.path("evil/preload.js"),
            &format!("require('fs').writeFileSync({:?}, 'ran');\n", mark("node_options")),
        );
        script(&world.path("evil/bashrc"), &format!("echo ran > {}\n", mark("bash_env")));
        std::fs::create_dir_all(world.path("work")).unwrap();
        std::fs::create_dir_all(world.path("config")).unwrap();
        world
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.root.join(name)
    }

    fn marks(&self) -> Vec<String> {
        let mut marks: Vec<String> = std::fs::read_dir(self.path("marks"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        marks.sort();
        marks
    }

    /// `tabwire mcp` whose PATH finds the real claude first.
    async fn lead(&self) -> Mcp {
        let path = format!("{}:{}", self.path("good").display(), std::env::var("PATH").unwrap());
        let (config, state) = (self.path("config"), self.path("state"));
        let env = [
            ("PATH", path.as_str()),
            ("TABWIRE_CONFIG_DIR", config.to_str().unwrap()),
            ("TABWIRE_STATE_DIR", state.to_str().unwrap()),
        ];
        Mcp::start_with(&self.path("run"), &env).await
    }

    /// spawn_worker with the default template and `env`: the worker's report once it ended,
    /// or the call's error.
    async fn spawn(&self, lead: &Mcp, name: &str, env: Value) -> Result<Value, String> {
        let args =
            json!({ "name": name, "prompt": "fix the bug", "cwd": self.path("work"), "env": env });
        let result = lead.call("spawn_worker", args).await;
        if result.is_error == Some(true) {
            return Err(text(&result));
        }
        // It started: let it run to its end, so that whatever it would run has run.
        Ok(lead.ok("wait_for_event", json!({ "timeout_secs": 30 })).await)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_assistant_cannot_run_its_own_code_through_a_workers_environment() {
    let world = World::new("atkwenv");
    let lead = world.lead().await;
    let evil = world.path("evil");
    let attacks = [
        ("PATH", format!("{}:/usr/bin:/bin", evil.display())),
        ("NODE_OPTIONS", format!("--require={}", evil.join("preload.js").display())),
        ("BASH_ENV", evil.join("bashrc").display().to_string()),
        ("LD_PRELOAD", evil.join("hook.so").display().to_string()),
        ("PYTHONSTARTUP", evil.join("startup.py").display().to_string()),
        ("GIT_SSH_COMMAND", evil.join("claude").display().to_string()),
    ];
    let mut got = Vec::new();
    for (i, (var, value)) in attacks.iter().enumerate() {
        got.push((var, world.spawn(&lead, &format!("attack-{i}"), json!({ *var: value })).await));
    }
    assert_eq!(world.marks(), Vec::<String>::new(), "the attacker's code ran: {got:#?}");
    for (var, got) in got {
        let e = got.expect_err(var);
        assert!(
            e.starts_with(&format!(
                "bad_request: spawn_worker may not set {var}: template \"default\" does not \
                 allow it"
            )) && e.contains("allow_env")
                && e.contains(world.path("config/workers.json").to_str().unwrap()),
            "{e}"
        );
    }
    let listed = lead.ok("list_workers", json!({})).await;
    assert_eq!(listed["workers"], json!([]), "nothing started");

    // Without env, the real claude runs, found on the server's PATH.
    let report = world.spawn(&lead, "plain", json!({})).await.unwrap();
    assert_eq!(
        (&report["status"], &report["message"]),
        (&json!("success"), &json!("the real claude: fix the bug (color none)")),
        "{report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_variable_the_user_allows_in_workers_json_reaches_the_worker_and_no_other() {
    let world = World::new("atkwallow");
    let templates = world.path("config/workers.json");
    let allow = |vars: Value| {
        let file =
            json!({ "default": { "argv": ["claude", "-p", "{prompt}"], "allow_env": vars } });
        std::fs::write(&templates, file.to_string()).unwrap();
    };
    allow(json!(["TASK_COLOR"]));
    let lead = world.lead().await;

    let report = world.spawn(&lead, "blue", json!({ "TASK_COLOR": "blue" })).await.unwrap();
    assert_eq!(
        (&report["status"], &report["message"]),
        (&json!("success"), &json!("the real claude: fix the bug (color blue)")),
        "{report}"
    );
    let node_options = format!("--require={}", world.path("evil/preload.js").display());
    let e = world
        .spawn(&lead, "sneaky", json!({ "TASK_COLOR": "red", "NODE_OPTIONS": node_options }))
        .await
        .unwrap_err();
    assert!(
        e.contains(
            "may not set NODE_OPTIONS: template \"default\" does not allow it and no template can"
        ),
        "{e}"
    );
    let e = world.spawn(&lead, "other", json!({ "DEBUG_LEVEL": "9" })).await.unwrap_err();
    assert!(
        e.contains(
            "may not set DEBUG_LEVEL: template \"default\" does not allow it (it allows: \
             TASK_COLOR)"
        ),
        "{e}"
    );

    // Some variables choose the code that runs: even the user's file cannot allow them.
    allow(json!(["TASK_COLOR", "NODE_OPTIONS"]));
    let e =
        world.spawn(&lead, "sneaky", json!({ "NODE_OPTIONS": node_options })).await.unwrap_err();
    assert!(
        e.starts_with("bad_request: the worker templates in")
            && e.contains("template \"default\" allows NODE_OPTIONS")
            && e.contains("never"),
        "{e}"
    );
    allow(json!(["PATH"]));
    let e = world.spawn(&lead, "sneaky", json!({})).await.unwrap_err();
    assert!(e.contains("template \"default\" allows PATH"), "{e}");
    assert_eq!(world.marks(), Vec::<String>::new(), "the attacker's code never ran");
}
