//! The host and the links around it: `tabwire-host` started, fed bad input, relaying and shut
//! down; the bridge's core; the fast link and the page link; browsers coming and going;
//! `tabwire status` and `tabwire doctor`.
//!
//! One test binary per theme (as ripgrep's `tests/`), a module per file: each links the
//! dependency tree once. The harness is `testkit/harness/`.

mod attach;
mod bad_input;
mod bridge_core;
mod doctor;
mod fast_link;
mod lifecycle;
mod page_link;
mod relay;
mod status;
