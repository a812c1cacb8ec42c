//! `tabwire serve --http`: the same MCP server as `tabwire mcp`, over MCP streamable HTTP
//! (rmcp's server transport), for clients that speak only HTTP.
//!
//! Each client gets its own MCP session (`Mcp-Session-Id`), and each MCP session is a tabwire
//! session exactly as a stdio one is ([`session::HttpSession`]): its own event queue, id,
//! socket and record, so `notify_completion` from anywhere can target it. Progress
//! notifications and replies travel on the SSE stream of their request; a client's
//! `notifications/cancelled` cancels the tool call as over stdio.
//!
//! The door ([`door`]) lets in only this user's own clients: loopback only ([`listen`]), the
//! bearer token printed once at start and kept in a 0600 record ([`record`]), `Host` checked,
//! any foreign `Origin` refused. What it lets clients cost is in [`limits`].

pub mod door;
pub mod limits;
pub mod listen;
pub mod record;
mod session;

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST, ORIGIN, WWW_AUTHENTICATE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tabwire_proto::wire::code;
use tabwire_proto::{Shutdown, runtime_dir};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::cli::serve::ServeArgs;
use door::{Head, Verdict};
use record::ServeRecord;
use session::{HttpSession, Sessions};

type Body = BoxBody<Bytes, Infallible>;
type Mcp = StreamableHttpService<HttpSession, LocalSessionManager>;

/// Serve until `shutdown` fires (SIGTERM, SIGINT); then end every session as `tabwire mcp`
/// ends its one.
pub async fn run(args: ServeArgs, shutdown: Shutdown) -> anyhow::Result<()> {
    let addr = args.http.as_deref().unwrap_or(listen::DEFAULT_ADDR);
    let runtime_dir = runtime_dir::prepare(&runtime_dir::resolve())?;
    let listener = listen::bind(addr).await?;
    let local = listener.local_addr()?;
    let url = format!("http://{local}{}", door::MCP_PATH);
    let token: Arc<str> = Arc::from(crate::session::new_token());
    let written =
        ServeRecord::new(url.clone(), token.to_string()).write(&runtime_dir, local.port())?;
    let idle = std::time::Duration::from_secs(args.idle_timeout);
    if args.idle_timeout < limits::QUIET_WAIT_SECS {
        tracing::warn!(
            "--idle-timeout {} is below {} s: a session can end while wait_for_event blocks",
            args.idle_timeout,
            limits::QUIET_WAIT_SECS
        );
    }
    // Said once, on stderr (stdout stays clean for whoever captures it); the record keeps it.
    eprintln!(
        "tabwire serve: MCP over streamable HTTP at {url}\n\
         Every request needs the header `Authorization: Bearer {token}`\n\
         (also in {}, readable only by you). Ctrl-C stops it.",
        written.path.display()
    );

    let sessions = Sessions::new(runtime_dir, args.attach.browser, args.max_sessions.into());
    let stop = CancellationToken::new();
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(idle);
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop.child_token())
        .with_max_request_body_bytes(limits::MAX_BODY_BYTES)
        // rmcp checks Host and Origin again, with the same answer as the door.
        .with_allowed_hosts(door::own_authorities(local.port()))
        .with_allowed_origins(door::own_authorities(local.port()).map(|a| format!("http://{a}")));
    let factory = {
        let sessions = sessions.clone();
        move || Ok(HttpSession::new(sessions.clone()))
    };
    let mcp = StreamableHttpService::new(factory, Arc::new(manager), config);
    let front = Front { mcp, sessions: sessions.clone(), token, port: local.port() };

    tokio::select! {
        () = accept(listener, Arc::new(front)) => {}
        why = shutdown.requested() => tracing::info!("ended by {why}"),
    }
    stop.cancel();
    if !sessions.drained(limits::DRAIN).await {
        tracing::warn!(live = sessions.live(), "some sessions did not end in time");
    }
    drop(written);
    Ok(())
}

/// What every connection shares.
struct Front {
    mcp: Mcp,
    sessions: Arc<Sessions>,
    token: Arc<str>,
    port: u16,
}

async fn accept(listener: TcpListener, front: Arc<Front>) {
    let slots = Arc::new(Semaphore::new(limits::MAX_CONNECTIONS));
    loop {
        let mut stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!(error = %e, "the MCP listener cannot accept; retrying");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tracing::warn!("refused a connection: {} are open already", limits::MAX_CONNECTIONS);
            tokio::spawn(async move {
                let body = error_body(
                    code::TOO_MANY_CONNECTIONS,
                    &format!(
                        "this server serves {} connections at once; close some and try again",
                        limits::MAX_CONNECTIONS
                    ),
                );
                let busy = format!(
                    "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
                     connection: close\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len(),
                );
                let _ = stream.write_all(busy.as_bytes()).await;
            });
            continue;
        };
        let front = front.clone();
        let service = service_fn(move |request| {
            let front = front.clone();
            async move { Ok::<_, Infallible>(front.answer(request).await) }
        });
        tokio::spawn(async move {
            let served = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits::HEAD_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service)
                .await;
            if let Err(e) = served {
                tracing::debug!(error = %e, "an MCP connection ended badly");
            }
            drop(slot);
        });
    }
}

impl Front {
    async fn answer(&self, request: Request<Incoming>) -> Response<Body> {
        let header = |name| request.headers().get(name).and_then(|v| v.to_str().ok());
        let head = Head {
            path: request.uri().path(),
            host: header(HOST),
            origin: header(ORIGIN),
            authorization: header(AUTHORIZATION),
        };
        if let Verdict::Refuse { status, code, message } =
            door::judge(&head, self.port, &self.token)
        {
            return refuse(status, code, &message);
        }
        // A new session (a POST with no session id) at the cap: say so in plain HTTP, before
        // rmcp makes one. The cap is enforced again, exactly, when the session starts.
        let opens = request.method() == Method::POST
            && !request.headers().contains_key("mcp-session-id")
            && self.sessions.full();
        if opens {
            let message = self.sessions.full_message();
            return refuse(StatusCode::SERVICE_UNAVAILABLE, code::TOO_MANY_CONNECTIONS, &message);
        }
        // The body must arrive whole within BODY_TIMEOUT and fit MAX_BODY_BYTES: a client that
        // sends a head and then nothing would otherwise hold its connection and a task for ever.
        let (parts, body) = request.into_parts();
        let read = Limited::new(body, limits::MAX_BODY_BYTES).collect();
        let body = match tokio::time::timeout(limits::BODY_TIMEOUT, read).await {
            Ok(Ok(body)) => body.to_bytes(),
            Ok(Err(e)) if e.is::<LengthLimitError>() => {
                let message = format!(
                    "a request is at most {} MiB of JSON; send less at once",
                    limits::MAX_BODY_BYTES >> 20
                );
                return refuse(StatusCode::PAYLOAD_TOO_LARGE, code::TOO_LARGE, &message);
            }
            Ok(Err(e)) => {
                let message = format!("the request's body could not be read: {e}");
                return refuse(StatusCode::BAD_REQUEST, code::BAD_REQUEST, &message);
            }
            Err(_) => {
                let message = format!(
                    "the request's body did not arrive within {} s; send the whole request at once",
                    limits::BODY_TIMEOUT.as_secs()
                );
                return refuse(StatusCode::REQUEST_TIMEOUT, code::TIMEOUT, &message);
            }
        };
        self.mcp.handle(Request::from_parts(parts, Full::new(body))).await
    }
}

fn error_body(code: &str, message: &str) -> String {
    json!({ "error": { "code": code, "message": message } }).to_string()
}

fn refuse(status: StatusCode, code: &str, message: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(error_body(code, message))).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, "application/json".parse().expect("a header value"));
    if status == StatusCode::UNAUTHORIZED {
        headers.insert(WWW_AUTHENTICATE, "Bearer".parse().expect("a header value"));
    }
    response
}
