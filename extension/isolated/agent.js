// ISOLATED world, every frame of an allowed site: answers the worker's dom calls
// (worker/dom.js) for this document: {type: "dom.<op>", …}, through router.js. It trusts nothing
// the page says: refs and selectors come only from the worker, and what it reads of the page
// goes back as data.
(() => {
  const ns = (globalThis.tabwireDom ??= {});
  const GRACE_MS = 2000; // dialogs are still answered this long after an action settled
  const MAX_PENDING = 50; // requests of one action waited for (a page may start any number)

  // What happened since the current action started: DOM mutations and dialogs.
  let watch = null; // { since, last, mutations, dialogs: [], before: lines, observer }
  let answerDialogsUntil = 0;
  let armed = null; // { accept, text } for the next dialog (handle_dialog)

  function startWatch() {
    stopWatch();
    // `started`: the action's requests not ended yet (id → {url, by}, page-world/requests.js).
    const w = { since: performance.now(), last: 0, mutations: 0, dialogs: [], observer: null, started: new Map(), requests: 0, timers: 0 };
    w.observer = new MutationObserver((records) => {
      w.mutations += records.length;
      w.last = performance.now();
    });
    // The answers of the page's fetch/XHR as the page sees them (a resource timing entry once
    // the body is in): its handlers run about then, so the quiet window counts from here too.
    w.responses = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        if (e.initiatorType !== 'fetch' && e.initiatorType !== 'xmlhttprequest') continue;
        w.last = performance.now();
        if (e.initiatorType !== 'fetch') continue; // an XHR ends at its loadend
        for (const [id, r] of w.started) {
          if (r.by === 'fetch' && r.url === e.name) {
            w.started.delete(id);
            break;
          }
        }
      }
    });
    w.responses.observe({ type: 'resource' });
    // A navigation this document starts (a link, a form's submit) is known here at once; the
    // browser's webNavigation event reaches the worker later, later still on a loaded machine.
    w.navigate = (e) => {
      if (!e.destination.sameDocument && !e.downloadRequest) w.leaving = e.destination.url;
      // A download link (`<a download>`): Chrome names the download only once the server
      // answers, which a loaded machine may make later than the DOM's quiet.
      if (e.downloadRequest != null) w.downloading = true;
    };
    globalThis.navigation?.addEventListener('navigate', w.navigate);
    const what = { subtree: true, childList: true, attributes: true, characterData: true };
    w.observer.observe(document, what);
    // A document's observer does not see into shadow roots: observe those the snapshot met.
    for (const root of ns.shadows) {
      if (root.host.isConnected) w.observer.observe(root, what);
      else ns.shadows.delete(root);
    }
    watch = w;
    answerDialogsUntil = Infinity;
    return w;
  }

  // While tabwire acts in a hidden document (a background tab, a window covered or minimized),
  // Chrome draws no frames and fires no focus events: the page's animation frames, which
  // page-world/frames.js holds, are run here at 60 Hz on the worker's clock (isolated/clock.js;
  // the page's own timers wake once a second), and each move of the focus gets its events
  // (isolated/act.js), until the action's watch ends. `w.hidden` tells the worker, which then
  // waits for the page's throttled timers too (worker/dom.js).
  const STAND_IN_MS = 15_000;
  function standIn(w) {
    if (!document.hidden) return;
    w.hidden = true;
    const until = performance.now() + STAND_IN_MS;
    const frame = () => {
      if (w.stopped || performance.now() > until) return;
      if (document.hidden) window.dispatchEvent(new Event('tabwire:frame'));
      ns.focusMoved();
      globalThis.tabwireLater(frame, 16);
    };
    globalThis.tabwireLater(frame, 0);
  }

  function stopWatch() {
    if (!watch) return;
    watch.stopped = true;
    acting('stop');
    watch.observer.disconnect();
    watch.responses.disconnect();
    globalThis.navigation?.removeEventListener('navigate', watch.navigate);
    answerDialogsUntil = performance.now() + GRACE_MS;
  }

  // A dialog from the page (page-world/dialogs.js): answer it now if tabwire is acting, else
  // let the browser show it.
  window.addEventListener('tabwire:dialog', (e) => {
    let d;
    try {
      d = JSON.parse(e.detail);
    } catch {
      return;
    }
    if (performance.now() > answerDialogsUntil && !armed) {
      // The browser shows it and the page stops until someone answers: the worker must know
      // now, before this thread blocks (the message leaves at once; the page may have faked
      // the event, which the worker checks by asking this frame before it believes it).
      const dialog = { type: String(d.type).slice(0, 10), message: String(d.message).slice(0, 500) };
      chrome.runtime.sendMessage({ type: 'dom.dialog_shown', dialog }).catch(() => {});
      return;
    }
    const answer = armed ?? { accept: d.type === 'alert', text: null, by: 'default' };
    armed = null;
    const dialog = { type: String(d.type), message: String(d.message).slice(0, 2000), accepted: answer.accept, by: answer.by ?? 'handle_dialog' };
    if (d.type === 'prompt') dialog.text = answer.accept ? String(answer.text ?? d.value ?? '') : null;
    if (watch) watch.dialogs.length < 20 && watch.dialogs.push(dialog); // a page may fake many
    else {
      const late = (ns.lateDialogs ??= []);
      late.push(dialog);
      if (late.length > 20) late.shift();
    }
    window.dispatchEvent(new CustomEvent('tabwire:dialog-answer', { detail: JSON.stringify(answer) }));
  });

  // The page's fetch and XHR (page-world/requests.js): an action waits for those it started.
  window.addEventListener('tabwire:request', (e) => {
    const w = watch;
    if (!w || w.stopped) return;
    let d;
    try {
      d = JSON.parse(e.detail);
    } catch {
      return;
    }
    if (d.kind === 'start' && typeof d.url === 'string') {
      w.requests += 1;
      if (w.started.size < MAX_PENDING) w.started.set(d.id, { url: d.url.slice(0, 2000), by: d.by });
    } else if (d.kind === 'end' && w.started.delete(d.id)) {
      w.last = performance.now();
    }
  });

  // The page's short timers the action started (page-world/timers.js): `detail` is "<how many
  // are left> <1 when one just ran>". The action waits until none is left; what the last one
  // did counts as a change of now, for the quiet window.
  window.addEventListener('tabwire:timers', (e) => {
    const w = watch;
    if (!w || w.stopped || typeof e.detail !== 'string') return;
    const [left, ran] = e.detail.split(' ').map(Number);
    w.timers = Number.isInteger(left) && left >= 0 ? Math.min(left, MAX_PENDING) : 0;
    if (ran === 1) w.last = performance.now();
  });
  // Tells page-world/timers.js when the timers the page starts are the action's.
  const acting = (what) => window.dispatchEvent(new CustomEvent('tabwire:acting', { detail: what }));

  window.addEventListener('tabwire:dialog-closed', () => {
    chrome.runtime.sendMessage({ type: 'dom.dialog_closed' }).catch(() => {});
  });

  const fail = (code, message) => {
    throw Object.assign(new Error(message), { code });
  };

  function element({ ref, selector }) {
    if (ref) {
      const got = ns.resolve(ref);
      if (got.error) fail(got.error.code, got.error.message);
      return got;
    }
    if (typeof selector === 'string' && selector) {
      let el;
      try {
        el = document.querySelector(selector);
      } catch (e) {
        fail('bad_request', `${JSON.stringify(selector)} is not a CSS selector: ${e.message}`);
      }
      if (!el) fail('no_such_element', `no element matches the selector ${JSON.stringify(selector)} in this page; read_page shows what is there (and refs are more reliable than selectors)`);
      return { el };
    }
    fail('bad_request', 'name the element with `ref` (from read_page or find) or `selector`');
  }

  // The lines an action's changes are computed on: the full snapshot, text included, so a
  // message that appears counts; a re-render that draws the same thing does not. Focus moves
  // with every click, so it is left out (read_page shows it). Each is {t: the line as shown,
  // k: what it is compared by, d, v, i?, n?} — k is the line and, where it shows less than
  // there is (a value cut at 100 characters, an editor's text on one line), the whole of it;
  // i and n a row's place and a table's rows (snapshot.js, `exact`).
  const lines = () => ns.snapshot('full', undefined, undefined, { exact: true }).lines.map((l) => {
    const t = `${'  '.repeat(l.d)}${l.t.replace(' [focused]', '')}`;
    return { t, k: l.k ? t + l.k : t, d: l.d, v: l.v, i: l.i, n: l.n };
  });

  // The lines that differ between two snapshots, with the rows of grids and lists summed up
  // (lib/change-report.js).
  const diff = (before, after) => globalThis.tabwireChanges.diff(before, after);

  const ops = {
    read({ mode, ref, base }) {
      const t0 = performance.now();
      ns.startRefsAt(base);
      const root = ref ? element({ ref }).el : undefined;
      const out = mode === 'text' ? { text: ns.text(root) } : ns.snapshot(mode, root);
      return { ...out, took: performance.now() - t0, next: ns.nextRef(), title: document.title, scroll: { y: Math.round(scrollY), height: document.documentElement.scrollHeight, viewport: innerHeight } };
    },

    // Start watching, act, return at once; `settle` below waits for the page to be quiet.
    async act({ action, base, ...args }) {
      ns.startRefsAt(base);
      const before = lines();
      const w = startWatch();
      w.before = before;
      ns.focusFrom();
      standIn(w);
      const notes = [];
      const targets = []; // what each element acted on can be found by again (export_test)
      const got = (t) => {
        const g = element(t);
        if (g.rebound) notes.push(g.rebound);
        targets.push(ns.facts(g.el));
        return g.el;
      };
      let result = {};
      acting('start');
      try {
        switch (action) {
          case 'click':
            result = ns.click(got(args), args);
            break;
          case 'fill': {
            // Every field is found, and those a user clicks into are hit-tested, before any is
            // set: a field that cannot be reached fails the call with the others untouched.
            const els = args.fields.map((f) => got(f));
            const targeted = els.map((el) => ns.fillClicksInto(el) && (ns.target(el), true));
            result.values = els.map((el, i) => ns.fill(el, args.fields[i].value, { targeted: targeted[i] }));
            break;
          }
          case 'type':
            result.value = ns.type(args.ref || args.selector ? got(args) : null, args.text, args.submit);
            break;
          case 'press':
            if (args.ref || args.selector) ns.focus(got(args), {});
            {
              const before = ns.caret();
              await ns.press(args.keys);
              if (!ns.sameCaret(before, ns.caret())) result.selection_moved = true;
            }
            break;
          case 'hover': {
            const el = got(args);
            ns.hover(el);
            break;
          }
          case 'scroll':
            ns.scroll(args.ref || args.selector ? got(args) : null, args);
            break;
          case 'drag':
            ns.drag(got(args), got(args.to));
            break;
          case 'upload':
            result.files = ns.upload(got(args), args.files);
            break;
          // Trusted input (`trusted: true`): here only the element is made ready — scrolled into
          // view and hit-tested for a click, focused for keys — and the worker dispatches the
          // real input through the debugger (worker/dom/trusted.js), while this watch sees its
          // effect.
          case 'trusted_click':
            result.point = ns.target(got(args));
            break;
          case 'trusted_type':
          case 'trusted_press':
            if (args.ref || args.selector) got(args).focus();
            break;
          default:
            fail('bad_request', `unknown action ${action}`);
        }
      } catch (e) {
        stopWatch();
        watch = null;
        throw e;
      } finally {
        acting('end');
      }
      ns.focusMoved();
      // How long the DOM has been quiet already: the worker's first wait needs no question.
      // The action's own changes are not delivered to the observer until this task ends:
      // taken here, so that they count as now rather than as quiet.
      const pending = w.observer.takeRecords().length;
      if (pending) {
        w.mutations += pending;
        w.last = performance.now();
      }
      return { ...result, targets, notes, idle: w.timers > 0 ? 0 : performance.now() - Math.max(w.last, w.since), next: ns.nextRef(), ...(w.hidden ? { hidden: true } : {}) };
    },

    // Where the targets of an action in this frame are (centres, scrolled into view), for the
    // worker to hit-test the frames around this one before it acts (`framePoint` in each).
    // Null for a target that cannot be placed: the action itself says what is wrong with it.
    // `index`: which of its parent's frames this document is.
    points({ targets }) {
      const points = targets.map((t) => {
        try {
          return ns.target(element(t).el, { hitTest: false });
        } catch {
          return null;
        }
      });
      return { points, index: ns.indexInParent() };
    },

    // Those points, moved from child frame `index` into this document and hit-tested here.
    framePoint({ index, points }) {
      return { points: points.map((p) => p && ns.framePoint(index, p)), index: ns.indexInParent() };
    },

    // Where an element is in the viewport, scrolled into view: for screenshot's `ref`.
    locate({ ref }) {
      const { el } = element({ ref });
      el.scrollIntoView({ block: 'nearest', inline: 'nearest' });
      const r = el.getBoundingClientRect();
      return { x: r.left, y: r.top, width: r.width, height: r.height, vw: innerWidth, vh: innerHeight };
    },

    // Once the DOM has been quiet for `quiet` ms and the action's requests were answered: the
    // action's changed lines and what it saw; before that, how long it has been quiet (`idle`,
    // 0 while a request, or a short timer the action started, runs) — one question per wait,
    // not one to ask and one to end. The
    // worker does the waiting (its timers run at full speed; a background tab's are throttled
    // to 1 a second). `quiet` 0 (the cap): the lines now, and the requests still running.
    finish({ quiet = 0 } = {}) {
      const w = watch;
      if (!w) return { mutations: 0, dialogs: [], added: [], removed: [], more: 0, requests: 0, pending: [] };
      const seen = { mutations: w.mutations, dialogs: w.dialogs, requests: w.requests, pending: [...w.started.values()].map((r) => r.url), downloading: w.downloading === true };
      const idle = seen.pending.length > 0 || w.timers > 0 ? 0 : performance.now() - Math.max(w.last, w.since);
      if (idle < quiet || (w.leaving && quiet > 0)) return { idle, leaving: w.leaving, ...seen };
      return { ...seen, ...diff(w.before, lines()), next: ns.nextRef() };
    },

    // That this document's thread runs: no dialog of the browser's holds it.
    ping() {
      return true;
    },

    end() {
      stopWatch();
      watch = null;
    },

    arm({ accept, text }) {
      armed = { accept: accept === true, text: text ?? null, by: 'handle_dialog' };
      const late = ns.lateDialogs ?? [];
      ns.lateDialogs = [];
      return { late };
    },

    // Resolve when the condition holds: text present / gone, a selector matches.
    wait({ text, text_gone: gone, selector, timeout }) {
      const holds = () => {
        const body = document.body?.innerText ?? '';
        if (text != null && !body.includes(text)) return false;
        if (gone != null && body.includes(gone)) return false;
        if (selector != null) {
          try {
            if (!document.querySelector(selector)) return false;
          } catch (e) {
            fail('bad_request', `${JSON.stringify(selector)} is not a CSS selector: ${e.message}`);
          }
        }
        return true;
      };
      if (holds()) return { met: true };
      return new Promise((resolve, reject) => {
        // Timers of clock.js: they keep time in a background tab too.
        let scheduled = null;
        let poll = null;
        const check = () => {
          scheduled = null;
          try {
            if (holds()) done(resolve, { met: true });
          } catch (e) {
            done(reject, e);
          }
        };
        const observer = new MutationObserver(() => {
          scheduled ??= globalThis.tabwireLater(check, 16);
        });
        // innerText also changes with style alone (display), which no mutation reports.
        const polling = () => {
          poll = globalThis.tabwireLater(polling, 250);
          check();
        };
        poll = globalThis.tabwireLater(polling, 250);
        const timer = globalThis.tabwireLater(() => done(resolve, { met: false }), timeout);
        const done = (fn, v) => {
          observer.disconnect();
          scheduled?.();
          poll();
          timer();
          fn(v);
        };
        observer.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
      });
    },
  };

  // The worker's dom calls ({type: "dom.<op>"}), through this world's router (router.js).
  globalThis.tabwireAnswer('dom', (op, msg) => {
    if (!Object.hasOwn(ops, op)) fail('bad_request', `unknown dom call ${msg.type}`);
    return ops[op](msg);
  });
})();
