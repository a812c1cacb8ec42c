//! Python chat frameworks from PyPI (Gradio's `ChatInterface`, Streamlit's `st.chat_input` and
//! `st.chat_message`, Chainlit), installed at pinned versions into one venv under the target dir once, and
//! their apps (`testkit/fixtures/apps/<name>/app.py`) served on 127.0.0.1 with a fake model that
//! streams a known answer (`testkit/fixtures/apps/fake_model.py`) and records it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::bins;

/// What the venv holds: pinned, without extras, so that an install is the same everywhere and
/// as small as these frameworks allow.
pub const PACKAGES: &[&str] = &["gradio==6.31.0", "streamlit==1.67.0", "chainlit==2.12.0"];

/// The installer of [`PACKAGES`], itself from PyPI (see [`venv`]).
const UV: &str = "uv==0.13.9";

/// No analytics, telemetry or update checks: the apps reach nothing but loopback.
const QUIET: &[(&str, &str)] = &[
    ("GRADIO_ANALYTICS_ENABLED", "False"),
    ("HF_HUB_OFFLINE", "1"),
    ("HF_HUB_DISABLE_TELEMETRY", "1"),
    ("DO_NOT_TRACK", "1"),
    ("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false"),
    ("STREAMLIT_SERVER_HEADLESS", "true"),
    ("STREAMLIT_GLOBAL_DEVELOPMENT_MODE", "false"),
    ("PYTHONUNBUFFERED", "1"),
    ("PYTHONDONTWRITEBYTECODE", "1"), // no __pycache__ beside the apps in the repository
];

/// The venv (`<target>/chat-frameworks`) with [`PACKAGES`], made with `python3 -m venv` and
/// uv from PyPI when missing or pinned otherwise; under a lock, so that tests and benches
/// running at once install it once. The error says what failed and how to fix it.
pub fn venv() -> Result<PathBuf, String> {
    let target = bins::bin("tabwire").parent().unwrap().parent().unwrap().to_owned();
    let dir = target.join("chat-frameworks");
    let _lock = crate::npm::lock(&dir);
    let stamp = dir.join("installed.txt");
    let want = PACKAGES.join("\n");
    if std::fs::read_to_string(&stamp).is_ok_and(|have| have == want) {
        return Ok(dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
    run(Command::new("python3").args(["-m", "venv"]).arg(&dir), "python3 -m venv")
        .map_err(|e| format!("{e}\n(on Debian: `apt-get install python3-venv`)"))?;
    // uv installs what pip would (the same versions), in a quarter of the time: it fetches,
    // unpacks and compiles in parallel where pip does one thing at a time (15 s against 60
    // here, while every chat test waits). pip installs uv, uv the frameworks, pip removes uv.
    let pip = dir.join("bin/pip");
    let quiet = ["--quiet", "--disable-pip-version-check"];
    run(
        Command::new(&pip).arg("install").args(quiet).args(["--no-cache-dir", UV]),
        &format!("pip install {UV}"),
    )
    .and_then(|()| {
        run(
            Command::new(dir.join("bin/uv"))
                .args(["pip", "install", "--quiet", "--no-cache", "--compile-bytecode"])
                .arg("--python")
                .arg(dir.join("bin/python"))
                .args(PACKAGES),
            &format!("uv pip install {}", PACKAGES.join(" ")),
        )
    })
    .map_err(|e| format!("{e}\n(offline? the packages come from PyPI)"))?;
    run(Command::new(&pip).args(["uninstall", "--yes"]).args(quiet).arg("uv"), "pip uninstall uv")?;
    std::fs::write(&stamp, want).unwrap();
    Ok(dir)
}

fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("cannot run `{what}`: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!("`{what}` failed:\n{}", String::from_utf8_lossy(&out.stderr)))
}

/// The Python chat apps of `testkit/fixtures/apps/`.
#[derive(Clone, Copy, Debug)]
pub enum Framework {
    /// `gradio-chat/app.py`: `gr.ChatInterface`.
    Gradio,
    /// `streamlit-chat/app.py`: `st.chat_input` and `st.chat_message`, run by `streamlit run`.
    Streamlit,
    /// `chainlit-chat/app.py`: Chainlit's chat, run by `chainlit run`.
    Chainlit,
}

impl Framework {
    /// The app's text box.
    pub fn input(self) -> &'static str {
        match self {
            Framework::Gradio => "textarea[data-testid=\"textbox\"]",
            Framework::Streamlit => "textarea[data-testid=\"stChatInputTextArea\"]",
            Framework::Chainlit => "textarea#chat-input",
        }
    }

    /// A hand-written adapter for the app at `url`, from its markup. The stop controls show
    /// only while an answer streams: Gradio's in place of the send button, Streamlit's in its
    /// running-status widget (it stops the script run, and with it the fake model's stream),
    /// Chainlit's in place of the send button (it cancels the answer's task; Chainlit then adds
    /// a message of its own, "Task manually stopped.").
    pub fn adapter(self, url: &str) -> serde_json::Value {
        let matches = format!("{url}*");
        match self {
            Framework::Gradio => serde_json::json!({
                "name": "gradio-chat",
                "matches": [matches],
                "input": self.input(),
                "submit": "button.submit-button",
                "user_message": "[data-testid=\"user\"]",
                "assistant_message": "[data-testid=\"bot\"]",
                "generating": "button.stop-button",
                "stop": "button.stop-button",
                "stable_ms": 500
            }),
            Framework::Streamlit => serde_json::json!({
                "name": "streamlit-chat",
                "matches": [matches],
                "input": self.input(),
                "submit": "button[data-testid=\"stChatInputSubmitButton\"]",
                "user_message": "[data-testid=\"stChatMessageContent\"][aria-label=\"Chat message from user\"]",
                "assistant_message": "[data-testid=\"stChatMessageContent\"][aria-label=\"Chat message from assistant\"]",
                "generating": "[data-testid=\"stStatusWidgetRunningIcon\"]",
                "stop": "[data-testid=\"stStatusWidget\"] button[kind=\"header\"]",
                "stable_ms": 500
            }),
            Framework::Chainlit => serde_json::json!({
                "name": "chainlit-chat",
                "matches": [matches],
                "input": self.input(),
                "submit": "#chat-submit",
                "user_message": "[data-step-type=\"user_message\"] .message-content",
                "assistant_message": "[data-step-type=\"assistant_message\"] .message-content",
                "generating": "#stop-button",
                "stop": "#stop-button",
                "stable_ms": 500
            }),
        }
    }
}

/// A chat app running on 127.0.0.1, killed with every process it started when dropped.
pub struct ChatApp {
    child: Child,
    /// `http://127.0.0.1:<port>/`
    pub url: String,
    dir: bins::Scratch,
}

impl ChatApp {
    /// Install the venv if needed ([`venv`]), start the app on a free loopback port and wait
    /// until it answers HTTP (60 s at most: importing Gradio takes seconds).
    pub fn start(framework: Framework) -> Result<ChatApp, String> {
        let venv = venv()?;
        let apps = bins::repo_root().join("testkit/fixtures/apps");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port on 127.0.0.1: {e}"))?
            .port();
        let dir = bins::scratch_dir("chat-app");
        let mut cmd = match framework {
            Framework::Gradio => {
                let mut cmd = Command::new(venv.join("bin/python"));
                cmd.arg(apps.join("gradio-chat/app.py"));
                cmd
            }
            Framework::Streamlit => {
                let mut cmd = Command::new(venv.join("bin/streamlit"));
                cmd.arg("run").arg(apps.join("streamlit-chat/app.py")).args([
                    "--server.address",
                    "127.0.0.1",
                    "--server.port",
                    &port.to_string(),
                    "--server.fileWatcherType",
                    "none",
                ]);
                cmd
            }
            // Its config and readme are written into the working directory, the scratch dir.
            Framework::Chainlit => {
                let mut cmd = Command::new(venv.join("bin/chainlit"));
                cmd.arg("run").arg(apps.join("chainlit-chat/app.py")).args([
                    "--host",
                    "127.0.0.1",
                    "--port",
                    &port.to_string(),
                    "--headless",
                ]);
                cmd
            }
        };
        let log = std::fs::File::create(dir.join("app.log")).unwrap();
        cmd.envs(QUIET.iter().copied())
            .env("PORT", port.to_string())
            .env("TABWIRE_CHAT_LOG", dir.join("chats.jsonl"))
            .env("HOME", &*dir) // its caches and settings go with the scratch dir
            .current_dir(&*dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        let child = crate::process::own_tree(&mut cmd)
            .spawn()
            .map_err(|e| format!("cannot start {framework:?}: {e}"))?;
        let mut app = ChatApp { child, url: format!("http://127.0.0.1:{port}/"), dir };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(Some(status)) = app.child.try_wait() {
                return Err(format!("{framework:?} ended ({status}):\n{}", app.log()));
            }
            if answers(port) {
                return Ok(app);
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "{framework:?} does not answer on {}:\n{}",
                    app.url,
                    app.log()
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// What the app printed.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("app.log")).unwrap_or_default()
    }

    /// Each question the fake model was asked, with the whole answer it streamed, in order.
    pub fn chats(&self) -> Vec<(String, String)> {
        self.records()
            .filter_map(|v| {
                Some((v["asked"].as_str()?.to_owned(), v["answer"].as_str()?.to_owned()))
            })
            .collect()
    }

    /// When the last word of each whole answer went out (ms since the epoch), in order.
    pub fn last_words(&self) -> Vec<f64> {
        self.records().filter_map(|v| v["last_word_ms"].as_f64()).collect()
    }

    fn records(&self) -> impl Iterator<Item = serde_json::Value> {
        let text = std::fs::read_to_string(self.dir.join("chats.jsonl")).unwrap_or_default();
        let records: Vec<_> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        records.into_iter()
    }
}

/// Whether something on 127.0.0.1:`port` answers `GET /` with 200.
fn answers(port: u16) -> bool {
    let Ok(mut sock) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = sock.set_read_timeout(Some(Duration::from_secs(5)));
    let req = format!("GET / HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nconnection: close\r\n\r\n");
    if sock.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 16];
    sock.read(&mut head).is_ok_and(|n| head[..n].starts_with(b"HTTP/1.1 200"))
}

impl Drop for ChatApp {
    fn drop(&mut self) {
        crate::process::kill_tree(self.child.id());
        let _ = self.child.wait();
    }
}
