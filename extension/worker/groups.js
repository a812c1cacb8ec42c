// Service worker: withGroups, a guard background.js wraps around every method; tabs.give, called
// by the bridges for give_tab; and the listeners that keep who owns which tab.
//
// Each bridge session (a `tabwire mcp`, a worker it spawned, an HTTP session) in a Chrome tab
// group of its own, titled with its name (`request.session`) and coloured: the tabs it opens go
// there, and so do the tabs a page opens from them (links, window.open). A session sees and
// acts on its own tabs and the user's (tabs in no live session's group); another live
// session's tab is refused with `tab_owned_by_other_session`. The user hands a tab over by
// dragging it into the group. When a session's bridge is gone (the host's `host_status` no
// longer lists it), its groups are collapsed and titled "… (done)", and its tabs are the
// user's again. The rules: lib/groups.js and specs/tools.md, "Sessions and their tab groups".
//
// Kept in storage (lib/groups-store.js, which the popup reads too), so a worker restart keeps
// who owns which group.

import { TabwireError, fail } from '../lib/errors.js';
import { access, colorFor, doneTitle, ended, othersLive, ownedMessage, ownerOf, shown } from '../lib/groups.js';
import { loadGroups, saveGroups, whenEnded } from '../lib/groups-store.js';
import { ownersBy } from './native.js';
import { getTab, tabId } from './tabs.js';
import { guarded, method } from './traits.js';

let state = { sessions: {} };
const loaded = loadGroups().then((s) => (state = s));
const save = () => saveGroups(state).catch((e) => console.error('tabwire: cannot save the tab groups:', e));
let queue = Promise.resolve(); // group changes one at a time: two opens make one group
const serial = (fn) => (queue = queue.then(fn, fn));
let attached = { host: null, sessions: [] }; // the sessions the host said are attached
// Which group each tab is in, so that the owner of each event about a tab is known at once
// (native.js asks as it sends); and the owner of a tab that is not in its group yet: one a
// session's tabs.open is opening, one a page opened from a session's tab. Not from
// tabs.onUpdated, which would wake this worker for every load of every tab (tabs.js says why):
// from what Chrome says of a tab whenever tabwire reads it anyway (its creation, tabwire putting
// it in a group, each call's check, tabs.list), and read again after each event about a tab
// while a live session has a group (so a tab the user dragged into or out of a group is told
// right from its next event on).
const groupOf = new Map(); // tab id → group id
const joining = new Map(); // tab id → session id, until the tab is in a group
const opening = []; // { id: session id, url } of each tabs.open under way

// `table` with every call checked against the tab's owner, tabs.list filtered, and the tabs
// tabs.open makes put in the caller's group.
export function withGroups(table) {
  return guarded(table, (method, fn, traits) => async (params, ctx = {}) => {
    await loaded;
    const caller = ctx.session ?? null;
    if (caller) await live(caller);
    if (traits.listsTabs) {
      const tabs = await fn(params, ctx);
      for (const t of tabs) seen({ id: t.id, groupId: t.group_id });
      return tabs.map((t) => shown(state, t, caller?.id ?? null)).filter(Boolean);
    }
    // Every page's declared commands: not those of another live session's tabs.
    if (traits.listsPages && params?.tab_id == null) {
      const listed = await fn(params, ctx);
      const groups = await Promise.all(listed.pages.map((p) => chrome.tabs.get(p.tab_id).then((t) => t.groupId, () => -1)));
      return { ...listed, pages: listed.pages.filter((_, i) => access(state, groups[i], caller?.id ?? null).kind !== 'refused') };
    }
    const look = othersLive(state, caller?.id ?? null) || Object.values(state.sessions).some((s) => s.done && s.groups.length > 0);
    hearMoves(look);
    // Bookkeeping, and what reaches no page or only stops something, acts on no one tab of a
    // session: the rest is checked against the tab's owner.
    const checked = !traits.bookkeeping && !traits.pageless && !traits.stops && Number.isInteger(params?.tab_id);
    if (checked && look) await check(params.tab_id, caller);
    if (checked && caller) await inFront(params.tab_id, caller);
    const opened = caller && traits.opens ? (tab) => adopt(tab, caller) : undefined;
    const open = opened ? { id: caller.id, url: normalized(params?.url) } : null;
    if (open) opening.push(open);
    let result;
    try {
      if (opened) fronts.delete(caller.id); // the new tab is its window's active one now
      result = await fn(params, opened ? { ...ctx, opened, home: home(caller) } : ctx);
    } finally {
      if (open) opening.splice(opening.indexOf(open), 1);
    }
    if (!traits.answersTab || !result || typeof result !== 'object') return result;
    // The answer was made before the tab joined the group: ask Chrome where it is now.
    const now = await chrome.tabs.get(result.id).catch(() => null);
    seen(now);
    return shown(state, { ...result, group_id: now?.groupId ?? result.group_id }, caller?.id ?? null) ?? result;
  });
}

async function check(tabId, caller) {
  let groupId = fresh.has(tabId) ? groupOf.get(tabId) : undefined;
  if (groupId === undefined) {
    const tab = await chrome.tabs.get(tabId).catch(() => null);
    if (!tab) return; // the method itself says no_such_tab
    seen(tab);
    groupId = tab.groupId;
  }
  const { kind, owner } = access(state, groupId, caller?.id ?? null);
  if (kind === 'refused') throw new TabwireError('tab_owned_by_other_session', ownedMessage(tabId, owner, caller?.name));
  // A tab of an ended session's collapsed group that a call works in is shown again: the user
  // sees where the assistant acts, and Chrome runs the page as any background tab (in a
  // collapsed group an upload_file never settled).
  if (owner?.done) {
    const group = await chrome.tabGroups.get(groupId).catch(() => null);
    if (group?.collapsed) await chrome.tabGroups.update(group.id, { collapsed: false }).catch(() => {});
  }
}

// The caller is running: known, with its name; a session that was marked done is live again
// (a bridge that came back).
function live(caller) {
  const known = state.sessions[caller.id];
  if (known && !known.done && known.name === caller.name) return;
  return serial(async () => {
    // A worker whose lead gave it tabs before it made a call: it takes that group as its own.
    const promised = caller.parent ? state.sessions[promiseKey(caller.parent, caller.name)] : null;
    const s = (state.sessions[caller.id] ??= { id: caller.id, name: caller.name, color: promised?.color ?? colorFor(caller.id), done: false, groups: [] });
    if (promised) {
      s.groups.push(...promised.groups.filter((g) => !s.groups.includes(g)));
      delete state.sessions[promised.id];
      ownersChanged(await tabsOf(promised.groups));
    }
    s.parent = caller.parent ?? null;
    const retitle = s.done || s.name !== caller.name;
    Object.assign(s, { name: caller.name, done: false });
    if (retitle) for (const g of s.groups) await chrome.tabGroups.update(g, { title: s.name, collapsed: false }).catch(() => {});
    await save();
  });
}

// The session's own window (tabs.js opens its tabs there): `window()` its id while it is open,
// else null; `made(id)` remembers the one tabs.js made.
function home(caller) {
  const s = () => state.sessions[caller.id];
  return {
    // Else the window of a group it was given (a worker's, made by its lead's give_tab).
    window: async () => {
      const id = s()?.window;
      if (Number.isInteger(id) && (await chrome.windows.get(id).catch(() => null))) return id;
      // Not a window of the user's: one where every tab is in a session's group (a session that
      // opened a tab `active` in the user's window has its group there too).
      for (const g of s()?.groups ?? []) {
        const info = await chrome.tabGroups.get(g).catch(() => null);
        if (!info) continue;
        const tabs = await chrome.tabs.query({ windowId: info.windowId }).catch(() => []);
        if (tabs.every((t) => ownerOf(state, t.groupId))) return info.windowId;
      }
      return null;
    },
    made: (id) => serial(() => s() && ((s().window = id), save())),
  };
}

// A tab of the caller's own window that a call names is made that window's active tab, which
// Chrome runs at full speed (tabs.js says why); the user's windows are not touched. Chrome is
// asked only when the call names another tab than the last one (a tab the user selected there
// meanwhile is hidden: dom.js acts in it all the same, and says so).
const fronts = new Map(); // session id → the tab of its window it last acted in
async function inFront(tabId, caller) {
  const own = state.sessions[caller.id]?.window;
  if (!Number.isInteger(own) || fronts.get(caller.id) === tabId) return;
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (tab?.windowId !== own) return;
  if (!tab.active) await chrome.tabs.update(tabId, { active: true }).catch(() => {});
  fronts.set(caller.id, tabId);
}

// Put `tab` (just opened by `caller`) in the caller's group of its window, made if need be.
function adopt(tab, caller) {
  return serial(async () => {
    const s = state.sessions[caller.id];
    if (!s) return;
    try {
      await join(tab, s);
    } catch (e) {
      console.warn(`tabwire: tab ${tab.id} could not join the group of ${s.name}:`, e.message);
    }
  });
}

// Move `tab` into session `s`'s group of its window, made if need be; the group.
async function join(tab, s) {
  for (const g of s.groups) {
    const info = await chrome.tabGroups.get(g).catch(() => null);
    if (info?.windowId !== tab.windowId) continue;
    await chrome.tabs.group({ tabIds: [tab.id], groupId: g });
    seen({ id: tab.id, groupId: g });
    return g;
  }
  const group = await chrome.tabs.group({ tabIds: [tab.id], createProperties: { windowId: tab.windowId } });
  seen({ id: tab.id, groupId: group });
  s.groups.push(group);
  await chrome.tabGroups.update(group, { title: s.name, color: s.color });
  await save();
  return group;
}

// The entry of a worker its lead gave tabs to before the worker made a call of its own (so
// before its session id is known): keyed by lead and name, taken over by the worker's first call.
const promiseKey = (lead, name) => `${lead}/worker/${name}`;

// `tabs.give {tab_id, to}`: the caller gives a tab it may use (its own or the user's: withGroups
// checked it) to its running worker named `to`. The tab moves into the worker's group. Like any
// call naming a tab it is logged and refused while stopped or while the tab is handed over;
// `regroups` (traits.js) only spares the tab the acting mark.
export const groupMethods = {
  'tabs.give': method({ regroups: true }, async (params, ctx = {}) => {
    const caller = ctx.session ?? null;
    const id = tabId(params);
    const to = params?.to;
    if (typeof to !== 'string' || to.trim() === '') fail('bad_request', '`to` must be the name of one of your running workers');
    if (!caller) fail('bad_request', 'a tab is given by a session to one of its workers, and this call was made for no session');
    const tab = await getTab(id);
    return serial(async () => {
      let worker = Object.values(state.sessions).find((s) => !s.done && s.parent === caller.id && s.name === to);
      if (!worker) {
        const key = promiseKey(caller.id, to);
        worker = state.sessions[key] ??= { id: key, name: to, color: colorFor(key), done: false, groups: [], parent: caller.id };
      }
      await join(tab, worker);
      await save();
      ownersChanged([id]);
      return { tab_id: id, group: worker.name };
    });
  }),
};

// Told the tabs whose owner changed (a session ended, a tab given to a worker, a worker taking
// the group its lead made for it): the bridges dropped what those pages said while another
// session owned them, so background.js has page.js say their declared commands again.
let ownersChanged = () => {};
export function onOwnersChanged(fn) {
  ownersChanged = fn;
}
async function tabsOf(groups) {
  if (groups.length === 0) return [];
  const tabs = await chrome.tabs.query({}).catch(() => []);
  return tabs.filter((t) => groups.includes(t.groupId)).map((t) => t.id);
}

// A session ended: its groups stay for the user, collapsed and titled "… (done)".
// Or, as the user chose in the popup (`whenEnded` "close"), its tabs are closed — but for a
// window that holds nothing else, which would close with them: those stay, as with "keep".
function finish(id) {
  return serial(async () => {
    const close = (await whenEnded()) === 'close';
    // With it, the workers it gave tabs to that never came.
    const promised = Object.values(state.sessions).filter((s) => s.id.startsWith(promiseKey(id, '')));
    for (const s of [state.sessions[id], ...promised]) {
      if (!s || s.done) continue;
      s.done = true;
      if (close) await closeTabs(s.groups, s.window);
      for (const g of s.groups) await chrome.tabGroups.update(g, { title: doneTitle(s.name), collapsed: true }).catch(() => {});
      ownersChanged(await tabsOf(s.groups));
    }
    await save();
  });
}

async function closeTabs(groups, own) {
  const tabs = await chrome.tabs.query({});
  const doomed = tabs.filter((t) => groups.includes(t.groupId));
  // The session's own window (tabs.js) closes with them: it is not the user's.
  const spared = new Set(doomed.filter((t) => t.windowId !== own && tabs.every((o) => o.windowId !== t.windowId || groups.includes(o.groupId))).map((t) => t.id));
  const ids = doomed.map((t) => t.id).filter((t) => !spared.has(t));
  if (ids.length > 0) await chrome.tabs.remove(ids).catch((e) => console.warn('tabwire: the tabs of an ended session were not closed:', e.message));
}

// The host lists the sessions of its attached bridges; those it listed before and lists no
// more have ended. (A new host lists none yet: nothing is marked until one goes from it.)
export function sessionsAttached({ host_pid: host, sessions } = {}) {
  if (!Array.isArray(sessions)) return;
  const before = attached.host === host ? attached.sessions : [];
  attached = { host, sessions };
  loaded.then(() => ended(before, sessions).forEach(finish));
}

const normalized = (url) => {
  try {
    return new URL(url).href;
  } catch {
    return null;
  }
};

// The live session a tab is that session's own to hear of: the one whose group it is in, or
// that it is joining. Null for the user's tabs, which every session hears of.
export function eventOwner(tabId) {
  const s = ownerOf(state, groupOf.get(tabId)) ?? state.sessions[joining.get(tabId)];
  if (!reading.has(tabId) && Object.values(state.sessions).some((o) => !o.done && o.groups.length > 0)) {
    reading.add(tabId);
    chrome.tabs.get(tabId).then(seen, () => {}).finally(() => reading.delete(tabId));
  }
  return s && !s.done ? s.id : null;
}

// Whose tab `tab` is (as Chrome gave it, with its group): a live session's id, or null for the
// user's (downloads.js records whose each download is by it).
export async function tabOwner(tab) {
  await loaded;
  const s = ownerOf(state, tab?.groupId);
  return s && !s.done ? s.id : null;
}

// Whether session `id` is running: known here and not ended.
export async function sessionLive(id) {
  await loaded;
  return state.sessions[id]?.done === false;
}

// Chrome's word on the group of `tab` ({id, groupId}), read for something else.
function seen(tab) {
  if (!Number.isInteger(tab?.id) || !Number.isInteger(tab.groupId)) return;
  groupOf.set(tab.id, tab.groupId);
  if (tab.groupId >= 0) joining.delete(tab.id);
  if (chrome.tabs.onUpdated.hasListener(moved)) fresh.add(tab.id);
}

// While a call can be refused (`look` in withGroups: another live session, or an ended one, has
// a group), every move of a tab into or out of a group is heard (tabs.onUpdated names the new
// `groupId`), so a call's check reads the group of a tab whose group was read or heard since
// (`fresh`) from memory: asking Chrome on every call (tabs.get) was a fifth of the worker's time
// under load (docs/performance.md, "Soak"). Not heard otherwise: tabs.onUpdated fires for every
// load of every tab (tabs.js says why tabwire avoids it); once it is not heard, nothing in
// memory counts as fresh.
const fresh = new Set();
const moved = (id, change) => 'groupId' in change && seen({ id, groupId: change.groupId });
function hearMoves(on) {
  const event = chrome.tabs.onUpdated;
  if (on && !event.hasListener(moved)) event.addListener(moved);
  else if (!on && event.hasListener(moved)) (event.removeListener(moved), fresh.clear());
}
const reading = new Set(); // tabs whose group eventOwner reads again now

// Who a new tab will belong to before it is in a group: its opener's live session, or the
// session whose tabs.open asked for its URL.
function newOwner(tab) {
  const opener = Number.isInteger(tab.openerTabId) ? ownerOf(state, groupOf.get(tab.openerTabId)) : null;
  if (opener && !opener.done) return opener.id;
  const url = tab.pendingUrl || tab.url;
  return opening.find((o) => o.url === url)?.id ?? null;
}

// Keep `groupOf` and `joining`, from tabs created (not page loads: no listener here hears a
// load). Registered before tabs.js's listeners (background.js), so a tab's `created` event
// already names its owner.
export function trackTabGroups() {
  ownersBy(eventOwner);
  chrome.tabs.query({}).then((tabs) => tabs.forEach((t) => groupOf.has(t.id) || groupOf.set(t.id, t.groupId)), () => {});
  chrome.tabs.onCreated.addListener((tab) => {
    groupOf.set(tab.id, tab.groupId);
    const owner = newOwner(tab);
    if (owner) joining.set(tab.id, owner);
  });
  // After the other listeners: the tab's `removed` event still names its owner.
  chrome.tabs.onRemoved.addListener((id) => setTimeout(() => (groupOf.delete(id), joining.delete(id), fresh.delete(id)), 0));
}

// Tabs a page opens from a session's tab join its group; a group the user removed is forgotten.
export function watchGroups() {
  chrome.tabs.onCreated.addListener(async (tab) => {
    if (!Number.isInteger(tab.openerTabId)) return;
    await loaded;
    const opener = await chrome.tabs.get(tab.openerTabId).catch(() => null);
    const owner = opener && ownerOf(state, opener.groupId);
    if (!owner || owner.done || tab.groupId === opener.groupId) return;
    await chrome.tabs.group({ tabIds: [tab.id], groupId: opener.groupId })
      .then(() => seen({ id: tab.id, groupId: opener.groupId }))
      .catch((e) => console.warn(`tabwire: tab ${tab.id} could not join its opener's group:`, e.message));
  });
  chrome.tabGroups.onRemoved.addListener(async (group) => {
    await loaded;
    const owner = ownerOf(state, group.id);
    if (!owner) return;
    owner.groups = owner.groups.filter((g) => g !== group.id);
    await save();
  });
}
