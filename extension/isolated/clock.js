// ISOLATED world: timers that keep time in a background tab. Chrome runs the timers of a hidden
// tab at most once a second (and, after minutes hidden, once a minute), in this world as in the
// page's; that held wait_for back by up to a second in a background tab, and a chat answer's
// quiet time (`stable_ms`) by as much (bridge/benches/browser/sessions.rs measures both). So
// while the document is hidden, each timer here is also kept by the extension's worker
// (worker/clock.js, whose timers Chrome does not throttle) over a port: whichever fires first
// runs the callback, once. Only a tab's top frame has that port (the worker takes no other);
// other frames keep the page's timers.
// `tabwireLater(fn, ms)` → a function that cancels it. `tabwireAfterFrames(fn, n, ms)`: after
// the page's next n rendered frames (0: none), or after ms where they do not come first — a
// hidden tab renders none — → a function that cancels it.
(() => {
  if (globalThis.tabwireLater) return; // listed for another script of the same document
  const pending = new Map(); // id → { fn, due, timer }
  const top = window === window.top;
  let port = null;
  let next = 1;

  const fire = (id) => {
    const t = pending.get(id);
    if (!t) return;
    pending.delete(id);
    clearTimeout(t.timer);
    t.fn();
  };

  function byWorker(id, ms) {
    if (!top) return;
    try {
      if (!port) {
        const p = chrome.runtime.connect({ name: 'clock' });
        p.onMessage.addListener((msg) => fire(msg?.id));
        p.onDisconnect.addListener(() => port === p && (port = null)); // the page's timer is left
        port = p;
      }
      port.postMessage({ id, ms: Math.max(0, Math.round(ms)) });
    } catch {
      port = null; // the extension was reloaded: the page's timer is left
    }
  }

  globalThis.tabwireLater = (fn, ms) => {
    const id = next++;
    pending.set(id, { fn, due: performance.now() + ms, timer: setTimeout(() => fire(id), ms) });
    if (document.hidden) byWorker(id, ms);
    return () => {
      clearTimeout(pending.get(id)?.timer);
      pending.delete(id);
    };
  };

  globalThis.tabwireAfterFrames = (fn, frames, ms) => {
    let frame = 0;
    const cancel = () => {
      cancelTimer();
      cancelAnimationFrame(frame);
    };
    const run = () => {
      cancel();
      fn();
    };
    const cancelTimer = globalThis.tabwireLater(run, ms);
    const tick = (left) => (frame = left > 0 ? requestAnimationFrame(() => tick(left - 1)) : (run(), 0));
    if (frames > 0) tick(frames);
    return cancel;
  };

  // A tab the user leaves: its running timers go to the worker too.
  addEventListener('visibilitychange', () => {
    if (!document.hidden) return;
    for (const [id, t] of pending) byWorker(id, t.due - performance.now());
  }, true);
})();
