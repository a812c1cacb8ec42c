// ISOLATED world, top frame, document_end, only on the sites the user allows: keeps what
// page-world/console-hook.js reports of the page's console (the last MAX messages of this document,
// counting those it let go) and gives them to the worker (worker/dom/logs.js) when it asks.
(() => {
  const EVENT = 'tabwire:console';
  const MAX = 500;
  const LEVELS = new Set(['log', 'info', 'warn', 'error', 'debug']);
  const kept = [];
  let dropped = 0;
  let n = 0;

  // A batch from the hook: {messages: [{level, text, source, time}], skipped}. Anything else,
  // or more than a batch can hold (500 messages of 2,000 characters), is ignored.
  document.addEventListener(EVENT, (e) => {
    if (typeof e.detail !== 'string' || e.detail.length > 2_000_000) return;
    let b;
    try {
      b = JSON.parse(e.detail);
    } catch {
      return;
    }
    if (!Array.isArray(b?.messages) || b.messages.length > 500) return;
    if (Number.isSafeInteger(b.skipped) && b.skipped > 0) dropped += b.skipped;
    for (const m of b.messages) {
      if (!LEVELS.has(m?.level) || typeof m.text !== 'string' || m.text.length > 2100) continue;
      kept.push({ n: ++n, level: m.level, text: m.text, source: typeof m.source === 'string' ? m.source.slice(0, 500) : null, time: Number.isFinite(m.time) ? m.time : Date.now() });
    }
    if (kept.length > MAX) {
      dropped += kept.length - MAX;
      kept.splice(0, kept.length - MAX);
    }
  }, true);

  // What the hook heard while the page was parsed comes now.
  document.dispatchEvent(new Event('tabwire:console-ready'));

  // The worker's `console.read`, through this world's router (router.js).
  globalThis.tabwireAnswer('console', (verb) => {
    if (verb !== 'read') throw Object.assign(new Error(`the console capture has no call console.${verb}`), { code: 'bad_request' });
    return { messages: kept, dropped, kept_at_most: MAX };
  });
})();
