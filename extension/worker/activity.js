// Service worker, a guard background.js wraps around every method (withActivity): what the
// assistant did, for the person whose browser it is — the last 50 calls that acted on a tab
// (method, tab, origin, time, result, session), kept in chrome.storage.session (so a worker
// restart keeps them and the popup shows them) and nowhere else. Those whose params name a tab,
// or that open one (traits.js), are recorded.

import { originOf } from '../lib/sites.js';
import { lastUrl } from './tabs.js';
import { guarded } from './traits.js';

const KEY = 'activity';
const MAX = 50;
// Calls in a burst are written once: a write of the whole log costs the worker about as much as
// several calls (docs/performance.md, "Soak"), and the popup reads it when opened.
const SAVE_AFTER_MS = 500;
// Calls refused because the tab is another session's did nothing: not kept, so that a session
// refused on every call cannot push what the others did out of the log.
const NOT_KEPT = new Set(['tab_owned_by_other_session']);

let kept = null; // newest last; null until read from storage
let saving = null;
const loaded = chrome.storage.session.get(KEY).then(
  (got) => (kept = Array.isArray(got[KEY]) ? got[KEY].slice(-MAX) : []),
  () => (kept = []),
);

// `table` with each tab-facing method wrapped so that its call is recorded once it ends.
export function withActivity(table) {
  return guarded(table, (method, fn, { bookkeeping, opens }) => bookkeeping ? fn : async (params, ctx) => {
    const tab = Number.isInteger(params?.tab_id) ? params.tab_id : null;
    if (tab === null && !opens) return fn(params, ctx);
    const started = Date.now();
    const session = ctx?.session?.id ?? null; // whose call: the popup shows each session's last
    try {
      const result = await fn(params, ctx);
      record({ method, tab: tab ?? result?.id ?? null, origin: result?.origin ?? null, url: result?.url ?? params?.url, time: started, ms: Date.now() - started, result: 'ok', session });
      return result;
    } catch (e) {
      if (!NOT_KEPT.has(e?.code)) record({ method, tab, origin: null, url: null, time: started, ms: Date.now() - started, result: e?.code ?? 'internal', message: String(e?.message ?? e).slice(0, 300), session });
      throw e;
    }
  });
}

// Recorded after the answer is on its way: the tab's origin is looked up only when the result
// did not name it, in what tabs.js last heard of the tab before asking Chrome.
async function record({ url, ...entry }) {
  if (!entry.origin) entry.origin = originOf(url ?? lastUrl(entry.tab) ?? '') ?? (entry.tab === null ? null : await chrome.tabs.get(entry.tab).then((t) => originOf(t.url), () => null));
  await loaded;
  kept.push(entry);
  if (kept.length > MAX) kept.splice(0, kept.length - MAX);
  saving ??= setTimeout(() => {
    saving = null;
    chrome.storage.session.set({ [KEY]: kept }).catch((e) => console.error('tabwire: cannot save the activity log:', e));
  }, SAVE_AFTER_MS);
}
