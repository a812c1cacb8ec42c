//! A bare HTTP/1.1 request over a TCP socket, so tests control every header (Host, Origin,
//! Authorization) exactly as a script or a hostile page would send them.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A response: status code, head and body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    /// The status line and headers, as sent.
    pub head: String,
    pub body: String,
}

impl Answer {
    /// A header's value (the first, by case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// `GET path` on 127.0.0.1:port with `Host: 127.0.0.1:port` (unless `headers` has a Host) and
/// the given extra headers, e.g. `[("Authorization", "Bearer x")]`.
pub async fn get(port: u16, path: &str, headers: &[(&str, &str)]) -> Answer {
    request(port, "GET", path, headers, "").await
}

/// Any method, with a body (sent with its Content-Length when not empty).
pub async fn request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !body.is_empty() {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    head.push_str(body);
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.expect("connect");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let text = String::from_utf8_lossy(&raw);
    let status =
        text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).expect("a status line");
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    Answer { status, head: head.to_owned(), body: body.to_owned() }
}

/// Read whatever a peer sends until it closes (or `limit` passes): the bytes, and how long
/// it took to close (`None`: still open). For raw sockets of any kind in abuse tests.
pub async fn until_closed<S: AsyncReadExt + Unpin>(
    s: &mut S,
    limit: std::time::Duration,
) -> (Vec<u8>, Option<std::time::Duration>) {
    let started = std::time::Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout_at((started + limit).into(), s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (got, Some(started.elapsed())),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
            Err(_) => return (got, None),
        }
    }
}
