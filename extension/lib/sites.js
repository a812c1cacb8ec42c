// Site patterns: the grammar, and which origins a list of patterns allows. Pure functions, no
// chrome.*: the worker and the popup use them (lib/sites-store.js keeps the list itself), and
// sites.test.js runs them against specs/site-patterns.json, the table of cases that
// proto/src/sites.rs, the same grammar in Rust, passes too.
//
// A pattern is `scheme://host[:port]`: http or https; a DNS name, an IPv4 address, `[ipv6]`, or
// `*.` + a DNS name of two labels or more; a port from 1 to 65535 written without leading zeros,
// `*` for any, none for the scheme's default. An origin is as a browser writes it:
// `scheme://host[:port]`, lowercase, no path.

import { fail } from './errors.js';

// Loopback, where the apps being built are served: the three names a dev server is reached by.
// Not the rest of 127.0.0.0/8, which no dev server uses by default.
export const DEFAULT_SITES = Object.freeze(['http://localhost:*', 'http://127.0.0.1:*', 'http://[::1]:*']);

const DEFAULT_PORT = { http: 80, https: 443 };
const EXAMPLES = 'https://example.com, https://*.example.com (the domain and all its subdomains), http://localhost:3000, http://localhost:* (any port)';

// The normalised form of a pattern (lowercase scheme and host, default port removed, one
// trailing "/" dropped); throws TabwireError `bad_request` saying what is wrong.
export function normalise(pattern) {
  return format(parse(pattern));
}

// A pattern, parsed: { scheme, host, wildcard, port } (port: a number, '*', or null for the
// scheme's default). Throws TabwireError `bad_request` saying what is wrong.
export function parse(input) {
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

// A port as written: "*", or 1 to 65535 without leading zeros ("080" would read as 80 here and
// be refused by the URL parser's idea of the same site elsewhere).
function portOf(text, bad) {
  if (text === '*') return '*';
  if (!/^[1-9]\d{0,4}$/.test(text)) bad(`its port ${JSON.stringify(text)} is not a number from 1 to 65535 (no leading zeros) or "*"`);
  const n = Number(text);
  if (n > 65535) bad(`its port ${n} is not from 1 to 65535`);
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

// Cookies are kept per host, not per port (nor per scheme, unless Secure): a cookie one port
// of a host sets, every other port of it gets. So the Cookies switch, which hands the assistant
// a site's cookies, holds only on a pattern that covers every port of its hosts (sites-store.js):
// the switch of http://127.0.0.1:3000 would hand over the sign-in of whatever else runs on
// 127.0.0.1. `everyPort(pattern)` says whether it does; `withEveryPort(pattern)`, the pattern
// that would (the one to suggest); `cookiesNeedEveryPort(pattern)`, all that for the user.
export function everyPort(pattern) {
  return parse(pattern).port === '*';
}

export function withEveryPort(pattern) {
  return format({ ...parse(pattern), port: '*' });
}

// Why the Cookies switch cannot be on for `pattern`, and what to allow instead: the popup shows
// it beside the switch, and the worker's refusals say it.
export function cookiesNeedEveryPort(pattern) {
  const wide = withEveryPort(pattern);
  return `a cookie is a credential, and cookies are kept per host, not per port: every other port of ${parse(pattern).host} ` +
    `(another service's sign-in too) shares the cookies of ${pattern}, so the Cookies switch is only for a site pattern that covers every port of its host. ` +
    `If the user accepts that, they allow ${wide} with its "Cookies" switch in the tabwire popup, or run \`tabwire sites allow --cookies ${wide}\``;
}

// Chrome's match pattern for a site, for registerContentScripts. Chrome treats a missing port
// as any port, so https://example.com injects on every port of example.com too; allowedBy()
// narrows that to the default port for everything the worker does.
export function matchPattern(pattern) {
  const p = parse(pattern);
  return `${p.scheme}://${p.wildcard ? '*.' : ''}${p.host}${p.port === null ? '' : `:${p.port}`}/*`;
}

// Normalised patterns, parsed once for allowedBy: [{ scheme, host, wildcard, port, text }].
export function compile(patterns) {
  return patterns.map((text) => ({ ...parse(text), text }));
}

// An origin as a browser writes it: http or https, a host without a path, user name, "*" or
// blanks (an IPv6 one in brackets), a port from 1 to 65535 without leading zeros.
const ORIGIN = /^(https?):\/\/(\[[0-9a-f:.]+\]|[^:/?#@*[\]\s]+)(?::([1-9]\d{0,4}))?$/;

// The pattern of `rules` (compile's) that allows `origin`, or null.
export function allowedBy(origin, rules) {
  const m = ORIGIN.exec(origin ?? '');
  if (!m) return null;
  const [, scheme, host, port] = m;
  const effective = port ? Number(port) : DEFAULT_PORT[scheme];
  if (effective > 65535) return null;
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
