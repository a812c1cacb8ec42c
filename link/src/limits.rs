//! The bridge's own limits in one place, as `proto/src/limits.rs` holds those both sides share:
//! how long the bridge waits for the browser, and how long a client may ask it to wait. Each
//! surface's own caps (connections, sizes) stay beside their code and in specs/security.md.

use std::time::Duration;

/// A question the extension answers without waiting for anything (list, close, activate, a
/// cached state, cancel): a slow answer means a stuck browser.
pub const QUICK_CALL: Duration = Duration::from_secs(5);

/// Waiting for a page: its load, or its own command handler.
pub const PAGE_CALL: Duration = Duration::from_secs(30);

/// The longest one wait of a script or of a page read may last (the session socket, `GET
/// /wait`, `tabwire wait`, wait_for_state_change, wait_for), in seconds. Long enough to be
/// worth the round trip, short enough that a client notices a dead session; wait again for
/// longer. (wait_for_event and wait_for_operation, whose client is an MCP session that
/// cancels, allow an hour.)
pub const MAX_WAIT_SECS: u64 = 120;

/// The default wait of `tabwire wait` and `GET /wait`, in seconds.
pub const DEFAULT_WAIT_SECS: u64 = 30;
