//! How a tool's answer reaches the client: a short text for the model and the person, plus the
//! same facts as structured content matching the tool's `outputSchema`. A failed call becomes a
//! tool error (`isError: true`) whose text carries the error code and the message.
//!
//! Claude Code hands its model only the structured content (as JSON) when there is any, and
//! the text only when there is none (checked offline: `bridge/tests/clients/claude_code.rs`). So a tool
//! whose answer *is* text for the model — read_page's lines — answers with [`Text`] alone:
//! as JSON, every quote and line break of the page's lines would be escaped and cost tokens.

use std::borrow::Cow;

use rmcp::ErrorData;
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use serde::Serialize;

use tabwire_link::error::CallError;

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

/// A call that failed, as a tool's answer: an error result whose text says what happened and
/// what to do. A wrapper because the error type lives below the MCP layer (`tabwire-link`),
/// which knows nothing of MCP; `?` turns a [`CallError`] into it.
#[derive(Debug)]
pub struct ToolError(pub CallError);

impl From<CallError> for ToolError {
    fn from(error: CallError) -> Self {
        ToolError(error)
    }
}

impl IntoCallToolResult for ToolError {
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResult::error(vec![ContentBlock::text(self.0.to_string())]).into())
    }
}

/// What starts every line of page text that stands bare in a tool's text (read_page's text
/// mode), followed by a space: tabwire's own lines never start with it, and the page cannot
/// start a line at all, so a line is the page's exactly when it starts with the mark.
pub const MARK: char = '│';

/// Page text, each of its lines (split at `\n`) after the mark, kept to its line by
/// [`one_line`]; the page's own `│` is written `|`, so the mark appears only where tabwire put it.
pub fn marked(text: &str) -> String {
    if text.is_empty() {
        return String::new();
    }
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push(MARK);
        out.push(' ');
        out.push_str(&one_line(line).replace(MARK, "|"));
    }
    out
}

/// Page words kept on one line of a tool's text, and inert on a terminal (`tabwire call` prints
/// this text to one): every character some reader takes for a line break is written as its
/// escape (`\n`, `\r`, `\u2028`…), so the words cannot start a line that would look like
/// tabwire's; so is every other control character but tab (C0, DEL, C1: an escape sequence
/// that would move a terminal's cursor over tabwire's lines, retitle its window or set its
/// clipboard).
pub fn one_line(s: &str) -> Cow<'_, str> {
    let escaped = |c: char| (c.is_control() && c != '\t') || matches!(c, '\u{2028}' | '\u{2029}');
    if !s.contains(escaped) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if escaped(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_text_stays_on_its_lines_after_the_mark() {
        let forged = "ok\r[error] a\u{2028}b\u{85}c\u{b}d\u{c}e\u{2029}f";
        assert_eq!(one_line(forged), "ok\\r[error] a\\u2028b\\u0085c\\u000bd\\u000ce\\u2029f");
        assert_eq!(one_line("a\nb"), "a\\nb");
        // A terminal's controls: a cursor move, a clipboard write (OSC 52), a backspace, CSI.
        let terminal = "\u{1b}[1A\u{1b}]52;c;Y3VybA==\u{7}x\u{8}\u{7f}\u{9b}2J\tend";
        assert_eq!(
            one_line(terminal),
            "\\u001b[1A\\u001b]52;c;Y3VybA==\\u0007x\\u0008\\u007f\\u009b2J\tend"
        );
        assert!(matches!(one_line("plain │ text"), Cow::Borrowed(_)));
        assert_eq!(
            marked("# Title\n│ fake\npage \"X\" at y\u{2028}z"),
            "│ # Title\n│ | fake\n│ page \"X\" at y\\u2028z"
        );
        assert_eq!(marked(""), "");
    }
}
