// Service worker, called by the bridges for console_messages and network_requests: dom.console
// and dom.network, what a page of an allowed site logged and which requests it made, handed to
// the assistant as data of the origin that produced it.
//
// Console: from document_start, page-world/console-hook.js → isolated/console-buffer.js (the
// isolated world, the last 500 messages of the document). Network: isolated/request-log.js,
// the document's resource timing (its load and every request since, made by the browser) and
// what page-world/requests.js told of its fetch and XHR. Both are kept in the page, asked
// here, and say how many they let go. Nothing listens to the browser's requests: Chrome routes
// every request of every page through the extension while it may (the `webRequest`
// permission), which would cost each page the user opens (docs/performance.md).

import { fail } from '../../lib/errors.js';
import { askTab } from '../router.js';
import { tabId } from '../tabs.js';
import { topDocument } from './target.js';

const MAX_REQUESTS = 500; // kept per document
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
    const options = doc.documentId ? { documentId: doc.documentId } : { frameId: 0 };
    const got = await askTab(id, { type: 'network.read' }, options).catch(() => null);
    if (!got) fail('no_handler', `tabwire's request log is not running in tab ${id} (${doc.url}): the page loaded before its site was allowed or before the extension started; reload the tab (navigate to its url) and try again`);
    const needle = filter?.toLowerCase();
    const picked = got.requests.filter((r) => r.time >= since && (!needle || r.url.toLowerCase().includes(needle)));
    return { origin: doc.origin, url: doc.url, now: Date.now(), recorded_since: got.recorded_since, load_recorded: got.load_recorded, dropped: got.dropped, kept_at_most: got.kept_at_most, ...newest(picked, limit, 'requests') };
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
