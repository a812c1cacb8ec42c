// dom.console and dom.network: what a page logged and which requests it made, captured from
// document_start on the sites the user allows, and handed to the assistant as data of the
// origin that produced it.
//
// Console: page-world/console-hook.js → isolated/console-buffer.js (the isolated world,
// the last 500 messages of the document), asked here. Network: chrome.webRequest, in this
// worker — it sees every request of the tab, with timing and status, and no page can hide or
// forge one; the last 500 per tab are kept (a worker restart starts afresh). Both say how many
// they let go.

import { fail } from '../../lib/errors.js';
import { matchPattern, originOf, withoutFragment } from '../../lib/sites.js';
import { askTab } from '../router.js';
import { allows, currentSites, onSitesChanged, sitesReady } from '../sites.js';
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
    const log = requests.get(id) ?? { kept: [], dropped: 0 };
    const needle = filter?.toLowerCase();
    // Checked again now: requests of a site revoked since are not shown.
    const picked = log.kept.filter((r) => r.time >= since && allows(r.origin) && (!needle || r.url.toLowerCase().includes(needle)));
    return { origin: doc.origin, url: doc.url, now: Date.now(), dropped: log.dropped, kept_at_most: MAX_REQUESTS, ...newest(picked.map(({ id: _, started: __, ...r }) => r), limit, 'requests') };
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
// Listeners for every URL would wake this worker for every request of every page the user
// opens, on any site. Instead one listener hears only a document of an allowed site starting
// to load (a main_frame or sub_frame request to an allowed site's match pattern: `door`); from
// then on that tab alone is heard (listeners filtered to its tab id), until its top frame goes
// to a site that is not allowed (then a moment more, for the old document's last requests) or
// it closes. So a tab on a site not allowed wakes nothing, and a request of an allowed page to
// any origin is still seen (a URL filter alone could not: it sees the request's URL, not who
// made it).

const requests = new Map(); // tab id → { kept: [entry], dropped }
const open = new Map(); // request id → entry, until it completes or fails
const heard = new Map(); // tab id → { request, completed, failed, leaving }: its listeners
const LEAVE_MS = 3000; // a tab that went to a site not allowed is heard this much longer
const door = {}; // the listeners of documents of allowed sites: request, completed, failed

// Only requests made by (or loading) a document of an allowed site are kept.
function originOfRequest(d) {
  if (d.type === 'main_frame') return originOf(d.url);
  return d.initiator && d.initiator !== 'null' ? d.initiator : null;
}

function record(d) {
  const origin = originOfRequest(d);
  if (!allows(origin)) return;
  let log = requests.get(d.tabId);
  if (!log) requests.set(d.tabId, (log = { kept: [], dropped: 0 }));
  const url = withoutFragment(d.url);
  const entry = { id: d.requestId, origin, method: d.method, url: url.length > MAX_URL ? `${url.slice(0, MAX_URL)}…` : url, type: d.type, status: null, ms: null, error: null, time: Math.round(d.timeStamp), started: d.timeStamp };
  log.kept.push(entry);
  open.set(d.requestId, entry);
  if (log.kept.length > MAX_REQUESTS) {
    open.delete(log.kept.shift().id);
    log.dropped++;
  }
}

function finish(d, fields) {
  const entry = open.get(d.requestId);
  if (!entry) return;
  open.delete(d.requestId);
  Object.assign(entry, fields, { ms: Math.round(d.timeStamp - entry.started) });
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

// The door for the allowed sites as they are now, and the tabs that show one now (at the
// worker's start, and for a site just allowed).
async function openDoor() {
  await sitesReady;
  const patterns = [...new Set(currentSites().map(matchPattern))];
  if (door.request) {
    chrome.webRequest.onBeforeRequest.removeListener(door.request);
    chrome.webRequest.onCompleted.removeListener(door.completed);
    chrome.webRequest.onErrorOccurred.removeListener(door.failed);
  }
  const urls = patterns.filter(acceptedPattern);
  if (urls.length === 0) return;
  const documents = { urls, types: ['main_frame', 'sub_frame'] };
  chrome.webRequest.onBeforeRequest.addListener((door.request = (d) => {
    if (d.tabId < 0 || heard.has(d.tabId) || !allows(originOf(d.url))) return;
    hear(d.tabId);
    record(d); // the tab's own listeners hear from its next request on
  }), documents);
  // A document's response can be in before the tab's own listeners are (a local server).
  chrome.webRequest.onCompleted.addListener((door.completed = (d) => finish(d, { status: d.statusCode })), documents);
  chrome.webRequest.onErrorOccurred.addListener((door.failed = (d) => finish(d, { error: d.error })), documents);
  const tabs = await chrome.tabs.query({ url: urls }).catch(() => []);
  for (const tab of tabs) if (allows(originOf(tab.url))) hear(tab.id);
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
  openDoor();
  onSitesChanged(openDoor);
  // A page the tab goes back to from the back/forward cache is shown without a request.
  onTabStatus((id, tab) => allows(originOf(tab.url)) && hear(id));
  chrome.tabs.onRemoved.addListener((id) => {
    unhear(id);
    for (const e of requests.get(id)?.kept ?? []) open.delete(e.id);
    requests.delete(id);
  });
}
