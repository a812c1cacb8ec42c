// The sites the user allows tabwire on (specs/page-sdk.md, "Where it exists"): the list, its
// per-site switches, and the checks every page-facing method makes. Only on these sites does the
// extension inject its content scripts (content-scripts.js), and only pages on them may answer
// page.* and chat.* calls or send events. A page the user did not allow is not read, not even
// its title. The grammar of a pattern is lib/sites.js.
//
// The list lives in chrome.storage.local under `sites`; nothing stored means DEFAULT_SITES.
// Every context that imports this module (the worker, the popup) keeps an in-memory copy in
// step with storage, so `allows()` is synchronous: it runs on every call and every page event.

import { TabwireError, fail } from '../lib/errors.js';
import { DEFAULT_SITES, allowedBy as allowedByRules, bareUrl, compile, everyPort, matchPattern, normalise, originOf, parse, withEveryPort } from '../lib/sites.js';
import { method } from './traits.js';

const KEY = 'sites';
// The per-site switches, beside the list so that older versions, which read only `sites`, keep
// working: { [pattern]: { scripts: true, trusted_input: true, cookies: true } }, only switches
// that are on.
const OPTIONS_KEY = 'site_options';
export const SWITCHES = Object.freeze(['scripts', 'trusted_input', 'cookies']);
const CACHE_MAX = 1000; // origins remembered by allows(); cleared whenever the list changes

let sites = null; // normalised patterns, null until loaded (then allows() says no to everything)
let rules = []; // the same, compiled for allowedBy
let options = {}; // pattern → { scripts, trusted_input, cookies }: the switches that are on
const cache = new Map(); // origin → boolean
const hooks = new Set(); // fn(sites), on each change of the stored list

// ---------------------------------------------------------------------------------------------
// Matching

// Whether tabwire may work with a document of this origin (as `new URL(u).origin` or
// `port.sender.origin` give it). Synchronous and cached: it runs on every call and event.
export function allows(origin) {
  if (typeof origin !== 'string') return false;
  let yes = cache.get(origin);
  if (yes === undefined) {
    yes = allowedBy(origin) !== null;
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(origin, yes);
  }
  return yes;
}

// The pattern of the list that allows `origin`, or null.
export function allowedBy(origin) {
  return allowedByRules(origin, rules);
}

// ---------------------------------------------------------------------------------------------
// The checks page.js, chat.js and tabs.js make

export function notAllowed(tabId, origin) {
  return new TabwireError('site_not_allowed',
    `tab ${tabId} shows ${origin}, a site tabwire is not allowed on; the user can allow it in the tabwire popup ` +
    `("Allow tabwire on this site") or with \`tabwire sites allow ${origin}\`, then reload the tab`);
}

// The `expected_origin` parameter, checked: an origin, or undefined when not given. A URL is
// taken for its origin, so a caller may pass back the url it was given.
export function expectedOrigin(params) {
  const expected = params?.expected_origin;
  if (expected === undefined || expected === null) return undefined;
  const origin = originOf(expected);
  if (origin === null) fail('bad_request', '`expected_origin` must be an http or https origin such as https://example.com (list_tabs shows each tab\'s)');
  return origin;
}

// Throws unless the document that will answer, at `origin` (null: not an http or https page,
// whose `url` the message then names), may: `origin_changed` when the caller expected another
// origin, `not_scriptable` for a page that is not a web site, `site_not_allowed` when the user
// did not allow it.
export function checkSite(tabId, origin, expected, url = '') {
  if (expected !== undefined && origin !== expected)
    fail('origin_changed', `tab ${tabId} now shows ${origin ?? (bareUrl(url) || 'no page')} (expected ${expected}); nothing was done. list_tabs shows what each tab holds`);
  if (origin === null)
    fail('not_scriptable', `tab ${tabId} shows ${bareUrl(url) || 'nothing yet'}, where tabwire does not run (only on http and https sites the user allows); navigate it to a web page first`);
  if (!allows(origin)) throw notAllowed(tabId, origin);
}

// Throws unless the user turned switch `name` on for the site of `origin` (checkSite first).
export function requireSwitch(tabId, origin, name) {
  if (switchesFor(origin)[name]) return;
  const pattern = allowedBy(origin) ?? origin;
  if (name === 'scripts')
    fail('scripts_not_allowed', `running scripts is off for ${pattern} (tab ${tabId} shows ${origin}); only the user can turn it on: ` +
      `the "Run scripts" switch for this site in the tabwire popup, or \`tabwire sites allow --scripts ${pattern}\`. Until then use read_page, find and the other page tools`);
  if (name === 'cookies' && allowedBy(origin) !== null && !everyPort(pattern))
    fail('cookies_not_allowed', `cookies and storage are off for ${pattern} (tab ${tabId} shows ${origin}): ${cookiesNeedEveryPort(pattern)}`);
  if (name === 'cookies')
    fail('cookies_not_allowed', `cookies and storage are off for ${pattern} (tab ${tabId} shows ${origin}): a cookie is a credential, so only the user can turn this on: ` +
      `the "Cookies" switch for this site in the tabwire popup, or \`tabwire sites allow --cookies ${pattern}\``);
  fail('trusted_input_not_enabled', `trusted input is off for ${pattern} (tab ${tabId} shows ${origin}); only the user can turn it on: ` +
    `the "Trusted input" switch for this site in the tabwire popup, or \`tabwire sites allow --trusted-input ${pattern}\`. It attaches Chrome's debugger for each such action, which shows the "is being debugged" bar`);
}

// Why the Cookies switch cannot be on for `pattern` (lib/sites.js, everyPort), and what to allow.
export function cookiesNeedEveryPort(pattern) {
  const wide = withEveryPort(pattern);
  return `a cookie is a credential, and cookies are kept per host, not per port: every other port of ${parse(pattern).host} ` +
    `(another service's sign-in too) shares the cookies of ${pattern}, so the Cookies switch is only for a site pattern that covers every port of its host. ` +
    `If the user accepts that, they allow ${wide} with its "Cookies" switch in the tabwire popup, or run \`tabwire sites allow --cookies ${wide}\``;
}

// The switches of the pattern that allows `origin` (all off when none does). Cookies, being the
// host's, are on when any pattern of every port of the host has them on, even where a narrower
// pattern, listed before it, allows the origin.
export function switchesFor(origin) {
  const by = allowedBy(origin);
  const on = by === null ? {} : options[by] ?? {};
  const cookies = by !== null && Object.keys(options).some((p) => options[p].cookies && allowedByRules(origin, compile([p])) !== null);
  return Object.fromEntries(SWITCHES.map((name) => [name, name === 'cookies' ? cookies : on[name] === true]));
}

export function currentOptions() {
  return structuredClone(options);
}

// ---------------------------------------------------------------------------------------------
// The list

// Resolves once this context's copy of the list is loaded; allows() refuses everything before.
// A change that arrived meanwhile (onChanged, below) is newer than what the read returns.
export const sitesReady = chrome.storage.local.get([KEY, OPTIONS_KEY]).then(
  (got) => sites ?? apply(clean(got[KEY]), cleanOptions(got[OPTIONS_KEY])),
  (e) => {
    console.error('tabwire: cannot read the allowed sites, so none are allowed until the list changes or the extension restarts:', e);
    sites ?? apply([], {});
  },
).then(() => {});

export function currentSites() {
  return sites ?? [];
}

// fn(sites) runs after each change of the stored list, once per change, in every context.
export function onSitesChanged(fn) {
  hooks.add(fn);
}

chrome.storage.onChanged.addListener((changes, area) => {
  if (area !== 'local' || !(KEY in changes || OPTIONS_KEY in changes)) return;
  const before = { list: currentSites(), options: JSON.stringify(options) };
  const after = KEY in changes ? clean(changes[KEY].newValue) : currentSites();
  apply(after, OPTIONS_KEY in changes ? cleanOptions(changes[OPTIONS_KEY].newValue) : options);
  const same = before.list.length === after.length && before.list.every((p, i) => p === after[i]);
  if (same && before.options === JSON.stringify(options)) return;
  for (const fn of hooks) {
    try {
      fn(after);
    } catch (e) {
      console.error('tabwire: a sites listener failed:', e);
    }
  }
});

// A stored value as a list of normalised patterns; nothing stored means the defaults.
function clean(value) {
  if (value === undefined) return [...DEFAULT_SITES];
  if (!Array.isArray(value)) {
    console.error('tabwire: the stored allowed sites are not a list; none are allowed until the list is set again');
    return [];
  }
  const out = [];
  for (const p of value) {
    try {
      const n = normalise(p);
      if (!out.includes(n)) out.push(n);
    } catch (e) {
      console.error('tabwire: ignored a stored site:', e.message);
    }
  }
  return out;
}

// Stored switches, kept only for known switch names that are on, under normalised patterns.
function cleanOptions(value) {
  const out = {};
  if (value === null || typeof value !== 'object') return out;
  for (const [pattern, on] of Object.entries(value)) {
    let p;
    try {
      p = normalise(pattern);
    } catch {
      continue;
    }
    // Cookies only on a pattern of every port (an older version let others have it).
    const kept = Object.fromEntries(SWITCHES.filter((name) => on?.[name] === true && (name !== 'cookies' || everyPort(p))).map((name) => [name, true]));
    if (Object.keys(kept).length > 0) out[p] = kept;
  }
  return out;
}

function apply(list, opts) {
  sites = list;
  rules = compile(list);
  // A switch lives only as long as its site is allowed.
  options = Object.fromEntries(Object.entries(opts).filter(([p]) => list.includes(p)));
  cache.clear();
}

// Changes in one context are made one at a time, each from storage as it is then (read, edit,
// write), so none works from a stale copy of the list (the popup's may be minutes old).
let queue = Promise.resolve();

function change(edit, pattern) {
  const run = queue.then(async () => {
    const got = await chrome.storage.local.get([KEY, OPTIONS_KEY]);
    const now = { list: clean(got[KEY]), options: cleanOptions(got[OPTIONS_KEY]) };
    const next = await edit(now);
    const result = (s) => ({ sites: s.list, options: s.options, pattern, changed: s !== now });
    if (next === null) return result(now);
    next.options = Object.fromEntries(Object.entries(next.options).filter(([p]) => next.list.includes(p)));
    if (JSON.stringify(next) === JSON.stringify(now)) return result(now);
    await chrome.storage.local.set({ [KEY]: next.list, [OPTIONS_KEY]: next.options });
    apply(next.list, next.options); // Chrome runs onChanged before set() resolves; this holds should that change
    return result(next);
  });
  queue = run.catch(() => {});
  return run;
}

// Allow a site. `switches` ({scripts, trusted_input, cookies}, booleans), when given, sets them exactly
// (a switch left out is off); without it a site already allowed keeps its own.
export async function allowSite(pattern, switches) {
  const p = normalise(pattern);
  const on = switches === undefined ? undefined : checkSwitches(switches);
  if (on?.cookies && !everyPort(p)) fail('bad_request', `${p} was not allowed: ${cookiesNeedEveryPort(p)}`);
  if (!(await chromeGrants(p)))
    fail('site_not_allowed', `Chrome does not let tabwire read ${p}: tabwire's "Site access" setting in Chrome leaves that site out. ` +
      `Add the site there first (${SITE_ACCESS} → Site access → "On specific sites" → Add a site, or "On all sites"), then allow it again`);
  return change(({ list, options: opts }) => {
    const next = { list: list.includes(p) ? list : [...list, p], options: { ...opts } };
    if (on !== undefined) {
      if (Object.keys(on).length > 0) next.options[p] = on;
      else delete next.options[p];
    }
    return next;
  }, p);
}

// Turn one switch of an allowed site on or off (the popup).
export function setSwitch(pattern, name, value) {
  const p = normalise(pattern);
  if (!SWITCHES.includes(name)) fail('bad_request', `there is no switch ${JSON.stringify(name)}; the switches are ${SWITCHES.join(', ')}`);
  if (name === 'cookies' && value === true && !everyPort(p)) fail('bad_request', `the Cookies switch stays off for ${p}: ${cookiesNeedEveryPort(p)}`);
  return change(({ list, options: opts }) => {
    if (!list.includes(p)) fail('bad_request', `${p} is not an allowed site; allow it first`);
    const on = { ...opts[p] };
    if (value === true) on[name] = true;
    else delete on[name];
    const next = { list, options: { ...opts } };
    if (Object.keys(on).length > 0) next.options[p] = on;
    else delete next.options[p];
    return next;
  }, p);
}

function checkSwitches(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail('bad_request', `\`switches\` must be an object such as {"scripts": true, "trusted_input": false}`);
  const on = {};
  for (const [name, v] of Object.entries(value)) {
    if (!SWITCHES.includes(name)) fail('bad_request', `there is no switch ${JSON.stringify(name)}; the switches are ${SWITCHES.join(', ')}`);
    if (typeof v !== 'boolean') fail('bad_request', `the switch ${name} must be true or false`);
    if (v) on[name] = true;
  }
  return on;
}

export function revokeSite(pattern) {
  const p = normalise(pattern);
  return change(({ list, options: opts }) => (list.includes(p) ? { list: list.filter((x) => x !== p), options: opts } : null), p);
}

// ---------------------------------------------------------------------------------------------
// Chrome's own wall. The manifest asks for every site (specs/security.md, "Permissions", says why
// none can wait); the user narrows that in Chrome's settings (tabwire's "Site access"), and Chrome
// then keeps tabwire's scripts, injections and network events off every other site. The list
// stays inside what Chrome grants: a site Chrome leaves out cannot be allowed (allowSite), and one
// it stops granting is revoked here, once Chrome says so (chrome.permissions.onRemoved) and at
// worker start.

// Where the user changes it: tabwire's page in chrome://extensions.
const SITE_ACCESS = `chrome://extensions/?id=${chrome.runtime.id}`;
// Set to "On specific sites", Chrome first withholds every site, then grants those the user
// keeps (two events, moments apart): the list follows once Chrome has been still this long, so
// a site the user keeps in Chrome is not revoked in tabwire on the way.
const CHROME_SETTLE_MS = 1000;

// Whether Chrome lets tabwire read every origin the pattern matches.
function chromeGrants(pattern) {
  return chrome.permissions.contains({ origins: [matchPattern(pattern)] });
}

// In the worker: follow Chrome's setting now and after each change that takes a site away.
export function watchChromeSiteAccess() {
  const follow = () => followChromeSiteAccess().catch((e) => console.error('tabwire: could not follow Chrome\'s Site access setting:', e));
  let timer = null;
  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      follow();
    }, CHROME_SETTLE_MS);
  };
  chrome.permissions.onRemoved.addListener(later);
  chrome.permissions.onAdded.addListener(() => timer !== null && later());
  return sitesReady.then(follow);
}

// Revoke each allowed site Chrome no longer grants; resolves when the list is in line.
function followChromeSiteAccess() {
  return change(async ({ list, options: opts }) => {
    const granted = await Promise.all(list.map(chromeGrants));
    const kept = list.filter((_, i) => granted[i]);
    if (kept.length === list.length) return null;
    console.warn(`tabwire: revoked ${list.filter((p) => !kept.includes(p)).join(', ')}: Chrome's Site access setting for tabwire no longer includes them`);
    return { list: kept, options: opts };
  });
}

// The methods bridges call for `tabwire sites` (specs/protocol.md).
export const siteMethods = {
  'sites.list': method({ pageless: true }, async () => {
    await sitesReady;
    return { sites: currentSites(), options: currentOptions(), defaults: [...DEFAULT_SITES] };
  }),
  'sites.allow': method({ pageless: true }, (params) => allowSite(params?.pattern, params?.switches ?? undefined)),
  'sites.revoke': method({ pageless: true }, (params) => revokeSite(params?.pattern)),
};
