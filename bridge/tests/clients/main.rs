//! MCP clients as they speak to tabwire: exact JSON-RPC, streamable HTTP, the tools, their
//! schemas, resources, prompts and logging; sessions, workers, workflows and operations; the
//! real Claude Code CLI.
//!
//! One test binary per theme (as ripgrep's `tests/`), a module per file: each links the
//! dependency tree once. The harness is `testkit/harness/`.

mod claude_code;
mod http;
mod jsonrpc_exact;
mod logging;
mod operations;
mod resources;
mod schemas;
mod sessions;
mod tools;
mod workers;
mod workflows;
