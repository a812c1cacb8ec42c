// Service worker: handover.ask, called by the bridges for ask_user (specs/tools.md, "ask_user"),
// and withHandover, a guard background.js wraps around every method.
//
// Hand-over to the user: the one call that brings a tab to the front, shows the assistant's message
// in a bar on the page (isolated/handover.js) and returns when the user presses Done or Cancel in
// tabwire's toolbar popup (ui/popup.js), or the time is up. Meanwhile every call naming that tab is
// refused with `waiting_for_user` (withHandover, in background.js), so the assistant cannot act
// while the user does. The answer is the user's button and what the tab shows then (origin, and the
// title on an allowed site), never what the user typed.
//
// The bar has no button: a page can hide or copy anything drawn in it, so the answer comes only
// from the popup, which no page can draw on. The open hand-overs are kept in
// chrome.storage.session (`handovers`, tab id → {id, message, session}), which only the
// extension's own pages and this worker can reach, and the popup's answer comes back the same way
// (`handover_answer`: {tab, id, answer}), naming the hand-over it was shown so that it cannot
// answer a later one of the same tab. No page, content script or host message can write it.

import { TabwireError, fail } from '../lib/errors.js';
import { allows, sitesReady } from '../lib/sites-store.js';
import { originOf } from '../lib/sites.js';
import { checkSite } from './sites.js';
import { getTab, tabId } from './tabs.js';
import { guarded, method } from './traits.js';

const MAX_MESSAGE = 500;
const open = new Map(); // tab id → { id, message, session, finish(answer) }
const SHOWN = 'handovers'; // storage.session: the open hand-overs, for the popup
const ANSWER = 'handover_answer'; // storage.session: the popup's Done or Cancel

// The open hand-overs as the popup shows them.
const publish = () => (hearLoads(), chrome.storage.session.set({ [SHOWN]: Object.fromEntries([...open].map(([tab, h]) => [tab, { id: h.id, message: h.message, session: h.session }])) }).catch(() => {}));

// `table` with each method refused for a tab handed over to the user, but those that reach no
// page (traits.js): they do nothing in it.
export function withHandover(table) {
  return guarded(table, (_method, fn, { pageless }) => pageless ? fn : (params, ctx) => {
    const id = params?.tab_id;
    if (Number.isInteger(id) && open.has(id)) {
      throw new TabwireError('waiting_for_user', `tab ${id} is handed over to the user (ask_user) until they press Done or Cancel in tabwire's toolbar popup; nothing was done. Wait for ask_user to return`);
    }
    return fn(params, ctx);
  });
}

async function showBar(id, message) {
  const target = { tabId: id, frameIds: [0] };
  await chrome.scripting.executeScript({ target, files: ['isolated/handover.js'] });
  await chrome.scripting.executeScript({ target, func: (m) => globalThis.tabwireHandover.show({ message: m }), args: [message] });
}

// tabwire's toolbar icon says, for that tab only, where the answer is: "ask" on it. Chrome drops
// a tab's own badge when the tab loads a page (loaded() marks it again); null gives the tab back
// the badge of every tab (worker/status.js).
function markIcon(tabId, asking) {
  try {
    chrome.action.setBadgeText({ tabId, text: asking ? 'ask' : null }).catch(() => {});
  } catch {
    // A mark is a hint; the hand-over goes on without it.
  }
}

const hideBar = (id) => chrome.scripting.executeScript({ target: { tabId: id, frameIds: [0] }, func: () => globalThis.tabwireHandover?.hide() }).catch(() => {});

// A page the tab loads meanwhile (a sign-in redirect) gets the bar again, if tabwire may be
// there. Heard only while a hand-over is open, so that no other navigation wakes the worker.
function loaded(d) {
  const h = open.get(d.tabId);
  if (!h || d.frameId !== 0) return;
  markIcon(d.tabId, true);
  if (allows(originOf(d.url))) showBar(d.tabId, h.message).catch(() => {});
}

function hearLoads() {
  const event = chrome.webNavigation.onCompleted;
  if (open.size > 0 && !event.hasListener(loaded)) event.addListener(loaded);
  else if (open.size === 0 && event.hasListener(loaded)) event.removeListener(loaded);
}

export function watchHandovers() {
  chrome.tabs.onRemoved.addListener((id) => open.get(id)?.finish('tab_closed'));
  // The popup's Done or Cancel, for the hand-over it showed.
  chrome.storage.session.onChanged.addListener((changes) => {
    const a = changes[ANSWER]?.newValue;
    if (!a) return;
    chrome.storage.session.remove(ANSWER).catch(() => {});
    const h = open.get(a.tab);
    if (h && a.id === h.id && (a.answer === 'done' || a.answer === 'cancel')) h.finish(a.answer);
  });
  publish(); // none open after a worker restart
}

export const handoverMethods = {
  'handover.ask': method({ capture: true }, async (params, { signal, timeoutMs, session }) => {
    await sitesReady;
    const id = tabId(params);
    const message = params?.message;
    if (typeof message !== 'string' || !message.trim() || message.length > MAX_MESSAGE) fail('bad_request', `\`message\` must be text of 1 to ${MAX_MESSAGE} characters: what the user should do, e.g. "Sign in, then press Done"`);
    const waitMs = params?.timeout_ms ?? 300_000;
    if (!Number.isInteger(waitMs) || waitMs < 1000) fail('bad_request', '`timeout_ms` must be at least 1000');
    if (open.has(id)) fail('waiting_for_user', `tab ${id} is already handed over to the user; wait for that ask_user to return`);
    const tab = await getTab(id);
    checkSite(id, originOf(tab.url), undefined, tab.url);
    let finish;
    const answered = new Promise((resolve) => (finish = resolve));
    open.set(id, { id: crypto.randomUUID(), message, session: session?.name ?? null, finish });
    publish();
    try {
      // The one call that takes the user's attention: the tab to the front, its window focused.
      await chrome.tabs.update(id, { active: true });
      await chrome.windows.update(tab.windowId, { focused: true }).catch(() => {});
      markIcon(id, true);
      await showBar(id, message);
      const timer = setTimeout(() => finish('timeout'), Math.min(waitMs, timeoutMs - 500));
      signal?.addEventListener('abort', () => finish('cancelled_by_assistant'), { once: true });
      const answer = await answered;
      clearTimeout(timer);
      const now = await chrome.tabs.get(id).catch(() => null);
      const origin = originOf(now?.url ?? '');
      return { answer, origin, title: now && allows(origin) ? now.title : null };
    } finally {
      open.delete(id);
      publish();
      hideBar(id);
      markIcon(id, false);
    }
  }),
};
