//! Fixture pages on 127.0.0.1, behind a random path token like everything we serve on
//! loopback. They stand in for the websites a user works with, which cannot be reached here.

use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A static file server for `testkit/fixtures/`, on a thread of its own (so it works from sync
/// and async tests alike) until the process ends.
pub struct Fixtures {
    base: String,
    beacons: Arc<Mutex<Vec<String>>>,
    chats: Arc<Mutex<Vec<(String, String)>>>,
    last_chunks: Arc<Mutex<Vec<f64>>>,
}

impl Fixtures {
    pub fn serve() -> Fixtures {
        Self::serve_on("127.0.0.1")
    }

    /// Serve on another loopback address, e.g. `127.0.0.2`: another origin, which tabwire
    /// does not allow by default (a stand-in for any website).
    pub fn serve_on(ip: &str) -> Fixtures {
        let token = format!("{:016x}", rand_u64());
        let listener =
            std::net::TcpListener::bind((ip, 0)).unwrap_or_else(|e| panic!("bind {ip}:0: {e}"));
        let beacons: Arc<Mutex<Vec<String>>> = Arc::default();
        let heard = beacons.clone();
        let chats: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
        let asked = chats.clone();
        let last_chunks: Arc<Mutex<Vec<f64>>> = Arc::default();
        let streamed = last_chunks.clone();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let dir = crate::bins::repo_root().join("testkit/fixtures");
        let prefix = format!("/{token}/");
        std::thread::spawn(move || {
            let runtime =
                tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async move {
                let listener = TcpListener::from_std(listener).unwrap();
                loop {
                    let Ok((mut sock, _)) = listener.accept().await else { return };
                    let dir = dir.clone();
                    let prefix = prefix.clone();
                    let heard = heard.clone();
                    let asked = asked.clone();
                    let streamed = streamed.clone();
                    tokio::spawn(async move {
                        let mut buf = vec![0u8; 8192];
                        let Ok(n) = sock.read(&mut buf).await else { return };
                        let head = String::from_utf8_lossy(&buf[..n]);
                        let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                        if path == format!("{prefix}chat") {
                            buf.truncate(n);
                            return chat(&mut sock, buf, &asked, &streamed).await;
                        }
                        if let Some(query) = path.strip_prefix(&format!("{prefix}beacon?")) {
                            heard.lock().unwrap().push(query.to_owned());
                        }
                        if let Some(query) = path.strip_prefix(&format!("{prefix}api?")) {
                            return api(&mut sock, query).await;
                        }
                        if let Some(query) = path.strip_prefix(&format!("{prefix}download?")) {
                            return download(&mut sock, query).await;
                        }
                        // `redirect?FILE?QUERY`: a 302 to that fixture, as sites redirect.
                        if let Some(to) = path.strip_prefix(&format!("{prefix}redirect?")) {
                            let head = format!(
                                "HTTP/1.1 302 Found\r\nlocation: {prefix}{to}\r\n\
                                 content-length: 0\r\nconnection: close\r\n\r\n"
                            );
                            let _ = sock.write_all(head.as_bytes()).await;
                            return;
                        }
                        // A client asking for the broken build (`x-fixture-variant: broken`)
                        // gets `NAME.broken.EXT` where there is one: how a test shows that an
                        // exported test catches a regression (testkit/fixtures/dom/shop.html).
                        let broken = head.lines().any(|l| {
                            l.to_ascii_lowercase().replace(' ', "") == "x-fixture-variant:broken"
                        });
                        let path = match path.rsplit_once('.') {
                            Some((stem, ext)) if broken => {
                                let variant = format!("{stem}.broken.{ext}");
                                let file = variant.strip_prefix(&prefix).unwrap_or("");
                                if dir.join(file).is_file() { variant } else { path }
                            }
                            _ => path,
                        };
                        let (status, body, mime) = respond(&dir, &prefix, &path);
                        let header = format!(
                            "HTTP/1.1 {status}\r\ncontent-type: {mime}\r\ncontent-length: {}\r\n\
                             cache-control: no-store\r\nconnection: close\r\n\r\n",
                            body.len()
                        );
                        let _ = sock.write_all(header.as_bytes()).await;
                        let _ = sock.write_all(&body).await;
                    });
                }
            });
        });
        Fixtures { base: format!("http://{ip}:{port}/{token}/"), beacons, chats, last_chunks }
    }

    /// What the fake chat model (`chat`, see [`chat_answer`]) was asked, with what it answered,
    /// in order: the server's own record of a conversation.
    pub fn chats(&self) -> Vec<(String, String)> {
        self.chats.lock().unwrap().clone()
    }

    /// When the fake chat model's last chunk of each whole answer went out (ms since the epoch,
    /// this machine's wall clock, as the Python apps' fake model stamps its last word:
    /// testkit/fixtures/apps/fake_model.py), in order: a benchmark times "completed" from it.
    pub fn last_chunks(&self) -> Vec<f64> {
        self.last_chunks.lock().unwrap().clone()
    }

    /// `http://ip:port`, the origin of these pages.
    pub fn origin(&self) -> String {
        self.base.split('/').take(3).collect::<Vec<_>>().join("/")
    }

    /// Wait (up to 10 s) for a page's beacon (`beacon?page=<name>&…`, see `probe.html`) and
    /// return its query, taking it from the list.
    pub async fn beacon(&self, page: &str) -> String {
        let want = format!("page={page}&");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            {
                let mut heard = self.beacons.lock().unwrap();
                if let Some(at) = heard.iter().position(|q| q.starts_with(&want)) {
                    return heard.remove(at);
                }
            }
            assert!(std::time::Instant::now() < deadline, "page {page:?} never reported");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// The URL of a fixture file, e.g. `url("app.html?delay=5")`.
    pub fn url(&self, file: &str) -> String {
        format!("{}{file}", self.base)
    }
}

fn respond(dir: &Path, prefix: &str, path: &str) -> (&'static str, Vec<u8>, &'static str) {
    let Some(rest) = path.strip_prefix(prefix) else {
        return ("404 Not Found", b"not found".to_vec(), "text/plain");
    };
    let file = rest.split(['?', '#']).next().unwrap_or("");
    // A file of testkit/fixtures/ or of one folder in it (`extra/…`), or below `apps/` (the real
    // apps' pages and the packages they load from `apps/node_modules/`), nothing else.
    if file.contains("..")
        || (file.matches('/').count() > 1 && !file.starts_with("apps/"))
        || file.starts_with('/')
        || file.is_empty()
    {
        return ("404 Not Found", b"not found".to_vec(), "text/plain");
    }
    match std::fs::read(dir.join(file)) {
        Ok(body) => {
            let mime = if file.ends_with(".html") {
                "text/html; charset=utf-8"
            } else if file.ends_with(".js") {
                "text/javascript"
            } else if file.ends_with(".json") {
                "application/json"
            } else if file.ends_with(".css") {
                "text/css"
            } else {
                "application/octet-stream"
            };
            ("200 OK", body, mime)
        }
        Err(_) => ("404 Not Found", b"not found".to_vec(), "text/plain"),
    }
}

/// `api?status=204&ms=150`: answers `status` (default 200) with an empty body after `ms`
/// milliseconds — the page's fetch/XHR that the dom tools wait for.
async fn api(sock: &mut tokio::net::TcpStream, query: &str) {
    let arg = |name: &str| {
        query.split('&').find_map(|kv| kv.strip_prefix(&format!("{name}=")))?.parse::<u64>().ok()
    };
    let status = arg("status").unwrap_or(200);
    tokio::time::sleep(std::time::Duration::from_millis(arg("ms").unwrap_or(0))).await;
    let body = if status == 204 { "" } else { "{\"ok\":true}" };
    let head = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         cache-control: no-store\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = sock.write_all(head.as_bytes()).await;
}

/// The fake model's answer to `question`: a few lines of markdown (a list, a code span) that
/// name the question, so an answer read back can be told from any other. A question that asks
/// for a long answer gets 300 words, which stream for several seconds: time enough to stop it
/// (as the Python apps' fake model, testkit/fixtures/apps/fake_model.py).
pub fn chat_answer(question: &str) -> String {
    if question.to_lowercase().contains("long") {
        let words: Vec<String> = (1..=300).map(|i| format!("word{i}")).collect();
        return format!("You asked: {question} Here it comes: {}.", words.join(" "));
    }
    format!(
        "You asked: {question}\n\nOur opening hours:\n\n- Monday to Friday: 9:00 to 17:00\n\
         - Saturday: 10:00 to 14:00\n\nCall `+47 555 0100` for anything else."
    )
}

/// `POST chat` with a JSON body `{"messages": [{"role": "user", "text": …}, …]}` (what Deep
/// Chat sends): the last user message is recorded with [`chat_answer`], which is streamed back
/// as server-sent events `data: {"text": chunk}`, a few characters every 15 ms, as a model
/// streams tokens; once the whole answer is out, when its last chunk went is recorded too.
async fn chat(
    sock: &mut tokio::net::TcpStream,
    mut got: Vec<u8>,
    asked: &Mutex<Vec<(String, String)>>,
    last_chunks: &Mutex<Vec<f64>>,
) {
    // The body may come after the head, in reads of its own.
    let body = loop {
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
            let len = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if got.len() >= end + 4 + len {
                break got[end + 4..end + 4 + len].to_vec();
            }
        }
        let mut more = vec![0u8; 8192];
        match sock.read(&mut more).await {
            Ok(0) | Err(_) => return,
            Ok(n) => got.extend_from_slice(&more[..n]),
        }
    };
    let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let question = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["text"].as_str())
        .unwrap_or_default()
        .to_owned();
    let answer = chat_answer(&question);
    asked.lock().unwrap().push((question, answer.clone()));
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-store\r\n\
                connection: close\r\n\r\n";
    if sock.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let chars: Vec<char> = answer.chars().collect();
    for chunk in chars.chunks(6) {
        tokio::time::sleep(std::time::Duration::from_millis(15)).await;
        let event = serde_json::json!({ "text": chunk.iter().collect::<String>() });
        if sock.write_all(format!("data: {event}\n\n").as_bytes()).await.is_err() {
            return;
        }
    }
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    last_chunks.lock().unwrap().push(now.map_or(0.0, |d| d.as_secs_f64() * 1000.0));
}

/// `download?name=r.csv&bytes=N&attach=1`: a generated CSV of `bytes` bytes (default 64),
/// [`generated`], with `Content-Disposition: attachment` when `attach=1` — what a site's export
/// button answers.
async fn download(sock: &mut tokio::net::TcpStream, query: &str) {
    let arg = |name: &str| query.split('&').find_map(|kv| kv.strip_prefix(&format!("{name}=")));
    let bytes = arg("bytes").and_then(|b| b.parse().ok()).unwrap_or(64);
    let name = arg("name").unwrap_or("export.csv");
    let body = generated(bytes);
    let disposition = if arg("attach") == Some("1") {
        format!("content-disposition: attachment; filename=\"{name}\"\r\n")
    } else {
        String::new()
    };
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/csv\r\ncontent-length: {}\r\n{disposition}\
         cache-control: no-store\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = sock.write_all(head.as_bytes()).await;
    let _ = sock.write_all(&body).await;
}

/// The body `download?bytes=N` answers: CSV rows `row,<n>`, cut to exactly `bytes` bytes.
pub fn generated(bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + 32);
    let mut n = 0u64;
    while out.len() < bytes {
        out.extend_from_slice(format!("row,{n}\n").as_bytes());
        n += 1;
    }
    out.truncate(bytes);
    out
}

fn rand_u64() -> u64 {
    let mut bytes = [0u8; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .expect("/dev/urandom");
    u64::from_ne_bytes(bytes)
}

/// A hand-written adapter for Deep Chat (`testkit/fixtures/apps/deepchat.html`), whose box,
/// buttons and bubbles all live in the `<deep-chat>` element's open shadow root.
pub fn deep_chat_adapter() -> serde_json::Value {
    serde_json::json!({
        "name": "deep-chat",
        "matches": ["http://127.0.0.1:*/*deepchat.html*"],
        "input": "#text-input",
        "submit": ".input-button.submit-button",
        "user_message": ".message-bubble.user-message-text",
        "assistant_message": ".message-bubble.ai-message-text",
        "generating": "#stop-icon",
        "stop": ".input-button:has(#stop-icon)",
        "stable_ms": 300
    })
}

/// A JavaScript expression true once Deep Chat (`testkit/fixtures/apps/deepchat.html`) has
/// rendered its box, in its shadow root.
pub const DEEP_CHAT_READY: &str =
    "!!document.querySelector('deep-chat')?.shadowRoot?.querySelector('#text-input')";

/// The site adapter of the fixture chat (`testkit/fixtures/chat.html`): which elements are the
/// box, the button, the bubbles and the signs of an answer in progress.
pub fn chat_adapter() -> serde_json::Value {
    serde_json::json!({
        "name": "fixture",
        "matches": ["http://127.0.0.1:*/*chat.html*"],
        "input": "#prompt:not([hidden]), #editor:not([hidden])",
        "submit": "#send",
        "user_message": ".msg.user",
        "assistant_message": ".msg.assistant",
        "generating": ".typing",
        "done": ".done",
        "stable_ms": 300
    })
}
