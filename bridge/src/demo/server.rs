//! Serves the demo pages (the app at `/`, a chat at `chat.html`) on 127.0.0.1, on an ephemeral port, behind a random path token: like
//! everything tabwire serves on loopback, it answers only those who were told the token.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const PAGE: &str = include_str!("page.html");
/// A chat web app, for the operations step (send_message_async, wait_for_operation).
const CHAT: &str = include_str!("chat.html");

/// Start serving; returns the page's URL. The server lives as long as the runtime.
pub async fn serve_demo_page() -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    let token = uuid::Uuid::new_v4().simple().to_string();
    let path = format!("/{token}/");
    let url = format!("http://127.0.0.1:{port}{path}");
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let path = path.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let Ok(n) = sock.read(&mut buf).await else { return };
                let head = String::from_utf8_lossy(&buf[..n]);
                let asked = head.split_whitespace().nth(1).unwrap_or("");
                let asked = asked.split('?').next().unwrap_or("");
                let (status, body) = match asked.strip_prefix(path.as_str()) {
                    Some("") => ("200 OK", PAGE),
                    Some("chat.html") => ("200 OK", CHAT),
                    _ => ("404 Not Found", "not found"),
                };
                let reply = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(reply.as_bytes()).await;
            });
        }
    });
    Ok(url)
}
