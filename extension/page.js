// page.* methods and page events: the service worker's side of the page SDK.
//
// Each tab whose page uses window.tabwire holds one long-lived port to this worker, opened by
// content/relay.js (name "tabwire-page"). Over it the page sends its state, events and replies,
// and the worker sends calls (get_state, command, drained) and acks. The worker keeps each
// page's last setState value, so page.get_state on a page without provideState is answered
// here without a round trip to the tab.

import { TabwireError, fail } from './errors.js';
import { hostProblem, sendEvent } from './native.js';
import { noSuchTab, showsErrorPage, tabId } from './tabs.js';

const pages = new Map(); // tab id → Page (below)
const waiting = new Map(); // tab id → callbacks waiting for that tab's port
let nextCall = 1;

export const pageMethods = {
  'page.get_state': async (params, { signal }) => {
    const page = await attach(tabId(params), signal);
    if (page.provider) return call(page, { op: 'get_state' }, signal);
    if (page.hasState) return page.state;
    fail('no_handler', `the page in tab ${page.tabId} has not called tabwire.setState or tabwire.provideState yet; wait for it to load, or make the page publish its state`);
  },

  'page.command': async (params, { signal }) => {
    const id = tabId(params);
    const { type, payload = null } = params;
    if (typeof type !== 'string' || type === '') fail('bad_request', '`type` must be the name of a command the page handles (a non-empty string)');
    return call(await attach(id, signal), { op: 'command', type, payload }, signal);
  },

  'page.drained': async (params, { signal }) => {
    const id = tabId(params);
    const { count } = params;
    if (!Number.isInteger(count) || count < 0) fail('bad_request', '`count` must be the number of events drained (an integer ≥ 0)');
    await call(await attach(id, signal), { op: 'drained', count }, signal);
    return {};
  },
};

export function listenForPages() {
  chrome.runtime.onConnect.addListener((port) => {
    const tab = port.sender?.tab;
    if (port.name !== 'tabwire-page' || port.sender.id !== chrome.runtime.id) return;
    if (tab?.id == null || port.sender.frameId !== 0) return port.disconnect();
    const page = {
      tabId: tab.id,
      port,
      provider: false,
      hasState: false,
      state: null,
      calls: new Map(), // call id → { resolve, reject }
      acked: 0, // highest message number to ack
      failed: [], // { n, error } among those
      ackTimer: null,
    };
    const old = pages.get(tab.id);
    if (old) {
      old.port.disconnect();
      gone(old);
    }
    pages.set(tab.id, page);
    port.onMessage.addListener((msg) => fromPage(page, msg));
    port.onDisconnect.addListener(() => {
      if (pages.get(page.tabId) === page) pages.delete(page.tabId);
      gone(page);
    });
  });
}

// The page went away (navigated, reloaded, closed, or the worker restarted): fail its calls.
function gone(page) {
  const err = new TabwireError('page_error', `the page in tab ${page.tabId} went away (it navigated, reloaded or closed) before answering; call again once the new page has loaded`);
  for (const c of page.calls.values()) c.reject(err);
  page.calls.clear();
}

function fromPage(page, msg) {
  switch (msg?.kind) {
    case 'sync': // the relay (re)connected or the page's handlers changed
      page.provider = msg.provider === true;
      if (typeof msg.json === 'string') {
        page.state = parse(msg.json);
        page.hasState = true;
      }
      return resolveWaiters(page);
    case 'state':
    case 'event':
      return publish(page, msg);
    case 'reply': {
      const c = page.calls.get(msg.id);
      if (!c) return; // cancelled or timed out meanwhile
      page.calls.delete(msg.id);
      if (msg.error) return c.reject(new TabwireError(msg.error.code, msg.error.message));
      try {
        c.resolve(JSON.parse(msg.json));
      } catch (e) {
        c.reject(new TabwireError('page_error', `the page's reply is not JSON: ${e.message}`));
      }
      return;
    }
    default:
      console.warn('tabwire: ignored a message from tab', page.tabId, msg?.kind);
  }
}

function parse(json) {
  try {
    return JSON.parse(json);
  } catch {
    return null; // the SDK only sends JSON.stringify output; a broken relay is not worth more
  }
}

// setState / pushEvent: forward to the host, then ack the page (cumulative, coalesced).
function publish(page, { kind, n, json }) {
  let error = null;
  try {
    const data = JSON.parse(json);
    if (kind === 'state') {
      page.state = data;
      page.hasState = true;
    }
    sendEvent(kind === 'state' ? 'state_update' : 'page_event', page.tabId, data);
  } catch (e) {
    // A state is kept for page.get_state even while the host is away; an event is lost.
    if (!(kind === 'state' && e.code === 'browser_disconnected'))
      error = { code: e.code ?? 'page_error', message: kind === 'event' && e.code === 'browser_disconnected' ? `the event was not delivered: tabwire is not connected to its host (${hostProblem()})` : e.message };
  }
  if (Number.isInteger(n) && n > page.acked) page.acked = n;
  if (error) page.failed.push({ n, error });
  page.ackTimer ??= setTimeout(() => {
    page.ackTimer = null;
    try {
      page.port.postMessage({ kind: 'ack', upto: page.acked, failed: page.failed });
    } catch {} // the page is gone
    page.failed = [];
  }, 0);
}

// Ask the page something; resolves with its reply. Aborts with `signal`.
function call(page, msg, signal) {
  const id = nextCall++;
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      page.calls.delete(id);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    page.calls.set(id, {
      resolve: (v) => (signal.removeEventListener('abort', onAbort), resolve(v)),
      reject: (e) => (signal.removeEventListener('abort', onAbort), reject(e)),
    });
    try {
      page.port.postMessage({ kind: 'call', id, ...msg });
    } catch (e) {
      page.calls.get(id)?.reject(new TabwireError('too_large', `could not pass this to the page: ${e.message}`));
      page.calls.delete(id);
    }
  });
}

// The port of the page in tab `id`. A page that used window.tabwire before this worker started
// has no port yet: ask its relay to connect.
async function attach(id, signal) {
  const page = pages.get(id);
  if (page) return page;
  const tab = await chrome.tabs.get(id).catch(() => {
    throw noSuchTab(id);
  });
  const port = new Promise((resolve, reject) => {
    const list = waiting.get(id) ?? [];
    waiting.set(id, list);
    list.push(resolve);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
  let answer;
  try {
    answer = await chrome.tabs.sendMessage(id, { tabwire: 'connect' }, { frameId: 0 });
  } catch {
    waiting.delete(id);
    throw await unreachable(tab);
  }
  port.catch(() => {}); // a refusal below leaves it unawaited
  if (!answer?.uses) {
    waiting.delete(id);
    fail('no_handler', `the page in tab ${id} (${tab.url}) does not use window.tabwire (no setState, provideState or onCommand yet); open a page that does, or wait for it to finish loading`);
  }
  return port;
}

function resolveWaiters(page) {
  const list = waiting.get(page.tabId);
  waiting.delete(page.tabId);
  for (const resolve of list ?? []) resolve(page);
}

async function unreachable(tab) {
  const url = tab.url || tab.pendingUrl || '';
  if (!/^(https?|file):/.test(url) || /^https:\/\/(chromewebstore\.google\.com|chrome\.google\.com\/webstore)/.test(url))
    return new TabwireError('not_scriptable', `tab ${tab.id} shows ${url || 'nothing yet'}, where extensions cannot run scripts; navigate it to a web page first`);
  if (await showsErrorPage(tab))
    return new TabwireError('not_scriptable', `tab ${tab.id} shows Chrome's error page: ${url} did not load (server down, wrong address or no network); navigate it again once the server is up`);
  if (tab.discarded)
    return new TabwireError('no_handler', `tab ${tab.id} was unloaded by the browser to save memory; activate or reload it (tabs.navigate to ${url}) and try again`);
  return new TabwireError('no_handler', `the tabwire content script is not running in tab ${tab.id} (${url}): the page loaded before the extension was installed or reloaded, or is still loading; reload the page (tabs.navigate to its url) and try again`);
}
