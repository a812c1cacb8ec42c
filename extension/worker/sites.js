// Service worker: the checks every page-facing method makes (dom.js, page.js, chat.js and the rest
// call them) and the `sites.*` methods the bridges call — the worker's side of the sites the user
// allows tabwire on (specs/page-sdk.md, "Where it exists"), following Chrome's own "Site access".
// Only on these sites does the extension inject its content scripts (content-scripts.js), and only
// pages on them may answer page.* and chat.* calls or send events. A page the user did not allow is
// not read, not even its title.
//
// The list and its switches, as stored, are lib/sites-store.js (the popup edits them there too),
// which the worker's modules read the list from; the grammar of a pattern is lib/sites.js.

import { TabwireError, fail } from '../lib/errors.js';
import { DEFAULT_SITES, bareUrl, cookiesNeedEveryPort, everyPort, originOf } from '../lib/sites.js';
import { allowSite, allowedBy, allows, chromeGrants, currentOptions, currentSites, editSites, revokeSite, sitesReady, switchesFor } from '../lib/sites-store.js';
import { method } from './traits.js';

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

// ---------------------------------------------------------------------------------------------
// Chrome's own wall. The manifest asks for every site (specs/security.md, "Permissions", says why
// none can wait); the user narrows that in Chrome's settings (tabwire's "Site access"), and Chrome
// then keeps tabwire's scripts, injections and network events off every other site. The list
// stays inside what Chrome grants: a site Chrome leaves out cannot be allowed (allowSite), and one
// it stops granting is revoked here, once Chrome says so (chrome.permissions.onRemoved) and at
// worker start.

// Set to "On specific sites", Chrome first withholds every site, then grants those the user
// keeps (two events, moments apart): the list follows once Chrome has been still this long, so
// a site the user keeps in Chrome is not revoked in tabwire on the way.
const CHROME_SETTLE_MS = 1000;

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
  return editSites(async ({ list, options: opts }) => {
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
