//! `GET /wait?timeout=N` on 127.0.0.1: the session's page events for shell scripts (`curl`),
//! the same long-poll `tabwire wait` does over the session socket.
//!
//! A web page in the user's browser must not be able to call it. So: it listens on loopback
//! only; it wants a bearer token that only the session's record (mode 0600) holds, in a header
//! (a page cannot make a browser send one cross-origin without a CORS preflight, which this
//! never grants); the `Host` must be its own loopback authority (no DNS rebinding); and a
//! request with a foreign `Origin` header — which browsers add to cross-origin and POST
//! requests — is refused: the loopback door of `crate::door`, which `tabwire serve` shares.
//!
//! Answers: 200 with a JSON array of events; 204 when none came in time; 400 a bad timeout;
//! 401 no or the wrong token; 403 a foreign Host or an Origin; 404 another path, or no browser
//! attached; 405 another method; 503 past [`MAX_CONNECTIONS`] with the token; 403 at once to a
//! connection of another user ([`crate::gate`]).
//!
//! Nothing is lost to a client that leaves: one request per connection, a client that hangs up
//! while it waits stops the wait before anything is taken, and the events of an answer that
//! could not be written go back to the queue; the pages hear their events were drained only
//! once the answer went out.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST, ORIGIN, WWW_AUTHENTICATE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::json;
use tabwire_proto::socket::AcceptBackoff;
use tabwire_proto::wire::code;
use tokio::net::TcpListener;

use crate::door::{self, Head};
use crate::gate::{Gate, Pass};
use tabwire_link::core::Core;
use tabwire_link::error::CallError;
use tabwire_link::events::SessionEvent;

pub use tabwire_link::limits::{DEFAULT_WAIT_SECS, MAX_WAIT_SECS};
/// Connections served at once; one more is answered 503 and closed. Scripts wait one at a
/// time; this leaves room for many and keeps a flood from taking every file descriptor.
pub const MAX_CONNECTIONS: usize = 64;
/// How long a client may take to send a request's head (a connection that sends half a
/// header and stalls is closed then, token or not).
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(5);

/// The 503 body (code `wire::code::TOO_MANY_CONNECTIONS`).
const BUSY: &str = r#"{"error":{"code":"too_many_connections","message":"this session serves 64 /wait connections at once; close some and try again"}}"#;

/// What a request is allowed to do, decided from its head alone.
#[derive(Debug, PartialEq)]
pub(super) enum Verdict {
    /// Wait this long for events.
    Wait(Duration),
    Refuse(StatusCode, String),
}

/// Serve until the process ends.
pub async fn serve(listener: TcpListener, token: Arc<str>, core: Core) {
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    // Another user's connections are closed at once; the rest wait their turn among the
    // unauthenticated, and only those with the token take one of the MAX_CONNECTIONS.
    let gate = Gate::new(MAX_CONNECTIONS);
    let mut backoff = AcceptBackoff::default();
    loop {
        let mut stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                backoff.failed("the /wait listener", &e).await;
                continue;
            }
        };
        backoff.reset();
        let (token, core, gate) = (token.clone(), core.clone(), gate.clone());
        tokio::spawn(async move {
            let Some(pass) = gate.admit(&mut stream, "/wait", BUSY).await else { return };
            let sent: Delivery = Arc::default();
            let (service_core, delivery, service_pass) = (core.clone(), sent.clone(), pass.clone());
            let service = service_fn(move |request| {
                let (token, core) = (token.clone(), service_core.clone());
                let (delivery, pass) = (delivery.clone(), service_pass.clone());
                // A client that hangs up while this waits: hyper sees the end of its stream and
                // drops this future before anything is taken.
                async move {
                    Ok::<_, Infallible>(
                        answer(request, port, &token, &core, &delivery, &pass).await,
                    )
                }
            });
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEAD_TIMEOUT)
                .keep_alive(false)
                .serve_connection(TokioIo::new(stream), service);
            // An unauthenticated connection whose place a newcomer took is closed, unanswered.
            let evicted = pass.evicted();
            let served = tokio::select! {
                served = connection => served,
                () = evicted.cancelled() => Ok(()),
            };
            let events = sent.lock().expect("delivery poisoned").take();
            match (served, events) {
                (Ok(()), Some(events)) => core.tell_drained(&events).await,
                (Err(e), Some(events)) => {
                    tracing::info!(error = %e, "a /wait answer did not go out; its events stay queued");
                    core.queue().put_back(events);
                }
                (Err(e), None) => tracing::debug!(error = %e, "a /wait connection ended badly"),
                (Ok(()), None) => {}
            }
            drop(pass);
        });
    }
}

/// The events an answer carries, held until the connection says whether it went out.
type Delivery = Arc<std::sync::Mutex<Option<Vec<SessionEvent>>>>;

async fn answer(
    request: Request<Incoming>,
    port: u16,
    token: &str,
    core: &Core,
    delivery: &Delivery,
    pass: &Pass,
) -> Response<Full<Bytes>> {
    let header = |name| request.headers().get(name).and_then(|v| v.to_str().ok());
    let head =
        Head { host: header(HOST), origin: header(ORIGIN), authorization: header(AUTHORIZATION) };
    let uri = request.uri();
    let verdict = judge(request.method(), uri.path(), uri.query(), &head, port, token);
    let timeout = match verdict {
        Verdict::Wait(timeout) => timeout,
        Verdict::Refuse(status, message) => return refuse(status, &message),
    };
    if !pass.authenticated() {
        tracing::warn!("refused a /wait request: {MAX_CONNECTIONS} are open already");
        return reply(StatusCode::SERVICE_UNAVAILABLE, Bytes::from_static(BUSY.as_bytes()));
    }
    match core.wait_page_events(None, timeout).await {
        Ok(events) if events.is_empty() => reply(StatusCode::NO_CONTENT, Bytes::new()),
        Ok(events) => match serde_json::to_vec(&events) {
            Ok(body) => {
                *delivery.lock().expect("delivery poisoned") = Some(events);
                reply(StatusCode::OK, Bytes::from(body))
            }
            Err(e) => {
                core.queue().put_back(events);
                refuse(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &format!("the events could not be encoded ({e}); they stay queued"),
                )
            }
        },
        Err(e) if e.is_no_browser() => failed(StatusCode::NOT_FOUND, &e),
        Err(e) => failed(StatusCode::INTERNAL_SERVER_ERROR, &e),
    }
}

/// The policy, from the request's head: the loopback door ([`door::admit`]: Host, Origin,
/// token) before what is asked, so a stranger learns nothing about paths or parameters.
pub(super) fn judge(
    method: &Method,
    path: &str,
    query: Option<&str>,
    head: &Head,
    port: u16,
    token: &str,
) -> Verdict {
    let token_is = "the token is in the session's record (<runtime>/sessions/<id>.json)";
    if let Err(no) = door::admit(head, port, token, token_is) {
        return Verdict::Refuse(no.status, no.message);
    }
    if path != "/wait" {
        return Verdict::Refuse(StatusCode::NOT_FOUND, format!("no {path} here; use GET /wait"));
    }
    if method != Method::GET {
        return Verdict::Refuse(StatusCode::METHOD_NOT_ALLOWED, "use GET /wait".into());
    }
    let mut timeout = DEFAULT_WAIT_SECS;
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if key == "timeout" {
            match value.parse::<u64>() {
                Ok(secs) if secs <= MAX_WAIT_SECS => timeout = secs,
                _ => {
                    return Verdict::Refuse(
                        StatusCode::BAD_REQUEST,
                        format!(
                            "timeout must be a whole number of seconds from 0 to {MAX_WAIT_SECS}; got {value:?}"
                        ),
                    );
                }
            }
        }
    }
    Verdict::Wait(Duration::from_secs(timeout))
}

/// A call that failed: its own code and message (`browser_disconnected` with the getting-started
/// sentence when no browser is attached).
fn failed(status: StatusCode, e: &CallError) -> Response<Full<Bytes>> {
    error_reply(status, e.code(), e.message())
}

/// A refusal by the policy: the code says which rule, from the status.
fn refuse(status: StatusCode, message: &str) -> Response<Full<Bytes>> {
    let code = match status {
        StatusCode::BAD_REQUEST => code::BAD_REQUEST,
        StatusCode::UNAUTHORIZED => "unauthorized",
        StatusCode::FORBIDDEN => "forbidden",
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        _ => code::INTERNAL,
    };
    error_reply(status, code, message)
}

fn error_reply(status: StatusCode, code: &str, message: &str) -> Response<Full<Bytes>> {
    let body = json!({ "error": { "code": code, "message": message } });
    let mut response = reply(status, Bytes::from(body.to_string()));
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(WWW_AUTHENTICATE, "Bearer".parse().expect("a header value"));
    }
    response
}

fn reply(status: StatusCode, body: Bytes) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    if status != StatusCode::NO_CONTENT {
        response
            .headers_mut()
            .insert(CONTENT_TYPE, "application/json".parse().expect("a header value"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge_(query: Option<&str>, host: &str, origin: bool, auth: Option<&str>) -> Verdict {
        at(&Method::GET, "/wait", query, host, origin.then_some("https://evil.example"), auth)
    }

    fn at(
        method: &Method,
        path: &str,
        query: Option<&str>,
        host: &str,
        origin: Option<&str>,
        auth: Option<&str>,
    ) -> Verdict {
        let head = Head { host: Some(host), origin, authorization: auth };
        judge(method, path, query, &head, 4000, "s3cret")
    }

    fn status(v: Verdict) -> StatusCode {
        match v {
            Verdict::Wait(_) => StatusCode::OK,
            Verdict::Refuse(s, _) => s,
        }
    }

    #[test]
    fn who_may_ask_and_what() {
        let ok = Some("Bearer s3cret");
        assert_eq!(
            judge_(None, "127.0.0.1:4000", false, ok),
            Verdict::Wait(Duration::from_secs(30))
        );
        assert_eq!(
            judge_(Some("timeout=0"), "localhost:4000", false, ok),
            Verdict::Wait(Duration::ZERO)
        );
        assert_eq!(
            status(judge_(Some("timeout=121"), "127.0.0.1:4000", false, ok)),
            StatusCode::BAD_REQUEST
        );
        assert_eq!(
            status(judge_(Some("timeout=x"), "127.0.0.1:4000", false, ok)),
            StatusCode::BAD_REQUEST
        );
        assert_eq!(status(judge_(None, "evil.example:4000", false, ok)), StatusCode::FORBIDDEN);
        assert_eq!(status(judge_(None, "127.0.0.1:4001", false, ok)), StatusCode::FORBIDDEN);
        assert_eq!(status(judge_(None, "127.0.0.1:4000", true, ok)), StatusCode::FORBIDDEN);
        assert_eq!(status(judge_(None, "127.0.0.1:4000", false, None)), StatusCode::UNAUTHORIZED);
        assert_eq!(
            status(judge_(None, "127.0.0.1:4000", false, Some("Bearer s3cre"))),
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(
            status(judge_(None, "127.0.0.1:4000", false, Some("s3cret"))),
            StatusCode::UNAUTHORIZED
        );
        let other = at(&Method::GET, "/", None, "127.0.0.1:4000", None, ok);
        assert_eq!(status(other), StatusCode::NOT_FOUND);
        let post = at(&Method::POST, "/wait", None, "127.0.0.1:4000", None, ok);
        assert_eq!(status(post), StatusCode::METHOD_NOT_ALLOWED);
    }
}
