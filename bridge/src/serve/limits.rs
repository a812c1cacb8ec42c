//! What `tabwire serve --http` lets its clients cost, and what happens at each limit.

use std::time::Duration;

/// MCP sessions at once (`--max-sessions`). Each is a core of its own: a connection to every
/// browser's host, a watcher listing the runtime dir every 100 ms, a unix socket and a `/wait`
/// port. At the cap, one more `initialize` ends the session that has waited longest for its
/// client with nothing in progress (clients that are not listening first) and takes its
/// place; only when every session has a request in progress is it answered 503
/// `too_many_connections`.
pub const MAX_SESSIONS: u16 = 32;
/// A session that never called a tool, with nothing in progress and no client listening, ends
/// after this long: a client that only looked (initialize, tools/list) and left without
/// ending its session, as the MCP Inspector CLI, SDK clients' `close()` and `claude mcp list`
/// do.
pub const UNUSED_TIMEOUT: Duration = Duration::from_secs(60);
/// How often the server looks for such sessions.
pub const SWEEP_EVERY: Duration = Duration::from_secs(5);
/// How long a new client waits for the place of the session it ended.
pub const RECLAIM_WAIT: Duration = Duration::from_secs(3);
/// A session whose client sent nothing for this long ends (`--idle-timeout`), as if its client
/// had sent DELETE: clients that vanish without saying so do not hold a slot for ever.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(600);
/// Below this, a session can end while one of its tools blocks quietly (wait_for_event waits
/// up to 120 s with nothing on the wire); the server says so at start. Shorter ones are for
/// tests.
pub const QUIET_WAIT_SECS: u64 = 130;
/// Connections with the token at once (SSE streams included: a client holds one per call in
/// progress plus one for notifications); a request past them is answered 503. Connections
/// that have not sent the token yet have a budget of their own (`tabwire_session::gate`), and
/// another user's are closed at once.
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
