//! Attacks and abuse, run as an attacker would run them: a hostile page, a steered assistant,
//! another session or another local user; faults and floods; the sites the user allows and the
//! popup's Stop.
//!
//! One test binary per theme (as ripgrep's `tests/`), a module per file: each links the
//! dependency tree once. The harness is `testkit/harness/`.

mod abuse;
mod abuse_operations;
mod forged_lines;
mod give_tab;
mod page_tools;
mod page_world;
mod sites;
mod stop;
mod trusted_input;
mod upload;
mod wait_limits;
mod workers;
