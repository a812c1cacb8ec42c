//! The real `tabwire-host` alone, driven synchronously: piped stdio stands in for the browser
//! and a private runtime directory holds its socket; the test talks to it as the browser
//! (frames on its stdin/stdout) and as bridges (its socket: a named pipe on Windows, read
//! through [`crate::pipe`]). For the bridge against a host, see [`crate::fake_browser`].

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};

use serde_json::Value;
use tabwire_proto::extension_id::EXTENSION_ID;

use crate::bins::{self, Scratch};

/// A bridge's connection to a host: its Unix socket, or on Windows its named pipe.
#[cfg(unix)]
pub type Channel = std::os::unix::net::UnixStream;
#[cfg(windows)]
pub type Channel = crate::pipe::PipeStream;

/// How long any single expected thing may take before the test fails.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// The real `tabwire-host`.
pub fn host_binary() -> PathBuf {
    bins::bin("tabwire-host")
}

/// A frame's length prefix.
pub fn header(len: usize) -> [u8; 4] {
    (len as u32).to_ne_bytes()
}

/// Read one frame; `None` at a clean end of stream.
pub fn read_frame(r: &mut impl Read) -> std::io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let mut buf = vec![0u8; u32::from_ne_bytes(len) as usize];
    r.read_exact(&mut buf)?;
    Ok(Some(buf))
}

pub fn write_frame(w: &mut impl Write, payload: &[u8]) -> std::io::Result<()> {
    w.write_all(&header(payload.len()))?;
    w.write_all(payload)?;
    w.flush()
}

/// The hello the extension sends first.
pub fn extension_hello() -> String {
    format!(
        r#"{{"type":"hello","protocol":1,"extension_version":"0.1.0","extension_id":"{EXTENSION_ID}","browser":"chromium","profile":"test-profile"}}"#
    )
}

/// A running host with its stdio held by the test.
pub struct Host {
    pub child: Child,
    stdin: Option<ChildStdin>,
    frames: mpsc::Receiver<Vec<u8>>,
    stderr: Arc<Mutex<String>>,
    pub runtime: Scratch,
    pub pid: u32,
    socket: OnceLock<PathBuf>,
}

/// How to start a host.
pub struct HostOptions {
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Wait until the socket is bound and the record written.
    pub wait_ready: bool,
}

impl Default for HostOptions {
    fn default() -> Self {
        Self {
            args: vec![format!("chrome-extension://{EXTENSION_ID}/")],
            env: Vec::new(),
            wait_ready: true,
        }
    }
}

impl Host {
    /// Start a host for the tabwire extension and wait until it listens.
    pub fn start() -> Host {
        Self::spawn(HostOptions::default(), bins::scratch_dir("host"))
    }

    /// Start a host, say hello as the extension, and return it.
    pub fn start_with_hello() -> Host {
        let mut host = Self::start();
        host.send(&extension_hello());
        host
    }

    pub fn spawn(opts: HostOptions, runtime: Scratch) -> Host {
        let mut cmd = Command::new(host_binary());
        cmd.args(&opts.args)
            .env("TABWIRE_RUNTIME_DIR", &*runtime)
            .env_remove("TABWIRE_LOG")
            .env_remove("TABWIRE_ALLOWED_EXTENSIONS")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in &opts.env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("the tabwire-host binary starts");
        let pid = child.id();
        let stdin = child.stdin.take();
        let mut stdout = child.stdout.take().unwrap();
        let (tx, frames) = mpsc::channel();
        std::thread::spawn(move || {
            while let Ok(Some(frame)) = read_frame(&mut stdout) {
                if tx.send(frame).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut err_pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let host = Host { child, stdin, frames, stderr, runtime, pid, socket: OnceLock::new() };
        if opts.wait_ready {
            host.wait_ready();
        }
        host
    }

    pub fn hosts_dir(&self) -> PathBuf {
        self.runtime.join("hosts")
    }

    /// Where bridges connect: `hosts/<pid>.sock` on Unix; on Windows the named pipe the
    /// host's record names (its name has a random part: `runtime_dir::endpoint`), read once,
    /// so that it is known after the host removed its record.
    pub fn socket(&self) -> PathBuf {
        let path = self.socket.get_or_init(|| {
            #[cfg(unix)]
            return self.hosts_dir().join(format!("{}.sock", self.pid));
            #[cfg(windows)]
            {
                let text = std::fs::read_to_string(self.record()).unwrap_or_else(|e| {
                    panic!("the host's record {} names its pipe: {e}", self.record().display())
                });
                let record: tabwire_proto::runtime_dir::HostRecord =
                    serde_json::from_str(&text).expect("a host record");
                record.socket
            }
        });
        path.clone()
    }

    /// Whether the host's socket is there: the file on Unix, the pipe on Windows
    /// ([`crate::pipe::exists`]).
    pub fn listening(&self) -> bool {
        #[cfg(unix)]
        return self.socket().exists();
        #[cfg(windows)]
        return crate::pipe::exists(&self.socket());
    }

    pub fn record(&self) -> PathBuf {
        self.hosts_dir().join(format!("{}.json", self.pid))
    }

    /// Wait until the host's record is written and it listens (on Windows the record names
    /// its pipe).
    pub fn wait_ready(&self) {
        let deadline = Instant::now() + PATIENCE;
        while !(self.record().exists() && self.listening()) {
            assert!(Instant::now() < deadline, "host never got ready; stderr:\n{}", self.stderr());
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Write one frame to the host's stdin, as the browser.
    pub fn send(&mut self, json: &str) {
        self.send_raw(json.as_bytes());
    }

    pub fn send_raw(&mut self, payload: &[u8]) {
        write_frame(self.stdin.as_mut().expect("stdin open"), payload).unwrap();
    }

    /// Write bytes without a frame around them.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Close stdin, as the browser does when it closes the port.
    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// The next frame the host wrote to the browser, raw.
    pub fn recv_frame(&self) -> Vec<u8> {
        self.frames.recv_timeout(PATIENCE).unwrap_or_else(|_| {
            panic!("no frame from the host to the browser; stderr:\n{}", self.stderr())
        })
    }

    /// The next message to the browser that is not the host's own news: `host_status`, and the
    /// fast link's address (`fast_link`), which this stand-in for the extension ignores as an
    /// extension without the link would; [`Host::recv_fast_link`] reads it.
    pub fn recv(&self) -> Value {
        loop {
            let v = parse(&self.recv_frame());
            if !own_news(&v) {
                return v;
            }
        }
    }

    /// The fast link's URL, from the `fast_link` event the host sends first (specs/protocol.md,
    /// "The fast link"); call it before anything else reads from the host.
    pub fn recv_fast_link(&self) -> String {
        let v = parse(&self.recv_frame());
        assert_eq!(v["event"], "fast_link", "the host's first message names the link: {v}");
        v["data"]["url"].as_str().expect("a url").to_owned()
    }

    /// The next `host_status` event's data, skipping anything else.
    pub fn recv_status(&self) -> Value {
        loop {
            let v = parse(&self.recv_frame());
            if v["event"] == "host_status" {
                return v["data"].clone();
            }
        }
    }

    /// Wait until a `host_status` says `bridges` bridges are attached.
    pub fn wait_bridges(&self, bridges: u64) {
        while self.recv_status()["bridges"] != bridges {}
    }

    /// Anything the host wrote to the browser within `wait`, other than its own news (`recv`).
    pub fn try_recv(&self, wait: Duration) -> Option<Value> {
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = parse(&self.frames.recv_timeout(left).ok()?);
            if !own_news(&v) {
                return Some(v);
            }
        }
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Wait until the host's stderr contains `needle`.
    pub fn wait_for_log(&self, needle: &str) {
        let deadline = Instant::now() + PATIENCE;
        while !self.stderr().contains(needle) {
            assert!(
                Instant::now() < deadline,
                "host never logged {needle:?}; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Make the host process everything sent so far on stdin: a response to an unknown id is
    /// logged as dropped, and the host reads stdin in order.
    pub fn sync_browser(&mut self, tag: &str) {
        let id = format!("sync-{tag}");
        self.send(&format!(r#"{{"type":"response","id":"{id}","result":null}}"#));
        self.wait_for_log(&format!("id={id}"));
    }

    /// Wait for the process to end; `None` if it did not within `wait`.
    pub fn wait_exit(&mut self, wait: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + wait;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// Connect a bridge to this host's socket that subscribes to events, as `tabwire mcp` does.
    pub fn connect(&self) -> Bridge {
        let mut bridge = Bridge::connect(&self.socket());
        bridge.send(r#"{"type":"hello","protocol":1,"subscribe":true}"#);
        bridge
    }

    /// Connect a bridge that only asks questions, as `tabwire status` does: no events.
    pub fn connect_probe(&self) -> Bridge {
        Bridge::connect(&self.socket())
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        // Only our own child, by its handle.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the host says to the extension about itself, not on behalf of a bridge.
fn own_news(v: &Value) -> bool {
    v["type"] == "event" && (v["event"] == "host_status" || v["event"] == "fast_link")
}

pub fn parse(frame: &[u8]) -> Value {
    serde_json::from_slice(frame)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(frame)))
}

/// A bridge's connection to the host.
pub struct Bridge {
    pub stream: Channel,
}

impl Bridge {
    pub fn connect(path: &Path) -> Bridge {
        let stream = Channel::connect(path).expect("the host's socket accepts");
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        Bridge { stream }
    }

    pub fn send(&mut self, json: &str) {
        write_frame(&mut self.stream, json.as_bytes()).unwrap();
    }

    pub fn send_bytes(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    pub fn request(&mut self, id: &str, method: &str, params: &str) {
        self.send(&format!(
            r#"{{"type":"request","id":"{id}","method":"{method}","params":{params}}}"#
        ));
    }

    /// The next message from the host; panics on timeout or end of stream.
    pub fn recv(&mut self) -> Value {
        match read_frame(&mut self.stream) {
            Ok(Some(frame)) => parse(&frame),
            Ok(None) => panic!("the host closed the bridge's connection"),
            Err(e) => panic!("no message from the host: {e}"),
        }
    }

    /// Connect and read the host's hello.
    pub fn recv_hello(&mut self) -> Value {
        let hello = self.recv();
        assert_eq!(hello["type"], "hello", "first message is the hello: {hello}");
        hello
    }

    /// Whatever arrives within `wait`; `None` when nothing does.
    pub fn try_recv(&mut self, wait: Duration) -> Option<Value> {
        self.stream.set_read_timeout(Some(wait)).unwrap();
        let got = read_frame(&mut self.stream);
        self.stream.set_read_timeout(Some(PATIENCE)).unwrap();
        match got {
            Ok(Some(frame)) => Some(parse(&frame)),
            _ => None,
        }
    }

    /// Whether the host closed this connection: end of stream before any further message.
    pub fn is_closed(&mut self) -> bool {
        match read_frame(&mut self.stream) {
            Ok(None) => true,
            Ok(Some(_)) => false,
            Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
        }
    }
}
