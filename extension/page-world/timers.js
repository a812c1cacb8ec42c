// MAIN world, every frame of an allowed site, document_start: the short timers an action makes
// the page start, for the action to wait out. A page often acts on input a moment later, from
// a timer it restarts at every key — a debounce: AG Grid applies what is typed into a column's
// filter 500 ms after the last key — and a settle that ends when the DOM has been quiet for
// 25 ms returns before that, with nothing to show. So while the agent (isolated/agent.js) acts,
// each `setTimeout` of at most MAX_MS that the page starts is counted until it runs or is
// cleared, and the agent hears the count; the action settles only once none is left
// (worker/dom.js, `settle`). Which timers count:
// - those started while the agent dispatches the action's events, and in the GRACE_MS after
//   (what a framework starts from a microtask, a message or a frame once the event is over);
// - those started by a counted timer's callback, to GENERATIONS deep (the debounce's handler
//   that renders in a timer of its own); a timer loop that runs all the time is followed no
//   further than that.
// Intervals never count: they never end. The page can send or keep the events itself: it can
// only make its own action wait more (never past the settle's cap) or less.
(() => {
  const nativeSet = window.setTimeout;
  const nativeClear = window.clearTimeout;
  if (typeof nativeSet !== 'function' || typeof nativeClear !== 'function') return;
  const MAX_MS = 1000; // a debounce or a short animation; longer is a reminder, not the action's
  const GRACE_MS = 50;
  const GENERATIONS = 2;

  const counted = new Map(); // timer id → its generation
  let actingUntil = 0; // performance.now() until which a new timer is the action's (generation 0)
  let generation = null; // while a counted timer's callback runs: its generation

  const tell = (fired) => window.dispatchEvent(new CustomEvent('tabwire:timers', { detail: `${counted.size} ${fired ? 1 : 0}` }));

  window.addEventListener('tabwire:acting', (e) => {
    if (e.detail === 'start') {
      counted.clear();
      actingUntil = Infinity;
    } else if (e.detail === 'end') {
      actingUntil = performance.now() + GRACE_MS;
    } else if (e.detail === 'stop') {
      counted.clear();
      actingUntil = 0;
    }
  }, true);

  window.setTimeout = {
    setTimeout(handler, delay, ...args) {
      const ms = Number(delay) || 0;
      const from = generation !== null ? generation + 1 : performance.now() < actingUntil ? 0 : null;
      if (from === null || from > GENERATIONS || ms > MAX_MS || typeof handler !== 'function') return nativeSet.apply(window, arguments);
      const id = nativeSet.call(window, function () {
        const was = generation;
        const mine = counted.delete(id);
        generation = mine ? from : was;
        try {
          return handler.apply(this, args);
        } finally {
          // Kept over the callback's microtasks (a promise it resolves starts a timer there).
          queueMicrotask(() => (generation = was));
          if (mine) tell(true);
        }
      }, ms);
      counted.set(id, from);
      tell(false);
      return id;
    },
  }.setTimeout;

  window.clearTimeout = {
    clearTimeout(id) {
      nativeClear.call(window, id);
      if (counted.delete(id)) tell(false);
    },
  }.clearTimeout;
})();
