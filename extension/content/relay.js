// ISOLATED world, top frame, document_start, only on the sites the user allows (sites.js
// registers it): carries messages between the page's
// window.tabwire (content/page-sdk.js, MAIN world) and the extension's service worker
// (page.js). Page ⇄ relay: window.postMessage on the "tabwire" channel (specs/page-sdk.md).
// Relay ⇄ worker: one long-lived runtime port, opened the first time the page uses the SDK.
//
// Everything from the page is data: a message is accepted only from this window, on the
// channel, in one of four shapes, and only its known fields go on.
(() => {
  const CHANNEL = 'tabwire';
  let port = null;
  let used = false; // the page has called window.tabwire
  let provider = false;
  let stateJson = null; // the last setState, to re-seed a worker that restarted

  const toPage = (msg) => window.postMessage({ ...msg, channel: CHANNEL, dir: 'ext>page' }, '*');

  function connect() {
    if (port) return port;
    const p = chrome.runtime.connect({ name: 'tabwire-page' }); // throws once the extension is reloaded
    p.onMessage.addListener(toPage); // calls and acks
    p.onDisconnect.addListener(() => port === p && drop());
    p.postMessage({ type: 'sync', provider, json: stateJson });
    return (port = p);
  }

  function drop() {
    const p = port;
    port = null;
    p.disconnect();
    toPage({ type: 'lost', reason: 'the connection to the tabwire extension closed (its worker restarted, or the page went into the back/forward cache)' });
  }

  // Chrome closes a cached page's ports; start afresh when it comes back.
  window.addEventListener('pagehide', (e) => e.persisted && port && drop());

  // The page's message, reduced to its known fields, or null.
  function accept(d) {
    const count = (n) => Number.isSafeInteger(n) && n > 0;
    switch (d.type) {
      case 'state':
      case 'event':
        return count(d.n) && typeof d.json === 'string' ? { type: d.type, n: d.n, json: d.json } : null;
      case 'sync':
        return typeof d.provider === 'boolean' ? { type: 'sync', provider: d.provider } : null;
      case 'reply':
        if (!count(d.id)) return null;
        if (typeof d.json === 'string') return { type: 'reply', id: d.id, json: d.json };
        if (typeof d.error?.code === 'string' && typeof d.error.message === 'string') {
          const code = d.error.code === 'no_handler' ? 'no_handler' : 'page_error';
          return { type: 'reply', id: d.id, error: { code, message: d.error.message.slice(0, 4000) } };
        }
        return null;
      default:
        return null;
    }
  }

  window.addEventListener('message', (e) => {
    if (e.source !== window) return;
    const d = e.data;
    if (d === null || typeof d !== 'object' || d.channel !== CHANNEL || d.dir !== 'page>ext') return;
    const msg = accept(d);
    if (!msg) {
      console.warn('tabwire: ignored a malformed message on the "tabwire" channel', d);
      return;
    }
    used = true;
    if (msg.type === 'state') stateJson = msg.json;
    if (msg.type === 'sync') provider = msg.provider;
    if (document.prerendering) held.push(msg); // a prerendered page is not the tab's page yet
    else forward(msg);
  });

  const held = [];
  document.addEventListener('prerenderingchange', () => held.splice(0).forEach(forward));

  function forward(msg, again = false) {
    try {
      connect().postMessage(msg);
    } catch (err) {
      if (!again && port && /disconnected port/i.test(err.message)) {
        drop(); // closed under us without a word: once more on a new port
        return forward(msg, true);
      }
      refused(msg, err);
    }
  }

  // The worker could not be reached, or Chrome refused the message (over 64 MiB).
  function refused(msg, err) {
    const reloaded = /context invalidated/i.test(err.message);
    const message = reloaded
      ? 'the tabwire extension was reloaded, updated or removed; reload this page to reconnect'
      : `the browser refused to pass this on: ${err.message}`;
    const error = { code: reloaded ? 'browser_disconnected' : 'too_large', message };
    if (msg.n) toPage({ type: 'ack', upto: 0, failed: [{ n: msg.n, error }] });
    else if (msg.type === 'reply' && !reloaded) {
      try {
        port?.postMessage({ type: 'reply', id: msg.id, error: { code: 'too_large', message: `the page's answer is too large: ${err.message}` } });
      } catch {}
    }
  }

  // The worker asks a page that used the SDK before the worker (re)started to connect.
  chrome.runtime.onMessage.addListener((msg, _sender, sendResponse) => {
    if (msg?.type !== 'connect') return;
    if (used && !document.prerendering) {
      try {
        if (port) drop(); // the worker has no port for this page: ours is stale
        connect();
      } catch {}
    }
    sendResponse({ uses: used });
  });
})();
