//! Why a call into the browser failed, or why a file of the user's could not be used, in words
//! for the person who has to act on it.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;
use tabwire_proto::wire::{ErrorBody, code};

/// The exact text every browser tool answers with while no browser is attached.
pub const NO_BROWSER: &str =
    "no browser is connected: start Chrome with the tabwire extension, then run `tabwire doctor`";

/// A failed call. Every failure has a protocol error code (`specs/protocol.md`, "Error codes")
/// so programs can branch on it, and a message that says what happened and what to do.
#[derive(Debug, Clone, PartialEq)]
pub enum CallError {
    /// No browser is attached at all. Kept apart from the others because its text is a fixed
    /// sentence that tells the user how to get started.
    NoBrowser,
    /// The extension, the host or this bridge refused or failed the call.
    Failed(ErrorBody),
}

impl CallError {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        CallError::Failed(ErrorBody::new(code, message))
    }

    /// The browser's host went away while the call was in flight.
    pub fn disconnected(browser: &str) -> Self {
        Self::new(
            code::BROWSER_DISCONNECTED,
            format!(
                "{browser} went away before answering (the browser was closed, or its extension \
                 was reloaded); list_browsers shows what is attached now"
            ),
        )
    }

    /// The protocol error code.
    pub fn code(&self) -> &str {
        match self {
            CallError::NoBrowser => code::BROWSER_DISCONNECTED,
            CallError::Failed(body) => &body.code,
        }
    }

    /// Whether the failure has this code (one of `tabwire_proto::wire::code`): what a program
    /// branches on, never the message.
    pub fn is(&self, code: &str) -> bool {
        self.code() == code
    }

    /// Whether no browser is attached at all (rather than one that went away mid-call).
    pub fn is_no_browser(&self) -> bool {
        matches!(self, CallError::NoBrowser)
    }

    /// The message for the person, without the code.
    pub fn message(&self) -> &str {
        match self {
            CallError::NoBrowser => NO_BROWSER,
            CallError::Failed(body) => &body.message,
        }
    }
}

impl fmt::Display for CallError {
    /// `code: message`, except for [`CallError::NoBrowser`] whose sentence stands alone.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::NoBrowser => f.write_str(NO_BROWSER),
            CallError::Failed(body) => write!(f, "{}: {}", body.code, body.message),
        }
    }
}

impl std::error::Error for CallError {}

impl From<ErrorBody> for CallError {
    fn from(body: ErrorBody) -> Self {
        CallError::Failed(body)
    }
}

/// A file in a directory of the user's (adapters, workflows) that could not be used.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Problem {
    pub path: String,
    pub error: String,
}
