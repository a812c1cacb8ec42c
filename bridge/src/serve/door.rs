//! Who may talk to `tabwire serve --http`, decided from a request's head alone, before rmcp
//! reads a byte of its body.
//!
//! The server drives the user's logged-in browser, so a web page in that browser must not reach
//! it, nor another local user, nor a DNS-rebinding page that names 127.0.0.1 by another name:
//! - `Host` must be this server's own loopback authority (`127.0.0.1:PORT`, `localhost:PORT`,
//!   `[::1]:PORT`): a rebinding page sends its own host name;
//! - a request with an `Origin` (browsers add it to cross-origin and POST requests) is refused
//!   unless that origin is this server itself, which serves no page;
//! - `Authorization: Bearer <token>`, the token `tabwire serve` printed and wrote to its 0600
//!   record: a page cannot read it, and a cross-origin request that carries it needs a CORS
//!   preflight, which this server never grants;
//! - only `/mcp` exists.
//!
//! Order: who asks (Host, Origin, token) before what is asked, so a stranger learns nothing.

use hyper::StatusCode;

/// The path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// What to do with a request.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Hand it to the MCP service.
    Pass,
    /// Answer this status with `{"error": {code, message}}`.
    Refuse { status: StatusCode, code: &'static str, message: String },
}

/// The request head this needs.
pub struct Head<'a> {
    pub path: &'a str,
    pub host: Option<&'a str>,
    pub origin: Option<&'a str>,
    pub authorization: Option<&'a str>,
}

/// The authorities (`host:port`) this server answers to on loopback `port`.
pub fn own_authorities(port: u16) -> [String; 3] {
    [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")]
}

/// Judge one request to the server listening on loopback `port` with `token`.
pub fn judge(head: &Head, port: u16, token: &str) -> Verdict {
    let own = own_authorities(port);
    if !head.host.is_some_and(|h| own.iter().any(|o| h.eq_ignore_ascii_case(o))) {
        return refuse(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!("Host must be 127.0.0.1:{port}, localhost:{port} or [::1]:{port}"),
        );
    }
    if let Some(origin) = head.origin {
        let same = own.iter().any(|o| origin.eq_ignore_ascii_case(&format!("http://{o}")));
        if !same {
            return refuse(
                StatusCode::FORBIDDEN,
                "forbidden",
                format!(
                    "requests from web pages are refused (Origin {origin:?}); MCP clients send \
                     no Origin"
                ),
            );
        }
    }
    let given = head.authorization.and_then(|a| a.strip_prefix("Bearer ")).map(str::trim);
    if !given.is_some_and(|given| same(given.as_bytes(), token.as_bytes())) {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "send `Authorization: Bearer <token>`: the token `tabwire serve` printed when it \
             started, also in <runtime>/serve/<port>.json"
                .into(),
        );
    }
    if head.path != MCP_PATH {
        return refuse(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no {} here; the MCP endpoint is {MCP_PATH}", head.path),
        );
    }
    Verdict::Pass
}

fn refuse(status: StatusCode, code: &'static str, message: String) -> Verdict {
    Verdict::Refuse { status, code, message }
}

/// Compare without stopping at the first difference, so timing tells nothing about the token.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: Option<&str> = Some("Bearer s3cret");

    fn status(path: &str, host: &str, origin: Option<&str>, auth: Option<&str>) -> StatusCode {
        let head = Head { path, host: Some(host), origin, authorization: auth };
        match judge(&head, 4000, "s3cret") {
            Verdict::Pass => StatusCode::OK,
            Verdict::Refuse { status, .. } => status,
        }
    }

    #[test]
    fn only_this_servers_own_host_with_the_token_and_no_foreign_origin_passes() {
        for host in ["127.0.0.1:4000", "localhost:4000", "LOCALHOST:4000", "[::1]:4000"] {
            assert_eq!(status("/mcp", host, None, OK), StatusCode::OK, "{host}");
        }
        assert_eq!(
            status("/mcp", "127.0.0.1:4000", Some("http://127.0.0.1:4000"), OK),
            StatusCode::OK
        );
        for host in ["evil.example:4000", "127.0.0.1:4001", "127.0.0.1", "0.0.0.0:4000"] {
            assert_eq!(status("/mcp", host, None, OK), StatusCode::FORBIDDEN, "{host}");
        }
        for origin in ["https://evil.example", "null", "http://localhost:3000", "http://127.0.0.1"]
        {
            let got = status("/mcp", "127.0.0.1:4000", Some(origin), OK);
            assert_eq!(got, StatusCode::FORBIDDEN, "{origin}");
        }
        for auth in
            [None, Some("Bearer s3cre"), Some("s3cret"), Some("Basic s3cret"), Some("Bearer ")]
        {
            assert_eq!(status("/mcp", "127.0.0.1:4000", None, auth), StatusCode::UNAUTHORIZED);
        }
        assert_eq!(status("/", "127.0.0.1:4000", None, OK), StatusCode::NOT_FOUND);
    }

    #[test]
    fn a_stranger_learns_nothing_about_paths() {
        // No token, unknown path: still 401, not 404.
        assert_eq!(status("/nope", "127.0.0.1:4000", None, None), StatusCode::UNAUTHORIZED);
        let head = Head { path: "/mcp", host: None, origin: None, authorization: OK };
        assert!(matches!(judge(&head, 4000, "s3cret"), Verdict::Refuse { .. }), "no Host");
    }
}
