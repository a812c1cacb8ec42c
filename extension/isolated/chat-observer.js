// ISOLATED world, top frame, injected on demand by worker/chat.js (chrome.scripting.executeScript):
// types a message into a chat web app, submits it, and reports milestones — message_sent,
// response_started, response_progress, response_completed, response_stopped — driven by a
// MutationObserver, never by a fixed delay (specs/operations.md). What the page shows is data:
// it is read and passed on, never acted upon. The site adapter (CSS selectors) comes with each
// send. Text is read by lib/chat-text.js (injected before this file), for progress and the
// final answer alike. Selectors are matched, and changes observed, in the document and in its
// open shadow roots alike (lib/deep-dom.js, injected before this file): a chat that is a web
// component keeps its box and bubbles in one.
(() => {
  if (globalThis.tabwireChatObserver) return; // injected again into the same document
  globalThis.tabwireChatObserver = true;

  const EXCERPT = 120; // characters of a bubble carried by message_sent and response_progress
  const PROGRESS_MS = 250; // at most 4 progress reports a second
  const MAX_TEXT = 4 * 1024 * 1024; // an answer longer than this is cut (and says so)
  const KEEP_FINISHED = 20; // finished operations kept for chat.status
  const STOP_WAIT_MS = 1500; // after pressing the app's stop control, how long it may take to go
  const STOP_QUIET_MS = 150; // then, how long the answer must stay unchanged (a chunk in flight)
  const STOP_SHOW_MS = 2500; // after the send, how long an app may take to show its stop control
  const STOP_REDRAW_MS = 1000; // while it streams, how long its stop control may be away (redrawn)
  const { readText } = globalThis.tabwireChatText;
  // isolated/clock.js (injected before this file): timers that keep time in a background tab,
  // where the page's own would hold the quiet time and progress back by up to a second.
  // `later(fn, ms)` → a function that cancels it.
  // `afterFrames(fn, n, ms)`: after the page's next n frames, or ms if they do not come.
  // `runFrames()`: while the document is hidden, the page's animation frames run at 60 Hz
  // until the function it returns is called — an app that paints its answer in animation
  // frames (page-world/frames.js holds them) shows it in a background tab too, and the end
  // comes two frames after its stop control goes, as in front (specs/operations.md).
  const { tabwireLater: later, tabwireAfterFrames: afterFrames, tabwireRunFrames: runFrames } = globalThis;
  const { Scope, matchInPath } = globalThis.tabwireDeepDom;
  const scope = new Scope(document); // the document and the open shadow roots met in it
  const WATCH = { childList: true, subtree: true, characterData: true, attributes: true };
  const ops = new Map(); // operation id → op (below)
  let port = null;

  const fail = (code, message) => {
    const e = new Error(message);
    e.code = code;
    throw e;
  };

  // The worker's chat.* calls, through this world's router (router.js).
  globalThis.tabwireAnswer('chat', (_verb, msg) => handle(msg));

  async function handle(msg) {
    switch (msg.type) {
      case 'chat.send':
        return send(msg);
      case 'chat.detect':
        return globalThis.tabwireDetectChat(); // isolated/chat-detect.js: reads, changes nothing
      case 'chat.status': {
        const op = ops.get(msg.operation_id);
        return { found: !!op, finished: op?.finished ?? false, milestones: op?.milestones ?? [] };
      }
      case 'chat.cancel': {
        const op = ops.get(msg.operation_id);
        if (!op) return { cancelled: false };
        const stopped = msg.stop === true ? await pressStop(op) : null;
        finish(op);
        return stopped ? { cancelled: true, stopped } : { cancelled: true };
      }
      default:
        fail('bad_request', `the chat observer has no method ${JSON.stringify(msg.type)}`);
    }
  }

  // The port milestones travel on. Opened before typing, so the worker learns when this
  // document goes away (its port closes) even before the first milestone.
  function connect() {
    if (port) return port;
    port = chrome.runtime.connect({ name: 'chat' });
    port.onDisconnect.addListener(() => (port = null)); // the worker restarted: reconnect on next post
    return port;
  }

  function post(msg) {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        return connect().postMessage(msg);
      } catch (e) {
        port = null;
        if (/context invalidated/i.test(e.message)) return ops.forEach(finish); // extension reloaded
      }
    }
  }

  async function send({ operation_id: id, text, adapter: a, wait_ms: waitMs, origin }) {
    // The worker checked the tab's URL; this is the document that would be typed into. If the
    // tab navigated in between, type nothing (and say nothing of the page it holds now).
    if (location.origin !== origin)
      fail('origin_changed', `the tab navigated away from ${origin} before anything was typed; nothing was done. list_tabs shows what each tab holds`);
    if (ops.has(id)) fail('bad_request', `operation ${id} was already sent in this page`);
    checkAdapter(a);
    connect();
    scope.rescan(); // a shadow root attached since the last look made no mutation to see
    const input = await waitFor(() => first(a.input), waitMs);
    if (!input) mismatch(a, 'input', waitMs);
    const op = {
      id,
      a,
      n: 0,
      phase: 'pending',
      milestones: [],
      base: a.detected
        ? { users: 0, assistants: 0, dones: 0 }
        : { users: count(a.user_message), assistants: count(a.assistant_message), dones: a.done ? count(a.done) : 0 },
      // A detected adapter (no bubble selectors): the elements added since the send, where the
      // user's bubble is looked for, and that bubble once found.
      sent: loose(text) || squash(text),
      added: [],
      userBubble: null,
      input,
      chars: 0,
      seen: null, // the answer's raw text at the last check: a change restarts the quiet time
      seenIn: null, // the element it was read from
      wasGenerating: null,
      sawSign: false, // the page showed its generating sign for this answer
      // A detected adapter that knows no stop control: controls seen saying stop since the send
      // (an app may show its stop control only while it answers).
      stops: new Set(),
      userStopped: false, // the user pressed the app's stop control
      stopping: false, // cancel_operation is pressing it
      onClick: null,
      lastProgress: -Infinity,
      progressTimer: null,
      stableTimer: null,
      observer: null,
      // The answer as it was when the app's stop control was pressed: an app may then add a
      // bubble of its own (Chainlit's "Task manually stopped."), which is not the answer.
      pinned: null,
      finished: false,
      stopFrames: null,
    };
    typeInto(input, text, a);
    ops.set(id, op);
    op.stopFrames = runFrames(); // until finish(), which every way from here comes to
    // Before submitting, so nothing is missed; on the document and every open shadow root, and
    // on those that come with added nodes.
    op.observer = new MutationObserver((records) => {
      scope.noticeAdded(records);
      if (a.detected && !op.userBubble) noteAdded(op, records);
      if (a.detected && !a.stop) noteStops(op, records);
      check(op);
    });
    scope.observe(op.observer, WATCH);
    if (a.stop || a.detected) {
      // The user pressing the app's stop control (for a detected adapter that knew none, the
      // one found while it answers): the answer that ends then was stopped, not completed. Only
      // which control was pressed is looked at, never anything the page says.
      op.onClick = (e) => {
        if (op.stopping || op.phase !== 'streaming') return;
        if (!(a.stop ? matchInPath(e, a.stop) : e.composedPath().includes(foundStop(op)))) return;
        op.userStopped = true;
        op.pinned ??= newest(op);
      };
      document.addEventListener('click', op.onClick, true);
    }
    try {
      await submit(a, input, waitMs);
      op.sentAt = performance.now();
    } catch (e) {
      finish(op);
      ops.delete(id);
      throw e;
    }
    check(op);
    return { started: true, url: location.href.split('#')[0] }; // never the fragment (it may hold a token)
  }

  function checkAdapter(a) {
    if (a === null || typeof a !== 'object') fail('bad_request', 'the adapter must be an object');
    const name = a.name;
    // A detected adapter finds the bubbles by their place; it may know no generating sign.
    const mayLack = a.detected === true ? ['done', 'stop', 'user_message', 'assistant_message', 'generating'] : ['done', 'stop'];
    for (const field of ['input', 'submit', 'user_message', 'assistant_message', 'generating', 'done', 'stop']) {
      const sel = a[field];
      if ((mayLack.includes(field) && (sel == null || sel === '')) || (field === 'submit' && sel === 'enter')) continue;
      if (typeof sel !== 'string' || sel.trim() === '') fail('bad_request', `adapter "${name}": \`${field}\` must be a CSS selector`);
      try {
        document.querySelector(sel);
      } catch (e) {
        fail('bad_request', `adapter "${name}": its \`${field}\` selector \`${sel}\` is not valid CSS (${e.message}); correct it`);
      }
    }
    if (!Number.isFinite(a.stable_ms) || a.stable_ms < 0) fail('bad_request', `adapter "${name}": \`stable_ms\` must be a number of milliseconds`);
  }

  function mismatch(a, field, waitMs, why) {
    fail('adapter_mismatch',
      `adapter "${a.name}": ${why ?? `nothing in ${location.href.split('#')[0]} matches`} its \`${field}\` selector \`${a[field]}\` ` +
      `(waited ${waitMs} ms). The page may not be the chat, may still be loading, or its markup changed: ` +
      'pass a corrected adapter (list_adapters shows this one) or put one in the adapters config directory');
  }

  // Resolve with find()'s first truthy answer, checked now and after each change to the page
  // (its shadow roots included); null after `ms` milliseconds. While nothing is found, each
  // change also looks for shadow roots attached meanwhile (a web component that upgraded).
  // `wake`, if given, gets a `now()` that checks again at once (for what no page change shows).
  function waitFor(find, ms, wake) {
    const now = find() || (scope.rescan() && find());
    if (now) return Promise.resolve(now);
    return new Promise((resolve) => {
      const look = () => {
        const got = find() || (scope.rescan() && find());
        if (got) done(got);
      };
      const mo = new MutationObserver((records) => {
        scope.noticeAdded(records);
        look();
      });
      if (wake) wake.now = look;
      const timer = later(() => done(null), ms);
      const done = (value) => {
        scope.unobserve(mo);
        timer();
        resolve(value);
      };
      scope.observe(mo, { childList: true, subtree: true, attributes: true });
    });
  }

  // Type so that a framework page takes it: the native value setter plus an input event for a
  // text box (React's own setter on the element is bypassed, so it sees a real change); for a
  // contenteditable, the browser's own insertText editing command (which fires beforeinput and
  // input as typing does), else those events by hand.
  function typeInto(el, text, a) {
    el.focus();
    if (el instanceof HTMLTextAreaElement || el instanceof HTMLInputElement) {
      const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
      Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, text);
      el.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertText', data: text }));
      if (el.value !== text) refused(a, el.value.length, text.length);
      return;
    }
    if (el.isContentEditable) {
      const range = document.createRange();
      range.selectNodeContents(el);
      const selection = getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      if (!document.execCommand('insertText', false, text)) {
        el.dispatchEvent(new InputEvent('beforeinput', { bubbles: true, cancelable: true, inputType: 'insertText', data: text }));
        el.textContent = text;
        el.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertText', data: text }));
      }
      if (squash(el.innerText) !== squash(text)) refused(a, squash(el.innerText).length, squash(text).length);
      return;
    }
    fail('adapter_mismatch', `adapter "${a.name}": its \`input\` selector \`${a.input}\` matches a <${el.localName}>, which is neither a text box nor contenteditable; correct the selector`);
  }

  function refused(a, got, wanted) {
    fail('bad_request', `the page did not take the typed text in adapter "${a.name}"'s \`input\` (\`${a.input}\`): it holds ${got} characters instead of ${wanted}; the page may reject scripted input`);
  }

  async function submit(a, input, waitMs) {
    if (a.submit === 'enter') {
      for (const type of ['keydown', 'keypress', 'keyup'])
        input.dispatchEvent(new KeyboardEvent(type, { key: 'Enter', code: 'Enter', keyCode: 13, which: 13, bubbles: true, cancelable: true }));
      return;
    }
    const enabled = (b) => !b.disabled && b.getAttribute('aria-disabled') !== 'true';
    const button = await waitFor(() => {
      const b = first(a.submit);
      return b && enabled(b) ? b : null;
    }, waitMs);
    if (!button) mismatch(a, 'submit', waitMs, first(a.submit) ? 'the button stayed disabled that matches' : null);
    button.click();
  }

  // After every change to the page: has the operation reached its next milestone?
  function check(op) {
    if (op.finished || op.stopping) return;
    const a = op.a;
    const generating = isGenerating(op);
    const answer = newest(op);
    if (op.phase === 'pending') {
      const users = a.detected ? (findUserBubble(op) ? [op.userBubble] : []) : scope.all(a.user_message);
      const said = users.length > op.base.users ? readText(users[users.length - 1]) : null;
      // A bubble may come before its text (Gradio renders its markdown after): wait for the
      // text while no answer shows.
      if (said === '' && !answer) return;
      if (said !== null) reach(op, 'message_sent', { excerpt: head(said) });
      // The site shows no bubble for it. Not on `generating` alone: an app may show its stop
      // control before the user's bubble (Gradio's ChatInterface), which then has its excerpt.
      else if (answer) reach(op, 'message_sent', { excerpt: null });
      else return;
      op.phase = 'sent';
    }
    if (op.phase === 'sent') {
      if (!answer && !generating) return;
      reach(op, 'response_started', { by: answer ? 'assistant_message' : 'generating' });
      op.phase = 'streaming';
    }
    // The quiet time is the answer's own: only a change to its text (or the generating
    // indicator coming or going) restarts it, not a clock ticking elsewhere on the page.
    const raw = answer ? answer.textContent : '';
    const changed = raw !== op.seen || answer !== op.seenIn;
    if (changed && answer) progress(op);
    if (a.done && !generating && count(a.done) > op.base.dones) return complete(op); // a done of this answer, not of another
    if (!changed && generating === op.wasGenerating) return;
    op.seen = raw;
    op.seenIn = answer;
    op.wasGenerating = generating;
    if (generating) op.sawSign = true;
    op.stableTimer?.();
    const quiet = globalThis.tabwireChatDetect.quietFor(a, op.sawSign);
    op.stableTimer = generating ? null : afterFrames(() => complete(op), quiet.frames, quiet.ms);
  }

  // The answer to this operation: the newest assistant bubble, if one appeared since the send;
  // once the app's stop control was pressed, the one that was newest then.
  function newest(op) {
    if (op.pinned?.isConnected) return op.pinned;
    if (op.a.detected) return detectedAnswer(op);
    const all = scope.all(op.a.assistant_message);
    return all.length > op.base.assistants ? all[all.length - 1] : null;
  }

  // Whether the answer is being written: the adapter's `generating` is there — for a detected
  // adapter (whose `generating` is the app's stop control, often kept in the page hidden while
  // idle), there and shown.
  function isGenerating(op) {
    const sel = op.a.generating;
    if (!op.a.detected) return first(sel) !== null;
    if (sel) return scope.all(sel).some(shown);
    return foundStop(op) !== null;
  }

  const shown = (el) => el.checkVisibility({ visibilityProperty: true });

  // A detected adapter that knew no stop control when the page was read: the one that came
  // since the send and says stop now, shown where the user would press it — not in the
  // conversation (a button in an answer is the answer's). Null when there is none.
  function foundStop(op) {
    const list = op.userBubble?.parentNode;
    return [...op.stops].find((el) => el.isConnected && !list?.contains(el) && shown(el) && saysStop(el)) ?? null;
  }

  // A detected adapter with no stop control (specs/operations.md, "A detected adapter"): every
  // control that came or changed since the send (Deep Chat swaps its send button's icon for a
  // stop icon; Gradio and Streamlit add a Stop button) and says stop by the detector's rule
  // (lib/chat-detect.js `isStop`) is kept, and is the generating sign while it shows and says so.
  function noteStops(op, records) {
    const { selector } = globalThis.tabwireChatControl; // isolated/chat-detect.js
    const seen = new Set(); // each control once per batch of changes
    const look = (el) => {
      if (!el || seen.has(el) || op.stops.has(el)) return;
      seen.add(el);
      if (saysStop(el)) op.stops.add(el);
    };
    for (const rec of records) {
      const at = rec.target.nodeType === 1 ? rec.target : rec.target.parentElement;
      look(at?.closest(selector)); // what changed is a control, or in one
      for (const node of rec.addedNodes) {
        if (node.nodeType !== 1) continue;
        look(node.closest(selector));
        for (const el of node.querySelectorAll(selector)) look(el);
      }
    }
  }

  const saysStop = (el) => globalThis.tabwireChatDetect.isStop(globalThis.tabwireChatControl.describe(el));

  // A detected adapter's bubbles, by their place (specs/operations.md, "A detected adapter"):
  // the user's bubble is the outermost element added since the send whose text is the text sent
  // (not the box it was typed in; compared without white space and markdown's marks, which an
  // app may render); the answer is the newest element after it in the
  // same list that is like it — the same tag, half its lasting classes in common (or neither
  // has a class).
  const ADDED_MAX = 2000;
  function noteAdded(op, records) {
    for (const rec of records)
      for (const node of rec.addedNodes)
        if (node.nodeType === 1 && op.added.length < ADDED_MAX && !op.input.contains(node)) op.added.push(node);
  }

  function findUserBubble(op) {
    if (op.userBubble) return op.userBubble;
    const within = (el) => {
      if (el === op.input) return null; // the box may still hold the text typed
      const t = loose(readText(el));
      if (t === op.sent && !el.contains(op.input)) return el;
      if (!t.includes(op.sent)) return null;
      for (const child of el.children) {
        const got = within(child);
        if (got) return got;
      }
      return null;
    };
    for (const root of op.added) {
      if (!root.isConnected) continue;
      const got = within(root);
      if (got) {
        op.userBubble = got;
        op.added = [];
        return got;
      }
    }
    return null;
  }

  function alike(el, user) {
    if (el === user || el.nodeType !== 1 || el.localName !== user.localName) return false;
    return globalThis.tabwireChatDetect.likeBubble([...user.classList], [...el.classList]); // lib/chat-detect.js
  }

  function detectedAnswer(op) {
    const user = op.userBubble;
    if (!user?.isConnected) return null;
    let answer = null;
    for (let el = user.nextElementSibling; el; el = el.nextElementSibling) if (alike(el, user)) answer = el;
    return answer;
  }

  // Bubbles in the conversation: the adapter's, or those of the detected bubble's list.
  function messages(op) {
    if (!op.a.detected) return count(op.a.user_message) + count(op.a.assistant_message);
    const user = op.userBubble;
    const list = user?.parentNode;
    return list ? [...list.children].filter((el) => el === user || alike(el, user)).length : 0;
  }

  function progress(op) {
    const wait = op.lastProgress + PROGRESS_MS - performance.now();
    if (wait <= 0) return reportProgress(op);
    op.progressTimer ??= later(() => {
      op.progressTimer = null;
      reportProgress(op);
    }, wait);
  }

  function reportProgress(op) {
    const answer = newest(op);
    const now = readText(answer);
    if (op.finished || now.length <= op.chars) return;
    op.chars = now.length;
    op.lastProgress = performance.now();
    reach(op, 'response_progress', { chars: now.length, excerpt: tail(now) });
  }

  // The end of the answer: completed, or stopped when the user pressed the app's stop control.
  function complete(op, by = op.userStopped ? 'user' : null) {
    if (op.finished) return null;
    let full = readText(newest(op));
    const truncated = full.length > MAX_TEXT;
    if (truncated) full = full.slice(0, MAX_TEXT);
    const data = { text: full, total_messages: messages(op) };
    if (truncated) data.truncated = true;
    if (by) data.by = by;
    const m = reach(op, by ? 'response_stopped' : 'response_completed', data);
    finish(op);
    return m;
  }

  // cancel_operation: press the app's stop control (the adapter's `stop`) once the answer
  // streams and the control shows, wait (briefly) for the app to take it away and for the
  // answer to stay as it is — a chunk the app had already received can still be shown after its
  // control went — and end the answer as stopped with what it says then. An app may show its
  // control a moment after the send (Streamlit's comes once its script has run for 500 ms): a
  // cancel that comes before waits for it, up to STOP_SHOW_MS after the send, while the answer
  // is not done. Null when there is nothing to press.
  async function pressStop(op) {
    const ready = () => op.finished || (op.phase === 'streaming' && stopControl(op));
    // The answer may complete meanwhile by its quiet time, which no page change shows: finish()
    // wakes the wait then.
    // An app may also draw its control anew while it streams (a framework re-rendering it),
    // and a loaded machine may catch it between: a moment more then.
    if (!ready() && (op.a.stop || op.a.detected) && op.sentAt !== undefined)
      await waitFor(ready, Math.max(op.sentAt + STOP_SHOW_MS - performance.now(), STOP_REDRAW_MS), (op.wake = {}));
    if (op.finished || op.phase !== 'streaming') return null;
    const control = stopControl(op);
    if (!control) return null;
    op.stopping = true;
    op.pinned ??= newest(op);
    const end = performance.now() + STOP_WAIT_MS;
    control.click();
    await waitFor(() => (stopControl(op) ? null : true), STOP_WAIT_MS);
    let last = readText(newest(op));
    let since = performance.now();
    while (performance.now() - since < STOP_QUIET_MS && performance.now() < end) {
      await new Promise((resolve) => later(resolve, 25));
      const now = readText(newest(op));
      if (now !== last) [last, since] = [now, performance.now()];
    }
    return complete(op, 'cancel_operation');
  }

  // The app's stop control as the user would press it now, or null: the adapter's `stop` (a
  // detected adapter's may stay in the page, hidden, once the app stopped), or for a detected
  // adapter that knew none, the one found while the app answers.
  function stopControl(op) {
    const { stop, detected } = op.a;
    if (!stop) return detected ? foundStop(op) : null;
    return (detected ? scope.all(stop).find(shown) : first(stop)) ?? null;
  }

  function reach(op, milestone, data) {
    const m = { operation_id: op.id, milestone, n: ++op.n, at: performance.timeOrigin + performance.now(), data };
    if (milestone === 'response_progress') op.milestones = op.milestones.filter((x) => x.milestone !== milestone);
    op.milestones.push(m);
    post(m);
    return m;
  }

  // Stop observing; keep the milestones a while for chat.status.
  function finish(op) {
    op.finished = true;
    op.stopFrames?.();
    op.wake?.now?.();
    if (op.observer) scope.unobserve(op.observer);
    if (op.onClick) document.removeEventListener('click', op.onClick, true);
    op.progressTimer?.();
    op.stableTimer?.();
    const done = [...ops.values()].filter((o) => o.finished);
    for (const old of done.slice(0, Math.max(0, done.length - KEEP_FINISHED))) ops.delete(old.id);
  }

  const first = (sel) => scope.first(sel);
  const count = (sel) => scope.count(sel);
  const squash = (s) => (s ?? '').replace(/\s+/g, ' ').trim();
  const loose = (s) => (s ?? '').replace(/[\s*_`#>~]+/g, '');
  const head = (s) => (s.length > EXCERPT ? `${squash(s.slice(0, EXCERPT))}…` : squash(s));
  const tail = (s) => (s.length > EXCERPT ? `…${squash(s.slice(-EXCERPT))}` : squash(s));
})();
