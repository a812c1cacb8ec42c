//! How a tool's answer reaches the client: a short text for the model and the person, plus the
//! same facts as structured content matching the tool's `outputSchema`. A failed call becomes a
//! tool error (`isError: true`) whose text carries the error code and the message.
//!
//! Claude Code hands its model only the structured content (as JSON) when there is any, and
//! the text only when there is none (checked offline: `tests/tests/claude_code.rs`). So a tool
//! whose answer *is* text for the model — read_page's lines — answers with [`Text`] alone:
//! as JSON, every quote and line break of the page's lines would be escaped and cost tokens.

use rmcp::ErrorData;
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use serde::Serialize;

use crate::error::CallError;

/// A successful answer: `text` says it in a few lines, `data` is the structured content.
pub struct Reply<T> {
    text: String,
    data: T,
}

impl<T> Reply<T> {
    pub fn new(text: impl Into<String>, data: T) -> Self {
        Reply { text: text.into(), data }
    }
}

impl<T: Serialize> IntoCallToolResult for Reply<T> {
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        let value = serde_json::to_value(&self.data).map_err(|e| {
            ErrorData::internal_error(format!("cannot encode the result: {e}"), None)
        })?;
        // Not `CallToolResult::structured`: it would encode the whole value as text only for us
        // to replace that text with ours.
        let mut result = CallToolResult::success(vec![ContentBlock::text(self.text)]);
        result.structured_content = Some(value);
        Ok(result.into())
    }
}

/// A successful answer that is only text, with no structured content and no `outputSchema`.
pub struct Text(pub String);

impl IntoCallToolResult for Text {
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResult::success(vec![ContentBlock::text(self.0)]).into())
    }
}

impl IntoCallToolResult for CallError {
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResult::error(vec![ContentBlock::text(self.to_string())]).into())
    }
}
