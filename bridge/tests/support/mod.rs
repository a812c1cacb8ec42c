//! The one harness of the bridge's tests: a private runtime directory, the real `tabwire-host`
//! with the test playing the browser on its stdio, and the real `tabwire` binary — as `tabwire
//! mcp` driven by rmcp's client over stdio, or as a plain command.

#![allow(dead_code)] // each test file uses part of it

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tabwire_proto::codec::FrameCodec;
use tabwire_proto::extension_id::EXTENSION_ID;
use tabwire_proto::runtime_dir::live_hosts;
use tabwire_proto::wire::{self, Hello, Message, Request, Response};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio_util::codec::{FramedRead, FramedWrite};

/// A private runtime directory (0700, short path: socket paths are limited to 108 bytes),
/// removed when dropped.
pub struct Env {
    pub dir: PathBuf,
}

impl Env {
    pub fn new() -> Env {
        use std::os::unix::fs::PermissionsExt;
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = PathBuf::from(format!("/tmp/twb-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        Env { dir }
    }

    /// `tabwire <args>` in this environment; its stdout, stderr and exit status.
    pub async fn tabwire(&self, args: &[&str]) -> std::process::Output {
        Command::new(env!("CARGO_BIN_EXE_tabwire"))
            .args(args)
            .env("TABWIRE_RUNTIME_DIR", &self.dir)
            .env_remove("TABWIRE_BROWSER")
            .output()
            .await
            .expect("run tabwire")
    }

    /// A `tabwire mcp` session, after the MCP handshake.
    pub async fn mcp(&self) -> Mcp {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tabwire"));
        cmd.arg("mcp").env("TABWIRE_RUNTIME_DIR", &self.dir).env_remove("TABWIRE_BROWSER");
        let transport = TokioChildProcess::new(cmd).expect("spawn tabwire mcp");
        Mcp { client: ().serve(transport).await.expect("MCP handshake with tabwire mcp") }
    }

    /// Start the real host, as Chrome would, with the test as its browser. It is attached
    /// (its socket is listed) once `hello` has been sent.
    pub async fn host(&self) -> FakeBrowser {
        let mut host = Command::new(host_binary());
        if std::env::var_os("TABWIRE_LOG").is_none() {
            host.env("TABWIRE_LOG", "warn"); // its info lines would bury the tests' output
        }
        let mut child = host
            .arg(format!("chrome-extension://{EXTENSION_ID}/"))
            .env("TABWIRE_RUNTIME_DIR", &self.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start tabwire-host");
        let from_host = FramedRead::new(child.stdout.take().unwrap(), FrameCodec::socket());
        let to_host = FramedWrite::new(child.stdin.take().unwrap(), FrameCodec::socket());
        let pid = child.id().unwrap();
        FakeBrowser { child, pid, from_host, to_host }
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `target/debug/tabwire-host`, next to the directory of this test executable.
pub fn host_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().and_then(Path::parent).unwrap().join("tabwire-host");
    assert!(path.exists(), "{} is missing: run `cargo build --workspace` first", path.display());
    path
}

/// The test's side of a real host's stdio: it reads the requests the host passes to the
/// browser and writes what the extension would.
pub struct FakeBrowser {
    pub child: Child,
    pub pid: u32,
    from_host: FramedRead<ChildStdout, FrameCodec>,
    to_host: FramedWrite<ChildStdin, FrameCodec>,
}

impl FakeBrowser {
    pub async fn send(&mut self, message: Message) {
        self.to_host.send(Bytes::from(message.to_bytes())).await.expect("write to the host");
    }

    /// The extension's hello; waits until the host's record names the browser, so bridges
    /// can find it and know who it is.
    pub async fn hello(&mut self, env: &Env, browser: &str, profile: &str) {
        self.send(Message::Hello(Hello {
            protocol: wire::PROTOCOL_VERSION,
            extension_version: Some("0.1.0".into()),
            extension_id: Some(EXTENSION_ID.into()),
            browser: Some(browser.into()),
            profile: Some(profile.into()),
            ..Hello::default()
        }))
        .await;
        let until = Instant::now() + Duration::from_secs(5);
        while !live_hosts(&env.dir).iter().any(|h| h.pid == self.pid && h.browser == browser) {
            assert!(Instant::now() < until, "the host {} never wrote its record", self.pid);
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// The next request or cancel the host passes on (its own events, such as `host_status`,
    /// are skipped).
    pub async fn next(&mut self) -> Message {
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(5), self.from_host.next())
                .await
                .expect("nothing reached the browser within 5 s")
                .expect("the host closed its stdout")
                .expect("a frame from the host");
            match Message::parse(&frame).expect("a protocol message") {
                Message::Event(_) => continue,
                message => return message,
            }
        }
    }

    /// The next request the host passes on.
    pub async fn request(&mut self) -> Request {
        match self.next().await {
            Message::Request(request) => request,
            other => panic!("expected a request, the host sent a {}", other.kind()),
        }
    }

    pub async fn reply(&mut self, id: &str, result: Value) {
        self.send(Message::Response(Response::ok(id, wire::raw(&result)))).await;
    }

    pub async fn fail(&mut self, id: &str, code: &str, message: &str) {
        self.send(Message::Response(Response::err(id, code, message))).await;
    }

    /// Answer the next request, which must be `method`, with `result`; returns its params.
    pub async fn answer(&mut self, method: &str, result: Value) -> Value {
        let request = self.request().await;
        assert_eq!(request.method, method);
        self.reply(&request.id, result).await;
        serde_json::from_str(request.params.get()).unwrap()
    }

    pub fn kill(&mut self) {
        // SAFETY: plain kill(2) on our own child's pid.
        unsafe { libc::kill(self.pid as libc::pid_t, libc::SIGKILL) };
    }
}

/// A tab as the extension reports it.
pub fn tab(id: i64, url: &str, title: &str, active: bool) -> Value {
    let allowed = url.starts_with("http://127.0.0.1:") || url.starts_with("http://localhost:");
    json!({ "id": id, "window_id": 1, "url": url, "title": title, "active": active,
            "status": "complete", "window_focused": true, "allowed": allowed })
}

/// One MCP session with a `tabwire mcp` child.
pub struct Mcp {
    pub client: RunningService<RoleClient, ()>,
}

impl Mcp {
    /// Call a tool; the raw result, tool errors included.
    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        let Value::Object(args) = args else { panic!("tool arguments are an object") };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args);
        self.client.call_tool(params).await.unwrap_or_else(|e| panic!("{tool}: MCP error {e}"))
    }

    /// Call a tool that must succeed; its structured content.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let result = self.call(tool, args).await;
        assert_ne!(result.is_error, Some(true), "{tool} failed: {}", text(&result));
        result.structured_content.expect("structured content")
    }

    /// Call a tool that must fail; its error text.
    pub async fn err(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args).await;
        assert_eq!(result.is_error, Some(true), "{tool} should have failed: {result:?}");
        text(&result)
    }
}

/// The text content of a tool result.
pub fn text(result: &CallToolResult) -> String {
    let texts: Vec<&str> =
        result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
    texts.join("\n")
}
