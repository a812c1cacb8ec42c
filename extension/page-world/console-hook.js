// MAIN world, top frame, document_start, only on the sites the user allows
// (worker/content-scripts.js registers it): wraps the page's console methods and listens for uncaught errors and unhandled promise
// rejections, and hands each, as text, to isolated/console-buffer.js (isolated world) in a
// "tabwire:console" event on the document. The page's own console keeps working as before.
// The buffer starts once the document is parsed (document_end) and says so with a
// "tabwire:console-ready" event; what came before waits here (the last MAX_BATCH of it).
//
// Messages cross in batches (below), so a page that logs in a loop pays for one event, not one
// per message.
//
// Nothing here is secret: a page can dispatch the same event, which says no more than calling
// console.log itself would. The buffer checks and bounds what it takes.
(() => {
  const EVENT = 'tabwire:console';
  const MAX_TEXT = 2000; // characters of one message
  const dispatch = EventTarget.prototype.dispatchEvent;
  const stringify = JSON.stringify;

  const show = (v) => {
    if (typeof v === 'string') return v;
    if (v instanceof Error) return v.stack || `${v.name}: ${v.message}`;
    if (typeof v === 'object' && v !== null) {
      try {
        return stringify(v) ?? String(v);
      } catch {
        return Object.prototype.toString.call(v);
      }
    }
    return String(v);
  };

  // Messages go over in batches, one event per task at most (a loop of 20,000 logs costs one
  // event, not 20,000); a batch holds the last MAX_BATCH, and says how many it let go.
  const MAX_BATCH = 500;
  const later = queueMicrotask.bind(window);
  let batch = [];
  let skipped = 0;
  let ready = false;
  document.addEventListener('tabwire:console-ready', () => {
    ready = true;
    if (batch.length > 0) flush();
  }, { once: true });
  const flush = () => {
    const detail = stringify({ messages: batch, skipped });
    batch = [];
    skipped = 0;
    try {
      dispatch.call(document, new CustomEvent(EVENT, { detail }));
    } catch {} // never break the page's own logging
  };
  const send = (level, text, source) => {
    if (batch.length === 0 && ready) later(flush);
    if (batch.length >= MAX_BATCH) {
      batch.shift();
      skipped++;
    }
    batch.push({ level, text: text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}… (${text.length} characters)` : text, source, time: Date.now() });
  };

  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
    const original = console[level];
    if (typeof original !== 'function') continue;
    console[level] = function (...args) {
      send(level, args.map(show).join(' '), null);
      return original.apply(this, args);
    };
  }
  window.addEventListener('error', (e) => {
    const where = e.filename ? `${e.filename}:${e.lineno}:${e.colno}` : null;
    send('error', `Uncaught ${e.error ? show(e.error) : e.message}`, where);
  });
  window.addEventListener('unhandledrejection', (e) => send('error', `Uncaught (in promise) ${show(e.reason)}`, null));
})();
