//! Site patterns: which origins the user allowed tabwire on (`specs/security.md`).
//!
//! The allowlist itself lives in the extension (`extension/sites.js`), the one authority; this
//! is the same grammar in Rust, for the places that must judge an origin without asking the
//! browser: the host drops buffered page events of a site the user revoked before it replays
//! them, the bridge drops cached states of such a site, and `tabwire sites allow` says what is
//! wrong with a pattern before anything is sent. Pure functions only.
//!
//! A pattern is `scheme://host[:port]`:
//! - scheme `http` or `https`;
//! - host a DNS name, an IPv4 address, `[ipv6]`, or `*.` and a DNS name of two labels or more
//!   (`*.example.com` matches `example.com` and every subdomain);
//! - port a number or `*` (any); no port means the scheme's default port only.

use std::fmt;

/// The event the extension sends with the whole list, after connecting and on every change.
pub const EVENT: &str = "sites";

/// The sites allowed when the user has not changed anything: local dev servers.
pub const DEFAULTS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// One parsed, normalised pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    scheme: String,
    /// Lowercase; for a wildcard pattern, the part after `*.`.
    host: String,
    wildcard: bool,
    /// `None`: any port.
    port: Option<u16>,
}

/// Why a string is not a site pattern. The message says what a good one looks like.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{input:?} is not a site pattern: {why}. A site is scheme://host[:port], e.g. \
     https://app.example.com, https://*.example.com or http://localhost:*"
)]
pub struct PatternError {
    pub input: String,
    pub why: &'static str,
}

impl Pattern {
    /// Parse and normalise (lowercase, default port dropped, one trailing `/` tolerated).
    pub fn parse(input: &str) -> Result<Pattern, PatternError> {
        let err = |why| PatternError { input: input.to_owned(), why };
        let text = input.trim();
        let (scheme, rest) = text.split_once("://").ok_or(err("it has no scheme:// part"))?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(err("only http and https sites can be allowed"));
        }
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains(['/', '?', '#']) {
            return Err(err("a site has no path, query or fragment"));
        }
        if rest.contains('@') {
            return Err(err("a site has no user name or password"));
        }
        let (host, port) = split_port(rest).ok_or(err("its port must be a number or *"))?;
        let host = host.to_ascii_lowercase();
        let (wildcard, host) = match host.strip_prefix("*.") {
            Some(base) => (true, base.to_owned()),
            None => (false, host),
        };
        if host.is_empty() || host.contains('*') {
            return Err(err("* may only stand for subdomains, as in *.example.com"));
        }
        if host.starts_with('[') {
            if wildcard || !valid_ipv6(&host) {
                return Err(err("an IPv6 address is written in brackets, as in http://[::1]:*"));
            }
        } else if !valid_dns(&host) {
            return Err(err("its host is not a valid host name or address"));
        }
        if wildcard && !host.contains('.') {
            return Err(err("*. must be followed by a domain of two labels or more"));
        }
        let port = match port {
            Some(Port::Any) => None,
            Some(Port::Number(n)) => Some(n),
            None => Some(default_port(&scheme)),
        };
        Ok(Pattern { scheme, host, wildcard, port })
    }

    /// Whether `origin` (`scheme://host[:port]`, as a browser writes it) is one of this
    /// pattern's sites. Anything that is not an http(s) origin is not.
    pub fn allows(&self, origin: &str) -> bool {
        let Some(o) = Origin::parse(origin) else { return false };
        o.scheme == self.scheme
            && self.port.is_none_or(|p| p == o.port)
            && if self.wildcard {
                o.host == self.host
                    || o.host.strip_suffix(self.host.as_str()).is_some_and(|s| s.ends_with('.'))
            } else {
                o.host == self.host
            }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}{}", self.scheme, if self.wildcard { "*." } else { "" }, self.host)?;
        match self.port {
            None => write!(f, ":*"),
            Some(p) if p == default_port(&self.scheme) => Ok(()),
            Some(p) => write!(f, ":{p}"),
        }
    }
}

/// A list of patterns, as the extension last announced it (its `sites` event).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sites(Vec<Pattern>);

impl Sites {
    /// The defaults.
    #[cfg(test)]
    fn defaults() -> Sites {
        Sites::parse_lossy(DEFAULTS)
    }

    /// The patterns that parse; others are logged and left out (fail closed: a pattern this
    /// side cannot read allows nothing here).
    pub fn parse_lossy<'a>(patterns: impl IntoIterator<Item = &'a str>) -> Sites {
        Sites(
            patterns
                .into_iter()
                .filter_map(|p| {
                    Pattern::parse(p)
                        .map_err(|e| tracing::warn!("ignored a site pattern: {e}"))
                        .ok()
                })
                .collect(),
        )
    }

    /// The list a `sites` event carries (`{"sites": [pattern, …]}`), or `None` when the data
    /// is not that shape.
    pub fn from_event(data: &serde_json::value::RawValue) -> Option<Sites> {
        #[derive(serde::Deserialize)]
        struct Data {
            sites: Vec<String>,
        }
        let data: Data = serde_json::from_str(data.get()).ok()?;
        Some(Sites::parse_lossy(data.sites.iter().map(String::as_str)))
    }

    pub fn allows(&self, origin: &str) -> bool {
        self.0.iter().any(|p| p.allows(origin))
    }

    pub fn patterns(&self) -> impl Iterator<Item = &Pattern> {
        self.0.iter()
    }
}

/// An origin, split. Default ports are made explicit.
struct Origin<'a> {
    scheme: &'a str,
    host: String,
    port: u16,
}

impl Origin<'_> {
    fn parse(origin: &str) -> Option<Origin<'_>> {
        let (scheme, rest) = origin.split_once("://")?;
        if scheme != "http" && scheme != "https" || rest.contains(['/', '?', '#', '@', '*']) {
            return None;
        }
        let (host, port) = split_port(rest)?;
        let port = match port {
            Some(Port::Number(n)) => n,
            Some(Port::Any) => return None,
            None => default_port(scheme),
        };
        (!host.is_empty()).then(|| Origin { scheme, host: host.to_ascii_lowercase(), port })
    }
}

enum Port {
    Any,
    Number(u16),
}

/// `host[:port]` → host and port; `None` when the port is not `*` or a number in 1..=65535
/// written plainly (`080` is refused rather than read as 80).
fn split_port(hostport: &str) -> Option<(&str, Option<Port>)> {
    let (host, port) = match hostport.strip_prefix('[') {
        // `[v6]` or `[v6]:port`: the colons inside the brackets are not the port's.
        Some(_) => match hostport.split_once(']') {
            Some((_, "")) => (hostport, None),
            Some((inner, after)) => (&hostport[..inner.len() + 1], Some(after.strip_prefix(':')?)),
            None => (hostport, None),
        },
        None => match hostport.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (hostport, None),
        },
    };
    let port = match port {
        None => None,
        Some("*") => Some(Port::Any),
        Some(text) => match text.parse::<u16>() {
            Ok(n) if n > 0 && n.to_string() == text => Some(Port::Number(n)),
            _ => return None,
        },
    };
    Some((host, port))
}

fn default_port(scheme: &str) -> u16 {
    if scheme == "https" { 443 } else { 80 }
}

fn valid_dns(host: &str) -> bool {
    host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

fn valid_ipv6(host: &str) -> bool {
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .is_some_and(|inner| inner.parse::<std::net::Ipv6Addr>().is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(p: &str) -> String {
        Pattern::parse(p).unwrap_or_else(|e| panic!("{e}")).to_string()
    }

    #[test]
    fn patterns_are_normalised() {
        assert_eq!(norm("https://App.Example.com"), "https://app.example.com");
        assert_eq!(norm("https://app.example.com:443/"), "https://app.example.com");
        assert_eq!(norm("http://localhost:*"), "http://localhost:*");
        assert_eq!(norm("http://[::1]:*"), "http://[::1]:*");
        assert_eq!(norm("https://*.example.com:8443"), "https://*.example.com:8443");
        assert_eq!(norm("http://127.0.0.2:8123"), "http://127.0.0.2:8123");
    }

    #[test]
    fn what_is_not_a_site_is_refused_with_the_reason() {
        for (bad, why) in [
            ("example.com", "scheme"),
            ("ftp://example.com", "http and https"),
            ("<all_urls>", "scheme"),
            ("https://*", "subdomains"),
            ("https://*.com", "two labels"),
            ("https://a.*.com", "subdomains"),
            ("https://example.com/app", "path"),
            ("https://example.com?x", "query"),
            ("https://user@example.com", "user name"),
            ("https://example.com:99999", "port"),
            ("https://example.com:0", "port"),
            ("https://example.com:x", "port"),
            ("http://[::1", "IPv6"),
            ("http://ex ample.com", "host"),
        ] {
            let e = Pattern::parse(bad).expect_err(bad);
            assert!(e.to_string().contains(why), "{bad}: {e}");
            assert!(e.to_string().contains("scheme://host[:port]"), "{e}");
        }
    }

    #[test]
    fn origins_are_matched_by_scheme_host_and_port() {
        let p = |s| Pattern::parse(s).unwrap();
        let exact = p("https://app.example.com");
        assert!(exact.allows("https://app.example.com"));
        assert!(exact.allows("https://app.example.com:443"));
        assert!(!exact.allows("https://app.example.com:8443"));
        assert!(!exact.allows("http://app.example.com"));
        assert!(!exact.allows("https://evil-app.example.com"));
        assert!(!exact.allows("https://app.example.com.evil.net"));

        let wild = p("https://*.example.com");
        assert!(wild.allows("https://example.com"));
        assert!(wild.allows("https://a.b.example.com"));
        assert!(!wild.allows("https://badexample.com"));
        assert!(!wild.allows("https://example.com.evil.net"));

        let local = p("http://localhost:*");
        assert!(local.allows("http://localhost:5173"));
        assert!(local.allows("http://localhost"));
        assert!(!local.allows("https://localhost:5173"));

        let v6 = p("http://[::1]:*");
        assert!(v6.allows("http://[::1]:8080"));
        assert!(!v6.allows("http://[::2]:8080"));

        for junk in ["", "null", "file:///etc/passwd", "chrome-extension://abc", "http://"] {
            assert!(!Sites::defaults().allows(junk), "{junk:?}");
        }
    }

    #[test]
    fn the_defaults_are_local_dev_servers_only() {
        let d = Sites::defaults();
        assert!(d.allows("http://127.0.0.1:8080"));
        assert!(d.allows("http://localhost:3000"));
        assert!(d.allows("http://[::1]:3000"));
        assert!(!d.allows("http://127.0.0.2:8080"), "other loopback addresses are not allowed");
        assert!(!d.allows("https://127.0.0.1"), "https on loopback is another site");
        assert!(!d.allows("https://claude.ai"));
    }
}
