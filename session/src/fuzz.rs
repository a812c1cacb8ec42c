//! The bodies of the bridge's fuzz targets (`session/fuzz`): the session socket's request
//! parser and the `/wait` request policy. Plain functions over bytes, so that the ordinary test
//! run replays the committed corpus through them on stable (`session/tests/fuzz_corpus.rs`).

use bytes::BytesMut;
use hyper::Method;
use tokio_util::codec::Decoder;

use super::http::{MAX_WAIT_SECS, Verdict, judge};
use super::messages::ToSession;
use super::socket::{codec, parse_request};
use crate::door::{self, Head};

/// Bytes as a session socket receives them: cut into frames, each read as a request. It never
/// panics; what it accepts serializes back to a request that reads the same; what it refuses
/// it refuses with a message.
pub fn session_frames(data: &[u8]) {
    let mut codec = codec();
    let mut buf = BytesMut::from(data);
    while let Ok(Some(frame)) = codec.decode(&mut buf) {
        match parse_request(&frame) {
            Ok(request) => {
                let text = serde_json::to_vec(&request).expect("requests serialize");
                let again: ToSession = serde_json::from_slice(&text).expect("and read back");
                assert_eq!(again, request, "a request survives a round trip");
            }
            Err(error) => assert!(!error.message.is_empty(), "a refusal says why"),
        }
    }
}

/// A `/wait` request head: NUL-separated method, path, query, Host, Origin (present when not
/// empty) and Authorization. The policy never panics, and lets a request wait only when every
/// rule holds: the server's own Host, no Origin but its own, the token, `GET /wait`, a timeout
/// within bounds.
pub fn wait_head(data: &[u8]) {
    const PORT: u16 = 4000;
    const TOKEN: &str = "0123456789abcdef";
    let mut fields = data.split(|b| *b == 0).map(|f| std::str::from_utf8(f).ok());
    let mut next = || fields.next().flatten();
    let method = next().and_then(|m| Method::from_bytes(m.as_bytes()).ok()).unwrap_or_default();
    let path = next().unwrap_or("/wait");
    let query = next();
    let host = next();
    let origin = next().filter(|o| !o.is_empty());
    let authorization = next();
    let head = Head { host, origin, authorization };
    if let Verdict::Wait(timeout) = judge(&method, path, query, &head, PORT, TOKEN) {
        let own = door::own_authorities(PORT);
        let own_one = |h: &str| own.iter().any(|o| h.eq_ignore_ascii_case(o));
        assert!(host.is_some_and(own_one), "host {host:?}");
        let own_page = |o: &str| {
            o.get(..7).is_some_and(|h| h.eq_ignore_ascii_case("http://")) && own_one(&o[7..])
        };
        assert!(origin.is_none_or(own_page), "a request with Origin {origin:?}");
        let given = authorization.and_then(|a| a.strip_prefix("Bearer ")).map(str::trim);
        assert_eq!(given, Some(TOKEN), "a wait without the token");
        assert_eq!((&method, path), (&Method::GET, "/wait"));
        assert!(timeout.as_secs() <= MAX_WAIT_SECS, "a wait of {timeout:?}");
    }
}
