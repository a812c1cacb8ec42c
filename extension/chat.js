// chat.* methods and `operation` events: the service worker's side of operations
// (specs/operations.md). The content script content/chat-observer.js, injected on demand into
// the tab's ISOLATED world, types the message and observes the page; it reports milestones over
// a long-lived port (name "tabwire-chat") and this worker forwards each as an `operation` event.
// The worker itself reports what the page cannot: the tab closed, the page replaced.

import { TabwireError, fail } from './errors.js';
import { sendEvent } from './native.js';
import { noSuchTab, tabId } from './tabs.js';

const running = new Map(); // operation id → tab id, while the operation is followed in a page
const ports = new Map(); // tab id → the chat port of the page in that tab

export const chatMethods = {
  'chat.send': async (params, { signal }) => {
    const id = tabId(params);
    const { operation_id, text, adapter, wait_ms = 10_000 } = params;
    if (typeof operation_id !== 'string' || operation_id === '') fail('bad_request', '`operation_id` must be a non-empty string');
    if (typeof text !== 'string' || text.trim() === '') fail('bad_request', '`text` must be the message to send (a non-empty string)');
    if (adapter === null || typeof adapter !== 'object') fail('bad_request', '`adapter` must be a site adapter object');
    await inject(id);
    running.set(operation_id, id);
    try {
      return await ask(id, { op: 'send', operation_id, text, adapter, wait_ms }, signal);
    } catch (e) {
      running.delete(operation_id);
      throw e;
    }
  },

  // Where an operation is, as the page saw it: `{found, milestones}`. Used by a bridge that
  // started while the operation ran, to apply what it missed.
  'chat.status': async (params, { signal }) => {
    const id = tabId(params);
    const { operation_id } = params;
    await chrome.tabs.get(id).catch(() => {
      throw noSuchTab(id);
    });
    let answer;
    try {
      answer = await ask(id, { op: 'status', operation_id }, signal);
    } catch (e) {
      if (e.code === 'no_such_tab') throw e;
      return { found: false, milestones: [] }; // no observer in the page: it was replaced
    }
    if (answer.found && !answer.finished) running.set(operation_id, id);
    return answer;
  },

  'chat.cancel': async (params, { signal }) => {
    const id = tabId(params);
    const { operation_id } = params;
    running.delete(operation_id);
    await chrome.tabs.get(id).catch(() => {
      throw noSuchTab(id);
    });
    return ask(id, { op: 'cancel', operation_id }, signal).catch(() => ({ cancelled: false }));
  },
};

export function listenForChats() {
  chrome.runtime.onConnect.addListener((port) => {
    const tab = port.sender?.tab;
    if (port.name !== 'tabwire-chat' || port.sender.id !== chrome.runtime.id) return;
    if (tab?.id == null || port.sender.frameId !== 0) return port.disconnect();
    ports.get(tab.id)?.disconnect();
    ports.set(tab.id, port);
    port.onMessage.addListener((msg) => milestone(tab.id, msg));
    port.onDisconnect.addListener(() => {
      if (ports.get(tab.id) !== port) return;
      ports.delete(tab.id);
      pageGone(tab.id);
    });
  });
  chrome.tabs.onRemoved.addListener((id) => {
    for (const op of opsIn(id))
      failed(id, op, 'tab_closed', `tab ${id} was closed before the answer finished`);
  });
}

// A milestone from the page: only known fields of the right types go on.
function milestone(tab, msg) {
  const { operation_id, milestone: name, n, at, data } = msg ?? {};
  if (typeof operation_id !== 'string' || typeof name !== 'string' || !Number.isSafeInteger(n)) return;
  if (['response_completed', 'failed'].includes(name)) running.delete(operation_id);
  emit(tab, { operation_id, milestone: name, n, at: Number.isFinite(at) ? at : Date.now(), data: data ?? {} });
}

// The page's port closed: the document went away. If the tab is still there, the page was
// replaced (navigation, reload); if not, onRemoved has said so or is about to.
async function pageGone(id) {
  const ops = opsIn(id);
  if (ops.length === 0) return;
  const tab = await chrome.tabs.get(id).catch(() => null);
  for (const op of ops) {
    if (!running.has(op)) continue; // onRemoved came first
    if (tab) failed(id, op, 'navigated_away', `the page in tab ${id} was replaced (it navigated to ${tab.pendingUrl || tab.url}, or reloaded) before the answer finished`);
    else failed(id, op, 'tab_closed', `tab ${id} was closed before the answer finished`);
  }
}

function opsIn(tab) {
  return [...running].filter(([, t]) => t === tab).map(([op]) => op);
}

function failed(tab, operation_id, reason, message) {
  running.delete(operation_id);
  emit(tab, { operation_id, milestone: 'failed', at: Date.now(), data: { reason, message } });
}

function emit(tab, data) {
  try {
    sendEvent('operation', tab, data);
  } catch (e) {
    // Bridges catch up with chat.status when they next look (specs/operations.md).
    console.warn('tabwire: operation milestone not sent:', e.message);
  }
}

// Put the observer into the tab (once per document: it ignores a second injection).
async function inject(id) {
  const tab = await chrome.tabs.get(id).catch(() => {
    throw noSuchTab(id);
  });
  try {
    await chrome.scripting.executeScript({ target: { tabId: id }, files: ['content/chat-observer.js'], world: 'ISOLATED' });
  } catch (e) {
    throw new TabwireError('not_scriptable', `cannot run the chat observer in tab ${id} (${tab.url || 'no page yet'}): ${e.message}; navigate it to the chat's web page first`);
  }
}

// Ask the observer in tab `id`; its answer, or its error thrown as a TabwireError.
async function ask(id, msg, signal) {
  const asked = chrome.tabs.sendMessage(id, { tabwire: 'chat', ...msg }, { frameId: 0 });
  const aborted = new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }));
  let answer;
  try {
    answer = await Promise.race([asked, aborted]);
  } catch (e) {
    if (e instanceof TabwireError) throw e;
    const gone = await chrome.tabs.get(id).then(() => false, () => true);
    if (gone) throw noSuchTab(id);
    throw new TabwireError('page_error', `the chat observer in tab ${id} did not answer: ${e.message}`);
  }
  if (answer?.error) throw new TabwireError(answer.error.code, answer.error.message);
  if (answer === undefined) throw new TabwireError('page_error', `the chat observer in tab ${id} is not running (the page was replaced)`);
  return answer;
}
