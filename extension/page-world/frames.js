// MAIN world, every frame of an allowed site, document_start: the page's animation frames, for
// tabwire to run while it acts in a hidden document. Chrome draws no frames in a background tab
// or a covered or minimized window (docs/performance.md, "Pages the user is not looking at"), so
// there `requestAnimationFrame` callbacks — where editors (Monaco) render and widgets
// (ProseMirror's toolbar) hand the focus back — wait until the user shows the tab. Each callback
// is kept here beside Chrome's own request; while the agent acts in a hidden document it sends
// `tabwire:frame` at 60 Hz (isolated/agent.js) and the callbacks waiting run then, as one frame,
// each once: whichever of Chrome's frame and tabwire's comes first. A visible page runs them as
// it always did. A page that sends the event itself only runs its own callbacks early.
(() => {
  const raf = window.requestAnimationFrame;
  const caf = window.cancelAnimationFrame;
  if (typeof raf !== 'function' || typeof caf !== 'function') return;
  const waiting = new Map(); // Chrome's request id → the page's callback
  window.requestAnimationFrame = {
    requestAnimationFrame(callback) {
      if (typeof callback !== 'function') return raf.call(window, callback); // Chrome's TypeError
      const id = raf.call(window, (t) => waiting.delete(id) && callback(t));
      waiting.set(id, callback);
      return id;
    },
  }.requestAnimationFrame;
  window.cancelAnimationFrame = {
    cancelAnimationFrame(id) {
      waiting.delete(id);
      return caf.call(window, id);
    },
  }.cancelAnimationFrame;
  window.addEventListener('tabwire:frame', () => {
    if (!document.hidden || waiting.size === 0) return;
    const frame = [...waiting];
    waiting.clear();
    const now = performance.now();
    for (const [id, callback] of frame) {
      caf.call(window, id);
      try {
        callback(now);
      } catch (e) {
        reportError(e); // as Chrome reports a callback's error, and the next still runs
      }
    }
  }, true);
})();
