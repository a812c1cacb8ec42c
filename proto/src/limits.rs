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
