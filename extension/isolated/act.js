// ISOLATED world, every frame of an allowed site: acting on an element as a user would.
//
// Before acting, the target is scrolled into view and hit-tested: when another element is on
// top of its centre, nothing is done and the error names that element. Events are the ones a
// user's input makes, in order (pointer, mouse, focus, key, input, change); they are not
// trusted (`event.isTrusted` is false), which the settle report shows as `effect: "none"` on a
// page that ignores such events.
(() => {
  const ns = (globalThis.tabwireDom ??= {});
  const fail = (code, message) => {
    throw Object.assign(new Error(message), { code });
  };

  // Where the focus is, into open shadow roots.
  const focused = () => {
    let a = document.activeElement;
    while (a?.shadowRoot?.activeElement) a = a.shadowRoot.activeElement;
    return a;
  };
  // Chrome fires focus events only in the focused window's active tab (docs/performance.md,
  // "Pages the user is not looking at"): in any other, `el.focus()` moves activeElement and
  // fires nothing, and apps that open a menu or mark a field from `focus`/`focusin`
  // (react-select opens its menu from the focus its mousedown handler gives) do nothing. So in
  // a document without the focus, each move of the focus while tabwire acts — its own or the
  // page's — gets the events a person's would: blur and focusout where it was, focus and
  // focusin where it is. `focusFrom` at an action's start; `focusMoved` after each step.
  let lastFocus = null;
  ns.focusFrom = () => (lastFocus = focused());
  ns.focusMoved = () => {
    const now = focused();
    const was = lastFocus;
    lastFocus = now;
    if (now === was || document.hasFocus()) return;
    const fire = (el, type, bubbles, related) => el.dispatchEvent(new FocusEvent(type, { bubbles, composed: true, relatedTarget: related }));
    if (was && was !== document.body && was.isConnected) {
      fire(was, 'blur', false, now);
      fire(was, 'focusout', true, now);
    }
    if (now && now !== document.body) {
      fire(now, 'focus', false, was);
      fire(now, 'focusin', true, was);
    }
  };
  const focus = (el, opts = { preventScroll: true }) => {
    el.focus(opts);
    ns.focusMoved();
  };
  ns.focus = focus;

  // A short description of an element for messages: `button "Close" (div#overlay.modal)`.
  ns.describe = (el) => {
    const role = ns.roleOf(el);
    const name = role ? ns.nameOf(el, role) : (el.innerText ?? '').replace(/\s+/g, ' ').trim().slice(0, 60);
    const css = el.localName + (el.id ? `#${el.id}` : '') + [...el.classList].slice(0, 2).map((c) => `.${c}`).join('');
    return `${role ?? 'element'}${name ? ` ${JSON.stringify(name)}` : ''} (${css})`;
  };

  // Whether `inner` is `outer` or inside it, across shadow roots.
  const within = (inner, outer) => {
    for (let n = inner; n; n = n.parentNode ?? n.host) if (n === outer) return true;
    return false;
  };

  // The element a user's click at (x, y) of the viewport lands on, open shadow roots included.
  const hitAt = (x, y) => {
    let hit = document.elementFromPoint(x, y);
    while (hit?.shadowRoot) {
      const deeper = hit.shadowRoot.elementFromPoint(x, y);
      if (!deeper || deeper === hit) break;
      hit = deeper;
    }
    return hit;
  };

  // Which of its parent's frames this document is (`window.frames[i]` there), or -1: how the
  // parent finds the element that holds it (Chrome has no runtime.getFrameId; a WindowProxy
  // compares equal across origins).
  ns.indexInParent = () => {
    for (let i = 0; i < parent.length; i++) if (parent.frames[i] === window) return i;
    return -1;
  };

  // The point (x, y) of child frame `index`'s viewport in this document's viewport, checked:
  // a frame that an element of this document covers there is as covered as an element under
  // an overlay in the frame itself, so the user's click would land on this document's element.
  // Null when no frame element here is that frame (it went meanwhile: the action says so).
  ns.framePoint = (index, { x, y }) => {
    const win = frames[index];
    let frame = null;
    if (win) for (const el of ns.candidates('iframe')) if (el.contentWindow === win) frame = el;
    if (!frame) return null;
    const at = () => {
      const r = frame.getBoundingClientRect();
      const s = getComputedStyle(frame);
      return { x: r.left + frame.clientLeft + parseFloat(s.paddingLeft) + x, y: r.top + frame.clientTop + parseFloat(s.paddingTop) + y };
    };
    let p = at();
    if (p.x < 0 || p.y < 0 || p.x >= innerWidth || p.y >= innerHeight) {
      scrollBy({ left: p.x - innerWidth / 2, top: p.y - innerHeight / 2, behavior: 'instant' });
      p = at();
    }
    const hit = hitAt(p.x, p.y);
    if (hit !== frame) fail('not_actionable', `the frame it is in, ${ns.describe(frame)}, is covered by ${hit ? ns.describe(hit) : 'nothing clickable (outside the page)'} of the page around the frame at the element's centre, so a user's click would land there; nothing was done. Close or dismiss that element first (read_page shows it), or wait_for it to go`);
    return p;
  };

  // Scroll `el` into view and return the point a user would click: its centre, checked.
  ns.target = (el, { hitTest = true } = {}) => {
    if (!el.isConnected) fail('stale_ref', 'the element left the page');
    if (el.disabled || el.getAttribute('aria-disabled') === 'true') fail('not_actionable', `${ns.describe(el)} is disabled; wait for the page to enable it (wait_for), or act on another element`);
    let r = el.getBoundingClientRect();
    if (r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth) {
      el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      r = el.getBoundingClientRect();
    }
    if (r.width === 0 || r.height === 0) fail('not_actionable', `${ns.describe(el)} has no size on screen (hidden or collapsed); open what contains it first`);
    const x = r.left + r.width / 2;
    const y = r.top + r.height / 2;
    if (hitTest) {
      const hit = hitAt(x, y);
      const ok = hit && (within(hit, el) || (hit.localName === 'label' && hit.control === el) || within(el, hit) && hit.localName === 'label');
      if (!ok) fail('not_actionable', `${ns.describe(el)} is covered by ${hit ? ns.describe(hit) : 'nothing clickable (outside the page)'} at its centre, so a user's click would land there; nothing was done. Close or dismiss that element first (read_page shows it), or wait_for it to go`);
    }
    return { x, y };
  };

  const mouse = (type, el, { x, y }, opts = {}) => {
    const init = { bubbles: true, cancelable: true, composed: true, view: window, clientX: x, clientY: y, screenX: x + screenX, screenY: y + screenY, detail: opts.detail ?? 1, button: opts.button ?? 0, buttons: opts.buttons ?? 0, ...opts.mods };
    const pointer = type.startsWith('pointer');
    const ev = pointer ? new PointerEvent(type, { ...init, pointerId: 1, pointerType: 'mouse', isPrimary: true }) : new MouseEvent(type, init);
    return el.dispatchEvent(ev);
  };

  const MODS = { Control: 'ctrlKey', Shift: 'shiftKey', Alt: 'altKey', Meta: 'metaKey' };
  const modifiers = (list = []) => Object.fromEntries(list.map((m) => {
    if (!(m in MODS)) fail('bad_request', `modifier ${JSON.stringify(m)} is not one of Control, Shift, Alt, Meta`);
    return [MODS[m], true];
  }));

  // Click `el`: hover, press, focus, release, click (twice for count 2, with dblclick) — on the
  // element under the pointer at its centre (inside `el`, or its label: ns.target checked), as
  // a person's click targets the innermost element there, whose handlers a page may hold. Each
  // press lands on what is there at that moment: what the first click of a double click drew
  // at the point gets the second, and the dblclick.
  ns.click = (ref, { button = 'left', count = 1, modifiers: mods = [] } = {}) => {
    const at = ns.target(ref);
    let el = hitAt(at.x, at.y) ?? ref;
    const b = { left: 0, middle: 1, right: 2 }[button];
    if (b === undefined) fail('bad_request', '`button` must be left, middle or right');
    const m = modifiers(mods);
    const opts = { button: b, mods: m };
    mouse('pointerover', el, at, opts);
    mouse('mouseover', el, at, opts);
    mouse('pointermove', el, at, opts);
    mouse('mousemove', el, at, opts);
    for (let i = 1; i <= count; i++) {
      if (i > 1) el = hitAt(at.x, at.y) ?? el;
      const o = { ...opts, detail: i, buttons: 1 << b };
      mouse('pointerdown', el, at, o);
      if (mouse('mousedown', el, at, o) && i === 1) focusable(el)?.focus({ preventScroll: true });
      if (i === 1) ns.focusMoved(); // ours, or the one the page's mousedown handler gave
      mouse('pointerup', el, at, { ...opts, detail: i });
      mouse('mouseup', el, at, { ...opts, detail: i });
      if (b === 0) mouse('click', el, at, { ...opts, detail: i });
      else if (b === 2) mouse('contextmenu', el, at, opts);
      else mouse('auxclick', el, at, opts);
    }
    if (count === 2 && b === 0) mouse('dblclick', el, at, { ...opts, detail: 2 });
    return {};
  };

  function focusable(el) {
    for (let n = el; n && n.nodeType === 1; n = n.parentElement) {
      if (n.tabIndex >= 0 || n.isContentEditable || ['input', 'select', 'textarea', 'button', 'a'].includes(n.localName)) return n;
    }
    return null;
  }

  // The value setter of the element's own class, not the instance's: React and Vue replace the
  // instance's `value` property to track it, and only see a value set through the prototype's.
  const nativeSet = (el, prop, value) => {
    const proto = el.localName === 'textarea' ? HTMLTextAreaElement.prototype : el.localName === 'select' ? HTMLSelectElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(proto, prop).set.call(el, value);
  };
  const input = (el, data, inputType = 'insertText') => el.dispatchEvent(new InputEvent('input', { bubbles: true, composed: true, inputType, data }));
  const change = (el) => el.dispatchEvent(new Event('change', { bubbles: true }));

  // Whether fill hit-tests `el` (a user clicks into it first): selects and text fields.
  ns.fillClicksInto = (el) => el.localName === 'select' || el.localName === 'textarea' || (el.localName === 'input' && !['checkbox', 'radio', 'file'].includes(el.type));

  // Set a form control to `value` as a user would leave it. Returns what it now holds.
  // `targeted`: the caller scrolled it into view and hit-tested it already (ns.target).
  ns.fill = (el, value, { targeted = false } = {}) => {
    const tag = el.localName;
    const kind = tag === 'input' ? (el.type || 'text') : tag;
    if (el.readOnly) fail('not_actionable', `${ns.describe(el)} is read-only`);
    if (tag === 'select') {
      if (!targeted) ns.target(el);
      const wanted = Array.isArray(value) ? value.map(String) : [String(value)];
      const options = [...el.options];
      const pick = wanted.map((w) => options.find((o) => o.value === w) ?? options.find((o) => o.label.trim() === w) ?? options.find((o) => o.label.trim().toLowerCase() === w.toLowerCase()));
      const missing = wanted.filter((_, i) => !pick[i]);
      if (missing.length) fail('bad_request', `${ns.describe(el)} has no option ${missing.map((w) => JSON.stringify(w)).join(', ')}; its options are ${options.slice(0, 30).map((o) => JSON.stringify(o.label.trim())).join(', ')}`);
      if (!el.multiple && pick.length > 1) fail('bad_request', `${ns.describe(el)} takes one option; give one value`);
      focus(el);
      for (const o of options) o.selected = pick.includes(o);
      input(el, null, undefined);
      change(el);
      return pick.map((o) => o.label.trim()).join(', ');
    }
    if (kind === 'checkbox' || kind === 'radio') {
      const want = value === true || value === 'true' || value === 'on' || value === 'checked';
      if (kind === 'radio' && !want) fail('bad_request', `${ns.describe(el)} is a radio button: fill the one to choose with true (a radio cannot be unchecked by itself)`);
      if (el.checked !== want) ns.click(el);
      return el.checked;
    }
    if (kind === 'file') fail('bad_request', `${ns.describe(el)} is a file input; use upload_file`);
    if (typeof value !== 'string' && typeof value !== 'number') fail('bad_request', `the value for ${ns.describe(el)} must be text (or true/false for a checkbox)`);
    const text = String(value);
    if (!targeted) ns.target(el); // a field under an overlay is one a user could not click into either
    if (tag === 'input' || tag === 'textarea') {
      focus(el);
      nativeSet(el, 'value', text);
      if (el.value !== text && text !== '') fail('bad_request', `${ns.describe(el)} (an input of type ${kind}) did not take ${JSON.stringify(text)}${kind === 'date' ? ': a date is YYYY-MM-DD' : kind === 'time' ? ': a time is HH:MM' : ''}`);
      input(el, text, 'insertReplacementText');
      change(el);
      return el.value;
    }
    if (el.isContentEditable) {
      focus(el);
      const sel = getSelection();
      sel.selectAllChildren(el);
      // What rich-text editors listen for: the browser's own editing command, which fires
      // beforeinput and input as typing does.
      if (!document.execCommand(text === '' ? 'delete' : 'insertText', false, text)) {
        el.textContent = text;
        input(el, text);
      }
      return el.innerText;
    }
    fail('not_actionable', `${ns.describe(el)} is not a form field (input, textarea, select, checkbox, radio or contenteditable); click it, or fill the field inside it`);
  };

  // Named keys: their `key`, `code` and keyCode. Any other single character is itself.
  const KEYS = {
    Enter: ['Enter', 13], Tab: ['Tab', 9], Escape: ['Escape', 27], Backspace: ['Backspace', 8], Delete: ['Delete', 46],
    ArrowUp: ['ArrowUp', 38], ArrowDown: ['ArrowDown', 40], ArrowLeft: ['ArrowLeft', 37], ArrowRight: ['ArrowRight', 39],
    Home: ['Home', 36], End: ['End', 35], PageUp: ['PageUp', 33], PageDown: ['PageDown', 34], Space: [' ', 32], ' ': [' ', 32],
    Control: ['Control', 17], Shift: ['Shift', 16], Alt: ['Alt', 18], Meta: ['Meta', 91],
  };
  // [plain, with Shift, code, keyCode] of the US layout's character keys.
  const PUNCTUATION = [['1', '!', 'Digit1', 49], ['2', '@', 'Digit2', 50], ['3', '#', 'Digit3', 51], ['4', '$', 'Digit4', 52],
    ['5', '%', 'Digit5', 53], ['6', '^', 'Digit6', 54], ['7', '&', 'Digit7', 55], ['8', '*', 'Digit8', 56], ['9', '(', 'Digit9', 57],
    ['0', ')', 'Digit0', 48], [';', ':', 'Semicolon', 186], ['=', '+', 'Equal', 187], [',', '<', 'Comma', 188], ['-', '_', 'Minus', 189],
    ['.', '>', 'Period', 190], ['/', '?', 'Slash', 191], ['`', '~', 'Backquote', 192], ['[', '{', 'BracketLeft', 219],
    ['\\', '|', 'Backslash', 220], [']', '}', 'BracketRight', 221], ["'", '"', 'Quote', 222]];
  const keyInfo = (name) => {
    if (name in KEYS) return { key: KEYS[name][0], code: name === ' ' || name === 'Space' ? 'Space' : name, keyCode: KEYS[name][1] };
    if ([...name].length === 1) {
      const up = name.toUpperCase();
      if (/[A-Z]/.test(up) && up !== name.toLowerCase()) return { key: name, code: `Key${up}`, keyCode: up.charCodeAt(0), shiftKey: name === up };
      if (/\d/.test(name)) return { key: name, code: `Digit${name}`, keyCode: name.charCodeAt(0) };
      // The key of a US keyboard that gives the character: its keyCode is not the character's
      // code ('(' is 40, ArrowDown's keyCode, which an editor's keymap takes for that key).
      const at = PUNCTUATION.findIndex(([plain, shifted]) => plain === name || shifted === name);
      if (at >= 0) {
        const [plain, , code, keyCode] = PUNCTUATION[at];
        return { key: name, code, keyCode, shiftKey: plain !== name };
      }
      return { key: name, code: '', keyCode: 0 };
    }
    if (/^F([1-9]|1[0-2])$/.test(name)) return { key: name, code: name, keyCode: 111 + Number(name.slice(1)) };
    fail('bad_request', `${JSON.stringify(name)} is not a key tabwire knows: use a single character or one of ${Object.keys(KEYS).filter((k) => k !== ' ').join(', ')}, F1…F12, joined with + (e.g. Control+A)`);
  };
  const key = (el, type, info, mods) => el.dispatchEvent(new KeyboardEvent(type, { ...info, which: info.keyCode, bubbles: true, cancelable: true, composed: true, view: window, ...mods }));

  const active = () => {
    let a = document.activeElement;
    while (a?.shadowRoot?.activeElement) a = a.shadowRoot.activeElement;
    return a ?? document.body;
  };
  const editable = (el) => !!el.editContext || el.isContentEditable || (el.localName === 'textarea') || (el.localName === 'input' && !['checkbox', 'radio', 'button', 'submit', 'reset', 'file', 'image', 'range', 'color'].includes(el.type));

  // Insert `text` where the caret is, as typing does: key events per character, the text
  // through the editing command (contenteditable) or the native setter (inputs).
  function insert(el, text) {
    if (el.editContext) return insertEditContext(el, text);
    for (const ch of text) {
      if (ch === '\n' && el.localName !== 'textarea' && !el.isContentEditable) {
        press(['Enter']);
        continue;
      }
      const info = keyInfo(ch === '\n' ? 'Enter' : ch);
      const go = key(el, 'keydown', info, {});
      if (go) {
        key(el, 'keypress', { ...info, charCode: ch.charCodeAt(0) }, {});
        if (el.isContentEditable) document.execCommand(ch === '\n' ? 'insertParagraph' : 'insertText', false, ch);
        else {
          const start = el.selectionStart ?? el.value.length;
          const end = el.selectionEnd ?? el.value.length;
          const v = el.value;
          nativeSet(el, 'value', v.slice(0, start) + ch + v.slice(end));
          try {
            el.setSelectionRange(start + 1, start + 1);
          } catch {} // types such as email and number have no selection
          input(el, ch);
        }
      }
      key(el, 'keyup', info, {});
    }
  }

  // An element with an EditContext (the API code editors take text through) gets no text from
  // the browser's editing: typing is key events, then the context's text and selection updated
  // and its `textupdate` event, which the editor's handler applies to its document — what the
  // browser does for a key a person presses. Enter is the editor's business (its keydown).
  function insertEditContext(el, text) {
    for (const ch of text) {
      const info = keyInfo(ch === '\n' ? 'Enter' : ch);
      if (key(el, 'keydown', info, {}) && ch !== '\n') {
        key(el, 'keypress', { ...info, charCode: ch.charCodeAt(0) }, {});
        const ec = el.editContext;
        const start = Math.min(ec.selectionStart, ec.selectionEnd);
        const end = Math.max(ec.selectionStart, ec.selectionEnd);
        const caret = start + ch.length;
        ec.updateText(start, end, ch);
        ec.updateSelection(caret, caret);
        ec.dispatchEvent(new TextUpdateEvent('textupdate', { updateRangeStart: start, updateRangeEnd: end, text: ch, selectionStart: caret, selectionEnd: caret }));
      }
      key(el, 'keyup', info, {});
    }
  }

  // Type into `el` (or the focused element): focus it, put the caret at the end, type `text`;
  // `submit` presses Enter after it.
  ns.type = (el, text, submit) => {
    if (el) {
      // An EditContext element may have no size: the editor draws its text elsewhere, in the
      // box around it, which is what a person clicks into.
      let box = el;
      if (el.editContext) while (box.parentElement && box.getBoundingClientRect().width * box.getBoundingClientRect().height === 0) box = box.parentElement;
      ns.target(box);
      focus(el);
      if (el.editContext) {
        // Its text is the editor's, and not all of it: the caret goes to the end as a person
        // sends it there, with the editor's own Control+End.
        press(['Control', 'End']);
      } else if (el.isContentEditable) {
        getSelection().selectAllChildren(el);
        getSelection().collapseToEnd();
        // An editor that keeps its own selection (CodeMirror) takes the DOM's only while its
        // document has the focus; in a window without it, the caret goes with its Control+End.
        if (!document.hasFocus()) press(['Control', 'End']);
      } else if (typeof el.value === 'string') {
        try {
          el.setSelectionRange(el.value.length, el.value.length);
        } catch {}
      }
    }
    const target = active();
    if (!editable(target)) fail('not_actionable', `the focused element ${target === document.body ? '(none: the page body)' : ns.describe(target)} does not take text; give the ref of a text field`);
    insert(target, text);
    if (typeof target.value === 'string' && !target.isContentEditable) change(target);
    if (submit) press(['Enter']);
    return target.editContext ? target.editContext.text : target.isContentEditable ? target.innerText : target.value;
  };

  // Press a chord such as ["Control", "A"] on the focused element, with the browser's default
  // actions for the keys a user relies on: Enter submits a form, Tab moves the focus,
  // Backspace deletes, Control+A selects all.
  function press(chord) {
    const el = active();
    const mods = {};
    for (const m of chord.slice(0, -1)) {
      if (!(m in MODS)) fail('bad_request', `${JSON.stringify(m)} is not a modifier (Control, Shift, Alt, Meta); write chords as Control+A`);
      mods[MODS[m]] = true;
    }
    const last = chord[chord.length - 1];
    const info = keyInfo(last);
    const go = key(el, 'keydown', info, mods);
    if (go) defaults(el, info.key, mods);
    key(el, 'keyup', info, mods);
  }

  function defaults(el, k, mods) {
    const field = typeof el.value === 'string' && el.localName !== 'select';
    if (k === 'Enter' && el.localName === 'input' && el.form) {
      el.form.requestSubmit();
    } else if (k === 'Enter' && (el.localName === 'a' || el.localName === 'button')) {
      el.click();
    } else if (k === 'Tab') {
      const all = [...document.querySelectorAll('a[href], button, input, select, textarea, [tabindex], [contenteditable]')].filter((n) => n.tabIndex >= 0 && !n.disabled && n.checkVisibility?.());
      const i = all.indexOf(el);
      const next = all[(i + (mods.shiftKey ? all.length - 1 : 1)) % all.length];
      if (next) focus(next, {});
    } else if (mods.ctrlKey && k.toLowerCase() === 'a') {
      if (field) el.select?.();
      else if (el.isContentEditable) getSelection().selectAllChildren(el);
    } else if ((k === 'Backspace' || k === 'Delete') && editable(el)) {
      if (el.isContentEditable) document.execCommand(k === 'Backspace' ? 'delete' : 'forwardDelete');
      else {
        let s = el.selectionStart ?? el.value.length;
        let e = el.selectionEnd ?? s;
        if (s === e) k === 'Backspace' ? (s = Math.max(0, s - 1)) : (e += 1);
        nativeSet(el, 'value', el.value.slice(0, s) + el.value.slice(e));
        input(el, null, k === 'Backspace' ? 'deleteContentBackward' : 'deleteContentForward');
      }
    } else if (k === ' ' && (el.localName === 'button' || el.type === 'checkbox' || el.type === 'radio')) {
      el.click();
    } else if (k in CARET && (el.isContentEditable || (editable(el) && !el.editContext))) {
      moveCaret(el, k, mods);
    }
  }

  // The caret keys, as [direction, granularity, granularity with Control or Alt]: what they do
  // in a text field or a contenteditable, carried out by the browser's own selection engine
  // (Selection.modify, which Chromium's editing commands use, also in inputs and textareas).
  const CARET = {
    ArrowLeft: ['backward', 'character', 'word'], ArrowRight: ['forward', 'character', 'word'],
    ArrowUp: ['backward', 'line', 'paragraph'], ArrowDown: ['forward', 'line', 'paragraph'],
    Home: ['backward', 'lineboundary', 'documentboundary'], End: ['forward', 'lineboundary', 'documentboundary'],
    PageUp: ['backward', 'line'], PageDown: ['forward', 'line'],
  };

  function moveCaret(el, k, mods) {
    const [direction, granularity, jump] = CARET[k];
    const alter = mods.shiftKey ? 'extend' : 'move';
    const sel = getSelection();
    if (mods.metaKey && (k === 'ArrowLeft' || k === 'ArrowRight')) sel.modify(alter, direction, 'lineboundary');
    else if (mods.metaKey && (k === 'ArrowUp' || k === 'ArrowDown')) sel.modify(alter, direction, 'documentboundary');
    else if (k === 'PageUp' || k === 'PageDown') {
      // A page: as many lines as the field shows (the window's, for a field taller than it).
      const line = parseFloat(getComputedStyle(el).lineHeight) || 16;
      const lines = Math.max(1, Math.floor(Math.min(el.clientHeight || innerHeight, innerHeight) / line));
      for (let i = 0; i < lines; i++) sel.modify(alter, direction, 'line');
    } else sel.modify(alter, direction, (mods.ctrlKey || mods.altKey) && jump ? jump : granularity);
  }

  // Each key a person presses is a task of its own: the page's handlers of the last key's
  // effects run before the next key — `selectionchange`, from which editors such as
  // ProseMirror learn where the caret went (their Enter acts where they think it is), their
  // mutation observers, their promises. So between keys: the selectionchange the key caused,
  // if any (at most 100 ms), then a task of the page's.
  async function afterKey(before) {
    const sel = getSelection();
    const now = sel.rangeCount ? sel.getRangeAt(0) : null;
    const same = (a, b) => a === b || (a && b && a.startContainer === b.startContainer && a.startOffset === b.startOffset && a.endContainer === b.endContainer && a.endOffset === b.endOffset);
    if (!same(before, now)) {
      await new Promise((resolve) => {
        // clock.js's timer, which keeps time in a background tab too.
        const cancel = globalThis.tabwireLater(resolve, 100);
        document.addEventListener('selectionchange', () => (cancel(), resolve()), { once: true, capture: true });
      });
    }
    await new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = resolve;
      channel.port2.postMessage(0);
    });
  }

  // Where the caret and selection are, in the focused element (a field's, an EditContext's) or
  // the document: what caret keys change without changing a line of the page.
  ns.caret = () => {
    const el = active();
    if (el.editContext) return [el, el.editContext.selectionStart, el.editContext.selectionEnd];
    if (typeof el.selectionStart === 'number') return [el, el.selectionStart, el.selectionEnd, el.selectionDirection];
    const sel = getSelection();
    return [el, sel.anchorNode, sel.anchorOffset, sel.focusNode, sel.focusOffset];
  };
  ns.sameCaret = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);

  const selected = () => {
    const sel = getSelection();
    return sel.rangeCount ? sel.getRangeAt(0).cloneRange() : null;
  };

  ns.press = async (keys) => {
    if (typeof keys !== 'string' || keys === '') fail('bad_request', '`keys` must name a key or chord, e.g. "Enter" or "Control+A"');
    const chords = keys.split(' ').filter(Boolean);
    for (const [i, c] of chords.entries()) {
      const before = selected();
      press(c === '+' ? ['+'] : c.split(/\+(?!$)/));
      if (i < chords.length - 1) await afterKey(before);
    }
  };
})();
