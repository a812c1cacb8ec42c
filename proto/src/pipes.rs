//! This process's stdin and stdout as async streams, for both programs that talk over them: the
//! host (Native Messaging, from Chrome) and `tabwire mcp` (MCP, from the assistant's client).
//!
//! Both are started with pipes. On Unix a pipe is registered with the reactor directly, so a
//! message costs no thread hop; tokio's own stdin/stdout hand every read and write to a
//! blocking thread and wake the runtime from there, which on 2 cores shows in the tail of each
//! call (measured in bridge/benches/browser/floors.rs). Anything else (a terminal, a file) goes through
//! tokio's blocking stdio.

use std::io;

use tokio::io::{AsyncRead, AsyncWrite};

pub type Input = Box<dyn AsyncRead + Unpin + Send>;
pub type Output = Box<dyn AsyncWrite + Unpin + Send>;

/// stdin and stdout, each a reactor-registered pipe when it is one.
pub fn stdio() -> io::Result<(Input, Output)> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use tokio::net::unix::pipe;
        let input: Input =
            match pipe::Receiver::from_owned_fd(io::stdin().as_fd().try_clone_to_owned()?) {
                Ok(rx) => Box::new(rx),
                Err(_) => Box::new(tokio::io::stdin()),
            };
        let output: Output =
            match pipe::Sender::from_owned_fd(io::stdout().as_fd().try_clone_to_owned()?) {
                Ok(tx) => Box::new(tx),
                Err(_) => Box::new(tokio::io::stdout()),
            };
        Ok((input, output))
    }
    #[cfg(not(unix))]
    {
        Ok((Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout())))
    }
}
