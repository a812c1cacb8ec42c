//! Site patterns: which origins the user allowed tabwire on (`specs/security.md`).
//!
//! The allowlist itself lives in the extension (`extension/lib/sites-store.js`), the one authority;
//! this is the same grammar as `extension/lib/sites.js`, in Rust, for the places that must judge
//! an origin without asking the browser: the host drops buffered page events of a site the user
//! revoked before it replays them, the bridge drops cached states of such a site, and `tabwire
//! sites allow` says what is wrong with a pattern before anything is sent. Pure functions only.
//! Both pass every case of `specs/site-patterns.json`.
//!
//! A pattern is `scheme://host[:port]`:
//! - scheme `http` or `https`;
//! - host a DNS name, an IPv4 address, `[ipv6]`, or `*.` and a DNS name of two labels or more
//!   (`*.example.com` matches `example.com` and every subdomain);
//! - port a number from 1 to 65535 without leading zeros, or `*` (any); no port means the
//!   scheme's default port only.
//!
//! An origin is as a browser writes it: lowercase, no path, the default port left out.

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
        if text.is_empty() {
            return Err(err("it is empty"));
        }
        if text.len() > 300 {
            return Err(err("it is longer than a host name can be"));
        }
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
        let (host, port) = split_port(rest)
            .ok_or(err("its port must be a number from 1 to 65535 (no leading zeros) or *"))?;
        let host = host.to_ascii_lowercase();
        let (wildcard, host) = match host.strip_prefix("*.") {
            Some(base) => (true, base.to_owned()),
            None => (false, host),
        };
        if host.is_empty() || host.contains('*') {
            return Err(err("* may only stand for subdomains, as in *.example.com"));
        }
        let host = if host.starts_with('[') {
            match ipv6(&host) {
                Some(canonical) if !wildcard => canonical,
                _ => {
                    return Err(err(
                        "an IPv6 address is written in brackets, as in http://[::1]:*",
                    ));
                }
            }
        } else if ipv4_like(&host) {
            if wildcard {
                return Err(err("a wildcard *. goes before a domain name, not an IP address"));
            }
            if !valid_ipv4(&host) {
                return Err(err("its host is not an IPv4 address (four numbers from 0 to 255, \
                     without leading zeros) nor a domain name"));
            }
            host
        } else if valid_dns(&host) {
            host
        } else {
            return Err(err("its host is not a valid host name or address"));
        };
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
    host: &'a str,
    port: u16,
}

impl Origin<'_> {
    /// `scheme://host[:port]` as a browser writes it: http or https, a host without a path, user
    /// name, `*` or blanks (an IPv6 one in lowercase brackets), a port from 1 to 65535 without
    /// leading zeros. Anything else is no origin, and allowed nowhere.
    fn parse(origin: &str) -> Option<Origin<'_>> {
        let (scheme, rest) = origin.split_once("://")?;
        if scheme != "http" && scheme != "https" {
            return None;
        }
        let end = match rest.strip_prefix('[') {
            Some(inner) => {
                let close = inner.find(']')?;
                let v6 = |b: u8| matches!(b, b'0'..=b'9' | b'a'..=b'f' | b':' | b'.');
                (close > 0 && inner[..close].bytes().all(v6)).then_some(close + 2)?
            }
            None => {
                let end = rest.find(':').unwrap_or(rest.len());
                let bad = |c: char| "/?#@*[]".contains(c) || c.is_whitespace();
                (end > 0 && !rest[..end].contains(bad)).then_some(end)?
            }
        };
        let (host, port) = rest.split_at(end);
        let port = match port.strip_prefix(':') {
            None if port.is_empty() => default_port(scheme),
            Some(text) => port_number(text)?,
            None => return None,
        };
        Some(Origin { scheme, host, port })
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
        Some(text) => Some(Port::Number(port_number(text)?)),
    };
    Some((host, port))
}

/// A port written plainly: 1 to 65535, digits only, no leading zero.
fn port_number(text: &str) -> Option<u16> {
    text.parse::<u16>().ok().filter(|n| *n > 0 && n.to_string() == text)
}

fn default_port(scheme: &str) -> u16 {
    if scheme == "https" { 443 } else { 80 }
}

fn valid_dns(host: &str) -> bool {
    host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

/// A host whose last label is all digits: an IPv4 address, or a mistyped one (a browser reads
/// `1.2.3` as 1.2.0.3, so such a name could never match as written).
fn ipv4_like(host: &str) -> bool {
    host.rsplit('.').next().is_some_and(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()))
}

/// Four numbers from 0 to 255, without leading zeros.
fn valid_ipv4(host: &str) -> bool {
    let parts: Vec<&str> = host.split('.').collect();
    parts.len() == 4 && parts.iter().all(|p| p.parse::<u8>().is_ok_and(|n| n.to_string() == *p))
}

/// `[v6]` in the form a browser writes it in an origin (the URL standard's: lowercase, the
/// first longest run of two or more zero groups as `::`, no dotted IPv4 tail), or `None`.
fn ipv6(bracketed: &str) -> Option<String> {
    let inner = bracketed.strip_prefix('[')?.strip_suffix(']')?;
    let groups = inner.parse::<std::net::Ipv6Addr>().ok()?.segments();
    let (mut run, mut at, mut i) = (0, 0, 0);
    while i < groups.len() {
        let zeros = groups[i..].iter().take_while(|g| **g == 0).count();
        if zeros > run {
            (run, at) = (zeros, i);
        }
        i += zeros.max(1);
    }
    let hex = |gs: &[u16]| gs.iter().map(|g| format!("{g:x}")).collect::<Vec<_>>().join(":");
    Some(if run < 2 {
        format!("[{}]", hex(&groups))
    } else {
        format!("[{}::{}]", hex(&groups[..at]), hex(&groups[at + run..]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cases `extension/lib/sites.js` passes too (`node --test extension/lib/*.test.js`).
    #[test]
    fn every_case_of_the_shared_table() {
        #[derive(serde::Deserialize)]
        struct Table {
            cases: Vec<Case>,
        }
        #[derive(serde::Deserialize)]
        struct Case {
            pattern: String,
            valid: bool,
            #[serde(default)]
            normal: String,
            #[serde(default)]
            matches: Vec<String>,
            #[serde(default)]
            rejects: Vec<String>,
        }
        let table: Table =
            serde_json::from_str(include_str!("../../specs/site-patterns.json")).unwrap();
        assert!(table.cases.len() > 40);
        let mut wrong = Vec::new();
        for c in &table.cases {
            let p = match (Pattern::parse(&c.pattern), c.valid) {
                (Ok(p), true) => p,
                (Err(e), false) => {
                    assert!(e.to_string().contains("scheme://host[:port]"), "{e}");
                    continue;
                }
                (got, _) => {
                    wrong.push(format!("{:?} parsed as {got:?}", c.pattern));
                    continue;
                }
            };
            if p.to_string() != c.normal {
                wrong.push(format!("{:?} normalised to {p}, not {}", c.pattern, c.normal));
            }
            wrong.extend(
                c.matches.iter().filter(|o| !p.allows(o)).map(|o| format!("{p} refused {o}")),
            );
            wrong.extend(
                c.rejects.iter().filter(|o| p.allows(o)).map(|o| format!("{p} allowed {o}")),
            );
        }
        assert!(
            wrong.is_empty(),
            "{} of the table's cases fail:\n{}",
            wrong.len(),
            wrong.join("\n")
        );
    }

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
