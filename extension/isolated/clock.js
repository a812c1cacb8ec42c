// ISOLATED world, every frame of an allowed site, before the agent and the chat observer that use
// it (worker/content-scripts.js): timers that keep time in a background tab. Chrome runs the timers
// of a hidden tab at most once a second (and, after minutes hidden, once a minute), in this world
// as in the page's; that held wait_for back by up to a second in a background tab, and a chat
// answer's quiet time (`stable_ms`) by as much (bridge/benches/browser/sessions.rs measures both).
// So while the document is hidden, each timer here is also kept by the extension's worker
// (worker/clock.js, whose timers Chrome does not throttle) over a port: whichever fires first runs
// the callback, once. Only a tab's top frame has that port (the worker takes no other); other
// frames keep the page's timers.
// `tabwireLater(fn, ms)` → a function that cancels it. `tabwireAfterFrames(fn, n, ms)`: after
// the page's next n frames (0: none) — rendered by Chrome, or run by `tabwireRunFrames` in a
// hidden document — or after ms where they do not come first → a function that cancels it.
// `tabwireRunFrames()`: while the document is hidden (Chrome renders it no frames), run the
// page's animation frames, which page-world/frames.js holds, at 60 Hz on this clock, until the
// function it returns is called: a chat operation follows an answer that an app paints in
// animation frames, and ends two frames after its stop control goes, as in front.
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

  // Each frame, Chrome's or tabwireRunFrames', counts once; the n-th, or ms, runs fn first.
  globalThis.tabwireAfterFrames = (fn, frames, ms) => {
    let frame = 0;
    let left = frames;
    const cancel = () => {
      cancelTimer();
      cancelAnimationFrame(frame);
      framed.delete(count);
    };
    const run = () => {
      cancel();
      fn();
    };
    const count = () => --left <= 0 && run();
    const tick = () => (frame = requestAnimationFrame(() => (count(), left > 0 && tick())));
    const cancelTimer = globalThis.tabwireLater(run, ms);
    if (frames > 0) {
      framed.add(count);
      tick();
    }
    return cancel;
  };

  // The frames run in a hidden document: `tabwire:frame` (page-world/frames.js runs the
  // callbacks the page asked for), then each waiting tabwireAfterFrames counts it. Counted here,
  // not from the event, which the page can send too.
  const FRAME_MS = 16;
  const runners = new Set(); // one token per caller of tabwireRunFrames still running
  const framed = new Set(); // the tabwireAfterFrames counting
  let running = false;
  const frame = () => {
    running = runners.size > 0 && document.hidden;
    if (!running) return;
    window.dispatchEvent(new Event('tabwire:frame'));
    for (const count of [...framed]) count();
    globalThis.tabwireLater(frame, FRAME_MS);
  };
  const runFrames = () => {
    if (!running && runners.size > 0 && document.hidden) {
      running = true;
      globalThis.tabwireLater(frame, FRAME_MS);
    }
  };
  globalThis.tabwireRunFrames = () => {
    const token = {};
    runners.add(token);
    runFrames();
    return () => runners.delete(token);
  };

  // A tab the user leaves: its running timers go to the worker too, and frames are run there.
  addEventListener('visibilitychange', () => {
    if (!document.hidden) return;
    for (const [id, t] of pending) byWorker(id, t.due - performance.now());
    runFrames();
  }, true);
})();
