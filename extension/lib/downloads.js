// Which site started a download, where its bytes came from and whose it is, by what Chrome
// records of it (a DownloadItem): the rules that decide what tabwire reports of a download
// (worker/downloads.js). Pure: no chrome.*.
//
// chrome.downloads names no tab. What it names is the document that asked: `referrer`, the URL
// of the page the link or navigation came from (its origin at least, under every referrer
// policy but `no-referrer`). A `blob:` URL carries its creator's origin in itself
// (`blob:https://site/uuid`), and a page can mint blob URLs of its own origin only. A download
// with neither (typed by the user, a page's `no-referrer` link, another extension's) names no
// site, and is not reported: when in doubt, tabwire stays out.

import { originOf } from './sites.js';

// The origin of the site that started `item`, or null when Chrome's record names none.
export function initiatorOf(item) {
  const byReferrer = originOf(item?.referrer ?? '');
  if (byReferrer) return byReferrer;
  const url = item?.url ?? '';
  if (/^blob:/i.test(url)) return originOf(url.slice(5));
  return null;
}

// Whether the bytes came from sites the user allows: `url` and `finalUrl` both of allowed
// origins, a `blob:` URL of an allowed origin, or a `data:` URL (its bytes are in the URL the
// page wrote; no site was asked). An allowed page can point a link at any site, and Chrome
// sends that site's cookies with the request: what comes back (an account export of a site
// the user never allowed) is that site's, not the page's.
export function sourceAllowed(item, allows) {
  const urls = [item?.url, item?.finalUrl].filter(Boolean);
  return urls.length > 0 && urls.every((url) => {
    if (/^data:/i.test(url)) return true;
    const origin = /^blob:/i.test(url) ? originOf(url.slice(5)) : originOf(url);
    return origin !== null && allows(origin);
  });
}

// Where the bytes came from, as reported: an http(s) origin, or the scheme (`blob:`, `data:`).
// Of a download whose `url` and `finalUrl` differ, the first not allowed when `allows` is given.
export function sourceOf(item, allows = null) {
  const urls = [item?.finalUrl, item?.url].filter(Boolean);
  const url = (allows && urls.find((u) => !sourceAllowed({ url: u }, allows))) || urls[0] || '';
  if (/^blob:/i.test(url)) return originOf(url.slice(5)) ?? 'blob:';
  return originOf(url) ?? `${url.split(':')[0]}:`;
}

// The path of the URL the bytes came from (no query, no fragment), null for blob: and data:.
export function sourcePath(item, allows = null) {
  const urls = [item?.finalUrl, item?.url].filter(Boolean);
  const url = (allows && urls.find((u) => !sourceAllowed({ url: u }, allows))) || urls[0] || '';
  return originOf(url) ? new URL(url).pathname : null;
}

// Whose a download is, from the sessions (a session id, or null for a call made for none) of
// the tabwire actions running when it started in tabs of its starting origin (`acting`), else
// the owners (a live session's id, or null for the user's) of the open tabs of that origin
// (`tabs`): the one they all name; `undefined` when they disagree or there are none, which no
// session is shown. Chrome names no tab, so this is as close as it can be told.
export function whose(acting, tabs) {
  const owners = new Set(acting.length > 0 ? acting : tabs);
  return owners.size === 1 ? [...owners][0] : undefined;
}

// Whether `caller` (a session id, or null for a call made for no session) is shown a download
// of `owner` (see `whose`): its own and the user's, and those of a session that has ended
// (`live(id)` false), whose tabs are the user's again too.
export function shownTo(owner, caller, live) {
  if (caller === null || owner === null || owner === caller) return true;
  return owner !== undefined && !live(owner);
}

// The file's name without its folders (the path itself is the `path` field).
export const baseName = (path) => (path ?? '').split(/[\\/]/).pop();
