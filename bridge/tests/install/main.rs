//! tabwire as a user gets it: the installed programs, the npm package, the demo, the Chrome Web
//! Store zip, and the Windows build under Wine.
//!
//! One test binary per theme (as ripgrep's `tests/`), a module per file: each links the
//! dependency tree once. The harness is `testkit/harness/`.

mod demo;
mod installed;
mod npm_package;
mod store_pack;
mod windows;
