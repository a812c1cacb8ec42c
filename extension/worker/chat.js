// Service worker, called by the bridges: the chat.* methods and the `operation` events, this side
// of operations (specs/operations.md). The content script isolated/chat-observer.js, injected on
// demand into the tab's ISOLATED world, types the message and observes the page; it reports
// milestones over a long-lived port (name "chat") and this worker forwards each as an `operation`
// event. The worker itself reports what the page cannot: the tab closed, the page replaced, its
// site revoked.
//
// Nothing is typed into a page of a site the user did not allow (sites.js), nor into one the
// adapter is not for; milestones of a site that is no longer allowed are not passed on. Which
// document a milestone came from is the chat port's sender, set by Chrome.

import { TabwireError, fail } from '../lib/errors.js';
import { isPaused } from '../lib/pause-store.js';
import { allows, onSitesChanged, sitesReady } from '../lib/sites-store.js';
import { globMatch, originOf, withoutFragment } from '../lib/sites.js';
import { CHAT_OBSERVER } from './content-scripts.js';
import { sendEvent } from './native.js';
import { acceptPorts, askTab } from './router.js';
import { checkSite, expectedOrigin } from './sites.js';
import { getTab, reportedUrl, tabId } from './tabs.js';
import { method } from './traits.js';

// operation id → { tab, from: {origin, url} of the document it runs in }, while followed
const running = new Map();
const ports = new Map(); // tab id → the chat port of the page in that tab
const injected = new Map(); // tab id → the document the observer was put into

export const chatMethods = {
  'chat.send': async (params, { signal }) => {
    const id = tabId(params);
    const { operation_id, text, adapter, wait_ms = 10_000 } = params;
    const expected = expectedOrigin(params);
    if (typeof operation_id !== 'string' || operation_id === '') fail('bad_request', '`operation_id` must be a non-empty string');
    if (typeof text !== 'string' || text.trim() === '') fail('bad_request', '`text` must be the message to send (a non-empty string)');
    if (adapter === null || typeof adapter !== 'object') fail('bad_request', '`adapter` must be a site adapter object');
    const { matches } = adapter;
    if (!Array.isArray(matches) || matches.length === 0 || !matches.every((m) => typeof m === 'string' && m !== ''))
      fail('bad_request', `adapter ${JSON.stringify(adapter.name)} has no \`matches\` (a non-empty array of URL patterns such as "https://claude.ai/*"), so nothing says where it may type; give it one`);
    await sitesReady;
    const tab = await getTab(id);
    // The document that will be typed into is the one the tab shows now; the observer checks
    // its own origin against this one again before typing (the tab may navigate meanwhile).
    const url = withoutFragment(tab.url ?? '');
    const origin = originOf(url);
    checkSite(id, origin, expected, url);
    if (!matches.some((m) => globMatch(m, url)))
      fail('adapter_mismatch', `the adapter ${JSON.stringify(adapter.name)} is for ${matches.join(', ')}; tab ${id} shows ${url}, so nothing was typed`);
    await inject(id, tab);
    running.set(operation_id, { tab: id, from: { origin, url } });
    try {
      return await ask(id, { type: 'chat.send', operation_id, text, adapter, wait_ms, origin }, signal);
    } catch (e) {
      running.delete(operation_id);
      throw e;
    }
  },

  // The generic chat detector's proposal for the page in the tab (specs/operations.md, "A
  // detected adapter"): selectors for its text box, send and stop controls, and whether the
  // choice is clear. Reads the page, types nothing; only in an allowed site's page.
  'chat.detect': async (params, { signal }) => {
    const id = tabId(params);
    const expected = expectedOrigin(params);
    await sitesReady;
    const tab = await getTab(id);
    const url = withoutFragment(tab.url ?? '');
    const origin = originOf(url);
    checkSite(id, origin, expected, url);
    await inject(id, tab);
    const got = await ask(id, { type: 'chat.detect' }, signal);
    return { ...got, url, origin: origin ?? '' };
  },

  // Where an operation is, as the page saw it: `{found, milestones}`. Used by a bridge that
  // started while the operation ran, to apply what it missed.
  'chat.status': method({ bookkeeping: true }, async (params, { signal }) => {
    const id = tabId(params);
    const { operation_id } = params;
    await sitesReady;
    // The document that answers: the observer's, when its port is open; else the tab's.
    let from = ports.get(id)?.from;
    if (!from) {
      const tab = await getTab(id);
      const url = withoutFragment(tab.url ?? '');
      from = { origin: originOf(url), url };
      if (from.origin === null) return { found: false, milestones: [] }; // no web page: no observer
    }
    checkSite(id, from.origin, undefined, from.url);
    let answer;
    try {
      answer = await ask(id, { type: 'chat.status', operation_id }, signal);
    } catch (e) {
      if (e.code === 'no_such_tab') throw e;
      return { found: false, milestones: [] }; // no observer in the page: it was replaced
    }
    if (answer.found && !answer.finished) running.set(operation_id, { tab: id, from });
    return answer;
  }),

  // Always allowed, whatever the site: stopping is safe. Pressing the app's stop control
  // (`stop: true`, the adapter's `stop`) only while the page's site is allowed and the user has
  // not paused tabwire (the popup's Stop: nothing is done in a page then); the
  // `response_stopped` milestone it ends with is answered (and sent as an event as usual).
  'chat.cancel': method({ stops: true }, async (params, { signal }) => {
    const id = tabId(params);
    const { operation_id } = params;
    const from = running.get(operation_id)?.from;
    running.delete(operation_id);
    await getTab(id);
    const stop = params.stop === true && allows(from?.origin) && !(await isPaused());
    const answer = await ask(id, { type: 'chat.cancel', operation_id, stop }, signal).catch(() => ({ cancelled: false }));
    const m = stop ? answer.stopped : null;
    if (!m || m.milestone !== 'response_stopped' || !Number.isSafeInteger(m.n)) return { cancelled: answer.cancelled ?? false };
    return { cancelled: true, stopped: { operation_id, milestone: m.milestone, n: m.n, at: Number.isFinite(m.at) ? m.at : Date.now(), data: m.data ?? {} } };
  }),
};

export function listenForChats() {
  acceptPorts('chat', (port, { tab, from }) => {
    const page = { port, from };
    ports.get(tab.id)?.port.disconnect();
    ports.set(tab.id, page);
    port.onMessage.addListener((msg) => milestone(tab.id, page, msg));
    port.onDisconnect.addListener(() => {
      if (ports.get(tab.id) !== page) return;
      ports.delete(tab.id);
      pageGone(tab.id);
    });
  });
  chrome.tabs.onRemoved.addListener((id) => {
    injected.delete(id);
    for (const op of opsIn(id))
      failed(id, op, 'tab_closed', `tab ${id} was closed before the answer finished`);
  });
  // A revoked site's operations end now (their milestones would not be passed on any more),
  // and their observers stop.
  onSitesChanged(() => {
    for (const [op, { tab, from }] of running) {
      if (allows(from.origin)) continue;
      failed(tab, op, 'site_not_allowed', `tabwire is no longer allowed on ${from.origin}, so the operation in tab ${tab} was stopped`);
      ask(tab, { type: 'chat.cancel', operation_id: op }).catch(() => {});
    }
  });
}

// A milestone from the page: only known fields of the right types go on, and only while the
// page's site is allowed.
function milestone(tab, page, msg) {
  const { operation_id, milestone: name, n, at, data } = msg ?? {};
  if (typeof operation_id !== 'string' || typeof name !== 'string' || !Number.isSafeInteger(n)) return;
  if (!allows(page.from.origin)) return;
  const op = running.get(operation_id);
  if (op?.tab === tab) op.from = page.from;
  if (['response_completed', 'response_stopped', 'failed'].includes(name)) running.delete(operation_id);
  emit(tab, { operation_id, milestone: name, n, at: Number.isFinite(at) ? at : Date.now(), data: data ?? {} }, page.from);
}

// The page's port closed: the document went away. If the tab is still there, the page was
// replaced (navigation, reload); if not, onRemoved has said so or is about to.
async function pageGone(id) {
  const ops = opsIn(id);
  if (ops.length === 0) return;
  const tab = await chrome.tabs.get(id).catch(() => null);
  for (const op of ops) {
    if (!running.has(op)) continue; // onRemoved came first
    if (tab) failed(id, op, 'navigated_away', `the page in tab ${id} was replaced (it navigated to ${reportedUrl(tab.pendingUrl || tab.url)}, or reloaded) before the answer finished`);
    else failed(id, op, 'tab_closed', `tab ${id} was closed before the answer finished`);
  }
}

function opsIn(tab) {
  return [...running].filter(([, r]) => r.tab === tab).map(([op]) => op);
}

// The worker's own `failed`: its provenance is the document the operation ran in, while that
// site is allowed.
function failed(tab, operation_id, reason, message) {
  const from = running.get(operation_id)?.from;
  running.delete(operation_id);
  emit(tab, { operation_id, milestone: 'failed', at: Date.now(), data: { reason, message } }, allows(from?.origin) ? from : null);
}

function emit(tab, data, from) {
  try {
    sendEvent('operation', tab, data, from);
  } catch (e) {
    // Bridges catch up with chat.status when they next look (specs/operations.md).
    console.warn('tabwire: operation milestone not sent:', e.message);
  }
}

// Put the observer into the tab: once per document (the observer also ignores a second
// injection), so a send right after a detection goes straight to the page.
async function inject(id, tab) {
  const known = injected.get(id);
  if (known) {
    const top = await chrome.webNavigation.getFrame({ tabId: id, frameId: 0 }).catch(() => null);
    if (top?.documentId === known) return;
  }
  try {
    const [done] = await chrome.scripting.executeScript({ target: { tabId: id }, files: CHAT_OBSERVER, world: 'ISOLATED' });
    if (done?.documentId) injected.set(id, done.documentId);
  } catch (e) {
    throw new TabwireError('not_scriptable', `cannot run the chat observer in tab ${id} (${withoutFragment(tab.url || '') || 'no page yet'}): ${e.message}; navigate it to the chat's web page first`);
  }
}

// Ask the observer in tab `id`; its answer, or its error thrown as a TabwireError.
async function ask(id, msg, signal) {
  const asked = askTab(id, msg);
  const aborted = new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }));
  let answer;
  try {
    answer = await Promise.race([asked, aborted]);
  } catch (e) {
    if (e instanceof TabwireError) throw e;
    await getTab(id); // no_such_tab when it closed
    throw new TabwireError('page_error', `the chat observer in tab ${id} did not answer: ${e.message}`);
  }
  if (answer === undefined) throw new TabwireError('page_error', `the chat observer in tab ${id} is not running (the page was replaced)`);
  return answer;
}
