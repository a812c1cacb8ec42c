// The sessions' tab groups, as stored: which session owns which group (chrome.storage.session,
// `groups`, the state lib/groups.js describes), and what becomes of an ended session's groups
// (chrome.storage.local, `when_ended`). The worker (worker/groups.js) is the one writer of the
// groups and reads `when_ended` when a session ends; the popup shows the groups and sets
// `when_ended`. A module of its own so the popup does so without loading any of the worker.
//
// Kept in chrome.storage.session, so a worker restart keeps who owns which group.

import { fail } from './errors.js';

const KEY = 'groups';
// "keep" (the default: collapsed, titled "… (done)") or "close" (its tabs are closed).
const WHEN_ENDED = 'when_ended';
const EMPTY = () => ({ sessions: {} });

// A stored value as the state: nothing (or something else) stored is no session.
const stateIn = (value) => (value?.sessions ? value : EMPTY());

// The state as stored now (none, should storage fail to read).
export async function loadGroups() {
  return stateIn((await chrome.storage.session.get(KEY).catch(() => ({})))[KEY]);
}

export function saveGroups(state) {
  return chrome.storage.session.set({ [KEY]: state });
}

// fn(state) runs with the state as stored now, then after each change of it (the popup's view).
// A change heard before the first read answers is newer than what that read returns.
export function followGroups(fn) {
  let changed = false;
  chrome.storage.session.onChanged.addListener((changes) => {
    if (!changes[KEY]) return;
    changed = true;
    fn(stateIn(changes[KEY].newValue));
  });
  loadGroups().then((state) => changed || fn(state));
}

// "close" or "keep" (also when storage cannot be read).
export async function whenEnded() {
  const got = await chrome.storage.local.get(WHEN_ENDED).catch(() => ({}));
  return got[WHEN_ENDED] === 'close' ? 'close' : 'keep';
}

export function setWhenEnded(choice) {
  if (choice !== 'keep' && choice !== 'close') fail('bad_request', `what becomes of an ended session's tabs is "keep" or "close", not ${JSON.stringify(choice)}`);
  return chrome.storage.local.set({ [WHEN_ENDED]: choice });
}
