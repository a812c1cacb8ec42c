// Stop, as stored: the popup's Stop sets `paused` in chrome.storage.session, and a session's own
// Stop adds it to `paused_sessions` (session id → name). Only the extension's own pages and its
// worker can reach that storage: no page, content script or host message can clear it. Kept in
// storage so that a worker restart stays stopped. A module of its own, apart from what the worker
// does about it (worker/pause.js ends and refuses the calls), so the popup presses Stop without
// loading any of the worker.
//
// Every context that imports this module keeps a copy in step with storage, so the worker
// checks each call against it without waiting.

const KEY = 'paused';
const SESSIONS_KEY = 'paused_sessions';

let paused = false;
let pausedSessions = {}; // session id → its name
const listeners = new Set();

// Resolves once this context's copy is loaded (a failed read leaves nothing stopped).
export const pauseReady = chrome.storage.session.get([KEY, SESSIONS_KEY]).then((got) => {
  paused = got[KEY] === true;
  pausedSessions = sessionsIn(got[SESSIONS_KEY]);
}, () => {});

const sessionsIn = (v) => (v && typeof v === 'object' && !Array.isArray(v) ? v : {});

chrome.storage.session.onChanged.addListener((changes) => {
  if (!changes[KEY] && !changes[SESSIONS_KEY]) return;
  if (changes[KEY]) paused = changes[KEY].newValue === true;
  if (changes[SESSIONS_KEY]) pausedSessions = sessionsIn(changes[SESSIONS_KEY].newValue);
  for (const fn of listeners) fn(paused, pausedSessions);
});

// This context's copy, after pauseReady: `paused` (Stop all) and `sessions` (id → name of each
// session stopped on its own). Not to be changed: setPaused and setSessionPaused write storage.
export const currentPause = () => ({ paused, sessions: pausedSessions });

export const isPaused = async () => (await pauseReady, paused);
export const setPaused = (on) => chrome.storage.session.set({ [KEY]: on === true });
export const sessionsPaused = async () => (await pauseReady, { ...pausedSessions });

// Stop (`on`) or resume one session ({id, name}); the others are left as they are.
export async function setSessionPaused(session, on) {
  const now = sessionsIn((await chrome.storage.session.get(SESSIONS_KEY))[SESSIONS_KEY]);
  if (on) now[session.id] = session.name;
  else delete now[session.id];
  await chrome.storage.session.set({ [SESSIONS_KEY]: now });
}

// fn(paused, sessions) runs after each change, in every context.
export function onPauseChanged(fn) {
  listeners.add(fn);
}
