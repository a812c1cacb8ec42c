// Stop: the user's one switch that halts the assistant in this browser. The popup's Stop sets
// `paused` in chrome.storage.session (which only the extension's own pages and this worker can
// reach: no page, content script or host message can clear it), and this module then ends every
// page-facing call in flight at once and refuses new ones with `paused_by_user` until the
// popup's Resume. Kept in storage so that a worker restart stays stopped.

import { TabwireError } from '../lib/errors.js';

const KEY = 'paused';

// Methods that still answer while stopped: they touch no page (the host's bookkeeping, the
// user's own site list, the tab list) or only stop something.
const STILL_ANSWERED = new Set([
  'ping', 'echo', 'sites.list', 'sites.allow', 'sites.revoke', 'workflow.update',
  'page.drained', 'chat.status', 'chat.cancel', 'tabs.list',
]);

let paused = false;
const loaded = chrome.storage.session.get(KEY).then((got) => (paused = got[KEY] === true), () => {});
const running = new Set(); // how to stop each page-facing call in flight
const listeners = new Set();

chrome.storage.session.onChanged.addListener((changes) => {
  if (!changes[KEY]) return;
  paused = changes[KEY].newValue === true;
  if (paused) for (const stop of running) stop(stopped());
  for (const fn of listeners) fn(paused);
});

const stopped = () => new TabwireError('paused_by_user',
  'the user pressed Stop in the tabwire popup: nothing is done in the browser until they press Resume there. Tell the user where you stopped and wait for them; no tool can resume it.');

// `table` with each page-facing method refused while stopped, and ended when Stop is pressed.
export function withPause(table) {
  return Object.fromEntries(Object.entries(table).map(([method, fn]) => [method, STILL_ANSWERED.has(method) ? fn : async (params, ctx = {}) => {
    await loaded;
    if (paused) throw stopped();
    // The method's own signal aborts on Stop too; the call ends at once even if it does not look.
    const ctl = new AbortController();
    const onAbort = () => ctl.abort(ctx.signal.reason);
    ctx.signal?.addEventListener('abort', onAbort, { once: true });
    let stop;
    const ended = new Promise((_, reject) => (stop = (why) => (ctl.abort(why), reject(why))));
    running.add(stop);
    try {
      return await Promise.race([fn(params, { ...ctx, signal: ctl.signal }), ended]);
    } finally {
      running.delete(stop);
      ctx.signal?.removeEventListener('abort', onAbort);
    }
  }]));
}

// For the popup.
export const isPaused = async () => (await loaded, paused);
export const setPaused = (on) => chrome.storage.session.set({ [KEY]: on === true });
export function onPauseChanged(fn) {
  listeners.add(fn);
}
