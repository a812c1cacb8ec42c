//! Every size and time limit of the protocol, in one place, so the spec can point at one file.

/// Largest frame Chrome accepts from a native host. Measured on Chromium 156: a frame of
/// exactly 1,048,576 bytes is delivered, one byte more disconnects the port with
/// "Error when communicating with the native messaging host.".
pub const MAX_TO_BROWSER: usize = 1024 * 1024;

/// Largest frame Chrome sends to a native host (`postMessage` throws above 64 MiB).
pub const MAX_FROM_BROWSER: usize = 64 * 1024 * 1024;

/// Largest frame a bridge may send to the host, and the host to a bridge. The host adds a few
/// bytes (`seq`, a rewritten id) to what the browser sent, hence the slack above 64 MiB.
pub const MAX_SOCKET_FRAME: usize = MAX_FROM_BROWSER + 64 * 1024;

/// Largest message the extension reassembles from chunks.
pub const MAX_REASSEMBLED: usize = MAX_FROM_BROWSER;

/// A request the browser has not answered within this time gets a `timeout` error.
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 10_000;

/// A longer `timeout_ms` is cut to this (one day): the host's timer cannot wait for ever, and a
/// request nobody answers for a day is lost anyway.
pub const MAX_REQUEST_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;

/// Events kept while no bridge is attached: at least this many…
pub const EVENT_BUFFER_MAX_EVENTS: usize = 10_000;
/// …and at most this many bytes of them. Over either, the oldest go first.
pub const EVENT_BUFFER_MAX_BYTES: usize = 16 * 1024 * 1024;

/// Bytes of bridge messages the host holds on their way to the browser (read, not yet
/// written). A bridge reader waits for room before it takes the next message, so a bridge
/// that sends faster than the browser reads is slowed down instead of growing the host.
pub const TO_BROWSER_IN_FLIGHT: usize = 16 * 1024 * 1024;

/// A bridge whose writer already has this many bytes waiting when another message comes has
/// stopped reading: it is disconnected, and what waited for it is freed. Above the largest
/// message, so one big message never trips it.
pub const BRIDGE_QUEUE_BYTES: usize = 64 * 1024 * 1024;

/// A frame whose first bytes arrived must be whole within this time on a local socket (the
/// host's, a session's), or the connection is closed: a peer that trickles a frame
/// (slowloris) holds its slot no longer than this. 64 MiB cross a unix socket in well under a
/// second; a stopped peer does not deserve more.
pub const SOCKET_FRAME_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Bridges one host serves at once; one more is closed at once (the bridge says the host is
/// full). Each is an assistant session or a one-shot command: tens, not thousands.
pub const MAX_BRIDGES: usize = 256;

/// Connections one session socket serves at once; one more gets a `too_many_connections`
/// error frame and is closed. Workers, hooks and scripts connect one at a time each.
pub const MAX_SESSION_CONNECTIONS: usize = 64;

/// A session-socket connection that sends no request for this long is closed (a client that
/// keeps one open between requests, such as a session's `Peers`, reconnects).
pub const SESSION_IDLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// How long a client waits to connect to a local socket (a session's, a host's).
pub const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// How long a client waits for a session to answer a push (`notify`, `post_message`, …), which
/// a live session answers in well under a millisecond: past this it is stopped or stuck, and
/// the caller hears which session did not answer. A wait gets its own timeout plus this.
pub const SESSION_REPLY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// After a failed `accept` (out of file descriptors: EMFILE, ENFILE) a listener waits this
/// long before it tries again, doubling up to [`ACCEPT_BACKOFF_MAX`]: a full fd table must
/// not turn an accept loop into a busy loop.
pub const ACCEPT_BACKOFF_MIN: std::time::Duration = std::time::Duration::from_millis(10);
pub const ACCEPT_BACKOFF_MAX: std::time::Duration = std::time::Duration::from_secs(1);

/// Largest request a session socket takes (a push: a worker's report, a message, a question).
/// A larger length prefix closes the connection before a byte is reserved for it.
pub const MAX_SESSION_REQUEST: usize = 1024 * 1024;
