// Service worker, called by the bridges: the tab methods (tabs.*) and tab events ("tab"), see
// specs/protocol.md; the other modules find a tab through it (getTab, tabId).
//
// Of a tab on a site the user did not allow (sites.js), tabwire reports only the origin and
// path of its URL, never its query, fragment or title: such a page is not read at all.

import { TabwireError, fail } from '../lib/errors.js';
import { allows, currentSites, onSitesChanged, sitesReady } from '../lib/sites-store.js';
import { bareUrl, originOf, parse, withoutFragment } from '../lib/sites.js';
import { isConnected, sendEvent } from './native.js';
import { method } from './traits.js';

export const tabMethods = {
  'tabs.list': method({ pageless: true, listsTabs: true }, async () => {
    await sitesReady;
    const [tabs, focused] = await Promise.all([chrome.tabs.query({}), focusedWindowId()]);
    return tabs.map((tab) => describe(tab, focused));
  }),

  'tabs.open': method({ opens: true, answersTab: true }, async (params, ctx) => {
    // In the background unless asked: the user keeps the tab they are in.
    const { url, active = false, wait = 'load' } = params ?? {};
    checkUrl(url);
    checkWait(wait);
    if (typeof active !== 'boolean') fail('bad_request', '`active` must be true or false');
    const tab = await loaded(wait, ctx, url, () =>
      create(url, active, active ? null : ctx.home)
        .catch((e) => fail('bad_request', `Chrome could not open ${url}: ${e.message}`))
        .then(async (created) => (await ctx.opened?.(created), created))); // into the session's group
    return describe(tab, await focusedWindowId());
  }),

  'tabs.close': async (params) => {
    const id = tabId(params);
    await chrome.tabs.remove(id).catch((e) => chromeError(e, id));
    return { closed: true };
  },

  'tabs.activate': method({ answersTab: true }, async (params) => {
    const id = tabId(params);
    const tab = await chrome.tabs.update(id, { active: true }).catch((e) => chromeError(e, id));
    await chrome.windows.update(tab.windowId, { focused: true });
    return describe(tab, tab.windowId);
  }),

  'tabs.navigate': method({ answersTab: true }, async (params, ctx) => {
    const id = tabId(params);
    const { url, wait = 'load' } = params;
    checkUrl(url);
    checkWait(wait);
    await chrome.tabs.get(id).catch((e) => chromeError(e, id));
    const tab = await loaded(wait, ctx, url, () => chrome.tabs.update(id, { url }).catch((e) => chromeError(e, id)), id);
    return describe(tab, await focusedWindowId());
  }),
};

// A new tab for `url`. A session's (`home`, from groups.js) goes to the session's own window,
// made without focus, as that window's active tab: Chrome renders such a tab and runs its
// timers at full speed, where a background tab of the user's window draws no frames and wakes
// its timers once a second (docs/performance.md, "Pages the user is not looking at"). Neither
// changes the user's active tab or focused window (specs/tools.md, "In the background"):
// windows.create with `focused: false`, and tabs.update's `active`, which selects a tab in its
// own window only — tabs.create's `active: true` also brings that window to the front.
async function create(url, active, home) {
  if (!home) return chrome.tabs.create({ url, active });
  const windowId = await home.window();
  if (windowId !== null) {
    const tab = await chrome.tabs.create({ url, windowId, active: false });
    return (await chrome.tabs.update(tab.id, { active: true }).catch(() => null)) ?? tab;
  }
  const made = await chrome.windows.create({ url, focused: false });
  await home.made(made.id);
  return made.tabs[0];
}

// The URL tab `id` last showed as heard here (activity.js names the origin of a call's tab by
// it), or null.
export const lastUrl = (id) => known.get(id)?.url ?? null;

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

// Tab events. Chrome's tabs.onUpdated takes no filter: a listener there would wake this worker
// for every load of every tab, on any site. So what a tab loads is heard only where tabwire may
// look: webNavigation listeners filtered to the allowed sites' URLs (Chrome matches the filter
// in the browser process and wakes no one for other URLs) tell a tab's top frame committing,
// loading and changing its URL there; and when a page of an allowed site goes away (its relay's
// port to page.js closes), a look at its tab tells it going to a site that is not allowed (one
// status-only `updated`, so that the bridges forget the page). A load on a site not allowed
// runs none of this worker's code, and nothing listens to any tab's requests: Chrome routes
// every request of the browser through the extension's code path while it may (the
// `webRequest` permission), which costs every page (docs/performance.md). A tab that did not
// show an allowed site is told of only when it is created, activated or removed
// (specs/protocol.md, `tab`). Known gap, mended by the tab's next activation: a page that
// leaves before its relay started (before its document was parsed) is not told.
//
// `known` remembers each tab's url/title/status so "removed" can still say what closed; `sent`
// what its last event said, so that an unchanged tab sends no second `updated`.
const known = new Map();
const sent = new Map(); // tab id → JSON of the last event's data, without its kind
const shown = new Set(); // the tabs that show an allowed site
const heard = {}; // webNavigation event name → its filtered listener

// Tab creation, activation and closing are not page loads: heard for every tab.
export function watchTabs() {
  chrome.tabs.onCreated.addListener((tab) => {
    emit(tab.id, 'created', remember(tab));
    if (showsAllowed(tab)) watch(tab.id);
  });
  chrome.tabs.onActivated.addListener(({ tabId: id }) => {
    chrome.tabs.get(id).then((tab) => (emit(id, 'activated', remember(tab)), follow(tab)), () => emit(id, 'activated'));
  });
  chrome.tabs.onRemoved.addListener((id) => {
    emit(id, 'removed');
    known.delete(id);
    sent.delete(id);
    unwatch(id);
  });
  chrome.tabs.query({}).then((tabs) => tabs.forEach((tab) => known.has(tab.id) || remember(tab)));
  sitesReady.then(hearSites);
  onSitesChanged(hearSites);
}

// The listeners for the allowed sites as they are now, and the tabs that show one now.
async function hearSites() {
  for (const [name, fn] of Object.entries(heard)) chrome.webNavigation[name].removeListener(fn);
  const url = currentSites().flatMap(urlFilters);
  if (url.length > 0) {
    const filter = { url };
    try {
      chrome.webNavigation.onCommitted.addListener((heard.onCommitted = (d) => d.frameId === 0 && committed(d)), filter);
      chrome.webNavigation.onCompleted.addListener((heard.onCompleted = (d) => d.frameId === 0 && changed(d.tabId, 'complete')), filter);
      // Same-document URL changes (pushState, #hash), and loads that failed.
      chrome.webNavigation.onHistoryStateUpdated.addListener((heard.onHistoryStateUpdated = (d) => d.frameId === 0 && changed(d.tabId)), filter);
      chrome.webNavigation.onReferenceFragmentUpdated.addListener((heard.onReferenceFragmentUpdated = (d) => d.frameId === 0 && changed(d.tabId)), filter);
      chrome.webNavigation.onErrorOccurred.addListener((heard.onErrorOccurred = (d) => d.frameId === 0 && changed(d.tabId)), filter);
    } catch (e) {
      console.error('tabwire: Chrome refuses the URL filters of the allowed sites; tab events are not sent for them:', e.message);
    }
  }
  const tabs = await chrome.tabs.query({}).catch(() => []);
  for (const tab of tabs) showsAllowed(tab) ? watch(tab.id) : unwatch(tab.id);
}

// Chrome's URL filters (webNavigation) for a site pattern: exactly its scheme, host and port.
function urlFilters(pattern) {
  let p;
  try {
    p = parse(pattern);
  } catch {
    return [];
  }
  const port = p.port === '*' ? {} : { ports: [p.port ?? (p.scheme === 'https' ? 443 : 80)] };
  const base = { schemes: [p.scheme], ...port };
  if (!p.wildcard) return [{ ...base, hostEquals: p.host }];
  return [{ ...base, hostEquals: p.host }, { ...base, hostSuffix: `.${p.host}` }];
}

const showsAllowed = (tab) => allows(originOf(tab.pendingUrl || tab.url));

// A tab's top frame committed a document of an allowed site. Sent at once, from what the event
// says (the tab's title is still the last page's: none yet), so that it reaches the bridges
// before anything the new page sends.
function committed(d) {
  if (!allows(originOf(d.url))) return;
  const info = { url: d.url, title: '', status: 'loading' };
  known.set(d.tabId, info);
  watch(d.tabId);
  emit(d.tabId, 'updated', info);
}

// A tab on an allowed site loaded, changed its URL or failed to load: as Chrome has it now —
// but for the status of a load that ended, which Chrome changes only a moment later.
async function changed(id, status = null) {
  const tab = await chrome.tabs.get(id).catch(() => null);
  if (!tab || !showsAllowed(tab)) return;
  emit(id, 'updated', remember(status ? { ...tab, status } : tab));
}

const watch = (id) => shown.add(id);
const unwatch = (id) => shown.delete(id);

// A page of an allowed site in tab `id` went away (page.js: its relay's port closed). The tab
// shows its next document by now: one of a site not allowed is told once, status only.
export function pageLeft(id) {
  if (!shown.has(id)) return;
  chrome.tabs.get(id).then((tab) => {
    if (showsAllowed(tab)) return;
    unwatch(id);
    emit(id, 'updated', remember({ ...tab, status: 'loading' }));
  }, () => unwatch(id));
}

// Watch `tab` while it shows (or is going to) an allowed site, as it is now; one that left
// without being told (above) is told now.
function follow(tab) {
  if (!showsAllowed(tab)) {
    if (shown.has(tab.id)) emit(tab.id, 'updated', remember({ ...tab, status: 'loading' }));
    return unwatch(tab.id);
  }
  emit(tab.id, 'updated', remember(tab));
  watch(tab.id);
}

function remember(tab) {
  const info = { url: tab.url || tab.pendingUrl || '', title: tab.title ?? '', status: tab.status ?? 'unloaded' };
  known.set(tab.id, info);
  return info;
}

// On an allowed site: origin (on the envelope), url as origin + path, title. Elsewhere: only
// kind and status.
function emit(id, kind, info = known.get(id) ?? { url: '', title: '', status: null }) {
  if (!isConnected()) return;
  const origin = originOf(info.url);
  const allowed = allows(origin);
  const data = allowed ? { status: info.status, url: bareUrl(info.url), title: titleOf(info.title, info.url) } : { status: info.status };
  const said = JSON.stringify(data);
  if (kind === 'updated' && sent.get(id) === said) return;
  sent.set(id, said);
  try {
    if (allowed) sendEvent('tab', id, { kind, ...data }, { origin });
    else sendEvent('tab', id, { kind, ...data });
  } catch (e) {
    console.warn('tabwire: tab event not sent:', e.message);
  }
}
