// Downloads as results (specs/tools.md, "downloads"), through chrome.downloads only: no
// debugger, and never the file's content (the bridge hashes the file on disk).
//
// Which downloads tabwire reports: those started by a page of a site the user allows, by the
// rule of lib/downloads.js (`referrer`, or the origin inside a `blob:` URL), as the site list
// stands when the download starts and when it is listed. A download is given to the settle
// report of an action running at that moment in a tab whose page is of that same origin.
// Kept in memory: a worker restart forgets which downloads were reported (Chrome keeps them).

import { fail } from '../lib/errors.js';
import { baseName, initiatorOf, sourceOf } from '../lib/downloads.js';
import { running } from './settle.js';
import { allows, sitesReady } from './sites.js';
import { originOf } from '../lib/sites.js';

const MAX_KEPT = 200;
const reported = new Map(); // download id → { origin, tab_id }
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
    reported.set(item.id, { origin, tab_id: by[0]?.tabId ?? null });
    if (reported.size > MAX_KEPT) reported.delete(reported.keys().next().value);
    for (const a of by) {
      a.downloads.push(summary(item, origin));
      a.poke();
    }
    wakeAll();
  });
  chrome.downloads.onChanged.addListener(wakeAll);
}

// What an action's settle report says of a download it started.
const summary = (item, origin) => ({ id: item.id, filename: baseName(item.filename) || null, url_origin: sourceOf(item) ?? origin, state: item.state });

function describe(item) {
  const { origin, tab_id } = reported.get(item.id);
  return {
    id: item.id,
    filename: baseName(item.filename) || null,
    path: item.filename || null,
    url_origin: sourceOf(item),
    started_by: origin,
    tab_id,
    state: item.state,
    error: item.error ?? null,
    mime: item.mime || null,
    bytes: item.bytesReceived,
    total_bytes: item.totalBytes >= 0 ? item.totalBytes : null,
    started: item.startTime,
  };
}

// The reported downloads whose site is still allowed, newest first (or the one `id`).
async function listed(id) {
  const ids = [...reported.entries()].filter(([i, r]) => (id === null || i === id) && allows(r.origin)).map(([i]) => i);
  const items = (await Promise.all(ids.map((i) => chrome.downloads.search({ id: i })))).flat();
  return items.map(describe).sort((a, b) => b.id - a.id);
}

export const downloadMethods = {
  // Lists; with `wait_ms`, first waits until the download `id` (else every one listed) is no
  // longer in progress, or the time is up.
  'downloads.list': async (params, { signal, timeoutMs }) => {
    await sitesReady;
    const id = params?.id ?? null;
    const waitMs = params?.wait_ms ?? 0;
    if (id !== null && !Number.isInteger(id)) fail('bad_request', '`id` must be the integer id of a download; call downloads without it to list them');
    if (!Number.isInteger(waitMs) || waitMs < 0) fail('bad_request', '`wait_ms` must be a number of milliseconds, 0 or more');
    const deadline = performance.now() + Math.min(waitMs, timeoutMs - 500);
    for (;;) {
      const downloads = await listed(id);
      if (id !== null && downloads.length === 0) fail('bad_request', `no download ${id} of an allowed site: call downloads without \`id\` to list them`);
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
