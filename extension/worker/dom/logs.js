// dom.console and dom.network: what a page of an allowed site logged and which requests it
// made, handed to the assistant as data of the origin that produced it.
//
// Console: from document_start, page-world/console-hook.js → isolated/console-buffer.js (the
// isolated world, the last 500 messages of the document), asked here. Network: of the tabs
// tabwire works in (below), chrome.webRequest, in this worker — it sees every request of the
// tab, with timing and status, and no page can hide or forge one; the last 500 per tab are kept
// (a worker restart starts afresh). Both say how many they let go.

import { fail } from '../../lib/errors.js';
import { matchPattern, originOf, withoutFragment } from '../../lib/sites.js';
import { askTab } from '../router.js';
import { allows, currentSites, sitesReady } from '../sites.js';
import { onTabStatus, tabId } from '../tabs.js';
import { topDocument } from './target.js';

const MAX_REQUESTS = 500; // kept per tab
const MAX_URL = 500; // characters of a URL reported
const LIMIT_DEFAULT = 100; // entries returned by one call
const LEVELS = ['debug', 'log', 'info', 'warn', 'error'];

export const logMethods = {
  'dom.console': async (params) => {
    const id = tabId(params);
    const { level = 'log', since = 0 } = params;
    const limit = limitOf(params);
    if (!LEVELS.includes(level)) fail('bad_request', `\`level\` must be one of ${LEVELS.join(', ')} (the least severe to report; default log)`);
    checkSince(since);
    const doc = await topDocument(id, params);
    const options = doc.documentId ? { documentId: doc.documentId } : { frameId: 0 };
    const got = await askTab(id, { type: 'console.read' }, options).catch(() => null);
    if (!got) fail('no_handler', `tabwire's console capture is not running in tab ${id} (${doc.url}): the page loaded before its site was allowed or before the extension started; reload the tab (navigate to its url) and try again`);
    const least = LEVELS.indexOf(level);
    const picked = got.messages.filter((m) => m.time >= since && LEVELS.indexOf(m.level) >= least);
    return { origin: doc.origin, url: doc.url, now: Date.now(), dropped: got.dropped, kept_at_most: got.kept_at_most, ...newest(picked, limit, 'messages') };
  },

  'dom.network': async (params) => {
    const id = tabId(params);
    const { filter = null, since = 0 } = params;
    const limit = limitOf(params);
    if (filter !== null && typeof filter !== 'string') fail('bad_request', '`filter` must be text to find in the URL (case does not matter)');
    checkSince(since);
    const doc = await topDocument(id, params);
    const log = requests.get(id) ?? { kept: [], dropped: 0, since: Date.now() };
    const needle = filter?.toLowerCase();
    // Checked again now: requests of a site revoked since are not shown.
    const picked = log.kept.filter((r) => r.time >= since && allows(r.origin) && (!needle || r.url.toLowerCase().includes(needle)));
    // Whether the page's own load is in the log: its document's request is.
    const loadRecorded = log.kept.some((r) => r.type === 'main_frame' && r.url === cut(doc.url));
    return { origin: doc.origin, url: doc.url, now: Date.now(), recorded_since: log.since, load_recorded: loadRecorded, dropped: log.dropped, kept_at_most: MAX_REQUESTS, ...newest(picked.map(({ id: _, started: __, ...r }) => r), limit, 'requests') };
  },
};

function limitOf(params) {
  const { limit = LIMIT_DEFAULT } = params;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_REQUESTS) fail('bad_request', `\`limit\` must be from 1 to ${MAX_REQUESTS} (default ${LIMIT_DEFAULT})`);
  return limit;
}

function checkSince(since) {
  if (!Number.isFinite(since) || since < 0) fail('bad_request', '`since` must be a time in milliseconds since the Unix epoch, such as the `now` of an earlier answer');
}

// The last `limit` of `list`, and how many older ones matched but are left out.
function newest(list, limit, name) {
  const cut = Math.max(0, list.length - limit);
  return { [name]: list.slice(cut), left_out: cut };
}

// ---------------------------------------------------------------------------------------------
// Requests, from webRequest
//
// Only the tabs tabwire works in are heard: a tab from the first call that names it (any method
// with a `tab_id`: reading, acting, navigating…), and a tab tabwire opens from its document's
// own request. The user's own browsing wakes none of these listeners, on any site: a listener
// per request of every page of an allowed site cost the user's loads more than all of
// tabwire's scripts in them (docs/performance.md). A tab is heard through listeners filtered to
// its tab id, while its top frame shows an allowed site (a request of such a page to any
// origin is its own, and seen: a URL filter alone could not tell who made it); when it goes to a
// site that is not allowed, a moment more for the old document's last requests, and again
// when it comes back. What a page loaded before tabwire worked in its tab is not known:
// `dom.network` says so (`load_recorded`), and navigating the tab to its URL shows a whole load.

const requests = new Map(); // tab id → { kept: [entry], dropped, since }
const open = new Map(); // request id → entry, until it completes or fails
const heard = new Map(); // tab id → { request, completed, failed, leaving }: its listeners
const worked = new Set(); // the tabs tabwire worked in, heard while they show an allowed site
const LEAVE_MS = 3000; // a tab that went to a site not allowed is heard this much longer
const door = { count: 0, request: null, completed: null, failed: null, early: new Map() }; // while tabs.open runs
const MAX_EARLY = 10; // documents kept per tab while the door waits to learn which tab is new

// Only requests made by (or loading) a document of an allowed site are kept.
function originOfRequest(d) {
  if (d.type === 'main_frame') return originOf(d.url);
  return d.initiator && d.initiator !== 'null' ? d.initiator : null;
}

function record(d) {
  const origin = originOfRequest(d);
  if (!allows(origin)) return;
  const url = cut(withoutFragment(d.url));
  // Heard twice (by the door of a tab being opened and by the tab's own listener); a redirect
  // is heard again with the same id and its new URL, and listed as a request of its own.
  if (open.get(d.requestId)?.url === url) return;
  const log = logOf(d.tabId);
  const entry = { id: d.requestId, origin, method: d.method, url, type: d.type, status: null, ms: null, error: null, time: Math.round(d.timeStamp), started: d.timeStamp };
  log.kept.push(entry);
  open.set(d.requestId, entry);
  if (log.kept.length > MAX_REQUESTS) {
    open.delete(log.kept.shift().id);
    log.dropped++;
  }
}

const cut = (url) => (url.length > MAX_URL ? `${url.slice(0, MAX_URL)}…` : url);

function finish(d, fields) {
  const entry = open.get(d.requestId);
  if (!entry) return;
  open.delete(d.requestId);
  Object.assign(entry, fields, { ms: Math.round(d.timeStamp - entry.started) });
}

function logOf(id) {
  let log = requests.get(id);
  if (!log) requests.set(id, (log = { kept: [], dropped: 0, since: Date.now() }));
  return log;
}

// Hear every request of tab `id` (again, if it was about to stop).
function hear(id) {
  const had = heard.get(id);
  if (had) {
    clearTimeout(had.leaving);
    had.leaving = null;
    return;
  }
  const h = { leaving: null };
  logOf(id); // the log starts now
  const filter = { urls: ['<all_urls>'], tabId: id };
  chrome.webRequest.onBeforeRequest.addListener((h.request = (d) => {
    // The tab's top frame goes to another site: heard while it is an allowed one. (A page
    // prerendered in the tab is not shown yet: it changes nothing.)
    if (d.type === 'main_frame' && d.documentLifecycle !== 'prerender') allows(originOf(d.url)) ? hear(id) : leave(id);
    record(d);
  }), filter);
  chrome.webRequest.onCompleted.addListener((h.completed = (d) => finish(d, { status: d.statusCode })), filter);
  chrome.webRequest.onErrorOccurred.addListener((h.failed = (d) => finish(d, { error: d.error })), filter);
  heard.set(id, h);
}

function leave(id) {
  const h = heard.get(id);
  if (h && !h.leaving) h.leaving = setTimeout(() => unhear(id), LEAVE_MS);
}

function unhear(id) {
  const h = heard.get(id);
  if (!h) return;
  clearTimeout(h.leaving);
  chrome.webRequest.onBeforeRequest.removeListener(h.request);
  chrome.webRequest.onCompleted.removeListener(h.completed);
  chrome.webRequest.onErrorOccurred.removeListener(h.failed);
  heard.delete(id);
}

// Tab `id` is one tabwire works in (a call names it; `to`: the URL it is about to go to).
async function workIn(id, to) {
  worked.add(id);
  if (heard.has(id) && to === undefined) return;
  const url = to ?? (await chrome.tabs.get(id).catch(() => null))?.url;
  if (allows(originOf(url))) hear(id);
}

// Every method that names a tab works in it (but closing it); a tab tabwire opens is heard
// from its document's first request on: documents of the allowed sites starting to load are
// heard while it opens (the new tab's id is known only once Chrome made it), and its own
// listeners are added before these go, so nothing falls between.
export function withNetworkLog(table) {
  return Object.fromEntries(Object.entries(table).map(([method, fn]) => [method, async (params, ctx = {}) => {
    if (method === 'tabs.open') return opening(() => fn(params, { ...ctx, opened: async (tab) => (adopt(tab), await ctx.opened?.(tab)) }));
    if (method !== 'tabs.close' && Number.isInteger(params?.tab_id)) await workIn(params.tab_id, method === 'tabs.navigate' ? params.url : undefined);
    return fn(params, ctx);
  }]));
}

// The tab just opened: heard from now, with what the door heard of it so far.
function adopt(tab) {
  worked.add(tab.id);
  const early = door.early.get(tab.id) ?? [];
  door.early.delete(tab.id);
  if (early.length === 0 && !allows(originOf(tab.pendingUrl || tab.url))) return;
  hear(tab.id);
  for (const d of early) {
    record(d);
    if (d.end) finish(d.end.d, d.end.fields);
  }
}

async function opening(open) {
  await sitesReady;
  if (door.count++ === 0) openDoor();
  try {
    return await open();
  } finally {
    if (--door.count === 0) closeDoor();
  }
}

// Documents of the allowed sites as they are now, while a tab is being opened: those of a
// worked tab are its own listeners' business; the others wait for `adopt` (or are let go).
function openDoor() {
  const urls = [...new Set(currentSites().map(matchPattern))].filter(acceptedPattern);
  if (urls.length === 0) return;
  const documents = { urls, types: ['main_frame'] };
  chrome.webRequest.onBeforeRequest.addListener((door.request = (d) => {
    if (d.tabId < 0 || worked.has(d.tabId)) return;
    if (!door.early.has(d.tabId)) door.early.set(d.tabId, []);
    const early = door.early.get(d.tabId);
    if (early.length < MAX_EARLY) early.push(d);
  }), documents);
  // A document's response can be in before the tab's own listeners are (a local server), even
  // before the new tab is known: then it waits with its request.
  const ended = (d, fields) => {
    if (open.has(d.requestId)) return finish(d, fields);
    const request = door.early.get(d.tabId)?.findLast((e) => e.requestId === d.requestId);
    if (request) request.end = { d, fields };
  };
  chrome.webRequest.onCompleted.addListener((door.completed = (d) => ended(d, { status: d.statusCode })), documents);
  chrome.webRequest.onErrorOccurred.addListener((door.failed = (d) => ended(d, { error: d.error })), documents);
}

function closeDoor() {
  if (!door.request) return;
  chrome.webRequest.onBeforeRequest.removeListener(door.request);
  chrome.webRequest.onCompleted.removeListener(door.completed);
  chrome.webRequest.onErrorOccurred.removeListener(door.failed);
  door.request = door.completed = door.failed = null;
  door.early.clear();
}

// Whether webRequest takes `pattern` (Chrome refuses some the site grammar allows, and one
// refused pattern would cost the others).
function acceptedPattern(pattern) {
  const probe = () => {};
  try {
    chrome.webRequest.onBeforeRequest.addListener(probe, { urls: [pattern], types: ['main_frame'] });
    chrome.webRequest.onBeforeRequest.removeListener(probe);
    return true;
  } catch (e) {
    console.error(`tabwire: Chrome refuses the match pattern ${pattern} (${e.message}); tabwire's network log does not hear it`);
    return false;
  }
}

export function watchNetwork() {
  // A tab tabwire works in that comes back to an allowed site (a link, back/forward, its cache).
  onTabStatus((id, tab) => worked.has(id) && allows(originOf(tab.url)) && hear(id));
  chrome.tabs.onRemoved.addListener((id) => {
    unhear(id);
    worked.delete(id);
    for (const e of requests.get(id)?.kept ?? []) open.delete(e.id);
    requests.delete(id);
  });
}
