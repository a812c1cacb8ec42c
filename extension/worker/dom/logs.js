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
import { originOf, withoutFragment } from '../../lib/sites.js';
import { askTab } from '../router.js';
import { allows } from '../sites.js';
import { tabId } from '../tabs.js';
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

const requests = new Map(); // tab id → { kept: [entry], dropped }
const open = new Map(); // request id → entry, until it completes or fails

// Only requests made by (or loading) a document of an allowed site are kept.
function originOfRequest(d) {
  if (d.type === 'main_frame') return originOf(d.url);
  return d.initiator && d.initiator !== 'null' ? d.initiator : null;
}

export function watchNetwork() {
  const filter = { urls: ['<all_urls>'] };
  chrome.webRequest.onBeforeRequest.addListener((d) => {
    if (d.tabId < 0) return;
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
  }, filter);
  const finish = (d, fields) => {
    const entry = open.get(d.requestId);
    if (!entry) return;
    open.delete(d.requestId);
    Object.assign(entry, fields, { ms: Math.round(d.timeStamp - entry.started) });
  };
  chrome.webRequest.onCompleted.addListener((d) => finish(d, { status: d.statusCode }), filter);
  chrome.webRequest.onErrorOccurred.addListener((d) => finish(d, { error: d.error }), filter);
  chrome.tabs.onRemoved.addListener((id) => {
    for (const e of requests.get(id)?.kept ?? []) open.delete(e.id);
    requests.delete(id);
  });
}
