// Each bridge session (a `tabwire mcp`, a worker it spawned, an HTTP session) in a Chrome tab
// group of its own, titled with its name (`request.session`) and coloured: the tabs it opens go
// there, and so do the tabs a page opens from them (links, window.open). A session sees and
// acts on its own tabs and the user's (tabs in no live session's group); another live
// session's tab is refused with `tab_owned_by_other_session`. The user hands a tab over by
// dragging it into the group. When a session's bridge is gone (the host's `host_status` no
// longer lists it), its groups are collapsed and titled "… (done)", and its tabs are the
// user's again. The rules: lib/groups.js and specs/tools.md, "Sessions and their tab groups".
//
// Kept in chrome.storage.session, so a worker restart keeps who owns which group.

import { TabwireError } from '../lib/errors.js';
import { access, colorFor, doneTitle, ended, othersLive, ownedMessage, ownerOf, shown } from '../lib/groups.js';

const KEY = 'groups';
// Bookkeeping the bridges do on their own, and methods that act on no one tab of a session.
const UNCHECKED = new Set(['page.drained', 'chat.status', 'chat.cancel', 'tabs.list']);
// Methods that answer a tab (tabs.js's `describe`): told whose it is.
const ANSWER_A_TAB = new Set(['tabs.open', 'tabs.activate', 'tabs.navigate']);

let state = { sessions: {} };
const loaded = chrome.storage.session.get(KEY).then(
  (got) => (state = got[KEY]?.sessions ? got[KEY] : { sessions: {} }),
  () => {},
);
const save = () => chrome.storage.session.set({ [KEY]: state }).catch((e) => console.error('tabwire: cannot save the tab groups:', e));
let queue = Promise.resolve(); // group changes one at a time: two opens make one group
const serial = (fn) => (queue = queue.then(fn, fn));
let attached = { host: null, sessions: [] }; // the sessions the host said are attached

// `table` with every call checked against the tab's owner, tabs.list filtered, and the tabs
// tabs.open makes put in the caller's group.
export function withGroups(table) {
  return Object.fromEntries(Object.entries(table).map(([method, fn]) => [method, async (params, ctx = {}) => {
    await loaded;
    const caller = ctx.session ?? null;
    if (caller) await live(caller);
    if (method === 'tabs.list') {
      const tabs = await fn(params, ctx);
      return tabs.map((t) => shown(state, t, caller?.id ?? null)).filter(Boolean);
    }
    const look = othersLive(state, caller?.id ?? null) || Object.values(state.sessions).some((s) => s.done && s.groups.length > 0);
    if (!UNCHECKED.has(method) && Number.isInteger(params?.tab_id) && look) await check(params.tab_id, caller);
    const opened = caller && method === 'tabs.open' ? (tab) => adopt(tab, caller) : undefined;
    const result = await fn(params, opened ? { ...ctx, opened } : ctx);
    if (!ANSWER_A_TAB.has(method) || !result || typeof result !== 'object') return result;
    // The answer was made before the tab joined the group: ask Chrome where it is now.
    const now = await chrome.tabs.get(result.id).catch(() => null);
    return shown(state, { ...result, group_id: now?.groupId ?? result.group_id }, caller?.id ?? null) ?? result;
  }]));
}

async function check(tabId, caller) {
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (!tab) return; // the method itself says no_such_tab
  const { kind, owner } = access(state, tab.groupId, caller?.id ?? null);
  if (kind === 'refused') throw new TabwireError('tab_owned_by_other_session', ownedMessage(tabId, owner, caller?.name));
  // A tab of an ended session's collapsed group that a call works in is shown again: the user
  // sees where the assistant acts, and Chrome runs the page as any background tab (in a
  // collapsed group an upload_file never settled).
  if (owner?.done) {
    const group = await chrome.tabGroups.get(tab.groupId).catch(() => null);
    if (group?.collapsed) await chrome.tabGroups.update(group.id, { collapsed: false }).catch(() => {});
  }
}

// The caller is running: known, with its name; a session that was marked done is live again
// (a bridge that came back).
function live(caller) {
  const known = state.sessions[caller.id];
  if (known && !known.done && known.name === caller.name) return;
  return serial(async () => {
    const s = (state.sessions[caller.id] ??= { id: caller.id, name: caller.name, color: colorFor(caller.id), done: false, groups: [] });
    const retitle = s.done || s.name !== caller.name;
    Object.assign(s, { name: caller.name, done: false });
    if (retitle) for (const g of s.groups) await chrome.tabGroups.update(g, { title: s.name, collapsed: false }).catch(() => {});
    await save();
  });
}

// Put `tab` (just opened by `caller`) in the caller's group of its window, made if need be.
function adopt(tab, caller) {
  return serial(async () => {
    const s = state.sessions[caller.id];
    if (!s) return;
    try {
      let group = null;
      for (const g of s.groups) {
        const info = await chrome.tabGroups.get(g).catch(() => null);
        if (info?.windowId === tab.windowId) group = g;
      }
      if (group !== null) return void (await chrome.tabs.group({ tabIds: [tab.id], groupId: group }));
      group = await chrome.tabs.group({ tabIds: [tab.id], createProperties: { windowId: tab.windowId } });
      s.groups.push(group);
      await chrome.tabGroups.update(group, { title: s.name, color: s.color });
      await save();
    } catch (e) {
      console.warn(`tabwire: tab ${tab.id} could not join the group of ${s.name}:`, e.message);
    }
  });
}

// A session ended: its groups stay for the user, collapsed and titled "… (done)".
function finish(id) {
  return serial(async () => {
    const s = state.sessions[id];
    if (!s || s.done) return;
    s.done = true;
    for (const g of s.groups) await chrome.tabGroups.update(g, { title: doneTitle(s.name), collapsed: true }).catch(() => {});
    await save();
  });
}

// The host lists the sessions of its attached bridges; those it listed before and lists no
// more have ended. (A new host lists none yet: nothing is marked until one goes from it.)
export function sessionsAttached({ host_pid: host, sessions } = {}) {
  if (!Array.isArray(sessions)) return;
  const before = attached.host === host ? attached.sessions : [];
  attached = { host, sessions };
  loaded.then(() => ended(before, sessions).forEach(finish));
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

// For the popup's "Give this tab to": the live sessions with a group in the tab's window
// (`[{name, group}]`), but the one the tab is in. Giving is what dragging the tab into the group
// does: ownership follows the group.
export async function takers(tabId) {
  await loaded;
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (!tab) return [];
  const found = [];
  for (const s of Object.values(state.sessions)) {
    if (s.done) continue;
    for (const g of s.groups) {
      if (g === tab.groupId) continue;
      const info = await chrome.tabGroups.get(g).catch(() => null);
      if (info?.windowId === tab.windowId) found.push({ name: s.name, group: g });
    }
  }
  return found;
}

export const giveTab = (tabId, group) => chrome.tabs.group({ tabIds: [tabId], groupId: group });
