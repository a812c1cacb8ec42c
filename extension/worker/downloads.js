// Service worker: downloads.list, called by the bridges for the downloads tool, and the watch on
// chrome.downloads background.js starts (watchDownloads) — downloads as results (specs/tools.md,
// "downloads"), through chrome.downloads only: no debugger, and never the file's content (the
// bridge hashes the file on disk).
//
// Which downloads tabwire reports: those started by a page of a site the user allows, by the
// rule of lib/downloads.js (`referrer`, or the origin inside a `blob:` URL), as the site list
// stands when the download starts and when it is listed. Of one whose bytes came from a site
// not allowed (an allowed page's link to another site, which Chrome sends that site's cookies
// with), only the origin and path it came from: no name, type, size, state or path on disk, so
// the bridge neither hashes nor reads it.
//
// Whose a download is: the session whose action was running in a tab of that origin when it
// started, else the owner of the open tabs of that origin (lib/downloads.js, `whose`); a
// session is shown its own and the user's, as with tabs (groups.js). A download is given to
// the settle report of an action running at that moment in a tab whose page is of that origin.
// Kept in memory: a worker restart forgets which downloads were reported (Chrome keeps them).

import { fail } from '../lib/errors.js';
import { baseName, initiatorOf, shownTo, sourceAllowed, sourceOf, sourcePath, whose } from '../lib/downloads.js';
import { allows, sitesReady } from '../lib/sites-store.js';
import { originOf } from '../lib/sites.js';
import { sessionLive, tabOwner } from './groups.js';
import { running } from './settle.js';

const MAX_KEPT = 200;
const reported = new Map(); // download id → { origin, tab_id, owner } (owner: see `whose`)
const wakers = new Set();
const wakeAll = () => wakers.forEach((w) => w());

export function watchDownloads() {
  chrome.downloads.onCreated.addListener(async (item) => {
    const acting = running(); // now, before an action ends meanwhile
    await sitesReady;
    const origin = initiatorOf(item);
    if (!origin || !allows(origin)) return;
    const tabs = await Promise.all(acting.map((a) => chrome.tabs.get(a.tabId).catch(() => null)));
    const by = acting.filter((a, i) => originOf(tabs[i]?.url ?? '') === origin);
    const open = by.length > 0 ? [] : (await chrome.tabs.query({}).catch(() => [])).filter((t) => originOf(t.url ?? '') === origin);
    const owner = whose(by.map((a) => a.session), await Promise.all(open.map(tabOwner)));
    reported.set(item.id, { origin, tab_id: owner === undefined ? null : by[0]?.tabId ?? null, owner });
    if (reported.size > MAX_KEPT) reported.delete(reported.keys().next().value);
    // Not to the reports of two sessions' actions, when both were running there.
    for (const a of owner === undefined ? [] : by) {
      a.downloads.push(summary(item));
      a.poke();
    }
    wakeAll();
  });
  chrome.downloads.onChanged.addListener(wakeAll);
}

// Why a download whose bytes came from a site not allowed is told of by its origin and path only.
const withheldWhy = (from) => `the file came from ${from}, a site you have not allowed: a page of an allowed site sent the browser there, `
  + 'with that site\'s cookies, and what it sent back is that site\'s. tabwire gives no name, type, size, hash or content of it. '
  + `If the user trusts ${from}, they can allow it (tabwire sites allow ${from}).`;

// What an action's settle report says of a download it started.
function summary(item) {
  if (!sourceAllowed(item, allows)) return { id: item.id, filename: null, url_origin: sourceOf(item, allows), state: 'withheld' };
  return { id: item.id, filename: baseName(item.filename) || null, url_origin: sourceOf(item), state: item.state };
}

function describe(item) {
  const { origin, tab_id } = reported.get(item.id);
  const base = { id: item.id, started_by: origin, tab_id, started: item.startTime };
  if (!sourceAllowed(item, allows)) {
    const from = sourceOf(item, allows);
    return {
      ...base, filename: null, path: null, url_origin: from, url_path: sourcePath(item, allows), state: 'withheld',
      error: null, mime: null, bytes: null, total_bytes: null, withheld: withheldWhy(from),
    };
  }
  return {
    ...base,
    filename: baseName(item.filename) || null,
    path: item.filename || null,
    url_origin: sourceOf(item),
    url_path: sourcePath(item),
    state: item.state,
    error: item.error ?? null,
    mime: item.mime || null,
    bytes: item.bytesReceived,
    total_bytes: item.totalBytes >= 0 ? item.totalBytes : null,
    withheld: null,
  };
}

// The reported downloads `caller` is shown whose site is still allowed, newest first (or the
// one `id`).
async function listed(id, caller) {
  const live = new Map();
  for (const { owner } of reported.values()) if (typeof owner === 'string' && !live.has(owner)) live.set(owner, await sessionLive(owner));
  const ids = [...reported.entries()]
    .filter(([i, r]) => (id === null || i === id) && allows(r.origin) && shownTo(r.owner, caller, (s) => live.get(s)))
    .map(([i]) => i);
  const items = (await Promise.all(ids.map((i) => chrome.downloads.search({ id: i })))).flat();
  return items.map(describe).sort((a, b) => b.id - a.id);
}

export const downloadMethods = {
  // Lists; with `wait_ms`, first waits until the download `id` (else every one listed) is no
  // longer in progress, or the time is up.
  'downloads.list': async (params, { signal, timeoutMs, session }) => {
    await sitesReady;
    const id = params?.id ?? null;
    const waitMs = params?.wait_ms ?? 0;
    if (id !== null && !Number.isInteger(id)) fail('bad_request', '`id` must be the integer id of a download; call downloads without it to list them');
    if (!Number.isInteger(waitMs) || waitMs < 0) fail('bad_request', '`wait_ms` must be a number of milliseconds, 0 or more');
    const deadline = performance.now() + Math.min(waitMs, timeoutMs - 500);
    for (;;) {
      const downloads = await listed(id, session?.id ?? null);
      if (id !== null && downloads.length === 0) fail('bad_request', `no download ${id} of an allowed site started by this session or the user: call downloads without \`id\` to list yours`);
      const busy = downloads.some((d) => d.state === 'in_progress');
      const left = deadline - performance.now();
      if (!busy || left <= 0 || signal.aborted) return { downloads, in_progress: busy };
      await new Promise((resolve) => {
        const done = () => (clearTimeout(timer), wakers.delete(done), resolve());
        const timer = setTimeout(done, left);
        wakers.add(done);
      });
    }
  },
};
