// Service worker, called by the bridges for cookies, web_storage and site_state: webdev.cookies,
// storage, state_save and state_restore, a web developer's tools for the tab's own origin, on
// allowed sites only. Cookies and web storage hold the user's sign-ins, so every method here needs
// the site's "Cookies" switch (sites.js), which only the user turns on; and each works on the top
// document's own host alone: a cookie of a parent domain, or of another site, is neither read nor
// written. Cookies are kept per host, not per port, so the host is the unit, and the switch holds
// only on a pattern of every port of it (lib/sites.js, everyPort). A Secure cookie is the https
// site's: an http page neither sees nor writes one, as its own scripts and requests would not over
// a network.

import { fail } from '../lib/errors.js';
import { requireSwitch } from './sites.js';
import { tabId } from './tabs.js';
import { runIn, stillThere, topDocument } from './dom/target.js';

const MAX_COOKIES = 500; // per host, more than Chrome keeps (180)
const MAX_VALUE = 4096; // Chrome's own limit for a cookie's name and value together

// The top document, once its site is allowed and its Cookies switch is on.
async function cookieDocument(params) {
  const id = tabId(params);
  const doc = await topDocument(id, params);
  requireSwitch(id, doc.origin, 'cookies');
  return { id, doc, url: new URL(doc.origin), where: `${doc.origin} (tab ${id})` };
}

// The cookies of exactly this host: not those of a parent domain, which other sites share; and
// on an http page not the Secure ones, which belong to the host's https pages.
async function hostCookies(url) {
  const all = await chrome.cookies.getAll({ domain: url.hostname });
  const http = url.protocol === 'http:';
  return all.filter((c) => c.domain.replace(/^\./, '') === url.hostname && !(http && c.secure)).slice(0, MAX_COOKIES);
}

const shown = (c) => ({
  name: c.name, value: c.value, path: c.path, host_only: c.hostOnly, secure: c.secure,
  http_only: c.httpOnly, same_site: c.sameSite, expires: c.session ? null : Math.floor(c.expirationDate),
});

// One cookie written for this host: never with a domain of its own choosing.
async function setCookie(url, c, where) {
  if (typeof c?.name !== 'string' || typeof c.value !== 'string') fail('bad_request', 'a cookie needs a `name` and a `value`, both strings');
  if (c.name.length + c.value.length > MAX_VALUE) fail('too_large', `cookie ${c.name} is over ${MAX_VALUE} characters (name and value); Chrome would not keep it`);
  const path = c.path ?? '/';
  if (typeof path !== 'string' || !path.startsWith('/')) fail('bad_request', '`path` must start with /');
  const details = { url: `${url.origin}${path}`, name: c.name, value: c.value, path };
  if (c.host_only === false) details.domain = url.hostname;
  if (c.secure === true && url.protocol === 'http:')
    fail('bad_request', `cookie ${c.name} is Secure, which is for the https pages of ${url.hostname}; ${where} is http, so it neither reads nor writes Secure cookies. Leave \`secure\` out, or use a tab on https`);
  if (c.secure !== undefined) details.secure = c.secure === true;
  if (c.http_only !== undefined) details.httpOnly = c.http_only === true;
  if (['no_restriction', 'lax', 'strict'].includes(c.same_site)) details.sameSite = c.same_site;
  if (c.expires != null) {
    if (!Number.isFinite(c.expires)) fail('bad_request', '`expires` must be seconds since 1970 (or null for a session cookie)');
    details.expirationDate = c.expires;
  }
  let set;
  try {
    set = await chrome.cookies.set(details);
  } catch (e) {
    fail('bad_request', `Chrome refused cookie ${c.name} for ${where}: ${e.message}`);
  }
  if (!set) fail('bad_request', `Chrome did not keep cookie ${c.name} for ${where} (a secure cookie on http, or an expiry in the past?)`);
  return set;
}

async function removeAll(url, cookies, name) {
  const gone = cookies.filter((c) => name === undefined || c.name === name);
  for (const c of gone) await chrome.cookies.remove({ url: `${url.origin}${c.path}`, name: c.name });
  return gone.length;
}

// Runs in the document (isolated world, which shares the page's storage): its storage, the keys
// or each key with its value, a string (the bridge reads them as strings: SiteState in
// link/src/methods/webdev.rs). A key another tab removed meanwhile is left out; fromEntries
// keeps a key named `__proto__` as the page's own.
async function readStorage(withValues) {
  const of = (s) => {
    const keys = [];
    for (let i = 0; i < s.length; i++) keys.push(s.key(i));
    const items = keys.filter((k) => k !== null).map((k) => [k, withValues ? s.getItem(k) : '']).filter(([, v]) => v !== null);
    return withValues ? Object.fromEntries(items) : items.map(([k]) => k);
  };
  let indexed = [];
  try {
    indexed = (await indexedDB.databases()).map((d) => d.name);
  } catch {}
  return { local_storage: of(localStorage), session_storage: of(sessionStorage), indexed_db: indexed };
}

function writeStorage(local, session) {
  for (const [store, items] of [[localStorage, local], [sessionStorage, session]]) {
    for (const [k, v] of Object.entries(items ?? {})) store.setItem(k, String(v));
  }
  return true;
}

function clearStorage() {
  localStorage.clear();
  sessionStorage.clear();
  return true;
}

export const webdevMethods = {
  // {action: list|get|set|clear, name?, cookie?}
  'webdev.cookies': async (params) => {
    const { doc, url, where } = await cookieDocument(params);
    const action = params.action ?? 'list';
    const cookies = await hostCookies(url);
    const head = { origin: doc.origin, url: doc.url };
    switch (action) {
      case 'list':
        return { ...head, cookies: cookies.map(shown) };
      case 'get':
        if (typeof params.name !== 'string') fail('bad_request', 'action get needs the cookie\'s `name`');
        return { ...head, cookies: cookies.filter((c) => c.name === params.name).map(shown) };
      case 'set':
        return { ...head, cookies: [shown(await setCookie(url, params.cookie, where))] };
      case 'clear':
        return { ...head, cookies: [], removed: await removeAll(url, cookies, params.name ?? undefined) };
      default:
        fail('bad_request', `\`action\` must be list, get, set or clear; got ${JSON.stringify(action)}`);
    }
  },

  // The names in the document's localStorage, sessionStorage and IndexedDB.
  'webdev.storage': async (params) => {
    const { doc } = await cookieDocument(params);
    const got = await runIn(doc, readStorage, [false]);
    return { origin: doc.origin, url: doc.url, ...got };
  },

  // The site's signed-in state: its cookies and web storage, to be saved by the bridge.
  'webdev.state_save': async (params) => {
    const { doc, url } = await cookieDocument(params);
    const cookies = (await hostCookies(url)).map(shown);
    const { local_storage, session_storage } = await runIn(doc, readStorage, [true]);
    await stillThere(doc, 'read its storage');
    return { origin: doc.origin, url: doc.url, cookies, local_storage, session_storage };
  },

  // Put a saved state back, into a tab of the same origin only; or, with `clear`, sign out.
  'webdev.state_restore': async (params) => {
    const { doc, url, where } = await cookieDocument(params);
    const state = params.state;
    if (params.clear === true) {
      const removed = await removeAll(url, await hostCookies(url));
      await runIn(doc, clearStorage);
      return { origin: doc.origin, url: doc.url, cookies: 0, removed };
    }
    if (state?.origin !== doc.origin)
      fail('origin_changed', `the saved state is of ${state?.origin ?? 'no origin'}, not of ${where}; a state goes back only into a tab of its own origin`);
    if (!Array.isArray(state.cookies)) fail('bad_request', 'the saved state has no list of cookies');
    for (const c of state.cookies) await setCookie(url, c, where);
    await stillThere(doc, 'restored its cookies');
    await runIn(doc, writeStorage, [state.local_storage ?? {}, state.session_storage ?? {}]);
    return { origin: doc.origin, url: doc.url, cookies: state.cookies.length, removed: 0 };
  },
};
