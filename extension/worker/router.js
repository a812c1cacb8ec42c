// Service worker, opened once by background.js (listen) and used by every module that hears or asks
// a content script: the worker's one door for the extension's own scripts, and its one way to ask
// them. Every message, either way, is `{type: "area.verb", …}`; a long-lived port is named after
// its area ("page", "chat", "workflow") and carries `{type: verb, …}`.
//
// Who sent something is what Chrome says (`sender`), never what the message says: only this
// extension's scripts are heard; a tab's port is taken from its top frame only, and its
// document's origin and url are the sender's. Pages never reach the worker: they talk to the
// relay in their tab (isolated/relay.js), which alone holds a port.
//
// The other direction: the worker asks a document's content scripts with askTab; in each
// document, isolated/router.js is the one listener that answers.

import { TabwireError } from '../lib/errors.js';
import { withoutFragment } from '../lib/sites.js';

const PARSE_WAIT_MS = 10_000;

const portAreas = new Map(); // port name → { onPort, ownPages }
const messageTypes = new Map(); // message type → handler

// Ports named `area`: `onPort(port, {tab, own, from})` for each, `from` being the document's
// {origin, url} as Chrome names it (url without its fragment), `own` whether it is one of the
// extension's own pages. A port from a frame that is not the top of a tab is closed, and so is
// one from an extension page unless `ownPages`.
export function acceptPorts(area, onPort, { ownPages = false } = {}) {
  portAreas.set(area, { onPort, ownPages });
}

// Messages of `type` from content scripts in tabs: `handle(msg, sender)` (Chrome's sender: tab,
// frameId, documentId, origin). No answer is sent back.
export function onTabMessage(type, handle) {
  messageTypes.set(type, handle);
}

// Registered once, in the worker's first turn (background.js).
export function listen() {
  chrome.runtime.onConnect.addListener((port) => {
    const route = portAreas.get(port.name);
    const s = port.sender ?? {};
    if (!route || s.id !== chrome.runtime.id) return; // not ours (a test's or bench's own port)
    const own = typeof s.url === 'string' && s.url.startsWith(chrome.runtime.getURL(''));
    const topOfTab = s.tab?.id != null && s.frameId === 0;
    if (own ? !route.ownPages : !topOfTab) return port.disconnect();
    route.onPort(port, { tab: s.tab ?? null, own, from: { origin: s.origin ?? null, url: withoutFragment(s.url ?? '') } });
  });
  chrome.runtime.onMessage.addListener((msg, sender) => {
    if (sender.id !== chrome.runtime.id || sender.tab?.id == null || typeof msg?.type !== 'string') return;
    messageTypes.get(msg.type)?.(msg, sender);
  });
}

// Ask the content scripts of one document of tab `tabId` (`target`: {frameId, documentId?},
// default the top frame): the value they answer, or undefined when none there answered (none
// runs there, or none takes this type); an error they answer is thrown as a TabwireError.
// Chrome's own failures (the tab closed, the document went) are thrown as Chrome gives them.
//
// The isolated world's scripts start once a document is parsed (content-scripts.js): a
// document still being parsed that has none yet is asked again once they are there (for at
// most PARSE_WAIT_MS, then `timeout`). One that is parsed and still has none a moment later
// never will: Chrome's "Receiving end does not exist" is thrown.
export async function askTab(tabId, msg, target = { frameId: 0 }) {
  const until = performance.now() + PARSE_WAIT_MS;
  let answer;
  for (let parsed = false; ; ) {
    try {
      answer = await chrome.tabs.sendMessage(tabId, msg, target);
      break;
    } catch (e) {
      if (!/receiving end does not exist/i.test(e.message) || parsed) throw e;
      if (performance.now() > until)
        throw new TabwireError('timeout', `the page in tab ${tabId} was still being parsed after ${PARSE_WAIT_MS / 1000} s (tabwire's page scripts start once it is): a slow script of the page, or a dialog the browser shows, holds it back; try again once it has loaded`);
      // Parsed already: once more a moment later, for the scripts starting just after it.
      parsed = (await readyState(tabId, target)) !== 'loading';
      await new Promise((r) => setTimeout(r, parsed ? 50 : 20));
    }
  }
  if (answer === undefined) return undefined;
  if (answer.error) throw new TabwireError(answer.error.code, answer.error.message);
  return answer.ok;
}

// `document.readyState` of the document askTab's `target` names, or null if none can be read.
async function readyState(tabId, { frameId = 0, documentId }) {
  const target = documentId ? { tabId, documentIds: [documentId] } : { tabId, frameIds: [frameId] };
  const done = await chrome.scripting.executeScript({ target, func: () => document.readyState, injectImmediately: true }).catch(() => null);
  return done?.[0]?.result ?? null;
}
