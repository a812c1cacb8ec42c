// The sites the user allows tabwire on (specs/page-sdk.md, "Where it exists"). Only on these
// does the extension inject its content scripts, and only pages on them may answer page.* and
// chat.* calls or send events. A page the user did not allow is not read, not even its title.
//
// A pattern is `scheme://host[:port]` (http or https; a DNS name, an IPv4 address, `[ipv6]`, or
// `*.` + a DNS name of two labels or more; a port, `*` for any, none for the scheme's default).
// The list lives in chrome.storage.local under `sites`; nothing stored means DEFAULT_SITES.
// Every context that imports this module (the worker, the popup) keeps an in-memory copy in
// step with storage, so `allows()` is synchronous: it runs on every call and every page event.

import { TabwireError, fail } from './errors.js';

// Loopback, where the apps being built are served: the three names a dev server is reached by.
// Not the rest of 127.0.0.0/8, which no dev server uses by default.
export const DEFAULT_SITES = Object.freeze(['http://localhost:*', 'http://127.0.0.1:*', 'http://[::1]:*']);

const KEY = 'sites';
// The per-site switches, beside the list so that older versions, which read only `sites`, keep
// working: { [pattern]: { scripts: true, trusted_input: true } }, only switches that are on.
const OPTIONS_KEY = 'site_options';
export const SWITCHES = Object.freeze(['scripts', 'trusted_input']);
const DEFAULT_PORT = { http: 80, https: 443 };
const EXAMPLES = 'https://example.com, https://*.example.com (the domain and all its subdomains), http://localhost:3000, http://localhost:* (any port)';
const CACHE_MAX = 1000; // origins remembered by allows(); cleared whenever the list changes

let sites = null; // normalised patterns, null until loaded (then allows() says no to everything)
let rules = []; // the same, parsed: { scheme, host, wildcard, port }
let options = {}; // pattern → { scripts, trusted_input }: the switches that are on
const cache = new Map(); // origin → boolean
const hooks = new Set(); // fn(sites), on each change of the stored list

// ---------------------------------------------------------------------------------------------
// Patterns

// The normalised form of a pattern (lowercase scheme and host, default port removed, one
// trailing "/" dropped); throws TabwireError `bad_request` saying what is wrong.
export function normalise(pattern) {
  return format(parse(pattern));
}

function parse(input) {
  const bad = (why) => fail('bad_request', `${JSON.stringify(input)} is not a site pattern: ${why}. A site pattern is scheme://host[:port], e.g. ${EXAMPLES}`);
  if (typeof input !== 'string') fail('bad_request', `a site pattern must be a string such as https://example.com, got ${input === null ? 'null' : typeof input}`);
  const text = input.trim();
  if (text === '') bad('it is empty');
  if (text.length > 300) bad('it is longer than a host name can be');
  if (text === '*' || /^<all_urls>$/i.test(text) || /^\*:\/\/\*/.test(text)) bad('it would allow every site; allow the sites you work with one by one');
  const m = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/i.exec(text);
  if (!m) bad('it has no scheme; write http:// or https:// before the host');
  const scheme = m[1].toLowerCase();
  if (!(scheme in DEFAULT_PORT)) bad(`tabwire runs only on http and https sites, not on ${scheme}:`);
  let rest = m[2].endsWith('/') ? m[2].slice(0, -1) : m[2];
  if (/[/?#]/.test(rest)) bad('it has a path, query or fragment; a site is only scheme://host[:port]');
  if (rest.includes('@')) bad('it has a user name (the part before "@"); leave it out');

  let host;
  if (rest.startsWith('[')) {
    const end = rest.indexOf(']');
    if (end < 0) bad('its IPv6 address has no closing "]"');
    host = ipv6(rest.slice(0, end + 1), bad);
    rest = rest.slice(end + 1);
    if (rest !== '' && !rest.startsWith(':')) bad('something follows its IPv6 address that is not ":port"');
  } else {
    const colon = rest.indexOf(':');
    host = (colon < 0 ? rest : rest.slice(0, colon)).toLowerCase();
    rest = colon < 0 ? '' : rest.slice(colon);
    if (rest.indexOf(':', 1) > 0) bad('it has more than one ":"; write an IPv6 address in brackets, e.g. http://[::1]:8080');
  }
  const port = rest === '' ? null : portOf(rest.slice(1), bad);

  let wildcard = false;
  if (host.startsWith('[')) {
    // checked by ipv6()
  } else if (host.startsWith('*.')) {
    wildcard = true;
    host = host.slice(2);
    if (isIpv4Like(host)) bad('a wildcard "*." goes before a domain name, not an IP address');
    dnsName(host, bad);
    if (!host.includes('.')) bad(`"*.${host}" would allow a whole top-level domain; a wildcard needs two labels or more after "*.", e.g. *.example.com`);
  } else if (host.includes('*')) {
    bad('"*" is allowed only as the first label of the host ("*.example.com") or as the port');
  } else if (isIpv4Like(host)) {
    ipv4(host, bad);
  } else {
    dnsName(host, bad);
  }
  return { scheme, host, wildcard, port: port === DEFAULT_PORT[scheme] ? null : port };
}

function format({ scheme, host, wildcard, port }) {
  return `${scheme}://${wildcard ? '*.' : ''}${host}${port === null ? '' : `:${port}`}`;
}

function portOf(text, bad) {
  if (text === '*') return '*';
  if (!/^\d{1,5}$/.test(text)) bad(`its port ${JSON.stringify(text)} is not a number from 1 to 65535 or "*"`);
  const n = Number(text);
  if (n < 1 || n > 65535) bad(`its port ${n} is not from 1 to 65535`);
  return n;
}

// A host whose last label is all digits: an IPv4 address, or a mistyped one (the URL parser
// would read "1.2.3" as 1.2.0.3, so such a name could never match as written).
const isIpv4Like = (host) => /(^|\.)\d+$/.test(host);

function ipv4(host, bad) {
  const parts = host.split('.');
  const octet = /^(0|[1-9]\d{0,2})$/;
  if (parts.length !== 4 || !parts.every((p) => octet.test(p) && Number(p) <= 255))
    bad(`its host ${JSON.stringify(host)} is not an IPv4 address (four numbers from 0 to 255, without leading zeros) nor a domain name`);
}

function dnsName(host, bad) {
  const label = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
  if (host === '' || host.length > 253 || !host.split('.').every((l) => label.test(l)))
    bad(`its host ${JSON.stringify(host)} is not a domain name (labels of letters, digits and inner hyphens, separated by dots; write an international name in its xn-- form)`);
}

// The canonical form the URL parser gives an IPv6 host (so "[0:0::1]" is "[::1]", as origins are).
function ipv6(bracketed, bad) {
  let host = null;
  try {
    host = new URL(`http://${bracketed}/`).hostname;
  } catch {}
  if (!host?.startsWith('[')) bad(`its host ${bracketed} is not an IPv6 address`);
  return host;
}

// Chrome's match pattern for a site, for registerContentScripts. Chrome treats a missing port
// as any port, so https://example.com injects on every port of example.com too; allows()
// narrows that to the default port for everything the worker does.
export function matchPattern(pattern) {
  const p = parse(pattern);
  return `${p.scheme}://${p.wildcard ? '*.' : ''}${p.host}${p.port === null ? '' : `:${p.port}`}/*`;
}

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

// The pattern that allows `origin`, or null.
export function allowedBy(origin) {
  const m = /^(https?):\/\/(\[[0-9a-f:.]+\]|[^:/[\]]+)(?::(\d+))?$/.exec(origin ?? '');
  if (!m) return null;
  const [, scheme, host, port] = m;
  const effective = port ? Number(port) : DEFAULT_PORT[scheme];
  for (const r of rules) {
    if (r.scheme !== scheme) continue;
    if (r.wildcard ? !(host === r.host || host.endsWith(`.${r.host}`)) : host !== r.host) continue;
    if (r.port === '*' || effective === (r.port ?? DEFAULT_PORT[scheme])) return r.text;
  }
  return null;
}

// The origin of an http(s) URL, or null (other schemes, not a URL).
export function originOf(url) {
  if (typeof url !== 'string' || !/^https?:/i.test(url)) return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

// A URL without its fragment: what tabwire reports of a page it is allowed on.
export function withoutFragment(url) {
  const hash = url.indexOf('#');
  return hash < 0 ? url : url.slice(0, hash);
}

// What tabwire reports of a page it is not allowed on: origin + path, no query, no fragment,
// no user name. Other schemes likewise lose query and fragment; a data: URL, which is its
// content, only says it is one.
export function bareUrl(url) {
  if (!url) return '';
  let u;
  try {
    u = new URL(url);
  } catch {
    return '';
  }
  if (u.protocol === 'http:' || u.protocol === 'https:') return u.origin + u.pathname;
  if (u.protocol === 'data:') return 'data:';
  u.search = '';
  u.hash = '';
  u.username = '';
  u.password = '';
  return u.href;
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
  fail('trusted_input_not_enabled', `trusted input is off for ${pattern} (tab ${tabId} shows ${origin}); only the user can turn it on: ` +
    `the "Trusted input" switch for this site in the tabwire popup, or \`tabwire sites allow --trusted-input ${pattern}\`. It attaches Chrome's debugger for each such action, which shows the "is being debugged" bar`);
}

// The switches of the pattern that allows `origin` (all off when none does).
export function switchesFor(origin) {
  const by = allowedBy(origin);
  const on = by === null ? {} : options[by] ?? {};
  return Object.fromEntries(SWITCHES.map((name) => [name, on[name] === true]));
}

export function currentOptions() {
  return structuredClone(options);
}

// An adapter's `matches` (URL globs: "*" is any run of characters, everything else itself, as
// the bridge's adapters.rs `glob`) against a URL.
export function globMatch(pattern, text) {
  const parts = pattern.split('*');
  const first = parts.shift();
  if (!text.startsWith(first)) return false;
  let at = first.length;
  if (parts.length === 0) return at === text.length;
  const last = parts.pop();
  for (const part of parts) {
    const i = text.indexOf(part, at);
    if (i < 0) return false;
    at = i + part.length;
  }
  return text.length - at >= last.length && text.endsWith(last);
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
    const kept = Object.fromEntries(SWITCHES.filter((name) => on?.[name] === true).map((name) => [name, true]));
    if (Object.keys(kept).length > 0) out[p] = kept;
  }
  return out;
}

function apply(list, opts) {
  sites = list;
  rules = list.map((text) => ({ ...parse(text), text }));
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
    const next = edit(now);
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

// Allow a site. `switches` ({scripts, trusted_input}, booleans), when given, sets them exactly
// (a switch left out is off); without it a site already allowed keeps its own.
export function allowSite(pattern, switches) {
  const p = normalise(pattern);
  const on = switches === undefined ? undefined : checkSwitches(switches);
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

// The methods bridges call for `tabwire sites` (specs/protocol.md).
export const siteMethods = {
  'sites.list': async () => {
    await sitesReady;
    return { sites: currentSites(), options: currentOptions(), defaults: [...DEFAULT_SITES] };
  },
  'sites.allow': (params) => allowSite(params?.pattern, params?.switches ?? undefined),
  'sites.revoke': (params) => revokeSite(params?.pattern),
};

// ---------------------------------------------------------------------------------------------
// Content scripts, in the worker: registered for exactly the allowed sites, so no other page
// gets window.tabwire (nothing to fingerprint) or the relay.

const SCRIPTS = [
  { id: 'tabwire-relay', js: ['content/relay.js'], world: 'ISOLATED' },
  { id: 'tabwire-sdk', js: ['content/page-sdk.js'], world: 'MAIN' },
  // Any page (dom.js): the agent in every frame, and the dialogs that must not freeze it.
  { id: 'tabwire-dom', js: ['dom/refs.js', 'dom/snapshot.js', 'dom/act.js', 'dom/pointer.js', 'dom/agent.js'], world: 'ISOLATED', allFrames: true },
  { id: 'tabwire-dom-dialogs', js: ['dom/dialogs.js'], world: 'MAIN', allFrames: true },
  // The console capture (dom/logs.js): the buffer first, so it hears the hook's first message.
  { id: 'tabwire-console-buffer', js: ['content/console-buffer.js'], world: 'ISOLATED' },
  { id: 'tabwire-console-hook', js: ['content/console-hook.js'], world: 'MAIN' },
];
const IDS = SCRIPTS.map((s) => s.id);

let syncing = Promise.resolve();

// Bring the registered content scripts in line with the list (at worker start and after each
// change). Runs one at a time; each run reads the list as it is when it starts.
export function syncContentScripts() {
  const run = syncing.then(() => sync(currentSites()));
  syncing = run.catch((e) => console.error('tabwire: could not register the content scripts:', e));
  return syncing;
}

async function sync(list) {
  const want = [...new Set(list.map(matchPattern))];
  const have = await chrome.scripting.getRegisteredContentScripts({ ids: IDS });
  if (want.length === 0) {
    if (have.length > 0) await chrome.scripting.unregisterContentScripts({ ids: have.map((s) => s.id) });
    return;
  }
  if (upToDate(have, want)) return;
  try {
    await register(have, want);
  } catch (e) {
    // One pattern Chrome refuses must not cost the others: find it, log it, register the rest.
    const ok = [];
    for (const m of want) {
      if (await chromeAccepts(m)) ok.push(m);
      else console.error(`tabwire: Chrome refuses the match pattern ${m} (${e.message}); tabwire is not injected there`);
    }
    const now = await chrome.scripting.getRegisteredContentScripts({ ids: IDS });
    if (ok.length === 0) {
      if (now.length > 0) await chrome.scripting.unregisterContentScripts({ ids: now.map((s) => s.id) });
    } else if (!upToDate(now, ok)) {
      await register(now, ok);
    }
  }
}

function scripts(matches) {
  return SCRIPTS.map((s) => ({ allFrames: false, ...s, matches, runAt: 'document_start', persistAcrossSessions: true }));
}

// Update in place when both exist (no moment without them), else register afresh.
async function register(have, matches) {
  if (have.length === SCRIPTS.length) return chrome.scripting.updateContentScripts(scripts(matches));
  if (have.length > 0) await chrome.scripting.unregisterContentScripts({ ids: have.map((s) => s.id) });
  await chrome.scripting.registerContentScripts(scripts(matches));
}

// Whether the registered scripts are what we would register. Chrome keeps "host:*" as "host"
// (the same thing to it: any port), so patterns are compared in that form.
function upToDate(have, want) {
  const sorted = (a) => [...new Set(a.map((m) => m.replace(/:\*\/\*$/, '/*')))].sort().join(' ');
  return have.length === SCRIPTS.length && SCRIPTS.every((s) => {
    const h = have.find((x) => x.id === s.id);
    return h && sorted(h.matches ?? []) === sorted(want) && sorted(h.js ?? []) === sorted(s.js) &&
      (h.world ?? 'ISOLATED') === s.world && h.runAt === 'document_start' && !!h.allFrames === !!s.allFrames && !h.excludeMatches?.length;
  });
}

// Whether Chrome takes `match` as a match pattern: a registration that lives a moment, for
// nothing but the check (only reached when a registration failed).
async function chromeAccepts(match) {
  const id = 'tabwire-probe';
  try {
    await chrome.scripting.registerContentScripts([{ id, js: ['content/relay.js'], matches: [match], persistAcrossSessions: false }]);
  } catch {
    return false;
  }
  await chrome.scripting.unregisterContentScripts({ ids: [id] }).catch(() => {});
  return true;
}
