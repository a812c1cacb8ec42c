// The sites the user allows tabwire on, as stored (specs/security.md, "Which sites"): the list,
// its per-site switches, and the changes the popup and the `sites.*` methods make. A module of
// its own, apart from the worker's checks (worker/sites.js), so the popup edits the list without
// loading any of the worker. The grammar of a pattern is sites.js.
//
// The list lives in chrome.storage.local under `sites`; nothing stored means DEFAULT_SITES.
// Every context that imports this module (the worker, the popup) keeps an in-memory copy in
// step with storage, so `allows()` is synchronous: it runs on every call and every page event.

import { fail } from './errors.js';
import { DEFAULT_SITES, allowedBy as allowedByRules, compile, cookiesNeedEveryPort, everyPort, matchPattern, normalise } from './sites.js';

const KEY = 'sites';
// The per-site switches, beside the list so that older versions, which read only `sites`, keep
// working: { [pattern]: { scripts: true, trusted_input: true, cookies: true } }, only switches
// that are on.
const OPTIONS_KEY = 'site_options';
const SWITCHES = Object.freeze(['scripts', 'trusted_input', 'cookies']);
const CACHE_MAX = 1000; // origins remembered by allows(); cleared whenever the list changes

let sites = null; // normalised patterns, null until loaded (then allows() says no to everything)
let rules = []; // the same, compiled for allowedBy
let options = {}; // pattern → { scripts, trusted_input, cookies }: the switches that are on
const cache = new Map(); // origin → boolean
const hooks = new Set(); // fn(sites), on each change of the stored list

// ---------------------------------------------------------------------------------------------
// Reading

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

// ---------------------------------------------------------------------------------------------
// Changing

// Changes in one context are made one at a time, each from storage as it is then (read, edit,
// write), so none works from a stale copy of the list (the popup's may be minutes old).
// `edit({list, options})` returns the next {list, options}, or null for no change; the result
// is `{sites, options, pattern, changed}`, what the `sites.*` methods answer.
let queue = Promise.resolve();

export function editSites(edit, pattern) {
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
  return editSites(({ list, options: opts }) => {
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
  return editSites(({ list, options: opts }) => {
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
  return editSites(({ list, options: opts }) => (list.includes(p) ? { list: list.filter((x) => x !== p), options: opts } : null), p);
}

// ---------------------------------------------------------------------------------------------
// Chrome's own wall (worker/sites.js follows it): a site Chrome's "Site access" setting for
// tabwire leaves out cannot be allowed here.

// Where the user changes it: tabwire's page in chrome://extensions.
const SITE_ACCESS = `chrome://extensions/?id=${chrome.runtime.id}`;

// Whether Chrome lets tabwire read every origin the pattern matches.
export function chromeGrants(pattern) {
  return chrome.permissions.contains({ origins: [matchPattern(pattern)] });
}
