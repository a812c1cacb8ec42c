// Service worker, called by the bridges and by the pages' relays (isolated/relay.js): the page.*
// methods and page events, this side of the page SDK.
//
// Each tab whose page uses window.tabwire holds one long-lived port to this worker, opened by
// isolated/relay.js (name "page"). Over it the page sends its state, events and replies,
// and the worker sends calls (get_state, command, drained) and acks. The worker keeps each
// page's last setState value, so page.get_state on a page without provideState is answered
// here without a round trip to the tab.
//
// Which document a message came from is the port's sender (origin, url), set by Chrome — never
// what the page says. Every call and every message is checked against the allowed sites
// (sites.js) when it happens, so a revoked site is cut off at once, without a reload. And a
// page can only hurt itself: its events are rate-limited per tab, and every value is checked
// for size and depth here again (a hostile page can post to the relay without the SDK).

import { checkDeclaration } from '../lib/commands.js';
import { TabwireError, fail } from '../lib/errors.js';
import { MAX_DEPTH, MAX_EVENT, deeperThan } from '../lib/limits.js';
import { allows, sitesReady } from '../lib/sites-store.js';
import { originOf, withoutFragment } from '../lib/sites.js';
import { checkNoDialog, failOnDialog } from './dom/open-dialogs.js';
import { hostProblem, sendEvent } from './native.js';
import { forgetTab, rateLimit } from './rate-limit.js';
import { acceptPorts, askTab } from './router.js';
import { checkSite, expectedOrigin } from './sites.js';
import { getTab, pageLeft, showsErrorPage, tabId } from './tabs.js';
import { method } from './traits.js';

const pages = new Map(); // tab id → Page (below)
const waiting = new Map(); // tab id → callbacks waiting for that tab's port
let nextCall = 1;

export const pageMethods = {
  'page.get_state': method({ declared: true }, async (params, { signal }) => {
    const [id, expected] = [tabId(params), expectedOrigin(params)];
    try {
      return await getState(id, signal, expected);
    } catch (e) {
      // A read that raced a navigation (the old page's port was not yet closed when it was
      // sent) is asked once of what the tab shows now: its site is checked afresh, so a page
      // of a site not allowed is refused rather than reported as gone. Reads only: a command
      // may have run before its page went.
      if (!e.pageGone) throw e;
      return await getState(id, signal, expected);
    }
  }),

  'page.command': async (params, { signal }) => {
    const id = tabId(params);
    const { type, payload = null } = params;
    if (typeof type !== 'string' || type === '') fail('bad_request', '`type` must be the name of a command the page handles (a non-empty string)');
    const page = await attach(id, signal, expectedOrigin(params));
    return { ...page.from, result: await call(page, { type: 'command', name: type, payload }, signal) };
  },

  // The commands pages declared (tabwire.onCommand's third argument): of tab `tab_id`, or of
  // every page with a port whose site is allowed now.
  'page.commands': method({ declared: true, listsPages: true }, async (params, { signal }) => {
    const listed = (page) => ({ tab_id: page.tabId, ...page.from, app: page.declared?.app ?? null, commands: page.declared?.commands ?? [] });
    if (params?.tab_id != null) return { pages: [listed(await attach(tabId(params), signal))] };
    return { pages: [...pages.values()].filter((p) => p.declared && allows(p.from.origin)).map(listed) };
  }),

  // The hops of the page path, timed by `diagnose {tab_id}` and `tabwire doctor --tab`
  // (bridge/src/doctor.rs): the same checks and port as page.get_state, answered by the tab's relay (`world: "content"`) or by the SDK in
  // the page's world (`"page"`) without running any page code. Answers null.
  'page.echo': method({ declared: true }, async (params, { signal }) => {
    const { world } = params;
    if (world !== 'content' && world !== 'page') fail('bad_request', '`world` must be "content" (the relay answers) or "page" (the SDK answers)');
    const page = await attach(tabId(params), signal, expectedOrigin(params));
    return { ...page.from, echo: await call(page, { type: 'echo', world }, signal) };
  }),

  'page.drained': method({ bookkeeping: true }, async (params, { signal }) => {
    const id = tabId(params);
    const { count } = params;
    if (!Number.isInteger(count) || count < 0) fail('bad_request', '`count` must be the number of events drained (an integer ≥ 0)');
    await call(await attach(id, signal), { type: 'drained', count }, signal);
    return {};
  }),
};

export function listenForPages() {
  acceptPorts('page', (port, { tab, from }) => {
    const page = {
      tabId: tab.id,
      port,
      from, // the document
      provider: false,
      hasState: false,
      state: null,
      declared: null, // {app, commands}: checkDeclaration's
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
    // A message that arrives before the list is loaded (a page woke the worker) waits for it;
    // those queued run before any later message, so the order holds.
    port.onMessage.addListener((msg) => (loaded ? fromPage(page, msg) : sitesReady.then(() => fromPage(page, msg))));
    port.onDisconnect.addListener(() => {
      if (pages.get(page.tabId) === page) {
        pages.delete(page.tabId);
        pageLeft(page.tabId);
      }
      gone(page);
      if (page.declared) announce(page, null); // its commands went with it
    });
  });
  chrome.tabs.onRemoved.addListener(forgetTab);
}

let loaded = false;
sitesReady.then(() => (loaded = true));

// The page went away (navigated, reloaded, closed, or the worker restarted): fail its calls.
function gone(page) {
  const err = new TabwireError('page_error', `the page in tab ${page.tabId} went away (it navigated, reloaded or closed) before answering; call again once the new page has loaded`);
  err.pageGone = true;
  for (const c of page.calls.values()) c.reject(err);
  page.calls.clear();
}

function fromPage(page, msg) {
  switch (msg?.type) {
    case 'sync': // the relay (re)connected or the page's handlers changed
      page.provider = msg.provider === true;
      // The relay re-sends the last state it passed on; keep it only as a state message would be.
      if (typeof msg.json === 'string' && allows(page.from.origin) && !deeperThan(msg.json, MAX_DEPTH)) {
        page.state = parse(msg.json);
        page.hasState = true;
      }
      if (typeof msg.commands === 'string') {
        try {
          declare(page, msg.commands);
        } catch {} // refused when first sent; the page heard it then
      }
      return resolveWaiters(page);
    case 'state':
    case 'event':
      return publish(page, msg);
    case 'commands': {
      let error = null;
      try {
        if (!allows(page.from.origin)) throw notAllowedNow(page);
        declare(page, msg.json);
      } catch (e) {
        error = { code: e.code ?? 'bad_request', message: e.message };
      }
      return ack(page, msg.n, error);
    }
    case 'reply': {
      const c = page.calls.get(msg.id);
      if (!c) return; // cancelled or timed out meanwhile
      page.calls.delete(msg.id);
      if (!allows(page.from.origin)) return c.reject(notAllowedNow(page));
      // The page wrote this text: say whose words they are, as for everything else it says.
      if (msg.error) return c.reject(new TabwireError(msg.error.code, `${page.from.origin} (tab ${page.tabId}) answered: ${msg.error.message}`));
      if (typeof msg.json === 'string' && deeperThan(msg.json, MAX_DEPTH))
        return c.reject(new TabwireError('page_error', `the page's answer in tab ${page.tabId} is nested deeper than ${MAX_DEPTH} levels (objects and arrays inside one another), which tabwire does not pass on; the page must return a flatter value`));
      try {
        c.resolve(JSON.parse(msg.json));
      } catch (e) {
        c.reject(new TabwireError('page_error', `the page's reply is not JSON: ${e.message}`));
      }
      return;
    }
    default:
      console.warn('tabwire: ignored a message from tab', page.tabId, msg?.type);
  }
}

function parse(json) {
  try {
    return JSON.parse(json);
  } catch {
    return null; // the SDK only sends JSON.stringify output; a broken relay is not worth more
  }
}

// setState / pushEvent: check, forward to the host, then ack the page (cumulative, coalesced).
function publish(page, { type: kind, n, json }) {
  let error = null;
  try {
    admit(page, kind, json);
    const data = JSON.parse(json);
    if (kind === 'state') {
      page.state = data;
      page.hasState = true;
    }
    sendEvent(kind === 'state' ? 'state_update' : 'page_event', page.tabId, data, page.from);
  } catch (e) {
    // A state is kept for page.get_state even while the host is away; an event is lost.
    if (!(kind === 'state' && e.code === 'browser_disconnected'))
      error = { code: e.code ?? 'page_error', message: kind === 'event' && e.code === 'browser_disconnected' ? `the event was not delivered: tabwire is not connected to its host (${hostProblem()})` : e.message };
  }
  ack(page, n, error);
}

// Ack the page's message `n` (cumulative, coalesced), failed with `error` unless it is null.
function ack(page, n, error) {
  // The last message taken, not the highest number seen: messages come in order, and a page
  // script that posts a stray big number on the channel must not settle the SDK's pending ones.
  if (Number.isInteger(n)) page.acked = n;
  if (error) page.failed.push({ n, error });
  page.ackTimer ??= setTimeout(() => {
    page.ackTimer = null;
    try {
      page.port.postMessage({ type: 'ack', upto: page.acked, failed: page.failed });
    } catch {} // the page is gone
    page.failed = [];
  }, 0);
}

// The page's declared commands (checkDeclaration throws for a bad one, which keeps the last),
// kept for page.commands and announced to the bridges.
function declare(page, json) {
  page.declared = checkDeclaration(json);
  announce(page, page.declared);
}

// Say again the declared commands of the pages in `tabIds`, whose owner changed (groups.js): a
// bridge drops the events of another session's tab, and now that tab may be its to use.
export function announceAgain(tabIds) {
  for (const id of tabIds) {
    const page = pages.get(id);
    if (page?.declared) announce(page, page.declared);
  }
}

// The `commands` event: the page's declared commands, or none when it went away.
function announce(page, declared) {
  try {
    sendEvent('commands', page.tabId, declared ?? { app: null, commands: [] }, page.from);
  } catch {} // no host now: the bridges ask with page.commands when they attach
}

// Throws the TabwireError a state or event must be refused with: its site is not allowed (any
// more), an event is too large or comes too fast, a value is too deep. Cheapest checks first.
function admit(page, kind, json) {
  if (!allows(page.from.origin)) throw notAllowedNow(page);
  if (typeof json !== 'string') fail('page_error', 'the relay passed a value that is not JSON text');
  const what = kind === 'state' ? 'state' : 'event';
  if (kind === 'event') {
    if (json.length > MAX_EVENT)
      fail('too_large', `the event is ${(json.length / (1024 * 1024)).toFixed(1)} MiB as JSON, over the 1 MiB limit for one event; send less (a summary, or a state with setState)`);
    rateLimit(page.tabId, page.from, json.length);
  }
  if (deeperThan(json, MAX_DEPTH))
    fail('too_deep', `the ${what} is nested deeper than ${MAX_DEPTH} levels (objects and arrays inside one another); send a flatter value`);
}

async function getState(id, signal, expected) {
  const page = await attach(id, signal, expected);
  if (page.provider) return { ...page.from, state: await call(page, { type: 'get_state' }, signal) };
  if (page.hasState) return { ...page.from, state: page.state };
  fail('no_handler', `the page in tab ${page.tabId} has not called tabwire.setState or tabwire.provideState yet; wait for it to load, or make the page publish its state`);
}

// What the page hears when its site was revoked while it was open.
function notAllowedNow(page) {
  const origin = page.from.origin;
  return new TabwireError('site_not_allowed', `this site (${origin}) is not allowed to use tabwire (any more), so nothing was passed on; the user can allow it in the tabwire popup ("Allow tabwire on this site") or with \`tabwire sites allow ${origin}\``);
}

// Ask the page something; resolves with its reply. Aborts with `signal`. A page the browser's
// own dialog blocks could not answer: `dialog_open` at once, also when the dialog opens while
// the call waits (a command that asks `confirm()`; dom/open-dialogs.js).
async function call(page, msg, signal) {
  await checkNoDialog(page.tabId);
  const id = nextCall++;
  const dialog = failOnDialog(page.tabId);
  try {
    return await Promise.race([ask(page, msg, signal, id), dialog.promise]);
  } finally {
    dialog.stop();
    page.calls.delete(id);
  }
}

function ask(page, msg, signal, id) {
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
      page.port.postMessage({ ...msg, id });
    } catch (e) {
      page.calls.get(id)?.reject(new TabwireError('too_large', `could not pass this to the page: ${e.message}`));
      page.calls.delete(id);
    }
  });
}

// The port of the page in tab `id`, once the document it leads to may answer (checkSite). A
// page that used window.tabwire before this worker started has no port yet: check the tab's
// URL, then ask its relay to connect (`page.connect`), then check the document that did.
async function attach(id, signal, expected) {
  if (!loaded) await sitesReady;
  let page = pages.get(id);
  if (!page) page = await connectPage(id, signal, expected);
  checkSite(id, page.from.origin, expected, page.from.url);
  return page;
}

async function connectPage(id, signal, expected) {
  const tab = await getTab(id);
  checkSite(id, originOf(tab.url), expected, tab.url);
  const port = new Promise((resolve, reject) => {
    const list = waiting.get(id) ?? [];
    waiting.set(id, list);
    list.push(resolve);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
  let answer;
  try {
    answer = await askTab(id, { type: 'page.connect' });
  } catch {
    waiting.delete(id);
    throw await unreachable(tab);
  }
  port.catch(() => {}); // a refusal below leaves it unawaited
  if (!answer?.uses) {
    waiting.delete(id);
    fail('no_handler', `the page in tab ${id} (${withoutFragment(tab.url)}) does not use window.tabwire (no setState, provideState or onCommand yet); open a page that does, or wait for it to finish loading`);
  }
  return port;
}

function resolveWaiters(page) {
  const list = waiting.get(page.tabId);
  waiting.delete(page.tabId);
  for (const resolve of list ?? []) resolve(page);
}

async function unreachable(tab) {
  const url = withoutFragment(tab.url || tab.pendingUrl || '');
  if (!/^(https?|file):/.test(url) || /^https:\/\/(chromewebstore\.google\.com|chrome\.google\.com\/webstore)/.test(url))
    return new TabwireError('not_scriptable', `tab ${tab.id} shows ${url || 'nothing yet'}, where extensions cannot run scripts; navigate it to a web page first`);
  if (await showsErrorPage(tab))
    return new TabwireError('not_scriptable', `tab ${tab.id} shows Chrome's error page: ${url} did not load (server down, wrong address or no network); navigate it again once the server is up`);
  if (tab.discarded)
    return new TabwireError('no_handler', `tab ${tab.id} was unloaded by the browser to save memory; activate or reload it (tabs.navigate to ${url}) and try again`);
  return new TabwireError('no_handler', `the tabwire content script is not running in tab ${tab.id} (${url}): the page loaded before the extension was installed or reloaded or before its site was allowed, or is still loading; reload the page (tabs.navigate to its url) and try again`);
}
