// Which site started a download, by what Chrome records of it (a DownloadItem): the rule that
// decides whether tabwire reports a download at all (worker/downloads.js). Pure: no chrome.*.
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

// Where the bytes came from, as reported: an http(s) origin, or the scheme (`blob:`, `data:`).
export function sourceOf(item) {
  const url = item?.finalUrl || item?.url || '';
  if (/^blob:/i.test(url)) return originOf(url.slice(5)) ?? 'blob:';
  return originOf(url) ?? `${url.split(':')[0]}:`;
}

// The file's name without its folders (the path itself is the `path` field).
export const baseName = (path) => (path ?? '').split(/[\\/]/).pop();
