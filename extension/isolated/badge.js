// ISOLATED world, top frame of every allowed page (worker/content-scripts.js): while the
// assistant acts in this tab (worker/pause.js tells `badge.show` when a call starts and
// `badge.done` when it ends), a thin border round the page and a small label naming the
// session's tab group, kept a moment after the last call ends; held off while a screenshot or a
// PDF is taken, or the user has the tab for a hand-over (`badge.hide` … `badge.release`), and
// drawn again after it if a call still acts.
//
// Drawn as isolated/handover.js draws its bar: a closed shadow root on a host element of
// documentElement, so the page's scripts cannot read it, and tabwire's page reader does not
// enter it. `pointer-events: none` on all of it: it is never a click target, a click there
// reaches the page's element under it. The host's style is inline and `!important` (no page
// stylesheet overrides it), and removing, moving or restyling it puts it back at once.
(() => {
  if (globalThis.tabwireBadge) return;
  const LINGER_MS = 1500; // shown this long after the last call ends
  const COLORS = { grey: '#5f6368', blue: '#1a73e8', red: '#d93025', yellow: '#f9ab00', green: '#188038', pink: '#d01884', purple: '#a142f4', cyan: '#007b83', orange: '#fa903e' };
  const HOST_STYLE = 'all: initial !important; position: fixed !important; inset: 0 !important; z-index: 2147483647 !important; pointer-events: none !important; display: block !important; visibility: visible !important; opacity: 1 !important; transform: none !important; clip-path: none !important; filter: none !important;';
  let host = null;
  let label = null;
  let frame = null;
  let watch = null;
  let calls = 0;
  let hideTimer = null;
  let held = 0; // captures (and hand-overs) under way: no mark meanwhile
  let holdTimer = null;
  let last = ['assistant', 'grey']; // the name and colour of the last call shown

  function draw() {
    host = document.createElement('tabwire-badge');
    host.setAttribute('style', HOST_STYLE);
    const root = host.attachShadow({ mode: 'closed' });
    root.innerHTML = `<style>
      * { pointer-events: none; }
      .frame { position: fixed; inset: 0; border: 3px solid var(--c); box-sizing: border-box; }
      .label { position: fixed; right: 6px; bottom: 6px; max-width: 40vw; overflow: hidden; text-overflow: ellipsis;
               white-space: nowrap; font: 600 12px system-ui, sans-serif; color: #fff; background: var(--c);
               padding: 3px 8px; border-radius: 10px; opacity: 0.92; }
    </style><div class="frame"></div><div class="label" role="status"></div>`;
    frame = root.querySelector('.frame');
    label = root.querySelector('.label');
    document.documentElement.append(host);
    // The page took it away, put something after it or restyled it: back as it was. The
    // hand-over bar (isolated/handover.js) keeps itself last too: one of it may follow, or the
    // two would move each other for ever.
    watch = new MutationObserver(() => {
      if (!host) return;
      if (host.getAttribute('style') !== HOST_STYLE) host.setAttribute('style', HOST_STYLE);
      const after = host.nextSibling;
      const last = !after || (after.localName === 'tabwire-handover' && !after.nextSibling);
      if (host.parentNode !== document.documentElement || !last) document.documentElement.append(host);
    });
    watch.observe(document.documentElement, { childList: true });
    watch.observe(host, { attributes: true });
  }

  function show(name, color) {
    clearTimeout(hideTimer);
    // A call whose end never comes (the worker restarted) does not keep it for ever.
    hideTimer = setTimeout(() => ((calls = 0), hide()), 120_000);
    last = [name, color];
    if (held > 0) return;
    if (!host) draw();
    const c = COLORS[color] ?? COLORS.grey;
    frame.style.setProperty('--c', c);
    label.style.setProperty('--c', c);
    label.textContent = `${name} is acting in this tab`;
  }

  function hide() {
    watch?.disconnect();
    host?.remove();
    host = label = frame = watch = null;
  }

  // Off for a capture: answered once the page was painted without the mark (two animation
  // frames; a tab that paints none is not waited for long).
  function hold() {
    held += 1;
    clearTimeout(holdTimer);
    // A release that never comes (the worker restarted) does not keep it off for ever.
    holdTimer = setTimeout(() => release(true), 600_000);
    const drawn = host !== null;
    hide();
    if (!drawn) return true;
    return new Promise((done) => {
      requestAnimationFrame(() => requestAnimationFrame(() => done(true)));
      setTimeout(() => done(true), 100);
    });
  }

  function release(all = false) {
    held = all ? 0 : Math.max(0, held - 1);
    if (held > 0) return;
    clearTimeout(holdTimer);
    if (calls > 0) show(...last);
  }

  globalThis.tabwireBadge = { hide };
  globalThis.tabwireAnswer('badge', (verb, msg) => {
    const name = String(msg.name ?? 'assistant').slice(0, 80);
    // The worker tells `show` when its first call here starts (or one of another session), and
    // `done` when its last ends (worker/pause.js).
    if (verb === 'show') {
      calls = 1;
      show(name, msg.color);
    } else if (verb === 'hide') {
      return hold();
    } else if (verb === 'release') {
      release();
    } else if (verb === 'done') {
      calls = 0;
      clearTimeout(hideTimer);
      hideTimer = setTimeout(hide, LINGER_MS);
    }
    return true;
  });
})();
