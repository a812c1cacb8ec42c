// Tab methods (tabs.*) and tab events ("tab"), see specs/protocol.md.
//
// Of a tab on a site the user did not allow (sites.js), tabwire reports only the origin and
// path of its URL, never its query, fragment or title: such a page is not read at all.

import { TabwireError, fail } from '../lib/errors.js';
import { bareUrl, originOf, withoutFragment } from '../lib/sites.js';
import { isConnected, sendEvent } from './native.js';
import { allows, sitesReady } from './sites.js';

export const tabMethods = {
  'tabs.list': async () => {
    await sitesReady;
    const [tabs, focused] = await Promise.all([chrome.tabs.query({}), focusedWindowId()]);
    return tabs.map((tab) => describe(tab, focused));
  },

  'tabs.open': async (params, ctx) => {
    // In the background unless asked: the user keeps the tab they are in.
    const { url, active = false, wait = 'load' } = params ?? {};
    checkUrl(url);
    checkWait(wait);
    if (typeof active !== 'boolean') fail('bad_request', '`active` must be true or false');
    const tab = await loaded(wait, ctx, url, () =>
      chrome.tabs.create({ url, active })
        .catch((e) => fail('bad_request', `Chrome could not open ${url}: ${e.message}`))
        .then(async (created) => (await ctx.opened?.(created), created))); // into the session's group
    return describe(tab, await focusedWindowId());
  },

  'tabs.close': async (params) => {
    const id = tabId(params);
    await chrome.tabs.remove(id).catch((e) => chromeError(e, id));
    return { closed: true };
  },

  'tabs.activate': async (params) => {
    const id = tabId(params);
    const tab = await chrome.tabs.update(id, { active: true }).catch((e) => chromeError(e, id));
    await chrome.windows.update(tab.windowId, { focused: true });
    return describe(tab, tab.windowId);
  },

  'tabs.navigate': async (params, ctx) => {
    const id = tabId(params);
    const { url, wait = 'load' } = params;
    checkUrl(url);
    checkWait(wait);
    await chrome.tabs.get(id).catch((e) => chromeError(e, id));
    const tab = await loaded(wait, ctx, url, () => chrome.tabs.update(id, { url }).catch((e) => chromeError(e, id)), id);
    return describe(tab, await focusedWindowId());
  },
};

// The `tab_id` parameter, checked.
export function tabId(params) {
  const id = params?.tab_id;
  if (!Number.isInteger(id)) fail('bad_request', '`tab_id` must be the integer id of a tab; list_tabs shows them');
  return id;
}

export function noSuchTab(id) {
  return new TabwireError('no_such_tab', `no tab has id ${id}: it was closed or never existed; list_tabs shows the open ones`);
}

// The tab with this id, or the `no_such_tab` error.
export function getTab(id) {
  return chrome.tabs.get(id).catch(() => {
    throw noSuchTab(id);
  });
}

function chromeError(e, id) {
  if (/no tab with id/i.test(e.message)) throw noSuchTab(id);
  fail('bad_request', `Chrome refused this for tab ${id}: ${e.message}`);
}

function describe(tab, focusedWindow) {
  const url = tab.url || tab.pendingUrl || '';
  const allowed = allows(originOf(url));
  return {
    id: tab.id,
    window_id: tab.windowId,
    url: allowed ? withoutFragment(url) : bareUrl(url),
    title: allowed ? titleOf(tab.title, url) : '',
    active: tab.active,
    status: tab.status ?? 'unloaded',
    window_focused: tab.windowId === focusedWindow,
    allowed,
    group_id: tab.groupId ?? -1, // whose tab it is (groups.js)
  };
}

// Until a page sets its title, Chrome shows its URL without the scheme — fragment included,
// which tabwire never reports (it may hold a token): drop it there too.
function titleOf(title, url) {
  const t = title ?? '';
  return t.includes('#') && url.endsWith(t) ? withoutFragment(t) : t;
}

// A tab's URL as tabwire may report it (in error messages too).
export function reportedUrl(url) {
  return allows(originOf(url)) ? withoutFragment(url) : bareUrl(url);
}

async function focusedWindowId() {
  try {
    return (await chrome.windows.getLastFocused()).id;
  } catch {
    return null; // no window at all
  }
}

function checkUrl(url) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    fail('bad_request', `\`url\` must be an absolute URL such as https://example.com/, got ${JSON.stringify(url)}`);
  }
  if (parsed.protocol === 'javascript:') fail('bad_request', 'javascript: URLs are not opened; use page.command to ask the page to act');
}

function checkWait(wait) {
  if (wait !== 'load' && wait !== 'none') fail('bad_request', '`wait` must be "load" or "none"');
}

// Start a navigation with `start()` (which resolves to the tab) and, for wait "load", resolve
// with the tab once its status went to "loading" and then to "complete". Listeners are in place
// before the navigation starts, so no change is missed.
function loaded(wait, { signal, timeoutMs }, url, start, id = null) {
  if (wait === 'none') return start();
  return new Promise((resolve, reject) => {
    let loading = false;
    let done = false;
    const before = []; // changes that arrived before the new tab's id was known
    const onUpdated = (tid, change, tab) => {
      if (id === null) return void before.push([tid, change, tab]);
      if (tid !== id || !change.status) return;
      if (change.status === 'loading') loading = true;
      else if (change.status === 'complete' && loading) finish(tab);
    };
    const onRemoved = (tid) => tid === id && settle(reject, new TabwireError('no_such_tab', `tab ${id} was closed while it loaded ${url}`));
    const onAbort = () => {
      const why = signal.reason;
      settle(reject, why?.code === 'timeout'
        ? new TabwireError('timeout', `${id === null ? 'the new tab' : `tab ${id}`} was still loading ${url} after ${timeoutMs} ms; it keeps loading: list_tabs shows its status, or pass wait:"none" or a longer timeout`)
        : why);
    };
    const settle = (fn, value) => {
      if (done) return;
      done = true;
      chrome.tabs.onUpdated.removeListener(onUpdated);
      chrome.tabs.onRemoved.removeListener(onRemoved);
      signal.removeEventListener('abort', onAbort);
      fn(value);
    };
    const finish = (tab) => failedLoad(tab).then(() => settle(resolve, tab), (e) => settle(reject, e));
    chrome.tabs.onUpdated.addListener(onUpdated);
    chrome.tabs.onRemoved.addListener(onRemoved);
    signal.addEventListener('abort', onAbort);
    start().then((tab) => {
      id = tab.id;
      if (tab.status === 'loading') loading = true;
      for (const change of before.splice(0)) onUpdated(...change);
    }, (e) => settle(reject, e));
  });
}

async function failedLoad(tab) {
  if (await showsErrorPage(tab))
    fail('page_error', `${reportedUrl(tab.url)} did not load in tab ${tab.id}: Chrome shows its error page (server down, wrong address or no network); check the URL and the server, then navigate again`);
}

// Chrome shows its own error page when a load fails (server down, DNS); extensions may not
// script it, which is how we tell.
export async function showsErrorPage(tab) {
  if (!/^https?:/.test(tab.url ?? '')) return false;
  try {
    await chrome.scripting.executeScript({ target: { tabId: tab.id }, func: () => 0 });
    return false;
  } catch (e) {
    return /error page/i.test(e.message);
  }
}

// Tab events. `known` remembers url/title/status so "removed" can still say what closed;
// `sent` what the last event of a tab on a site that is not allowed said, so that its title
// and query changes (which are not reported) do not show as a stream of empty "updated"s.
const known = new Map();
const sent = new Map(); // tab id → { allowed, status }

// fn(id, tab) after each change of a tab's status, from the one listener here (a second
// listener would wake the worker again for every load of every tab).
const statusHooks = new Set();
export function onTabStatus(fn) {
  statusHooks.add(fn);
}

export function watchTabs() {
  chrome.tabs.onCreated.addListener((tab) => emit(tab.id, 'created', tab));
  chrome.tabs.onUpdated.addListener((id, change, tab) => {
    if ('url' in change || 'title' in change || 'status' in change) emit(id, 'updated', tab);
    if ('status' in change) for (const fn of statusHooks) fn(id, tab);
  });
  chrome.tabs.onActivated.addListener(({ tabId: id }) => emit(id, 'activated', null));
  chrome.tabs.onRemoved.addListener((id) => {
    emit(id, 'removed', null);
    known.delete(id);
    sent.delete(id);
  });
  chrome.tabs.query({}).then((tabs) => tabs.forEach((tab) => known.has(tab.id) || remember(tab)));
}

function remember(tab) {
  const info = { url: tab.url || tab.pendingUrl || '', title: tab.title ?? '', status: tab.status ?? 'unloaded' };
  known.set(tab.id, info);
  return info;
}

// On an allowed site: origin (on the envelope), url as origin + path, title. Elsewhere: only
// kind and status.
function emit(id, kind, tab) {
  const info = tab ? remember(tab) : known.get(id) ?? { url: '', title: '', status: null };
  if (!isConnected()) return;
  const origin = originOf(info.url);
  const allowed = allows(origin);
  const last = sent.get(id);
  if (kind === 'updated' && !allowed && last && !last.allowed && last.status === info.status) return;
  sent.set(id, { allowed, status: info.status });
  try {
    if (allowed) sendEvent('tab', id, { kind, status: info.status, url: bareUrl(info.url), title: titleOf(info.title, info.url) }, { origin });
    else sendEvent('tab', id, { kind, status: info.status });
  } catch (e) {
    console.warn('tabwire: tab event not sent:', e.message);
  }
}
