//! `tabwire serve --http`: the same MCP server as `tabwire mcp`, over MCP streamable HTTP
//! (rmcp's server transport), for clients that speak only HTTP.
//!
//! Each client gets its own MCP session (`Mcp-Session-Id`), and each MCP session is a tabwire
//! session exactly as a stdio one is ([`session::HttpSession`]): its own event queue, id,
//! socket and record, so `notify_completion` from anywhere can target it. Progress
//! notifications and replies travel on the SSE stream of their request; a client's
//! `notifications/cancelled` cancels the tool call as over stdio.
//!
//! The door ([`tabwire_session::door`]) lets in only this user's own clients: loopback only ([`listen`]), the
//! bearer token printed once at start and kept in a 0600 record ([`record`]), `Host` checked,
//! any foreign `Origin` refused. What it lets clients cost is in [`limits`].

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
use hyper::header::{AUTHORIZATION, CONNECTION, CONTENT_TYPE, HOST, ORIGIN, WWW_AUTHENTICATE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::model::{ClientRequest, JsonRpcMessage};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tabwire_proto::wire::code;
use tabwire_proto::{Shutdown, runtime_dir};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::attach::Attach;
use crate::mcp::{Tools, jsonrpc};
use record::ServeRecord;
use session::{Busy, HttpSession, Sessions};
use tabwire_session::door::{self, Head};
use tabwire_session::gate::{Gate, Pass};

/// `tabwire serve --http [ADDR]`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Serve MCP over streamable HTTP at http://ADDR/mcp. ADDR must be a loopback address
    /// (127.0.0.1:PORT, [::1]:PORT, localhost:PORT); port 0 picks a free one.
    #[arg(
        long,
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = listen::DEFAULT_ADDR,
        required = true
    )]
    pub http: Option<String>,
    /// The most MCP sessions served at once; one more client is refused until one ends.
    #[arg(long, value_name = "N", default_value_t = limits::MAX_SESSIONS,
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub max_sessions: u16,
    /// End a session after this many seconds without a message from its client or to it (its
    /// workers get SIGTERM, its record goes). Keep it above 130: a quiet wait_for_event can
    /// block for 120 s.
    #[arg(long, value_name = "SECS", default_value_t = limits::IDLE_TIMEOUT.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_timeout: u64,
    #[command(flatten)]
    pub attach: Attach,
    #[command(flatten)]
    pub tools: Tools,
}

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
    let token: Arc<str> = Arc::from(tabwire_session::new_token());
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

    let (only, set) = (args.attach.browser, args.tools.set());
    let sessions = Sessions::new(runtime_dir, only, set, args.max_sessions.into());
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
    let manager = Arc::new(manager);
    let mcp = StreamableHttpService::new(factory, manager.clone(), config);
    let front = Front { mcp, manager, sessions: sessions.clone(), token, port: local.port() };
    let front = Arc::new(front);

    tokio::select! {
        () = accept(listener, front.clone()) => {}
        () = front.sweep() => {}
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
    /// rmcp's sessions, to end one that a new client needs the place of.
    manager: Arc<LocalSessionManager>,
    sessions: Arc<Sessions>,
    token: Arc<str>,
    port: u16,
}

async fn accept(listener: TcpListener, front: Arc<Front>) {
    // Another user's connections are closed at once; the rest wait their turn among the
    // unauthenticated (gate::UNAUTHENTICATED), and only those whose request passed the door
    // take one of MAX_CONNECTIONS: idle strangers cannot keep the user's own clients out.
    let gate = Gate::new(limits::MAX_CONNECTIONS);
    loop {
        let mut stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!(error = %e, "the MCP listener cannot accept; retrying");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let (front, gate) = (front.clone(), gate.clone());
        tokio::spawn(async move {
            let message = "too many connections have not sent a request yet; try again in a moment";
            let busy = error_body(code::TOO_MANY_CONNECTIONS, message);
            let Some(pass) = gate.admit(&mut stream, "MCP", &busy).await else { return };
            let service_pass = pass.clone();
            let service = service_fn(move |request| {
                let (front, pass) = (front.clone(), service_pass.clone());
                async move { Ok::<_, Infallible>(front.answer(request, &pass).await) }
            });
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits::HEAD_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            // An unauthenticated connection whose place a newcomer took is closed, unanswered.
            let evicted = pass.evicted();
            let served = tokio::select! {
                served = connection => served,
                () = evicted.cancelled() => Ok(()),
            };
            if let Err(e) = served {
                tracing::debug!(error = %e, "an MCP connection ended badly");
            }
            drop(pass);
        });
    }
}

impl Front {
    async fn answer(&self, request: Request<Incoming>, pass: &Pass) -> Response<Body> {
        let header = |name| request.headers().get(name).and_then(|v| v.to_str().ok());
        let head = Head {
            host: header(HOST),
            origin: header(ORIGIN),
            authorization: header(AUTHORIZATION),
        };
        let token_is = "the token `tabwire serve` printed when it started, also in \
                        <runtime>/serve/<port>.json";
        if let Err(no) = door::admit(&head, self.port, &self.token, token_is) {
            // Unauthenticated: answered, then the connection closes.
            let mut answer = refuse(no.status, no.code, &no.message);
            answer.headers_mut().insert(CONNECTION, "close".parse().expect("a header value"));
            return answer;
        }
        if !pass.authenticated() {
            let message = format!(
                "this server serves {} connections at once; close some and try again",
                limits::MAX_CONNECTIONS
            );
            tracing::warn!(
                "refused a request: {} connections are open already",
                limits::MAX_CONNECTIONS
            );
            return refuse(StatusCode::SERVICE_UNAVAILABLE, code::TOO_MANY_CONNECTIONS, &message);
        }
        let path = request.uri().path();
        if path != door::MCP_PATH {
            let message = format!("no {path} here; the MCP endpoint is {}", door::MCP_PATH);
            return refuse(StatusCode::NOT_FOUND, "not_found", &message);
        }
        let method = request.method().clone();
        let session: Option<Arc<str>> =
            request.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(Arc::from);
        // A new session (a POST with no session id) at the cap: end the session that waited
        // longest for its client, or say so in plain HTTP before rmcp makes one. The cap is
        // enforced again, exactly, when the session starts.
        let opens = method == Method::POST && session.is_none() && self.sessions.full();
        if opens && !self.reclaim().await {
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
        // The guard: what is not a well-formed JSON-RPC message is answered here, exactly
        // (rmcp would answer 415 in plain text), and so is a reused id or a call before
        // initialize (see crate::mcp::jsonrpc).
        let mut busy: Option<Busy> = None;
        let mut initialize = false;
        if method == Method::POST {
            let passed = match jsonrpc::check(&body) {
                jsonrpc::Verdict::Pass(passed) => passed,
                jsonrpc::Verdict::Answer(answer) => return rpc(StatusCode::BAD_REQUEST, &answer),
                jsonrpc::Verdict::Nothing => return empty(StatusCode::ACCEPTED),
            };
            let request = match &passed.message {
                JsonRpcMessage::Request(r) => Some((&r.id, &r.request)),
                _ => None,
            };
            initialize =
                request.is_some_and(|(_, r)| matches!(r, ClientRequest::InitializeRequest(_)));
            match (&session, request) {
                (None, Some((id, r))) if !initialize => {
                    let message = format!(
                        "send initialize first (then notifications/initialized), and this                          session's Mcp-Session-Id with every request: {} needs an MCP session",
                        r.method()
                    );
                    let answer = jsonrpc::error(Some(id), jsonrpc::INVALID_REQUEST, message);
                    return rpc(StatusCode::BAD_REQUEST, &answer);
                }
                (Some(session), request) => {
                    let call =
                        request.map(|(id, r)| (id, matches!(r, ClientRequest::CallToolRequest(_))));
                    match self.sessions.request(session, call) {
                        Ok(b) => busy = b,
                        Err(()) => {
                            let (id, _) = request.expect("only a request is in progress");
                            let message = format!(
                                "request id {id} is still in progress in this session: give                                  each request an id of its own (this one was not run; the                                  first goes on)"
                            );
                            let answer =
                                jsonrpc::error(Some(id), jsonrpc::INVALID_REQUEST, message);
                            return rpc(StatusCode::OK, &answer);
                        }
                    }
                }
                _ => {}
            }
        } else if method == Method::GET
            && let Some(session) = &session
        {
            busy = self.sessions.listen(session);
        }
        let response = self.mcp.handle(Request::from_parts(parts, Full::new(body))).await;
        if initialize && let Some(id) = response.headers().get("mcp-session-id") {
            self.sessions.opened(id.to_str().unwrap_or_default());
        }
        if method == Method::DELETE
            && let Some(session) = &session
            && response.status().is_success()
        {
            // rmcp answers 202; the session is ended, not accepted for later: clients (the
            // Python SDK) log anything but 200 or 204 as a failed termination.
            self.sessions.forget(session);
            return empty(StatusCode::NO_CONTENT);
        }
        match busy {
            // In progress until the answer's body is sent or its client goes.
            Some(busy) => response.map(|body| {
                body.map_frame(move |f| {
                    let _ = &busy;
                    f
                })
                .boxed()
            }),
            None => response,
        }
    }

    /// End the session whose place a new client needs ([`Sessions::reclaimable`]) and wait
    /// for its place; false when every session has a request in progress.
    async fn reclaim(&self) -> bool {
        for victim in self.sessions.reclaimable() {
            let ended = self.manager.close_session(&victim).await.is_ok();
            self.sessions.forget(&victim);
            if ended && self.sessions.room(limits::RECLAIM_WAIT).await {
                tracing::info!(session = %victim, "ended the longest-idle session for a new client");
                return true;
            }
        }
        !self.sessions.full()
    }

    /// Every few seconds: end the sessions of clients that only looked and left
    /// ([`limits::UNUSED_TIMEOUT`]), and forget those rmcp ended (idle timeout).
    async fn sweep(&self) {
        loop {
            tokio::time::sleep(limits::SWEEP_EVERY).await;
            for session in self.sessions.unused(limits::UNUSED_TIMEOUT) {
                tracing::info!(%session, "ending a session that never called a tool");
                let _ = self.manager.close_session(&session).await;
                self.sessions.forget(&session);
            }
            for session in self.sessions.known() {
                if !self.manager.has_session(&session).await.unwrap_or(false) {
                    self.sessions.forget(&session);
                }
            }
        }
    }
}

/// A JSON-RPC message as the whole answer.
fn rpc(status: StatusCode, message: &serde_json::Value) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(message.to_string())).boxed());
    *response.status_mut() = status;
    let json = "application/json".parse().expect("a header value");
    response.headers_mut().insert(CONTENT_TYPE, json);
    response
}

fn empty(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed());
    *response.status_mut() = status;
    response
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
