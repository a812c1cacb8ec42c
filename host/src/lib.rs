//! The native-messaging host, `tabwire-host`: the process Chrome starts for the tabwire
//! extension, relaying between the browser (stdin/stdout) and any number of bridges (a local
//! socket). Its binary is built by the `tabwire` package beside `tabwire` and calls [`main`];
//! [`run`] is one run of the relay with its [`Config`] and a [`Shutdown`], for callers that
//! set up the rest themselves.
//!
//! It speaks the protocol of `tabwire-proto`; the relay itself (`relay`, run by `lifecycle`)
//! routes between the browser and the bridges, and the remaining modules are its parts: who
//! may start it (`origin`), its two kinds of peers (`browser_io` with its `fast_link`, `bridge_conn` behind
//! `listener`), and its housekeeping (`event_buffer`, `frame_writer`, `logging`). All private:
//! what a caller needs is re-exported here.

// The protocol modules, under the names the host's own modules use.
use tabwire_proto::{chunk, codec, extension_id, limits, runtime_dir, secret, sites, wire};

mod bridge_conn;
mod browser_io;
mod event_buffer;
mod fast_link;
mod frame_writer;
mod lifecycle;
mod listener;
mod logging;
mod origin;
mod program;
mod relay;

pub use lifecycle::{Config, run};
pub use program::main;
pub use tabwire_proto::Shutdown;
