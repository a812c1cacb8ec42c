// Service worker, for page.js, which takes each page event through it: what one page's events may
// cost per second, the per-tab rate (the size of one event and how deep a value may nest are
// lib/limits.js). A page over a limit hurts only itself: its own call fails, and the assistant
// hears how many of its events were refused (one `dropped` event for the tab).

import { fail } from '../lib/errors.js';
import { allows } from '../lib/sites-store.js';
import { isConnected, sendEvent } from './native.js';

// Per tab, page events pass through two token buckets. 200 a second with a burst of 1,000 is
// far above what a person's actions produce (an app replaying a backlog fits in the burst) and
// far below what would flood the host, the bridges and the assistant's context; 1 MiB a second
// with a burst of 8 MiB keeps a few large events possible but not a stream of them.
const EVENTS_PER_SECOND = 200;
const EVENTS_BURST = 1000;
const MiB = 1024 * 1024;
const BYTES_PER_SECOND = 1 * MiB;
const BYTES_BURST = 8 * MiB;
const DROPPED_AFTER_MS = 1000; // a tab whose events were refused is reported at most this late

const limits = new Map(); // tab id → its buckets and what was refused since the last report

// The tab's token buckets (EVENTS_* and BYTES_*): takes one event of `size`, or throws
// `rate_limited` and counts it for the tab's next `dropped` event. `from`: the page's
// {origin, url}, for that event.
export function rateLimit(tabId, from, size) {
  const now = performance.now();
  let l = limits.get(tabId);
  if (!l) limits.set(tabId, (l = { events: EVENTS_BURST, bytes: BYTES_BURST, at: now, refused: 0, why: new Set(), timer: null, from: null }));
  const seconds = (now - l.at) / 1000;
  l.at = now;
  l.events = Math.min(EVENTS_BURST, l.events + seconds * EVENTS_PER_SECOND);
  l.bytes = Math.min(BYTES_BURST, l.bytes + seconds * BYTES_PER_SECOND);
  const why = l.events < 1 ? `pushed events faster than ${EVENTS_PER_SECOND} a second` : l.bytes < size ? `pushed more than ${BYTES_PER_SECOND / MiB} MiB of events a second` : null;
  if (why === null) {
    l.events -= 1;
    l.bytes -= size;
    if (l.refused > 0) reportDropped(tabId, l); // before this event: they came first
    return;
  }
  l.refused++;
  l.why.add(why);
  l.from = from;
  l.timer ??= setTimeout(() => reportDropped(tabId, l), DROPPED_AFTER_MS);
  fail('rate_limited', `the event was refused: this tab ${why} (${why.includes('MiB') ? `${BYTES_BURST / MiB} MiB` : EVENTS_BURST} at most at once); send fewer events, or fold them into one`);
}

// One `dropped` event for the events of tab `id` refused since the last one.
function reportDropped(id, l) {
  clearTimeout(l.timer);
  l.timer = null;
  const count = l.refused;
  const why = [...l.why].join(' and ');
  l.refused = 0;
  l.why.clear();
  if (count === 0 || !isConnected() || !allows(l.from?.origin)) return;
  try {
    sendEvent('dropped', id, { count, reason: `tab ${id} (${l.from.origin}) ${why}; ${count} were refused` }, l.from);
  } catch (e) {
    console.warn('tabwire: the dropped event was not sent:', e.message);
  }
}

// The tab closed: report what it lost, then forget it.
export function forgetTab(id) {
  const l = limits.get(id);
  if (!l) return;
  reportDropped(id, l);
  limits.delete(id);
}
