//! Benchmark of the real `tabwire-host` binary. Prints numbers; asserts nothing.
//!
//!     cargo bench -p tabwire-bridge --bench host_relay
//!
//! This process plays both ends: a bridge on the host's socket, and the browser on the host's
//! stdio (it reads the host's frames from its stdout and writes answers to its stdin). Measured:
//! - round trip bridge → host → browser stand-in → host → bridge for small requests, against
//!   the floor: the same path through a trivial forwarder process (unix socket ⇄ pipes, raw
//!   frames, no JSON) with a raw echo;
//! - throughput of 512 KiB and 8 MiB messages each way (toward the browser through chunking);
//! - start-up (spawn → socket connectable) and the host's peak RSS.

use std::io::{BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// The real `tabwire-host`, a binary of this package.
fn host_binary() -> &'static str {
    env!("CARGO_BIN_EXE_tabwire-host")
}
const ORIGIN: &str = "chrome-extension://cmbolhpnohkddmklmlbjnpdpmgmdgkfi/";
const FORWARDER_ENV: &str = "TABWIRE_BENCH_FORWARDER";
const ROUND_TRIPS: usize = 10_000;
const WARMUP: usize = 1_000;

fn main() {
    if let Some(path) = std::env::var_os(FORWARDER_ENV) {
        forwarder(Path::new(&path));
        return;
    }
    let root = PathBuf::from(format!("/tmp/twbench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
        .create(&root)
        .unwrap();
    println!(
        "tabwire-host benchmark ({} build of the host, {} CPUs)",
        if cfg!(debug_assertions) { "debug" } else { "release" },
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    );

    startup(&root);

    let host = Host::start(&root);
    let mut bridge = host.connect();
    let hello = read_frame(&mut bridge).expect("hello");
    assert!(hello.starts_with(br#"{"type":"hello""#));

    let payload =
        br#"{"type":"request","id":"17","method":"echo","params":{"n":1,"text":"hello"}}"#;
    let relay = round_trips(&mut bridge, payload);
    let rss_small = host.vm_hwm_kib();

    let floor = {
        let fwd = Forwarder::start(&root);
        let mut client = fwd.connect();
        let floor = round_trips(&mut client, payload);
        drop(client);
        fwd.stop();
        floor
    };
    println!("\nround trip, {ROUND_TRIPS} sequential small requests (after {WARMUP} warm-up):");
    print_latency("  through tabwire-host      ", &relay);
    print_latency("  floor (raw forwarder)     ", &floor);
    println!(
        "  ratio host/floor          p50 {:.2}x   p99 {:.2}x   (target <= 2x)",
        pct(&relay, 50.0) / pct(&floor, 50.0),
        pct(&relay, 99.0) / pct(&floor, 99.0)
    );

    println!("\nthroughput (MB = 10^6 bytes; payload bytes only):");
    for (size, count) in [(512 * 1024, 200), (8 * 1024 * 1024, 16)] {
        let to_browser = toward_browser(&host, &mut bridge, size, count);
        let to_bridge = toward_bridge(&host, &mut bridge, size, count);
        println!(
            "  {:>5} KiB x {count:>3}: bridge -> browser (chunked: {}) {:>7.0} MB/s   browser -> bridge {:>7.0} MB/s",
            size / 1024,
            if size > 1024 * 1024 { "yes" } else { "no" },
            to_browser,
            to_bridge
        );
    }
    let rss_big = host.vm_hwm_kib();
    println!("\npeak RSS of tabwire-host (VmHWM):");
    println!(
        "  after the small round trips: {:>6.2} MiB   (target <= 5 MiB)",
        rss_small as f64 / 1024.0
    );
    println!("  after the 8 MiB messages:    {:>6.2} MiB", rss_big as f64 / 1024.0);

    drop(bridge);
    host.stop();
    let _ = std::fs::remove_dir_all(&root);
}

// ---------------------------------------------------------------------------------------------
// Frames

fn read_frame(r: &mut impl Read) -> Option<Vec<u8>> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).ok()?;
    let mut buf = vec![0u8; u32::from_ne_bytes(len) as usize];
    r.read_exact(&mut buf).ok()?;
    Some(buf)
}

fn framed(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + payload.len());
    out.extend_from_slice(&(payload.len() as u32).to_ne_bytes());
    out.extend_from_slice(payload);
    out
}

// ---------------------------------------------------------------------------------------------
// The host, with this process as its browser

struct Host {
    child: Child,
    stdin: Arc<Mutex<ChildStdin>>,
    /// Sizes of the big messages the browser stand-in received (`sink` requests, chunked or not).
    received: mpsc::Receiver<usize>,
    socket: PathBuf,
}

impl Host {
    fn spawn(root: &Path) -> Child {
        Command::new(host_binary())
            .arg(ORIGIN)
            .env("TABWIRE_RUNTIME_DIR", root)
            .env_remove("TABWIRE_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("tabwire-host starts")
    }

    fn start(root: &Path) -> Host {
        let mut child = Self::spawn(root);
        let socket = root.join(format!("hosts/{}.sock", child.id()));
        let stdin = Arc::new(Mutex::new(child.stdin.take().unwrap()));
        let stdout = child.stdout.take().unwrap();
        let (tx, received) = mpsc::channel();
        let answers = stdin.clone();
        std::thread::spawn(move || browser_stand_in(stdout, answers, tx));
        let hello = br#"{"type":"hello","protocol":1,"extension_version":"bench","browser":"chromium","profile":"bench"}"#;
        stdin.lock().unwrap().write_all(&framed(hello)).unwrap();
        wait_connectable(&socket, Duration::from_secs(10)).expect("host listens");
        Host { child, stdin, received, socket }
    }

    /// A bridge that subscribes to events, as `tabwire mcp` does.
    fn connect(&self) -> UnixStream {
        let mut stream = UnixStream::connect(&self.socket).unwrap();
        stream.write_all(&framed(br#"{"type":"hello","protocol":1,"subscribe":true}"#)).unwrap();
        stream
    }

    fn vm_hwm_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// SIGTERM (the browser stand-in thread still holds stdin), then wait for the exit.
    fn stop(mut self) {
        // SAFETY: signalling our own child by its pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

/// The browser: answers `echo` requests with their params, byte-wise (no JSON parser, as a
/// fast extension would look), and counts the bytes of other requests and chunk streams.
fn browser_stand_in(
    stdout: ChildStdout,
    stdin: Arc<Mutex<ChildStdin>>,
    received: mpsc::Sender<usize>,
) {
    let mut stdout = BufReader::with_capacity(1 << 20, stdout);
    let mut chunked = 0usize;
    while let Some(frame) = read_frame(&mut stdout) {
        if frame.starts_with(br#"{"type":"request""#) {
            if let Some(answer) = echo_answer(&frame) {
                stdin.lock().unwrap().write_all(&answer).unwrap();
            } else {
                let _ = received.send(frame.len());
            }
        } else if frame.starts_with(br#"{"type":"chunk""#) {
            chunked += frame.len();
            // {"type":"chunk","id":"c1","index":3,"count":9,"data":...
            let (index, count) = chunk_position(&frame);
            if index + 1 == count {
                let _ = received.send(chunked);
                chunked = 0;
            }
        }
    }
}

/// `{"type":"response","id":<id>,"result":<params>}` for an `echo` request, as one frame.
fn echo_answer(frame: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(frame).ok()?;
    let rest = text.strip_prefix(r#"{"type":"request","id":""#)?;
    let (id, rest) = rest.split_once('"')?;
    let params = rest.strip_prefix(r#","method":"echo","params":"#)?.strip_suffix('}')?;
    let body = format!(r#"{{"type":"response","id":"{id}","result":{params}}}"#);
    Some(framed(body.as_bytes()))
}

fn chunk_position(frame: &[u8]) -> (usize, usize) {
    let head = std::str::from_utf8(&frame[..frame.len().min(120)]).unwrap_or("");
    let num = |key: &str| -> usize {
        let at = head.find(key).expect("chunk field") + key.len();
        head[at..].chars().take_while(char::is_ascii_digit).collect::<String>().parse().unwrap()
    };
    (num(r#""index":"#), num(r#""count":"#))
}

// ---------------------------------------------------------------------------------------------
// The floor: the same path without tabwire-host — a forwarder process that copies raw frames
// between a unix socket and its stdio, and a raw echo on its stdio.

struct Forwarder {
    child: Child,
    socket: PathBuf,
}

impl Forwarder {
    fn start(root: &Path) -> Forwarder {
        let socket = root.join("floor.sock");
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env(FORWARDER_ENV, &socket)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::with_capacity(1 << 20, child.stdout.take().unwrap());
        // Raw echo: whatever frame comes out goes back in, unread.
        std::thread::spawn(move || {
            while let Some(frame) = read_frame(&mut stdout) {
                if stdin.write_all(&framed(&frame)).is_err() {
                    break;
                }
            }
        });
        wait_connectable(&socket, Duration::from_secs(10)).expect("forwarder listens");
        Forwarder { child, socket }
    }

    fn connect(&self) -> UnixStream {
        UnixStream::connect(&self.socket).unwrap()
    }

    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The forwarder child: one connection, one thread per direction, frames copied as bytes.
fn forwarder(socket: &Path) {
    let listener = UnixListener::bind(socket).unwrap();
    // The probe connection from `wait_connectable`, then the real one.
    let (_probe, _) = listener.accept().unwrap();
    let (conn, _) = listener.accept().unwrap();
    let mut from_socket = conn.try_clone().unwrap();
    let mut to_socket = conn;
    std::thread::spawn(move || {
        let mut stdout = std::io::stdout().lock();
        while let Some(frame) = read_frame(&mut from_socket) {
            stdout.write_all(&framed(&frame)).unwrap();
            stdout.flush().unwrap();
        }
    });
    let mut stdin = std::io::stdin().lock();
    while let Some(frame) = read_frame(&mut stdin) {
        to_socket.write_all(&framed(&frame)).unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// Measurements

fn wait_connectable(socket: &Path, patience: Duration) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < patience {
        if UnixStream::connect(socket).is_ok() {
            return Some(start.elapsed());
        }
        std::hint::spin_loop();
    }
    None
}

/// Sequential request → response round trips; the durations, sorted.
fn round_trips(conn: &mut UnixStream, request: &[u8]) -> Vec<Duration> {
    let frame = framed(request);
    let mut times = Vec::with_capacity(ROUND_TRIPS);
    for i in 0..WARMUP + ROUND_TRIPS {
        let t = Instant::now();
        conn.write_all(&frame).unwrap();
        let reply = read_frame(conn).expect("a reply");
        let took = t.elapsed();
        debug_assert!(!reply.is_empty());
        if i >= WARMUP {
            times.push(took);
        }
    }
    times.sort();
    times
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p / 100.0).round() as usize;
    sorted[i].as_secs_f64() * 1e6
}

fn print_latency(label: &str, t: &[Duration]) {
    println!(
        "{label}p50 {:>6.1} µs   p99 {:>6.1} µs   max {:>7.1} µs",
        pct(t, 50.0),
        pct(t, 99.0),
        pct(t, 100.0)
    );
}

/// MB/s of `count` requests of `size` payload bytes from the bridge until the browser
/// stand-in has all of them.
fn toward_browser(host: &Host, bridge: &mut UnixStream, size: usize, count: usize) -> f64 {
    let body =
        format!(r#"{{"type":"request","id":"s","method":"sink","params":"{}"}}"#, "a".repeat(size));
    let frame = framed(body.as_bytes());
    let mut writer = bridge.try_clone().unwrap();
    let start = Instant::now();
    let sender = std::thread::spawn(move || {
        for _ in 0..count {
            writer.write_all(&frame).unwrap();
        }
    });
    let mut bytes = 0;
    for _ in 0..count {
        bytes += host.received.recv_timeout(Duration::from_secs(60)).expect("message arrives");
    }
    let took = start.elapsed();
    sender.join().unwrap();
    assert!(bytes >= size * count);
    (size * count) as f64 / took.as_secs_f64() / 1e6
}

/// MB/s of `count` events of `size` payload bytes from the browser until the bridge has them.
fn toward_bridge(host: &Host, bridge: &mut UnixStream, size: usize, count: usize) -> f64 {
    let body = format!(r#"{{"type":"event","event":"bench","data":"{}"}}"#, "b".repeat(size));
    let frame = framed(body.as_bytes());
    let stdin = host.stdin.clone();
    let start = Instant::now();
    let sender = std::thread::spawn(move || {
        for _ in 0..count {
            stdin.lock().unwrap().write_all(&frame).unwrap();
        }
    });
    let mut reader = BufReader::with_capacity(1 << 20, &*bridge);
    let mut got = 0;
    while got < count {
        let frame = read_frame(&mut reader).expect("event arrives");
        if frame.starts_with(br#"{"type":"event","event":"bench""#) {
            got += 1;
        }
    }
    let took = start.elapsed();
    sender.join().unwrap();
    (size * count) as f64 / took.as_secs_f64() / 1e6
}

/// Spawn → socket connectable, over several starts; also what spawning a process costs.
fn startup(root: &Path) {
    let runs = 20;
    let mut ready = Vec::new();
    let mut rss = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let mut child = Host::spawn(root);
        let socket = root.join(format!("hosts/{}.sock", child.id()));
        wait_connectable(&socket, Duration::from_secs(10)).expect("host listens");
        ready.push(start.elapsed());
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
        if let Some(l) = status.lines().find(|l| l.starts_with("VmHWM:")) {
            rss.push(l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap());
        }
        drop(child.stdin.take());
        let _ = child.wait();
    }
    let mut spawn_only = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let _ = Command::new("/bin/true").status();
        spawn_only.push(start.elapsed());
    }
    ready.sort();
    spawn_only.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("\nstart-up, {runs} runs:");
    println!(
        "  spawn -> socket connectable   median {:.2} ms   min {:.2} ms   (target <= 5 ms)",
        ms(ready[runs / 2]),
        ms(ready[0])
    );
    println!(
        "  for scale: spawn+exit of /bin/true  median {:.2} ms   min {:.2} ms",
        ms(spawn_only[runs / 2]),
        ms(spawn_only[0])
    );
    rss.sort();
    println!(
        "  VmHWM right after start       median {:.2} MiB",
        rss[rss.len() / 2] as f64 / 1024.0
    );
}
