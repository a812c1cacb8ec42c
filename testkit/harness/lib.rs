//! The one harness every cross-process and real-browser test uses.
//!
//! - [`bins`]: where the real `tabwire` and `tabwire-host` binaries are.
//! - [`host`]: the real `tabwire-host` alone, with the test as its browser and its bridges.
//! - [`fake_browser`]: a private runtime dir where the test plays the extension for real hosts
//!   and runs the real `tabwire` against them.
//! - [`cdp`]: a small CDP client over Chromium's `--remote-debugging-pipe`, to act on pages
//!   as a user would (real mouse events).
//! - [`chromium`]: Debian's Chromium, headless, with our unpacked extension, a fresh profile and
//!   a private runtime dir; killed by PID when dropped, also when a test fails.
//! - [`shared`]: a browser the tests of one process take in turn, each with a new session and
//!   no tab of the test before ([`Chromium::shared`]).
//! - [`fixtures`]: the test pages, served on 127.0.0.1 behind a random path token.
//! - [`mcp`]: `tabwire mcp` as a child, driven by rmcp's own client over stdio.
//! - [`elicit`]: the same with a client that answers the server's questions to the user.
//! - [`page_tools`]: the same with `--page-tools`, and a client that hears the tools change.
//! - [`serve`]: `tabwire serve --http` as a child, and rmcp's streamable-HTTP client for it;
//!   `TABWIRE_TEST_MCP=http` runs every [`Mcp::start`] through it.
//! - [`shell`]: `tabwire call` as a shell runs it.
//! - [`http`]: a bare HTTP GET, every header under the test's control.
//! - [`npm`]: npm packages installed into the target dir, for the three below.
//! - [`claude`]: the real Claude Code CLI from npm, installed once.
//! - [`model`]: a stand-in Messages API on loopback that scripts Claude Code's model and records
//!   what Claude Code hands it.
//! - [`peers`]: other browser MCP servers from npm (Playwright MCP, chrome-devtools-mcp), for
//!   the side-by-side benchmark.
//! - [`xvfb`]: a virtual X display, for a headed Chromium ([`Chromium::start_headed_with_cdp`]);
//!   Unix only (an X server; Windows has none, and its headed tests are Unix-only with it).
//! - [`process`]: ending a process by its pid, alone or with every process it started.
//! - [`pipe`]: on Windows, a host's named pipe read as the tests read a Unix socket.
//! - [`git`]: throwaway git repositories.
//! - [`js`]: the official MCP TypeScript SDK client and Ajv from npm, for schema checks.
//! - [`soak`]: sessions working as users run them, for a while; the soak bench and its CI guard.
//! - [`wine`]: the Windows programs under test, under Wine (`TABWIRE_TEST_WINDOWS_BINS`):
//!   [`bins::bin`] names wrappers that run them, and [`Chromium`] waits for a Windows host.
//! - [`pypi`]: Python chat frameworks (Gradio, Streamlit) from PyPI in a venv, their apps served
//!   on 127.0.0.1 with a fake model.

pub mod bins;
pub mod cdp;
pub mod chromium;
pub mod claude;
pub mod elicit;
pub mod fake_browser;
pub mod fixtures;
pub mod git;
pub mod host;
pub mod http;
pub mod js;
pub mod mcp;
pub mod model;
pub mod npm;
pub mod page_tools;
pub mod peers;
#[cfg(windows)]
pub mod pipe;
pub mod process;
pub mod progress;
pub mod pypi;
pub mod serve;
pub mod shared;
pub mod shell;
pub mod soak;
#[cfg(unix)]
pub mod wine;
#[cfg(unix)]
pub mod xvfb;

pub use cdp::Cdp;
pub use chromium::Chromium;
pub use fake_browser::{FakeBrowser, Sandbox};
pub use fixtures::Fixtures;
pub use mcp::{Mcp, Page, text};
