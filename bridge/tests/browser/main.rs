//! Pages in real Chromium: tabs, state, events and page commands; reading and acting on any
//! page; downloads, hand-over, focus, tab groups and the popup; the webdev tools; WebMCP; what
//! the extension costs the user's own pages.
//!
//! One test binary per theme (as ripgrep's `tests/`), a module per file: each links the
//! dependency tree once. The harness is `testkit/harness/`.

mod ask_user;
mod dom_act;
mod dom_extra;
mod dom_read;
mod downloads;
mod events;
mod focus;
mod groups;
mod page;
mod page_commands;
mod page_cost;
mod popup;
mod state;
mod tabs;
mod webdev;
mod webdev_network;
mod webmcp;
