// MAIN world, top frame, document_start, only on the sites the user allows (sites.js registers
// it): wraps the page's console methods and listens for uncaught errors and unhandled promise
// rejections, and hands each, as text, to content/console-buffer.js (isolated world) in a
// "tabwire:console" event on the document. The page's own console keeps working as before.
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

  const send = (level, text, source) => {
    try {
      const detail = stringify({ level, text: text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}… (${text.length} characters)` : text, source, time: Date.now() });
      dispatch.call(document, new CustomEvent(EVENT, { detail }));
    } catch {} // never break the page's own logging
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
