//! The native-messaging host: `program` is what the `tabwire-host` binary runs (built by the
//! `tabwire` package beside `tabwire`). It speaks the protocol of `tabwire-proto`; the relay
//! itself (`relay`, run by `lifecycle`) routes between the browser and the bridges, and the
//! remaining modules are its parts: who may start it (`origin`), its two kinds of peers
//! (`browser_io`, `bridge_conn` behind `listener`), and its housekeeping (`event_buffer`,
//! `frame_writer`, `logging`, `shutdown`).

// The protocol modules, under the names the host's own modules use.
use tabwire_proto::{chunk, codec, extension_id, limits, runtime_dir, sites, wire};

pub mod bridge_conn;
pub mod browser_io;
pub mod event_buffer;
pub mod frame_writer;
pub mod lifecycle;
pub mod listener;
pub mod logging;
pub mod origin;
pub mod program;
pub mod relay;
pub mod shutdown;
