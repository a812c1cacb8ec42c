//! The tabwire protocol: what the host (`tabwire-host`) and the bridges (`tabwire`) both speak,
//! so that neither depends on the other. How frames are cut (`codec`, bytes only), what the
//! messages and error codes are (`wire`, serde only), how a message too big for Chrome is split
//! (`chunk`), every size and time limit with why (`limits`), which extension may start the host
//! (`extension_id`), stdin and stdout as reactor pipes (`pipes`), the grammar of the sites the
//! user allows (`sites`), the one comparison of secret tokens (`secret`), where the sockets and
//! records live (`runtime_dir`) and how a session's is found (`sessions`), where tabwire keeps its
//! own files and how it keeps them private (`dirs`), and how every local socket (a named pipe on
//! Windows) is bound, checked and accepted on (`socket`) and split for the reactor (`stream`).
//! Both programs also end the same way: on a [`Shutdown`] their `main` makes from SIGTERM and
//! SIGINT. The contract in words is `specs/protocol.md`.
//!
//! Each module is a namespace the host and the bridge both use by name (`wire::code`,
//! `runtime_dir::resolve`), so they stay public; what is not part of the contract stays
//! private inside them.

pub mod chunk;
pub mod codec;
pub mod dirs;
pub mod extension_id;
pub mod limits;
pub mod pipes;
pub mod runtime_dir;
pub mod secret;
pub mod sessions;
mod shutdown;
pub mod sites;
pub mod socket;
#[cfg(unix)]
pub mod stream;
#[cfg(windows)]
mod win;
pub mod wire;

/// On Windows a connected pipe splits into tokio's own halves: the wake-ups the Unix `stream`
/// avoids are those of Linux's Unix sockets.
#[cfg(windows)]
pub mod stream {
    use crate::socket::Stream;

    pub type ReadHalf = tokio::io::ReadHalf<Stream>;
    pub type WriteHalf = tokio::io::WriteHalf<Stream>;

    /// Split a connected pipe.
    pub fn split(stream: Stream) -> std::io::Result<(ReadHalf, WriteHalf)> {
        Ok(tokio::io::split(stream))
    }
}

pub use shutdown::{Shutdown, Trigger};
