// Which session owns a tab, by the Chrome tab group the tab is in (specs/tools.md, "Sessions
// and their tab groups"). Pure: the worker (worker/groups.js) keeps the state and asks Chrome.
//
// The state: `{ sessions: { [session id]: { id, name, color, done, groups: [group id] } } }`.
// A session owns the tabs of its groups; a tab in no session's group is the user's. A session
// that ended (`done`) owns nothing any more: its tabs are the user's again.

export const COLORS = ['blue', 'red', 'yellow', 'green', 'pink', 'purple', 'cyan', 'orange'];

// The same colour for a session every time (its id hashed), so a worker restart or a session's
// next run keeps it.
export function colorFor(id) {
  let h = 0;
  for (const c of String(id)) h = (h * 31 + c.codePointAt(0)) >>> 0;
  return COLORS[h % COLORS.length];
}

export const doneTitle = (name) => `${name} (done)`;

// The session whose group `groupId` is, live or done; null for a tab in no session's group.
export function ownerOf(state, groupId) {
  if (!Number.isInteger(groupId) || groupId < 0) return null;
  for (const s of Object.values(state.sessions)) if (s.groups.includes(groupId)) return s;
  return null;
}

// What `caller` (a session id, or null for a call made for no session) may do with a tab in
// group `groupId`: 'own' (its group), 'user' (no live session's: the user's tab, which a call
// that names it may use) or the live owner that refuses it.
export function access(state, groupId, caller) {
  const owner = ownerOf(state, groupId);
  if (!owner || owner.done) return { kind: 'user', owner };
  if (caller === null || owner.id === caller) return { kind: caller === null ? 'user' : 'own', owner };
  return { kind: 'refused', owner };
}

// Whether any live session but `caller` has a group: only then can a call be refused.
export function othersLive(state, caller) {
  return Object.values(state.sessions).some((s) => !s.done && s.id !== caller && s.groups.length > 0);
}

// The sessions that were attached (`before`) and are not any more (`now`), of the same host.
export function ended(before, now) {
  const still = new Set(now);
  return before.filter((id) => !still.has(id));
}

// A tab as tabs.list shows it to `caller`: `shared` true for its own tabs, `group` the title of
// the tabwire group it is in; null for another live session's tab, which it does not see.
export function shown(state, tab, caller) {
  const { group_id: groupId, ...rest } = tab;
  const { kind, owner } = access(state, groupId, caller);
  if (kind === 'refused') return null;
  const group = owner ? (owner.done ? doneTitle(owner.name) : owner.name) : null;
  return { ...rest, shared: kind === 'own', ...(group ? { group } : {}) };
}

// The message of `tab_owned_by_other_session`.
export function ownedMessage(tabId, owner, callerName) {
  return `tab ${tabId} is in the tab group "${owner.name}" of another session that is still running: `
    + 'one session does not act in the tabs of another, and nothing was done. Use your own tabs '
    + `(open_tab opens one in your group${callerName ? ` "${callerName}"` : ''}), or ask the user to drag this tab into your group.`;
}
