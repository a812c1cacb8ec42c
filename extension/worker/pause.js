// Service worker, a guard background.js wraps around every method (withPause): Stop, the user's
// switches that halt the assistant in this browser, pressed in the popup and kept in storage
// (lib/pause-store.js). This module ends the page-facing calls in flight of what was stopped
// (everything, or that session's) at once and refuses new ones with `paused_by_user` until the
// popup's Resume.
//
// While a call acts in a tab, the tab shows it: isolated/badge.js draws a border and the name of
// the session's group, during the call and a moment after (but not in a screenshot or a PDF).

import { TabwireError } from '../lib/errors.js';
import { colorFor } from '../lib/groups.js';
import { onPauseChanged, currentPause, pauseReady } from '../lib/pause-store.js';
import { guarded } from './traits.js';

const running = new Set(); // { session, stop } of each page-facing call in flight

onPauseChanged(() => {
  for (const call of running) {
    const why = refusal(call.session);
    if (why) call.stop(why);
  }
});

const stopped = () => new TabwireError('paused_by_user',
  'the user pressed Stop in the tabwire popup: nothing is done in the browser until they press Resume there. Tell the user where you stopped and wait for them; no tool can resume it.');
const sessionStopped = (name) => new TabwireError('paused_by_user',
  `the user pressed Stop for this session ("${name}") in the tabwire popup: this session does nothing in the browser until they press its Resume there. Tell the user where you stopped and wait for them; no tool can resume it.`);

// Why a call of `session` is refused now, or null.
function refusal(session) {
  const { paused, sessions } = currentPause();
  if (paused) return stopped();
  if (session && Object.hasOwn(sessions, session.id)) return sessionStopped(session.name ?? sessions[session.id]);
  return null;
}

// `table` with each page-facing method refused while stopped, and ended when Stop is pressed.
export function withPause(table) {
  // Still answered while stopped: what touches no page, or only stops something (traits.js).
  return guarded(table, (_method, fn, traits) => traits.bookkeeping || traits.pageless || traits.stops ? fn : async (params, ctx = {}) => {
    await pauseReady;
    const session = ctx.session ?? null;
    const why = refusal(session);
    if (why) throw why;
    // The method's own signal aborts on Stop too; the call ends at once even if it does not look.
    const ctl = new AbortController();
    const onAbort = () => ctl.abort(ctx.signal.reason);
    ctx.signal?.addEventListener('abort', onAbort, { once: true });
    let stop;
    const ended = new Promise((_, reject) => (stop = (e) => (ctl.abort(e), reject(e))));
    const call = { session, stop };
    running.add(call);
    // No mark where no person sees the call act (a page's declarations), nor on a tab the call
    // gives to another session (traits.js).
    const tab = Number.isInteger(params?.tab_id) && !traits.declared && !traits.regroups ? params.tab_id : null;
    // A screenshot or a PDF shows the page as it is, without the mark: it is held off until the
    // capture ends (badge.js waits for the page to be painted without it; the capture does not
    // wait longer than 300 ms). A hand-over is the user's turn, with its own bar: no mark either.
    const shot = traits.capture;
    if (tab !== null && shot) await Promise.race([badge(tab, 'hide', session), sleep(300)]);
    else if (tab !== null) mark(tab, session);
    try {
      return await Promise.race([fn(params, { ...ctx, signal: ctl.signal }), ended]);
    } finally {
      running.delete(call);
      ctx.signal?.removeEventListener('abort', onAbort);
      if (tab !== null) shot ? badge(tab, 'release', session) : unmark(tab, session);
    }
  });
}

// The calls acting in each tab: the tab's mark is told when the first starts (or a call of
// another session starts) and when the last ends, not twice for every call: under load those
// two messages into the tab were the worker's largest cost (docs/performance.md, "Soak").
const acting = new Map(); // tab id → { calls, by: session id of the mark shown }
function mark(tab, session) {
  const a = acting.get(tab) ?? { calls: 0, by: undefined };
  acting.set(tab, a);
  a.calls += 1;
  const by = session?.id ?? null;
  if (a.by !== by) badge(tab, 'show', session);
  a.by = by;
}
function unmark(tab, session) {
  const a = acting.get(tab);
  if (!a || --a.calls > 0) return;
  acting.delete(tab);
  badge(tab, 'done', session);
}

// Tell the tab's top frame (isolated/badge.js) that calls of `session` started or ended there.
// Best effort: a page without tabwire's scripts shows nothing, and the call does not wait.
function badge(tab, verb, session) {
  const name = session?.name ?? 'assistant';
  const color = session ? colorFor(session.id) : 'grey';
  return chrome.tabs.sendMessage(tab, { type: `badge.${verb}`, name, color }, { frameId: 0 }).catch(() => {});
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
