// ISOLATED world, top frame, injected with isolated/chat-observer.js (worker/chat.js): the
// page side of the generic chat detector (specs/operations.md, "A detected adapter"). It
// describes the page's visible text boxes and its controls — in the document and its open shadow
// roots (lib/deep-dom.js) — for lib/chat-detect.js to judge, and names what was chosen with CSS
// selectors that find exactly that element. It reads the page and changes nothing; what the
// page says (labels, names) is only compared against a few words, never acted upon.
(() => {
  if (globalThis.tabwireDetectChat) return;
  const { Scope } = globalThis.tabwireDeepDom;
  const { propose, lastingClass } = globalThis.tabwireChatDetect;
  const BOXES = 'textarea, input, [contenteditable]:not([contenteditable="false"]), [role="textbox"]';
  const CONTROLS = 'button, [role="button"], input[type="submit"], input[type="button"]';
  const TEXT_INPUTS = new Set(['', 'text', 'search']);

  globalThis.tabwireDetectChat = () => {
    const scope = new Scope(document);
    const viewport = { w: innerWidth, h: innerHeight };
    const rectOf = (el) => {
      const r = el.getBoundingClientRect();
      return { x: Math.round(r.x), y: Math.round(r.y), w: Math.round(r.width), h: Math.round(r.height) };
    };
    const shown = (el) => el.checkVisibility({ visibilityProperty: true }) && el.getClientRects().length > 0;
    const els = new Map(); // id → element
    const idOf = (el, prefix) => {
      const id = `${prefix}${els.size + 1}`;
      els.set(id, el);
      return id;
    };

    const boxes = [];
    for (const el of scope.all(BOXES)) {
      if (el.localName === 'input' && !TEXT_INPUTS.has(el.type)) continue;
      if (el.disabled || el.readOnly || !shown(el)) continue;
      if (el.localName !== 'textarea' && el.localName !== 'input' && !el.isContentEditable) continue;
      if (el.parentElement?.isContentEditable) continue; // inside the editable that is the box
      const kind = el.localName === 'textarea' ? 'textarea' : el.localName === 'input' ? 'input' : 'editable';
      boxes.push({ id: idOf(el, 'b'), kind, label: labelOf(el), rect: rectOf(el), viewport });
    }
    const controls = [];
    for (const el of scope.all(CONTROLS)) {
      const visible = shown(el);
      controls.push({
        id: idOf(el, 'c'),
        name: nameOf(el),
        hint: hintOf(el),
        kind: el.type === 'submit' && el.form ? 'submit' : 'button',
        visible,
        sameForm: !!el.form,
        rect: visible ? rectOf(el) : null,
      });
    }
    for (const c of controls) c.sameForm = c.sameForm && boxes.some((b) => els.get(b.id).form === els.get(c.id).form);

    const got = propose({ boxes, controls });
    const sel = (id) => (id && id !== 'enter' ? selectorFor(els.get(id), scope) : id);
    const input = sel(got.input);
    const submit = sel(got.submit);
    const stop = sel(got.stop);
    const notes = [...got.notes];
    for (const [field, id, s] of [['input', got.input, input], ['submit', got.submit, submit], ['stop', got.stop, stop]])
      if (id && !s) notes.push(`no selector finds only the ${field} it chose`);
    return {
      input,
      submit,
      stop,
      generating: stop, // the stop control, while it shows
      clear: got.clear && notes.length === 0 && !!input && !!submit,
      notes,
      boxes: boxes.length,
      controls: controls.length,
    };
  };

  // One control as the detector's rules see it (`lib/chat-detect.js` `isStop`): the chat
  // observer asks it of the controls that come or change while an answer is written, to find
  // an app's stop control that shows only then (Deep Chat's send button turns into one).
  globalThis.tabwireChatControl = { selector: CONTROLS, describe: (el) => ({ name: nameOf(el), hint: hintOf(el) }) };

  function labelOf(el) {
    const by = el.getAttribute('aria-labelledby');
    const named = by ? by.split(/\s+/).map((id) => el.getRootNode().getElementById?.(id)?.textContent ?? '').join(' ') : '';
    const labels = [...(el.labels ?? [])].map((l) => l.textContent).join(' ');
    return squash(el.getAttribute('aria-label') || named || labels || el.getAttribute('placeholder') || el.getAttribute('aria-placeholder') || el.getAttribute('data-placeholder') || el.title || '');
  }

  function nameOf(el) {
    return squash(el.getAttribute('aria-label') || el.title || (el.localName === 'input' ? el.value : el.textContent) || '').slice(0, 80);
  }

  // Its id and classes, and those of the few elements it holds (an icon says what it does).
  function hintOf(el) {
    const parts = [el.id, el.getAttribute('class') ?? '', el.getAttribute('data-testid') ?? ''];
    for (const inner of [...el.querySelectorAll('[id], [class], img[alt]')].slice(0, 8))
      parts.push(inner.id, inner.getAttribute('class') ?? '', inner.getAttribute('alt') ?? '');
    return squash(parts.join(' ')).slice(0, 300);
  }

  // A selector that finds `el` and nothing else in the page (its shadow roots included): its
  // id, else its tag and lasting classes (lib/chat-detect.js `lastingClass`: no state, no
  // build hash), else an attribute that names it, else null.
  function selectorFor(el, scope) {
    const only = (s) => {
      try {
        return scope.count(s) === 1 && scope.first(s) === el;
      } catch {
        return false;
      }
    };
    if (el.id && !/\d{3,}/.test(el.id) && only(`#${CSS.escape(el.id)}`)) return `#${CSS.escape(el.id)}`;
    const classes = [...el.classList].filter(lastingClass).map((c) => `.${CSS.escape(c)}`);
    const tagged = el.localName + classes.join('');
    if (classes.length && only(tagged)) return tagged;
    for (const attr of ['aria-label', 'placeholder', 'name', 'data-testid', 'title']) {
      const v = el.getAttribute(attr);
      if (!v) continue;
      const s = `${el.localName}[${attr}="${CSS.escape(v)}"]`;
      if (only(s)) return s;
    }
    return null;
  }

  function squash(s) {
    return (s ?? '').replace(/\s+/g, ' ').trim();
  }
})();
