//! Fixture pages on 127.0.0.1, behind a random path token like everything we serve on
//! loopback. They stand in for the websites a user works with, which cannot be reached here.

use std::path::Path;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A static file server for `tests/fixtures/`, on a thread of its own (so it works from sync
/// and async tests alike) until the process ends.
pub struct Fixtures {
    base: String,
}

impl Fixtures {
    pub fn serve() -> Fixtures {
        let token = format!("{:016x}", rand_u64());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let dir = crate::bins::repo_root().join("tests/fixtures");
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
                    tokio::spawn(async move {
                        let mut buf = vec![0u8; 8192];
                        let Ok(n) = sock.read(&mut buf).await else { return };
                        let head = String::from_utf8_lossy(&buf[..n]);
                        let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
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
        Fixtures { base: format!("http://127.0.0.1:{port}/{token}/") }
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
    if file.contains("..") || file.contains('/') || file.is_empty() {
        return ("404 Not Found", b"not found".to_vec(), "text/plain");
    }
    match std::fs::read(dir.join(file)) {
        Ok(body) => {
            let mime = if file.ends_with(".html") {
                "text/html; charset=utf-8"
            } else if file.ends_with(".js") {
                "text/javascript"
            } else {
                "application/octet-stream"
            };
            ("200 OK", body, mime)
        }
        Err(_) => ("404 Not Found", b"not found".to_vec(), "text/plain"),
    }
}

fn rand_u64() -> u64 {
    let mut bytes = [0u8; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .expect("/dev/urandom");
    u64::from_ne_bytes(bytes)
}
