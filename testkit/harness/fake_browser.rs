//! The bridge against a real `tabwire-host` whose browser is the test: a private runtime
//! directory ([`Sandbox`]) where the test starts hosts, speaks as the extension on their stdio
//! ([`FakeBrowser`]), and runs the real `tabwire` binary — as `tabwire mcp` through
//! [`crate::Mcp`], or as a plain command.

use std::process::Stdio;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tabwire_proto::codec::FrameCodec;
use tabwire_proto::extension_id::EXTENSION_ID;
use tabwire_proto::runtime_dir::live_hosts;
use tabwire_proto::wire::{self, Hello, Message, Request, Response};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio_util::codec::{FramedRead, FramedWrite};

use crate::bins::{self, Scratch};
use crate::mcp::Mcp;

/// A private runtime directory (0700, short path), removed when dropped.
pub struct Sandbox {
    pub dir: Scratch,
}

impl Default for Sandbox {
    fn default() -> Sandbox {
        Sandbox { dir: bins::scratch_dir("twb") }
    }
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox::default()
    }

    /// `tabwire <args>` in this sandbox; its stdout, stderr and exit status.
    pub async fn tabwire(&self, args: &[&str]) -> std::process::Output {
        Command::new(bins::bin("tabwire"))
            .args(args)
            .env("TABWIRE_RUNTIME_DIR", &*self.dir)
            .env_remove("TABWIRE_BROWSER")
            .output()
            .await
            .expect("run tabwire")
    }

    /// A `tabwire mcp` session, after the MCP handshake.
    pub async fn mcp(&self) -> Mcp {
        Mcp::start(&self.dir).await
    }

    /// Start the real host, as Chrome would, with the test as its browser. It is attached
    /// (its socket is listed) once `hello` has been sent.
    pub async fn host(&self) -> FakeBrowser {
        let mut host = Command::new(bins::bin("tabwire-host"));
        if std::env::var_os("TABWIRE_LOG").is_none() {
            host.env("TABWIRE_LOG", "warn"); // its info lines would bury the tests' output
        }
        let mut child = host
            .arg(format!("chrome-extension://{EXTENSION_ID}/"))
            .env("TABWIRE_RUNTIME_DIR", &*self.dir)
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
    pub async fn hello(&mut self, env: &Sandbox, browser: &str, profile: &str) {
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

    /// End the host at once, as a crash would (SIGKILL; `TerminateProcess` on Windows).
    pub fn kill(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// A tab as the extension reports it.
pub fn tab(id: i64, url: &str, title: &str, active: bool) -> Value {
    let allowed = url.starts_with("http://127.0.0.1:") || url.starts_with("http://localhost:");
    json!({ "id": id, "window_id": 1, "url": url, "title": title, "active": active,
            "status": "complete", "window_focused": true, "allowed": allowed, "shared": false })
}
