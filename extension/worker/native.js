// Service worker, started by background.js with the guarded methods (startNative): the port to the
// native host "dev.tabwire.host" (specs/protocol.md): hello, requests and their responses, cancel,
// chunk reassembly, events out, and reconnecting with backoff. An open native port also keeps this
// service worker alive.
//
// The fast link: the host names a loopback WebSocket (event `fast_link`, only ever by Native
// Messaging); once it is open, both sides send by it what they would send by the port, which
// skips the wait Chrome's pipe reading can add (host/src/fast_link.rs). Order is kept: each
// side sends the mark event `link` by the port as its last message there, and takes what comes
// by the link only after the other side's mark. Each link is numbered (`?n=` in its URL, and
// `{n}` in both marks), so a mark that comes late for an earlier link releases nothing. The
// port carries everything whenever the link is down; the link is tried again after a pause.

import { TabwireError, toWire } from '../lib/errors.js';
import { setStatus } from './status.js';

const HOST = 'dev.tabwire.host';
const PROTOCOL = 1;
const MAX_MESSAGE = 64 * 1024 * 1024; // Chrome's limit for one message either way; also for a chunk stream
const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 30_000;
const DEFAULT_TIMEOUT_MS = 10_000;

let methods = {};
let ready = Promise.resolve(); // what must be done before the first connect
let onConnect = () => {}; // sends what the host should hear right after hello
// The link to the host, in one of four states:
//   idle        nothing tried yet;
//   connecting  preparing the hello (waiting for `ready`);
//   open        a port exists; `up` once the host spoke or the port outlived Chrome's quick
//               refusal (then `reason` is null);
//   backoff     the port closed for `reason`; `retry` reconnects after `delay`.
const link = { state: 'idle', port: null, up: false, reason: 'not connected yet', delay: FIRST_DELAY_MS, retry: null };
// The fast link: { url, ws, n (its number; the last one given out), open (our mark sent: we
// send by it), marked (the host's mark for it came: we take what it brings), held (what it
// brought before), retry, delay }.
const fast = { url: null, ws: null, n: 0, open: false, marked: false, held: [], retry: null, delay: 1000, sent: 0, received: 0 };
const MAX_HELD = 4096;
// What carries messages now, for the popup.
const BY_FAST_LINK = 'the fast link (a loopback WebSocket to tabwire-host)';
const BY_PORT = 'Native Messaging';
const inflight = new Map(); // request id → AbortController; gone once answered or cancelled
const hostStatusListeners = new Set();
const streams = new Map(); // chunk stream id → { count, parts, received, size }

// `table`: method name → async (params, { signal, timeoutMs }) → result. Throw a TabwireError
// to answer with an error; `signal` aborts on cancel, timeout or disconnect.
// `options.ready`: a promise the first connect waits for (the content scripts registered, so a
// page opened once the host is up gets them). `options.onConnect()`: called right after each
// hello, on the new port (it may call sendEvent).
export function startNative(table, options = {}) {
  methods = table;
  ready = options.ready ?? ready;
  onConnect = options.onConnect ?? onConnect;
  connect();
}

// `fn(data)` for each `host_status` event the host sends (its pid, bridges, sessions).
export function onHostStatus(fn) {
  hostStatusListeners.add(fn);
}

// Whose tab an event is about: the id of the live session whose group holds it, or null.
let ownerOfTab = () => null;
export function ownersBy(fn) {
  ownerOfTab = fn;
}

export function isConnected() {
  return link.state === 'open';
}

// Send an event to the host. `from`, when given, is the provenance the worker took from the
// sender of the port the event came on — never from what the page says: `{origin, url}` (url
// without its fragment), set as top-level `origin` and `url` beside `tab_id`.
// Throws a TabwireError when there is no host or Chrome refuses it.
// An event about a tab in a live session's tab group names that session (`owner`, from
// groups.js): the other sessions' bridges drop it, so a session hears only its own tabs and the
// user's.
export function sendEvent(event, tab_id, data, from = null) {
  const msg = { type: 'event', event, tab_id };
  if (from?.origin) msg.origin = from.origin;
  if (from?.url) msg.url = from.url;
  const owner = Number.isInteger(tab_id) ? ownerOfTab(tab_id) : null;
  if (owner) msg.owner = owner;
  msg.data = data;
  post(msg);
}

export async function connect() {
  if (link.state === 'connecting' || link.state === 'open') return;
  clearTimeout(link.retry);
  link.retry = null;
  link.state = 'connecting';
  let hello;
  try {
    await ready.catch(() => {}); // a failed preparation is logged where it failed; connect anyway
    hello = await helloMessage();
  } catch (e) {
    console.error('tabwire: cannot prepare the hello:', e);
    link.state = 'idle';
    return;
  }
  const p = chrome.runtime.connectNative(HOST);
  Object.assign(link, { state: 'open', port: p, up: false });
  let heard = false;
  // Chrome reports a missing or refused host by closing the port within milliseconds: call it
  // up when the host spoke, or when the port is still open a moment later.
  const up = () => {
    if (link.port !== p || link.up) return;
    Object.assign(link, { up: true, reason: null });
    setStatus({ connected: true, last_error: null, carrier: fast.open ? BY_FAST_LINK : BY_PORT });
  };
  const settled = setTimeout(up, 500);
  p.onMessage.addListener((msg) => {
    if (!heard) {
      heard = true;
      link.delay = FIRST_DELAY_MS; // the host is up and talking: the next failure starts afresh
      up();
    }
    receive(msg);
  });
  p.onDisconnect.addListener(() => {
    clearTimeout(settled);
    disconnected(p, chrome.runtime.lastError?.message);
  });
  try {
    p.postMessage(hello);
  } catch {
    return; // onDisconnect follows with the reason
  }
  try {
    onConnect();
  } catch (e) {
    console.warn('tabwire: could not tell the host what it needs after hello:', e.message);
  }
}

function disconnected(p, chromeSays) {
  if (link.port !== p) return;
  closeFast(null); // its host is gone; the next one names a new link
  const reason = explain(chromeSays);
  Object.assign(link, { state: 'backoff', port: null, up: false, reason, retry: setTimeout(connect, link.delay) });
  const gone = new TabwireError('browser_disconnected', `the connection to the tabwire host closed: ${reason}`);
  for (const ctl of inflight.values()) ctl.abort(gone);
  inflight.clear();
  streams.clear();
  setStatus({ connected: false, host_pid: null, bridges: 0, last_error: reason, carrier: null });
  console.warn(`tabwire: host disconnected (${reason}); reconnecting in ${link.delay} ms`);
  link.delay = Math.min(link.delay * 2, MAX_DELAY_MS);
}

// Why the port closed, in words a person can act on.
function explain(chromeSays) {
  if (!chromeSays) return 'the tabwire host exited';
  if (/not found/i.test(chromeSays))
    return `the tabwire host is not installed for this browser (Chrome: "${chromeSays}"); run \`tabwire install\`; the extension retries by itself`;
  if (/forbidden/i.test(chromeSays))
    return `the installed tabwire host does not allow extension ${chrome.runtime.id} (Chrome: "${chromeSays}"); run \`tabwire install\` again`;
  if (/exited/i.test(chromeSays)) return `the tabwire host exited (Chrome: "${chromeSays}"); its log is on its stderr`;
  return `Chrome: "${chromeSays}"`;
}

// Why nothing can be sent to the host right now (for error messages).
export function hostProblem() {
  return link.reason ?? 'connecting';
}

function post(msg) {
  if (!link.port) throw new TabwireError('browser_disconnected', `tabwire is not connected to its host: ${hostProblem()}`);
  // A link being closed drops what is sent on it: from the moment it closes, the port.
  if (fast.open && fast.ws.readyState === WebSocket.OPEN) {
    const text = JSON.stringify(msg);
    const bytes = text.length * 3 > MAX_MESSAGE ? new TextEncoder().encode(text).length : text.length;
    if (bytes > MAX_MESSAGE) throw new TabwireError('too_large', `the message is ${bytes} bytes as JSON, over the 64 MiB limit for one message. Keep one message under 64 MiB.`);
    fast.ws.send(text);
    fast.sent++;
    return;
  }
  try {
    link.port.postMessage(msg);
  } catch (e) {
    if (!link.port) throw new TabwireError('browser_disconnected', `tabwire is not connected to its host: ${hostProblem()}`);
    throw new TabwireError('too_large', `Chrome refused to send it to the host: ${e.message} Keep one message under 64 MiB.`);
  }
}

function receive(msg) {
  switch (msg?.type) {
    case 'request':
      return void handle(msg);
    case 'cancel': {
      const ctl = inflight.get(msg.id);
      inflight.delete(msg.id); // no response follows a cancel
      return ctl?.abort(new TabwireError('cancelled', 'cancelled by the host'));
    }
    case 'chunk': {
      const whole = reassemble(msg);
      return whole && receive(whole);
    }
    case 'event':
      if (msg.event === 'fast_link') return openFast(msg.data?.url);
      if (msg.event === 'link') {
        // Late, for a link that is gone? (A host from before numbered links names none.)
        const n = msg.data?.n;
        if (!fast.ws || (n !== undefined && n !== fast.n)) return;
        fast.marked = true;
        for (const m of fast.held.splice(0)) receive(m);
        return;
      }
      if (msg.event === 'host_status') {
        const d = msg.data ?? {};
        setStatus({ host_pid: d.host_pid ?? null, bridges: d.bridges ?? 0, host_version: d.host_version ?? null });
        if (typeof d.refused === 'string') setStatus({ connected: false, last_error: d.refused });
        for (const fn of hostStatusListeners) fn(d);
        return;
      }
      console.warn('tabwire: ignored an event from the host:', msg.event);
      return;
    default:
      console.error('tabwire: ignored a message from the host of unknown type', msg?.type);
      return;
  }
}

async function handle({ id, method, params = null, timeout_ms, session }) {
  if (typeof id !== 'string') {
    console.error('tabwire: ignored a request without a string id', method);
    return;
  }
  const timeoutMs = Number.isFinite(timeout_ms) && timeout_ms > 0 ? timeout_ms : DEFAULT_TIMEOUT_MS;
  let reply;
  if (!Object.hasOwn(methods, method)) {
    reply = { type: 'response', id, error: {
      code: 'unknown_method',
      message: `the extension has no method ${JSON.stringify(method)}; it answers ${Object.keys(methods).join(', ')}. Update the extension if the bridge is newer`,
    } };
    return void trySend(reply);
  }
  const ctl = new AbortController();
  inflight.set(id, ctl);
  const timer = setTimeout(
    () => ctl.abort(new TabwireError('timeout', `${method} did not finish within ${timeoutMs} ms`)),
    timeoutMs,
  );
  try {
    // The bridge session the call is for (`request.session`), null for none.
    // `parent`: the session that spawned it (a worker's lead), which may give it tabs.
    const caller = typeof session?.id === 'string' && typeof session?.name === 'string'
      ? { id: session.id, name: session.name, parent: typeof session.parent === 'string' ? session.parent : null }
      : null;
    reply = { type: 'response', id, result: (await methods[method](params, { signal: ctl.signal, timeoutMs, session: caller })) ?? null };
  } catch (err) {
    reply = { type: 'response', id, error: toWire(err, method) };
  }
  clearTimeout(timer);
  if (inflight.get(id) !== ctl) return; // cancelled, or the port it came on closed: send nothing
  inflight.delete(id);
  trySend(reply);
}

function trySend(reply) {
  try {
    post(reply);
  } catch (err) {
    if (err.code !== 'too_large') {
      console.warn('tabwire: could not answer request', reply.id, err.message);
      return;
    }
    trySend({ type: 'response', id: reply.id, error: { code: 'too_large', message: `the result is too large: ${err.message}` } });
  }
}

// Open the fast link the host named (a loopback WebSocket; anything else is ignored).
function openFast(url) {
  if (typeof url !== 'string' || !/^ws:\/\/127\.0\.0\.1:\d+\/[0-9a-f]+$/.test(url)) return;
  closeFast(null);
  fast.url = url;
  fast.delay = 1000;
  tryFast();
}

function tryFast() {
  fast.retry = null;
  if (!fast.url || !link.port) return;
  let ws;
  const n = fast.n + 1;
  try {
    ws = new WebSocket(`${fast.url}?n=${n}`);
  } catch (e) {
    console.warn('tabwire: the fast link could not be opened:', e.message);
    return;
  }
  Object.assign(fast, { ws, n, open: false, marked: false, held: [] });
  ws.onopen = () => {
    if (fast.ws !== ws) return ws.close();
    try {
      post({ type: 'event', event: 'link', data: { n } }); // our last message by the port
    } catch {
      return ws.close();
    }
    fast.open = true;
    fast.delay = 1000;
    setStatus({ carrier: BY_FAST_LINK });
  };
  ws.onmessage = (e) => {
    if (fast.ws !== ws) return;
    let msg;
    try {
      msg = JSON.parse(e.data);
    } catch {
      return closeFast(ws, 'the host sent something that is not JSON');
    }
    fast.received++;
    if (fast.marked) return receive(msg);
    if (fast.held.length >= MAX_HELD) return closeFast(ws, 'the host sent too much before its mark');
    fast.held.push(msg);
  };
  ws.onclose = () => closeFast(ws, 'it closed');
}

// Back to the port only; try the link again later while the port is open. `ws` null: close
// whatever link there is and forget its address (the host went).
function closeFast(ws, why) {
  if (ws && fast.ws !== ws) return;
  const was = fast.ws;
  Object.assign(fast, { ws: null, open: false, marked: false, held: [] });
  if (was && was.readyState <= 1) was.close();
  clearTimeout(fast.retry);
  fast.retry = null;
  if (!ws) {
    fast.url = null;
    return;
  }
  console.warn(`tabwire: the fast link closed (${why}); Native Messaging carries everything, and the link is tried again in ${fast.delay} ms`);
  setStatus({ carrier: `${BY_PORT}: the fast link closed (${why}); it is tried again in ${fast.delay / 1000} s` });
  fast.retry = setTimeout(tryFast, fast.delay);
  fast.delay = Math.min(fast.delay * 2, MAX_DELAY_MS);
}

// For the tests and the benchmark, through the debugger only (tabwireDebug.fastLink, set in
// background.js): whether the link carries messages now, how many it carried, and a way to cut it.
export const fastLinkDebug = {
  state: () => ({ open: fast.open, marked: fast.marked, url: fast.url, n: fast.n, sent: fast.sent, received: fast.received }),
  cut: () => fast.ws && closeFast(fast.ws, 'cut through the debugger'),
};

// Join a chunk stream (protocol.md, "Chunking"). Returns the whole message once complete.
function reassemble({ id, index, count, data }) {
  const drop = (why) => {
    streams.delete(id);
    console.error(`tabwire: dropped chunk stream ${JSON.stringify(id)}: ${why}`);
  };
  if (typeof id !== 'string' || typeof data !== 'string' || !Number.isInteger(index) || !Number.isInteger(count) || count < 1 || count > MAX_MESSAGE)
    return drop('a malformed chunk');
  let s = streams.get(id);
  if (!s) streams.set(id, (s = { count, parts: new Array(count), received: 0, size: 0 }));
  if (count !== s.count) return drop(`its count changed from ${s.count} to ${count}`);
  if (index < 0 || index >= count) return drop(`index ${index} is out of range (count ${count})`);
  if (s.parts[index] !== undefined) return drop(`index ${index} arrived twice`);
  s.size += data.length;
  if (s.size > MAX_MESSAGE) return drop(`it is over the ${MAX_MESSAGE}-byte limit for one message`);
  s.parts[index] = data;
  if (++s.received < count) return null;
  streams.delete(id);
  try {
    return JSON.parse(s.parts.join(''));
  } catch (e) {
    return drop(`the joined text is not JSON: ${e.message}`);
  }
}

async function helloMessage() {
  let { profile } = await chrome.storage.local.get('profile');
  if (!profile) {
    profile = crypto.randomUUID();
    await chrome.storage.local.set({ profile });
  }
  return {
    type: 'hello',
    protocol: PROTOCOL,
    extension_version: chrome.runtime.getManifest().version,
    extension_id: chrome.runtime.id,
    build_id: await buildId(),
    browser: browserBrand(),
    profile,
  };
}

// Which build of the extension this is: `tabwire install` writes build.json beside the files
// it unpacks (doctor compares it with the binary's). A checkout has none: null.
async function buildId() {
  try {
    const build = await (await fetch(chrome.runtime.getURL('build.json'))).json();
    return typeof build?.build_id === 'string' ? build.build_id : null;
  } catch {
    return null;
  }
}

function browserBrand() {
  const brands = (navigator.userAgentData?.brands ?? []).map((b) => b.brand);
  const known = [['Edge', 'edge'], ['Brave', 'brave'], ['Opera', 'opera'], ['Vivaldi', 'vivaldi'], ['Google Chrome', 'chrome']];
  for (const [name, brand] of known) if (brands.some((b) => b.includes(name))) return brand;
  return 'chromium';
}
