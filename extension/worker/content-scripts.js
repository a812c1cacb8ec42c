// Service worker, run by background.js at start and at each change of the allowed sites
// (syncContentScripts): which file runs in which world, and where — the content scripts, registered
// for exactly the allowed sites (sites.js), so no other page gets window.tabwire (nothing to
// fingerprint) or the relay; and the chat observer, injected on demand (chat.js). Every
// ISOLATED-world list starts with isolated/router.js, that world's one message listener (the
// scripts after it register with it); a file listed twice for one document runs once.
//
// When: the page-world scripts at document_start, before any page script (they must wrap what
// the page will call); the isolated world's once the document is parsed (document_end, just
// after DOMContentLoaded). Starting an isolated world costs the renderer about 3 ms, which at
// document_start would hold back the parsing of every page of an allowed site
// (docs/performance.md); what the page-world scripts hear meanwhile waits for them.

import { currentSites } from '../lib/sites-store.js';
import { matchPattern } from '../lib/sites.js';

const ROUTER = 'isolated/router.js';
const SCRIPTS = [
  // The top frame also shows the user when the assistant acts in the tab (pause.js tells it).
  { id: 'tabwire-relay', js: [ROUTER, 'isolated/relay.js', 'isolated/badge.js'], world: 'ISOLATED' },
  { id: 'tabwire-sdk', js: ['page-world/page-sdk.js'], world: 'MAIN' },
  // Any page (dom.js): the agent in every frame with the network rules, the dialogs that must
  // not freeze it, and the page's requests (that an action waits for, that the rules answer).
  { id: 'tabwire-dom', js: [ROUTER, 'isolated/refs.js', 'lib/name-text.js', 'isolated/snapshot.js', 'isolated/act.js', 'isolated/pointer.js', 'isolated/clock.js', 'lib/change-report.js', 'isolated/agent.js', 'isolated/network-rules.js'], world: 'ISOLATED', allFrames: true },
  // And the page's animation frames, which the agent runs while it acts in a hidden document,
  // and the short timers an action makes the page start, which it waits out.
  { id: 'tabwire-dom-dialogs', js: ['page-world/dialogs.js', 'page-world/requests.js', 'page-world/frames.js', 'page-world/timers.js'], world: 'MAIN', allFrames: true },
  // The console capture and the request log (dom/logs.js): the buffer first, so it hears the
  // hook's first message.
  { id: 'tabwire-console-buffer', js: [ROUTER, 'isolated/console-buffer.js', 'isolated/request-log.js'], world: 'ISOLATED' },
  { id: 'tabwire-console-hook', js: ['page-world/console-hook.js'], world: 'MAIN' },
];
// Injected by chat.js into the top frame of a chat's tab, into the ISOLATED world (the
// observer reads answers with lib/chat-text.js).
// The chat observer, after lib/deep-dom.js (selectors through open shadow roots) and the chat
// detector (lib/chat-detect.js judges, isolated/chat-detect.js walks the page).
export const CHAT_OBSERVER = [ROUTER, 'lib/chat-text.js', 'isolated/clock.js', 'lib/deep-dom.js', 'lib/chat-detect.js',
  'isolated/chat-detect.js', 'isolated/chat-observer.js'];
const IDS = SCRIPTS.map((s) => s.id);

let syncing = Promise.resolve();

// Bring the registered content scripts in line with the list (at worker start and after each
// change). Runs one at a time; each run reads the list as it is when it starts.
export function syncContentScripts() {
  const run = syncing.then(() => sync(currentSites()));
  syncing = run.catch((e) => console.error('tabwire: could not register the content scripts:', e));
  return syncing;
}

async function sync(list) {
  const want = [...new Set(list.map(matchPattern))];
  const have = await chrome.scripting.getRegisteredContentScripts({ ids: IDS });
  if (want.length === 0) {
    if (have.length > 0) await chrome.scripting.unregisterContentScripts({ ids: have.map((s) => s.id) });
    return;
  }
  if (upToDate(have, want)) return;
  try {
    await register(have, want);
  } catch (e) {
    // One pattern Chrome refuses must not cost the others: find it, log it, register the rest.
    const ok = [];
    for (const m of want) {
      if (await chromeAccepts(m)) ok.push(m);
      else console.error(`tabwire: Chrome refuses the match pattern ${m} (${e.message}); tabwire is not injected there`);
    }
    const now = await chrome.scripting.getRegisteredContentScripts({ ids: IDS });
    if (ok.length === 0) {
      if (now.length > 0) await chrome.scripting.unregisterContentScripts({ ids: now.map((s) => s.id) });
    } else if (!upToDate(now, ok)) {
      await register(now, ok);
    }
  }
}

function scripts(matches) {
  return SCRIPTS.map((s) => ({ allFrames: false, ...s, matches, runAt: runAt(s), persistAcrossSessions: true }));
}

function runAt(script) {
  return script.world === 'MAIN' ? 'document_start' : 'document_end';
}

// Update in place when both exist (no moment without them), else register afresh.
async function register(have, matches) {
  if (have.length === SCRIPTS.length) return chrome.scripting.updateContentScripts(scripts(matches));
  if (have.length > 0) await chrome.scripting.unregisterContentScripts({ ids: have.map((s) => s.id) });
  await chrome.scripting.registerContentScripts(scripts(matches));
}

// Whether the registered scripts are what we would register. Chrome keeps "host:*" as "host"
// (the same thing to it: any port), so patterns are compared in that form.
function upToDate(have, want) {
  const sorted = (a) => [...new Set(a.map((m) => m.replace(/:\*\/\*$/, '/*')))].sort().join(' ');
  return have.length === SCRIPTS.length && SCRIPTS.every((s) => {
    const h = have.find((x) => x.id === s.id);
    return h && sorted(h.matches ?? []) === sorted(want) && sorted(h.js ?? []) === sorted(s.js) &&
      (h.world ?? 'ISOLATED') === s.world && h.runAt === runAt(s) && !!h.allFrames === !!s.allFrames && !h.excludeMatches?.length;
  });
}

// Whether Chrome takes `match` as a match pattern: a registration that lives a moment, for
// nothing but the check (only reached when a registration failed).
async function chromeAccepts(match) {
  const id = 'tabwire-probe';
  try {
    await chrome.scripting.registerContentScripts([{ id, js: [ROUTER], matches: [match], persistAcrossSessions: false }]);
  } catch {
    return false;
  }
  await chrome.scripting.unregisterContentScripts({ ids: [id] }).catch(() => {});
  return true;
}
