//! tabwire's link to the browsers: the lower half of the bridge, below every feature.
//!
//! [`core::Core`] finds the browsers' hosts in the runtime directory and attaches to them
//! (`browser/`), carries typed calls there (`methods/`), and hands each event that comes back to
//! the one part that owns it (`inbox.rs`): the state cache (`state_cache.rs`), the pages'
//! declared commands (`commands/`), the session's queue (`events.rs`), or the sink a feature
//! registered for its kind (`inbox::Sink`: the operations' milestones, the workers' reports).
//! `page.rs` reads a page's state and runs its commands over them.
//!
//! Nothing here knows a feature: sessions, operations, workers and workflows are crates above
//! this one, and the compiler keeps the arrows pointing down.

pub mod browser;
pub mod commands;
pub mod core;
pub mod error;
pub mod events;
mod identity;
pub mod inbox;
pub mod limits;
pub mod methods;
pub mod page;
pub mod state_cache;
