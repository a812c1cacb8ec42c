//! The tabwire wire protocol and the pieces of the native-messaging host that the bridge
//! shares: how frames are cut (`codec`), what the messages are (`wire`), how a message too big
//! for Chrome is split (`chunk`), and where the sockets live (`runtime_dir`).
//!
//! The relay itself (`relay`, run by `lifecycle`) is what the `tabwire-host` binary runs; the
//! remaining modules are its parts: who may start it (`origin`), its two kinds of peers
//! (`browser_io`, `bridge_conn` behind `listener`), and its housekeeping (`event_buffer`,
//! `frame_writer`, `logging`, `shutdown`).

pub mod bridge_conn;
pub mod browser_io;
pub mod chunk;
pub mod codec;
pub mod event_buffer;
pub mod extension_id;
pub mod frame_writer;
pub mod lifecycle;
pub mod limits;
pub mod listener;
pub mod logging;
pub mod origin;
pub mod program;
pub mod relay;
pub mod runtime_dir;
pub mod shutdown;
pub mod sites;
pub mod wire;
