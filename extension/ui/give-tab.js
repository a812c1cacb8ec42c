// The popup's "Give this tab to": the running assistant sessions a tab can be given to, and the
// giving, which is what dragging the tab into the session's group does (ownership follows the
// group: specs/tools.md, "Sessions and their tab groups").

import { loadGroups } from '../lib/groups-store.js';

// The live sessions with a group (`[{name, group}]`), in any window — each session works in a
// window of its own — but the one the tab is in.
export async function takers(tabId) {
  const state = await loadGroups();
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (!tab) return [];
  const found = [];
  for (const s of Object.values(state.sessions)) {
    if (s.done) continue;
    for (const g of s.groups) {
      if (g === tab.groupId) continue;
      const info = await chrome.tabGroups.get(g).catch(() => null);
      if (info) found.push({ name: s.name, group: g });
    }
  }
  return found;
}

// The tab moves to the group's window first: a group is in one window.
export async function giveTab(tabId, group) {
  const info = await chrome.tabGroups.get(group);
  const tab = await chrome.tabs.get(tabId);
  if (tab.windowId !== info.windowId) await chrome.tabs.move(tabId, { windowId: info.windowId, index: -1 });
  return chrome.tabs.group({ tabIds: [tabId], groupId: group });
}
