//! The tabwire wire protocol and the pieces of the native-messaging host that the bridge
//! shares: how frames are cut (`codec`), what the messages are (`wire`), how a message too big
//! for Chrome is split (`chunk`), and where the sockets live (`runtime_dir`).
//!
//! The relay itself (`relay`) is what the `tabwire-host` binary runs.

pub mod chunk;
pub mod codec;
pub mod extension_id;
pub mod limits;
pub mod runtime_dir;
pub mod wire;
