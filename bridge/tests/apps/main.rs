//! Real third-party apps from npm and PyPI, served locally: widgets, editors, a data grid,
//! Swagger UI, and chat frameworks followed to completion.
//!
//! One test binary per theme (as ripgrep's `tests/`), a module per file: each links the
//! dependency tree once. The harness is `testkit/harness/`.

mod chat_frameworks;
mod real_apps;
