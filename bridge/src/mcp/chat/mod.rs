//! The `chat` family: ask an AI chat open in a tab and wait for its answer, as operations
//! (`operations.rs`, `specs/operations.md`).

mod operations;

pub use operations::OperationView;

use crate::mcp::family::Family;
use crate::mcp::server::TabwireServer;

pub const FAMILY: Family = Family {
    name: "chat",
    instructions: "\
Chat: to ask an AI chat open in a tab (claude.ai, chatgpt.com, gemini…), send_message_async \
returns an operation id at once and wait_for_operation returns the answer.",
    router: || TabwireServer::operation_tools(),
};
