//! What `tabwire serve --http` lets its clients cost, and what happens at each limit.

use std::time::Duration;

/// MCP sessions at once (`--max-sessions`). Each is a core of its own: a connection to every
/// browser's host, a watcher listing the runtime dir every 100 ms, a unix socket and a `/wait`
/// port. One more `initialize` is answered 503 `too_many_connections` until one ends.
pub const MAX_SESSIONS: u16 = 32;
/// A session whose client sent nothing for this long ends (`--idle-timeout`), as if its client
/// had sent DELETE: clients that vanish without saying so do not hold a slot for ever.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(600);
/// Below this, a session can end while one of its tools blocks quietly (wait_for_event waits
/// up to 120 s with nothing on the wire); the server says so at start. Shorter ones are for
/// tests.
pub const QUIET_WAIT_SECS: u64 = 130;
/// TCP connections at once (SSE streams included: a client holds one per call in progress
/// plus one for notifications). One more is answered 503 and closed.
pub const MAX_CONNECTIONS: usize = 512;
/// How long a client may take to send a request's head; also how long a connection may sit
/// idle between requests (hyper closes it then, answered or not).
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a client may take to send a request's body once its head passed the door; then
/// 408 and the connection closes.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest request body (a JSON-RPC message); larger ones get 413.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// How long a stopping server waits for its sessions to end (workers told, records removed).
pub const DRAIN: Duration = Duration::from_secs(5);
