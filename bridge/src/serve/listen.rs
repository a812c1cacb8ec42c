//! Where `tabwire serve --http` listens: loopback only. Anyone who reaches the server drives the
//! user's logged-in browser, so an address other machines can reach is refused before binding,
//! token or not.

use std::net::SocketAddr;

use anyhow::{Context, bail};
use tokio::net::TcpListener;

/// The address `--http` means when given no value.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8790";

/// Bind `addr` (`127.0.0.1:PORT`, `[::1]:PORT` or `localhost:PORT`; port 0 picks a free one)
/// after checking that every address it names is a loopback one.
pub async fn bind(addr: &str) -> anyhow::Result<TcpListener> {
    let addrs = resolve(addr).await?;
    let mut last = None;
    for addr in addrs {
        match TcpListener::bind(addr).await {
            Ok(listener) => return Ok(listener),
            Err(e) => last = Some((addr, e)),
        }
    }
    let (addr, e) = last.expect("resolve returns at least one address");
    Err(e).with_context(|| {
        format!("cannot listen on {addr}; is another server there? pick another port")
    })
}

/// The loopback addresses `addr` names; an error that says what to do for anything else.
async fn resolve(addr: &str) -> anyhow::Result<Vec<SocketAddr>> {
    let addr = addr.trim();
    if !addr.contains(':') || addr.ends_with(']') {
        bail!("{addr:?} has no port: use 127.0.0.1:PORT (port 0 picks a free one)");
    }
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host(addr)
        .await
        .with_context(|| format!("{addr:?} is not an address: use 127.0.0.1:PORT"))?
        .collect();
    if addrs.is_empty() {
        bail!("{addr:?} names no address: use 127.0.0.1:PORT");
    }
    if let Some(open) = addrs.iter().find(|a| !a.ip().is_loopback()) {
        bail!(
            "tabwire serves MCP on loopback only, and {addr} means {}, which other machines \
             can reach: whoever reaches it drives your logged-in browser. Use 127.0.0.1:{} \
             (or [::1]:{}); for a client on another machine, tunnel to it (ssh -L)",
            open.ip(),
            open.port(),
            open.port()
        );
    }
    Ok(addrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_loopback_addresses_are_accepted() {
        for ok in ["127.0.0.1:0", "[::1]:8790", "127.0.0.2:1", "localhost:0"] {
            assert!(resolve(ok).await.is_ok(), "{ok}");
        }
        for open in ["0.0.0.0:8790", "[::]:8790", "192.168.1.4:8790", "10.0.0.1:80"] {
            let e = resolve(open).await.unwrap_err().to_string();
            assert!(e.contains("loopback only") && e.contains("127.0.0.1:"), "{open}: {e}");
        }
        for bad in ["127.0.0.1", "[::1]", "nonsense"] {
            let e = resolve(bad).await.unwrap_err().to_string();
            assert!(e.contains("127.0.0.1:PORT"), "{bad}: {e}");
        }
    }
}
