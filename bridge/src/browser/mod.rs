//! The browsers this bridge is attached to: finding their hosts, talking to each, and naming them.

mod connection;
mod identity;
mod watcher;

pub use connection::{AttachError, BrowserEvent, Connection};
pub use identity::{BrowserInfo, matches};
pub(crate) use watcher::watch;
