//! Serves the demo pages on a loopback address, on an ephemeral port, behind a random path token: like
//! everything tabwire serves on loopback, it answers only those who were told the token. HTTP
//! is hyper's, as for `GET /wait` (`session/src/http.rs`).

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::CONTENT_TYPE;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

const HTML: &str = "text/html; charset=utf-8";

/// Each page: its name under the token, its type, its body. `list.csv` is what the shopping
/// list's download link fetches, `news.json` what the lab page loads.
const PAGES: &[(&str, &str, &str)] = &[
    ("", HTML, include_str!("page.html")),
    ("chat.html", HTML, include_str!("chat.html")),
    ("list.csv", "text/csv", "item,quantity\nbread,1\nmilk,2\ncoffee,1\n"),
    ("lab.html", HTML, include_str!("lab.html")),
    ("news.json", "application/json", r#"{"headline":"served by the lab's own server"}"#),
];

/// Start serving on `ip` (127.0.0.1, or 127.0.0.2 for "a site the user did not allow");
/// returns the base URL (`…/<token>/`, the shopping list; `chat.html` and `list.csv` beside it). The server
/// lives as long as the runtime.
pub async fn serve_demo_pages(ip: &str) -> std::io::Result<String> {
    let listener = TcpListener::bind((ip, 0)).await?;
    let port = listener.local_addr()?.port();
    let prefix = format!("/{}/", uuid::Uuid::new_v4().simple());
    let base = format!("http://{ip}:{port}{prefix}");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let prefix = prefix.clone();
            let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                let page = req.uri().path().strip_prefix(prefix.as_str()).and_then(|name| {
                    PAGES.iter().find(|(n, _, _)| *n == name).map(|(_, t, body)| (*t, *body))
                });
                async move { Ok::<_, Infallible>(respond(page)) }
            });
            tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), service));
        }
    });
    Ok(base)
}

fn respond(page: Option<(&'static str, &'static str)>) -> Response<Full<Bytes>> {
    let (status, kind, body) = match page {
        Some((kind, body)) => (StatusCode::OK, kind, body),
        None => (StatusCode::NOT_FOUND, HTML, "not found"),
    };
    Response::builder()
        .status(status)
        .header(CONTENT_TYPE, kind)
        .body(Full::new(Bytes::from_static(body.as_bytes())))
        .expect("a valid response")
}
