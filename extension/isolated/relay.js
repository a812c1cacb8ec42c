// ISOLATED world, top frame, once the document is parsed (document_end), only on the sites the
// user allows (worker/content-scripts.js registers it): carries messages between the page's window.tabwire
// (page-world/page-sdk.js, MAIN world) and the extension's service worker (worker/page.js).
// Page ⇄ relay: synchronous events on a private link node (below; specs/page-sdk.md).
// Relay ⇄ worker: one long-lived runtime port (name "page"), opened the first time the page
// uses the SDK.
//
// Everything from the page is data: a message is accepted only on the link, in one of five
// shapes, and only its known fields go on.
(() => {
  let port = null;
  let used = false; // the page has called window.tabwire
  let provider = false;
  let stateJson = null; // the last setState, to re-seed a worker that restarted
  let commandsJson = null; // the last declared commands, likewise

  // The link: a DOM node this script creates and never puts in the document, offered to the
  // SDK in a `tabwire:relay` event on window that the SDK's listener, the first there, stops —
  // so no page script can listen on it or dispatch on it. The SDK takes it once this script
  // proves it is the extension's: it reads the secret the SDK keeps in a closed shadow root,
  // which only the extension's isolated world can open (specs/page-sdk.md). Both worlds see the
  // same node; an event dispatched on it runs the other world's listener at once, in the same
  // task (a postMessage costs a task hop each way).
  const link = document.createComment('tabwire');
  let linked = false;
  link.addEventListener('tabwire:prove', (e) => {
    const host = e.relatedTarget;
    const root = host instanceof HTMLElement ? chrome.dom.openOrClosedShadowRoot(host) : null;
    const secret = root?.firstElementChild?.getAttribute('data-tabwire');
    if (!secret) return;
    linked = true;
    link.dispatchEvent(new CustomEvent('tabwire:proved', { detail: secret }));
  });
  link.addEventListener('tabwire:ext', (ev) => fromPage(unpack(ev.detail)));
  // (The offer goes out at the end of this script: what the page said while it loaded comes
  // over at once, and everything that handles it must be defined by then.)

  // One string per message: its fields but `json` as JSON, then a newline and `json` as it is
  // (JSON text holds no raw newline), so a value is never encoded twice; a string crosses
  // between the worlds as it is, where an object would be cloned.
  const pack = ({ json, ...head }) => (json === undefined ? JSON.stringify(head) : `${JSON.stringify(head)}\n${json}`);
  function unpack(s) {
    if (typeof s !== 'string') return null;
    const cut = s.indexOf('\n');
    try {
      const msg = JSON.parse(cut < 0 ? s : s.slice(0, cut));
      if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) return null;
      if (cut >= 0) msg.json = s.slice(cut + 1);
      return msg;
    } catch {
      return null;
    }
  }

  const toPage = (msg) => linked && link.dispatchEvent(new CustomEvent('tabwire:page', { detail: pack(msg) }));

  // From the worker: calls and acks go to the page; an `echo` to this world (a hop that
  // diagnose times, specs/protocol.md `page.echo`) is answered here.
  function fromWorker(msg) {
    if (msg?.type === 'echo' && msg.world === 'content') port?.postMessage({ type: 'reply', id: msg.id, json: 'null' });
    else toPage(msg);
  }

  function connect() {
    if (port) return port;
    const p = chrome.runtime.connect({ name: 'page' }); // throws once the extension is reloaded
    p.onMessage.addListener(fromWorker); // calls and acks
    p.onDisconnect.addListener(() => port === p && drop());
    p.postMessage({ type: 'sync', provider, json: stateJson, commands: commandsJson });
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
      case 'commands': // the declared commands (onCommand's third argument)
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

  function fromPage(d) {
    if (d === null) {
      console.warn('tabwire: ignored a malformed message from window.tabwire');
      return;
    }
    if (d.type === 'watch') return follow(d);
    const msg = accept(d);
    if (!msg) {
      console.warn('tabwire: ignored a malformed message from window.tabwire', d);
      return;
    }
    used = true;
    if (msg.type === 'state') stateJson = msg.json;
    if (msg.type === 'commands') commandsJson = msg.json;
    if (msg.type === 'sync') provider = msg.provider;
    if (document.prerendering) held.push(msg); // a prerendered page is not the tab's page yet
    else forward(msg);
  }

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

  // Workflows the page follows (tabwire.onWorkflow): the page names them and the worker sends
  // their states on a port of their own ("workflow", worker/workflow.js). What the
  // page says here only chooses what it is sent; none of it goes beyond the worker.
  const followed = new Map(); // JSON [project, session] → the watch message
  let workflows = null;

  function follow(d) {
    const named = (s) => typeof s === 'string' && s.length > 0 && s.length <= 4096;
    if (!named(d.project) || !named(d.session) || typeof d.on !== 'boolean') {
      console.warn('tabwire: ignored a malformed message from window.tabwire', d);
      return;
    }
    const msg = { type: 'watch', project: d.project, session: d.session, on: d.on };
    const key = JSON.stringify([d.project, d.session]);
    if (d.on) followed.set(key, msg);
    else followed.delete(key);
    try {
      if (workflows) workflows.postMessage(msg);
      else if (d.on) followWorkflows();
    } catch {} // the extension was reloaded: no more states come
  }

  function followWorkflows() {
    const p = chrome.runtime.connect({ name: 'workflow' });
    p.onMessage.addListener((m) => {
      if (m?.type === 'workflow') toPage({ type: 'workflow', project: m.project, session: m.session, json: m.json });
    });
    p.onDisconnect.addListener(() => {
      if (workflows !== p) return;
      workflows = null;
      // The worker restarted (or the page was cached): follow again in a moment.
      setTimeout(() => {
        try {
          if (!workflows && followed.size > 0) followWorkflows();
        } catch {}
      }, 1000);
    });
    for (const msg of followed.values()) p.postMessage(msg);
    workflows = p;
  }

  // The worker asks a page that used the SDK before the worker (re)started to connect.
  // Through this world's router (router.js): `page.connect`.
  globalThis.tabwireAnswer('page', (verb) => {
    if (verb !== 'connect') throw Object.assign(new Error(`the relay has no call page.${verb}`), { code: 'bad_request' });
    if (used && !document.prerendering) {
      try {
        if (port) drop(); // the worker has no port for this page: ours is stale
        connect();
      } catch {}
    }
    return { uses: used };
  });

  window.dispatchEvent(new MouseEvent('tabwire:relay', { relatedTarget: link }));
})();
