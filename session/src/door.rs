//! Who may talk to tabwire's loopback HTTP servers — `tabwire serve --http`'s `/mcp` and a
//! session's `/wait` — decided from a request's head alone, before a byte of its body is read.
//!
//! Both drive the user's logged-in browser, so a web page in that browser must not reach them,
//! nor another local user, nor a DNS-rebinding page that names 127.0.0.1 by another name:
//! - `Host` must be the server's own loopback authority (`127.0.0.1:PORT`, `localhost:PORT`,
//!   `[::1]:PORT`, any letter case): a rebinding page sends its own host name;
//! - a request with an `Origin` (browsers add it to cross-origin and POST requests) is refused
//!   unless that origin is the server itself, which serves no page;
//! - `Authorization: Bearer <token>`, the token the server wrote to its 0600 record: a page
//!   cannot read it, and a cross-origin request that carries it needs a CORS preflight, which
//!   neither server ever grants.
//!
//! Order: who asks (Host, Origin, token) before what is asked, so a stranger learns nothing of
//! paths or parameters; each server judges what is asked after [`admit`].

use hyper::StatusCode;
use tabwire_proto::secret;

/// The path of the MCP endpoint of `tabwire serve --http`.
pub const MCP_PATH: &str = "/mcp";

/// A request the server will not answer: its status, an error code and a sentence.
#[derive(Debug, PartialEq)]
pub struct Refusal {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

/// The request head the door needs.
pub struct Head<'a> {
    pub host: Option<&'a str>,
    pub origin: Option<&'a str>,
    pub authorization: Option<&'a str>,
}

/// The authorities (`host:port`) a server answers to on loopback `port`.
pub fn own_authorities(port: u16) -> [String; 3] {
    [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")]
}

/// Let in a request to the server on loopback `port` that holds `token`, or say why not.
/// `token_is` tells a client where that token is written.
pub fn admit(head: &Head, port: u16, token: &str, token_is: &str) -> Result<(), Refusal> {
    let own = own_authorities(port);
    if !head.host.is_some_and(|h| own.iter().any(|o| h.eq_ignore_ascii_case(o))) {
        return Err(refuse(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!("Host must be 127.0.0.1:{port}, localhost:{port} or [::1]:{port}"),
        ));
    }
    if let Some(origin) = head.origin {
        let same = own.iter().any(|o| origin.eq_ignore_ascii_case(&format!("http://{o}")));
        if !same {
            return Err(refuse(
                StatusCode::FORBIDDEN,
                "forbidden",
                format!(
                    "requests from web pages are refused (Origin {origin:?}); local clients \
                     send no Origin"
                ),
            ));
        }
    }
    let given = head.authorization.and_then(|a| a.strip_prefix("Bearer ")).map(str::trim);
    if !given.is_some_and(|given| secret::matches(given.as_bytes(), token.as_bytes())) {
        return Err(refuse(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            format!("send `Authorization: Bearer <token>`: {token_is}"),
        ));
    }
    Ok(())
}

/// A refusal with its status, code and sentence.
pub fn refuse(status: StatusCode, code: &'static str, message: String) -> Refusal {
    Refusal { status, code, message }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: Option<&str> = Some("Bearer s3cret");

    fn status(host: Option<&str>, origin: Option<&str>, auth: Option<&str>) -> StatusCode {
        let head = Head { host, origin, authorization: auth };
        match admit(&head, 4000, "s3cret", "the token is in the record") {
            Ok(()) => StatusCode::OK,
            Err(refusal) => refusal.status,
        }
    }

    #[test]
    fn only_the_servers_own_host_with_the_token_and_no_foreign_origin_gets_in() {
        for host in ["127.0.0.1:4000", "localhost:4000", "LOCALHOST:4000", "[::1]:4000"] {
            assert_eq!(status(Some(host), None, OK), StatusCode::OK, "{host}");
        }
        let own = Some("http://127.0.0.1:4000");
        assert_eq!(status(Some("127.0.0.1:4000"), own, OK), StatusCode::OK);
        for host in ["evil.example:4000", "127.0.0.1:4001", "127.0.0.1", "0.0.0.0:4000"] {
            assert_eq!(status(Some(host), None, OK), StatusCode::FORBIDDEN, "{host}");
        }
        assert_eq!(status(None, None, OK), StatusCode::FORBIDDEN, "no Host");
        for origin in ["https://evil.example", "null", "http://localhost:3000", "http://127.0.0.1"]
        {
            let got = status(Some("127.0.0.1:4000"), Some(origin), OK);
            assert_eq!(got, StatusCode::FORBIDDEN, "{origin}");
        }
        for auth in
            [None, Some("Bearer s3cre"), Some("s3cret"), Some("Basic s3cret"), Some("Bearer ")]
        {
            assert_eq!(status(Some("127.0.0.1:4000"), None, auth), StatusCode::UNAUTHORIZED);
        }
    }

    #[test]
    fn a_client_without_the_token_hears_where_it_is() {
        let head = Head { host: Some("127.0.0.1:4000"), origin: None, authorization: None };
        let refusal = admit(&head, 4000, "s3cret", "the token is in the record").unwrap_err();
        assert_eq!(refusal.code, "unauthorized");
        assert!(refusal.message.ends_with("the token is in the record"), "{}", refusal.message);
    }
}
