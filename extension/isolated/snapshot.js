// ISOLATED world, every frame of an allowed site: the page as lines for the assistant.
//
//   heading "Sign up" [level=1]
//   form "Sign up"
//     textbox "Email" [ref=e4] [value="a@b.c"] [required]
//     button "Create account" [ref=e5] [disabled]
//
// One line per element with a role, indented by nesting; generic wrappers (div, span…) are
// dropped and their children moved up; hidden elements are left out. What the page wrote
// (names, values, text) is always quoted with JSON escapes (`quote`), so page text cannot pass
// for a line or a ref (JSON escapes every control character, so the \u0001 before each ref, where
// the worker writes the frame's prefix, comes only from here); the only other words of the page
// in a line are its role, one ARIA knows, and a heading's level, a number. Open shadow roots are
// walked as if they were the host's children; an iframe is a line whose frame the worker reads
// and nests below it (worker/dom.js).
(() => {
  const ns = (globalThis.tabwireDom ??= {});
  ns.shadows = new Set(); // open shadow roots seen, for the action's MutationObserver (agent.js)
  const NAME_MAX = 100; // characters of a name or value shown; the rest is "…"
  const TEXT_MAX = 300; // characters of one text line in full mode

  const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title', 'br', 'wbr']);
  const INPUT_ROLE = {
    button: 'button', submit: 'button', reset: 'button', image: 'button', checkbox: 'checkbox', radio: 'radio',
    range: 'slider', number: 'spinbutton', search: 'searchbox', file: 'button', hidden: null,
  };
  const TAG_ROLE = {
    button: 'button', summary: 'button', textarea: 'textbox', option: 'option', img: 'img', nav: 'navigation',
    main: 'main', header: 'banner', footer: 'contentinfo', aside: 'complementary', article: 'article',
    form: 'form', ul: 'list', ol: 'list', li: 'listitem', table: 'table', tr: 'row', td: 'cell', th: 'columnheader',
    dialog: 'dialog', iframe: 'iframe', frame: 'iframe', details: 'group', fieldset: 'group', progress: 'progressbar',
    h1: 'heading', h2: 'heading', h3: 'heading', h4: 'heading', h5: 'heading', h6: 'heading', p: 'paragraph',
    label: 'label', hr: 'separator', video: 'video', audio: 'audio', meter: 'meter', output: 'status', menu: 'list',
  };
  // Roles whose element can be acted on: these always get a ref and a line in every mode.
  const INTERACTIVE = new Set(['button', 'link', 'textbox', 'searchbox', 'checkbox', 'radio', 'combobox', 'listbox', 'option',
    'slider', 'spinbutton', 'switch', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'treeitem', 'gridcell']);
  // Controls that may hold other controls (see `walk`), and what counts as one.
  const HOLDS = new Set(['listbox', 'gridcell', 'treeitem', 'menuitem']);
  const CONTROL = 'input, select, textarea, button, a[href], [contenteditable]:not([contenteditable="false"]), [role], [tabindex]';
  // What makes an element a container of controls rather than one (see `pointed` in `walk`).
  const ACTIONABLE = `input:not([type="hidden"]), select, textarea, button, a[href], [contenteditable]:not([contenteditable="false"]), ${
    [...INTERACTIVE].map((r) => `[role="${r}"]`).join(', ')}`;
  // Structural roles a page may make clickable with a handler (a date picker's days are cells,
  // a sortable column's header, a menu's list items): then they are controls, with a ref, in
  // every mode, as an element with no role and a pointer cursor is.
  const POINTABLE = new Set(['cell', 'columnheader', 'rowheader', 'listitem', 'row']);
  // Shown in interactive mode too, for context: where the controls are.
  const LANDMARK = new Set(['heading', 'form', 'dialog', 'alertdialog', 'navigation', 'main', 'iframe', 'alert', 'status', 'tablist', 'menu', 'toolbar']);
  // Context lines that are read, never acted on or used as a `root`: in interactive mode they
  // carry no ref (a ref there cost tokens and said nothing; `find` and full mode give one).
  const READ_ONLY = new Set(['heading', 'alert', 'status']);
  // Named from their content when nothing else names them.
  const NAMED_BY_CONTENT = new Set(['button', 'link', 'heading', 'option', 'tab', 'menuitem', 'cell', 'columnheader', 'listitem',
    'treeitem', 'label', 'gridcell', 'switch', 'checkbox', 'radio', 'status', 'alert', 'tooltip']);

  // Roles of WAI-ARIA 1.2 (with DPUB's doc-* and graphics-*): a page's role attribute counts
  // by its first token in this list, as browsers read it, so a line never starts with words
  // of the page's choosing.
  const ARIA_ROLES = new Set(('alert alertdialog application article banner blockquote button caption cell checkbox code ' +
    'columnheader combobox comment complementary contentinfo definition deletion dialog directory document emphasis feed ' +
    'figure form generic grid gridcell group heading image img insertion link list listbox listitem log main mark marquee ' +
    'math menu menubar menuitem menuitemcheckbox menuitemradio meter navigation none note option paragraph presentation ' +
    'progressbar radio radiogroup region row rowgroup rowheader scrollbar search searchbox separator slider spinbutton ' +
    'status strong subscript suggestion superscript switch tab table tablist tabpanel term textbox time timer toolbar ' +
    'tooltip tree treegrid treeitem').split(' '));
  const isRole = (r) => ARIA_ROLES.has(r) || /^(doc|graphics)-[a-z]+$/.test(r);

  // The page's words in a line: JSON quotes, and the controls JSON lets through (DEL, C1 with
  // its NEL) and U+2028, U+2029 escaped too, so the words stay on their line for every reader
  // and inert on a terminal (bridge/src/mcp/reply.rs, `one_line`).
  const quote = (s) => JSON.stringify(s).replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const clip = (s, max = NAME_MAX) => {
    if (s.length <= max) return s;
    keep(s);
    return `${s.slice(0, max - 1)}…`;
  };
  // What a line shows less of than there is (cut, or its line breaks squashed), kept with the
  // line for a snapshot taken with `exact` (the one an action's changes are found on): typing
  // past a value's 100th character, or Enter splitting a paragraph of an editor, changes the
  // page even when the line reads the same.
  let exact = false;
  let kept = '';
  const keep = (raw) => {
    if (exact) kept += `\u0000${raw}`;
  };
  // Names and text as a person reads them: whitespace runs as one space, characters that take
  // no room on screen (zero-width spaces…) gone (lib/name-text.js, injected before this file).
  const { contentText, normalize: squash, INVISIBLE } = globalThis.tabwireNameText;
  // A value as the field holds it, on one line: every character of it is the user's.
  const oneLine = (s) => (s ?? '').replace(/\s+/g, ' ').trim();

  // For an action's changes (lib/change-report.js): a row's place among its table's rows
  // (aria-rowindex, from 1) and how many rows a table has (aria-rowcount, header rows
  // included; -1 when unknown), which a grid that draws only the rows in view says.
  const places = (line, el, role) => {
    if (role === 'row' && el.hasAttribute('aria-rowindex')) line.i = rowIndex(el);
    if ((role === 'grid' || role === 'treegrid' || role === 'table') && el.hasAttribute('aria-rowcount')) line.n = Number.parseInt(el.getAttribute('aria-rowcount'), 10);
  };

  // The computed display of an element, kept for the length of one snapshot (names nest: a
  // list item's name reads the same elements as the link in it).
  let displays = null;
  const displayOf = (el) => {
    let d = displays?.get(el);
    if (d === undefined) {
      d = getComputedStyle(el).display;
      displays?.set(el, d);
    }
    return d;
  };
  // An element's content as a name: its text, with the spaces a person sees between the boxes
  // it is laid out in. `skip`: an element left out (a label's control).
  const textOf = (el, skip = null) => contentText(el, { display: displayOf, max: NAME_MAX, skip });

  ns.roleOf = (el) => {
    const explicit = el.getAttribute('role')?.trim().toLowerCase().split(/\s+/).find(isRole);
    if (explicit && explicit !== 'presentation' && explicit !== 'none' && explicit !== 'generic') return explicit;
    const tag = el.localName;
    if (tag === 'a' || tag === 'area') return el.hasAttribute('href') ? 'link' : null;
    if (tag === 'input') {
      const type = (el.getAttribute('type') || 'text').toLowerCase();
      if (type in INPUT_ROLE) return INPUT_ROLE[type];
      return el.hasAttribute('list') ? 'combobox' : 'textbox';
    }
    if (tag === 'select') return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
    if (tag === 'section' && (el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby'))) return 'region';
    if (el.isContentEditable && (el.parentElement === null || !el.parentElement.isContentEditable)) return 'textbox';
    return TAG_ROLE[tag] ?? null;
  };

  ns.nameOf = (el, role = ns.roleOf(el)) => {
    const labelled = el.getAttribute('aria-labelledby');
    if (labelled) {
      const root = el.getRootNode();
      const text = labelled.split(/\s+/).map((id) => {
        const label = root.getElementById?.(id);
        return label ? textOf(label) : '';
      }).join(' ');
      if (squash(text)) return clip(squash(text));
    }
    const aria = squash(el.getAttribute('aria-label'));
    if (aria) return clip(aria);
    const labels = labelsOf(el);
    if (labels.length) {
      const text = squash(labels.map((l) => textOf(l, (n) => n === el || n.localName === 'select' || n.localName === 'textarea')).join(' '));
      if (text) return clip(text);
    }
    const tag = el.localName;
    if (tag === 'img' || (tag === 'input' && el.type === 'image')) return clip(squash(el.getAttribute('alt')));
    if (tag === 'input' && ['button', 'submit', 'reset'].includes(el.type)) return clip(squash(el.value || (el.type === 'submit' ? 'Submit' : '')));
    if (tag === 'iframe') return clip(squash(el.getAttribute('title') || el.getAttribute('name') || ''));
    if (tag === 'fieldset') {
      const legend = el.querySelector(':scope > legend');
      return legend ? clip(textOf(legend)) : '';
    }
    if (tag === 'form' || tag === 'dialog' || tag === 'section') return '';
    if (NAMED_BY_CONTENT.has(role)) {
      // Not innerText, which lays the subtree out again for every element: that made a
      // 5,000-element page several times slower to read. The computed displays are enough.
      const text = textOf(el);
      if (text) return clip(text);
    }
    return clip(squash(el.getAttribute('title') || el.getAttribute('placeholder') || ''));
  };

  // The name a snapshot line shows for `el` (refs.js re-binds a ref by it). `pointed`: made a
  // control by a handler alone (see `walk`) — named as a button would be, unless it holds
  // controls: then it is a container made focusable or clickable as a whole (a date picker's
  // panel of day buttons, a custom select's box around its field), whose content is those
  // controls, each a line of its own, not one name of all their text.
  ns.lineName = (el, role, pointed = role === 'clickable' || (POINTABLE.has(role) && clickable(el))) => {
    if (!pointed) return ns.nameOf(el, role);
    return ns.nameOf(el, el.querySelector(ACTIONABLE) ? 'group' : 'button');
  };

  // An element's labels. `el.labels` searches the whole document on every call, which made
  // reading a page of 1,000 inputs quadratic; during a snapshot they come from one pass.
  let labelIndex = null; // control → [label], for the document (not shadow roots)
  function labelsOf(el) {
    if (!('labels' in el)) return [];
    if (labelIndex && el.getRootNode() === document) return labelIndex.get(el) ?? [];
    return [...(el.labels ?? [])];
  }
  function indexLabels() {
    labelIndex = new Map();
    for (const l of document.querySelectorAll('label')) {
      const c = l.control;
      if (c) labelIndex.set(c, [...(labelIndex.get(c) ?? []), l]);
    }
  }

  // Elements that may have `role` ("clickable": any without a role): for re-binding a ref
  // (refs.js).
  ns.candidates = function* (role) {
    const stack = [document.documentElement];
    while (stack.length) {
      const el = stack.pop();
      if (!el) continue;
      if ((ns.roleOf(el) ?? 'clickable') === role) yield el;
      if (el.shadowRoot) stack.push(...el.shadowRoot.children);
      stack.push(...el.children);
    }
  };

  // What a control holds and how it is: `[value="…"] [checked] [disabled]`…
  function states(el, role) {
    const out = [];
    const tag = el.localName;
    if (role === 'heading') out.push(`[level=${/^h[1-6]$/.test(tag) ? tag[1] : Number.parseInt(el.getAttribute('aria-level'), 10) || 2}]`);
    // First, right after the ref: where an action's report finds it (lib/change-report.js).
    if (role === 'columnheader' || role === 'rowheader') {
      const sort = el.getAttribute('aria-sort');
      if (sort === 'ascending' || sort === 'descending') out.push(`[sort=${sort}]`);
    }
    if (role === 'checkbox' || role === 'radio' || role === 'switch' || role === 'menuitemcheckbox') {
      const checked = 'checked' in el && tag === 'input' ? el.checked : el.getAttribute('aria-checked') === 'true';
      if (checked) out.push('[checked]');
    }
    if (tag === 'select') {
      const chosen = [...el.selectedOptions].map((o) => oneLine(o.label || o.textContent));
      out.push(`[value=${quote(clip(chosen.join(', ')))}]`);
    } else if ((tag === 'input' || tag === 'textarea') && !['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file'].includes(el.type)) {
      const v = el.type === 'password' ? (el.value ? '••••' : '') : el.value;
      keep(el.value);
      if (v) out.push(`[value=${quote(clip(oneLine(v)))}]`);
      else if (el.placeholder && labelsOf(el).length) out.push(`[placeholder=${quote(clip(squash(el.placeholder)))}]`);
    } else if (role === 'textbox' && el.isContentEditable) {
      const raw = el.innerText;
      const v = squash(raw);
      if (v) out.push(`[value=${quote(clip(v))}]`);
      keep(raw);
    }
    if (tag === 'input' && el.type === 'file' && el.files?.length) out.push(`[files=${quote([...el.files].map((f) => f.name).join(', '))}]`);
    if (el.disabled || el.getAttribute('aria-disabled') === 'true') out.push('[disabled]');
    if (el.required) out.push('[required]');
    if (el.readOnly && (tag === 'input' || tag === 'textarea')) out.push('[readonly]');
    const expanded = el.getAttribute('aria-expanded');
    if (expanded) out.push(expanded === 'true' ? '[expanded]' : '[collapsed]');
    if (el.getAttribute('aria-selected') === 'true' || (tag === 'option' && el.selected)) out.push('[selected]');
    if (el.getAttribute('aria-pressed') === 'true') out.push('[pressed]');
    if (el === document.activeElement && el !== document.body) out.push('[focused]');
    if (role === 'link') {
      const href = el.getAttribute('href');
      if (href && !href.startsWith('javascript:')) out.push(`[url=${quote(clip(href, 120))}]`);
    }
    return out;
  }

  // The text a person sees on a control named otherwise by `aria-label` (a date picker's
  // `button "Choose a month"` that shows "Nov"), when the name does not say it: the model
  // reads what the user sees. Empty for the rest.
  function shownText(el, role, name) {
    if (!NAMED_BY_CONTENT.has(role === 'clickable' ? 'button' : role)) return '';
    if (!el.hasAttribute('aria-label') && !el.hasAttribute('aria-labelledby')) return '';
    const text = textOf(el);
    return text && !name.toLowerCase().includes(text.toLowerCase()) ? clip(text) : '';
  }

  function visible(el) {
    if (el.hidden || el.getAttribute('aria-hidden') === 'true') return false;
    return rendered(el);
  }

  // Drawn on screen: has a box, not display:none, not visibility:hidden (whatever ARIA says).
  function rendered(el) {
    return el.checkVisibility ? el.checkVisibility({ visibilityProperty: true }) : el.getClientRects().length > 0;
  }

  // An element's children in the order a person sees them: rows that say their place
  // (aria-rowindex) by it. A data grid draws its rows in any order and places each on screen
  // by itself (AG Grid keeps a row's element where it is when the rows are sorted).
  function inRowOrder(el) {
    const kids = el.childNodes;
    if (kids.length < 2 || !el.firstElementChild?.hasAttribute('aria-rowindex')) return kids;
    const all = [...kids];
    const at = [];
    for (let i = 0; i < all.length; i++) if (all[i].nodeType === 1 && all[i].hasAttribute('aria-rowindex')) at.push(i);
    const rows = at.map((i) => all[i]).sort((a, b) => rowIndex(a) - rowIndex(b));
    at.forEach((i, n) => (all[i] = rows[n]));
    return all;
  }
  const rowIndex = (el) => Number.parseInt(el.getAttribute('aria-rowindex'), 10) || 0;

  const hasArea = (el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };

  // A div or span the page made clickable with a handler: the pointer cursor is the only sign
  // left in the DOM (frameworks attach their listeners to the root). Checked only for elements
  // with no role, and only where the cursor is not inherited.
  function clickable(el) {
    if (el.hasAttribute('onclick') || el.tabIndex >= 0) return true;
    const cursor = getComputedStyle(el).cursor;
    return cursor === 'pointer' && (!el.parentElement || getComputedStyle(el.parentElement).cursor !== 'pointer');
  }

  // The lines of the document (or of the subtree at `root`): [{d: depth, t: text, v: in the
  // viewport, f?: {n, src} of an iframe, k?: what it shows less of, i?/n?: a row's place and a
  // table's rows (`places`) — these with `exact`}]. Rows are in the order their aria-rowindex
  // says (`inRowOrder`).
  // `mode`: interactive | full.
  ns.snapshot = (mode, rootEl = document.body ?? document.documentElement, limit = 20000, { exact: whole = false } = {}) => {
    const lines = [];
    let frames = 0;
    const vw = innerWidth;
    const vh = innerHeight;
    const full = mode === 'full';
    let named = ''; // the name of the line at `namedAt`
    let namedAt = -1;
    const emit = (d, t, el, f) => {
      const r = el?.getBoundingClientRect?.();
      const v = r ? r.bottom > 0 && r.right > 0 && r.top < vh && r.left < vw : true;
      const line = { d, t, v };
      if (f !== undefined) line.f = f;
      if (kept) line.k = kept;
      kept = '';
      lines.push(line);
    };
    // Full mode's text: the words of one block — a chat bubble's sentence around its inline
    // code, a paragraph's emphasis and links without a role — as one line, as a person reads
    // them, not a line per text node. `run` gathers them until something that is not inline
    // (a block, a line break, a line of its own) comes.
    let run = null; // {d, raw, el}
    const texts = new Map(); // a text line → its text, for `fold`
    const flush = () => {
      if (!run) return;
      const { d, raw, el } = run;
      run = null;
      const text = squash(raw);
      // The text under a line named by it (`cell "7"`, `clickable "Japan"`, a list item named
      // by its words) says it again: left out.
      if (!text || (text === named && lines.length === namedAt + 1)) return;
      kept = '';
      emit(d, `text ${quote(clip(text, TEXT_MAX))}`, el);
      texts.set(lines[lines.length - 1], text);
    };
    const inline = (el) => {
      const d = displayOf(el);
      return d === 'inline' || d === 'contents' || d === '';
    };
    // A line with no name whose whole content is one text line (`paragraph` then `text "…"`)
    // reads as one line, the text in its name's place: `paragraph "…" [ref=e4]`.
    const fold = (at, role, d) => {
      const only = lines[at + 1];
      if (lines.length !== at + 2 || only.d !== d || !texts.has(only)) return;
      const line = lines[at];
      line.t = `${role} ${quote(clip(texts.get(only), TEXT_MAX))}${line.t.slice(role.length)}`;
      if (only.k) line.k = (line.k ?? '') + only.k;
      lines.pop();
    };
    const walk = (node, depth, hidden) => {
      if (lines.length >= limit) return;
      kept = '';
      if (node.nodeType === 3) {
        if (!full || hidden) return;
        if (run && run.d !== depth) flush();
        if (run) run.raw += node.data;
        else run = { d: depth, raw: node.data, el: node.parentElement };
        return;
      }
      if (node.nodeType !== 1 && node.nodeType !== 11) return;
      if (node.nodeType === 11) {
        for (const c of node.childNodes) walk(c, depth, hidden);
        return;
      }
      const el = node;
      if (el.localName === 'br') flush();
      if (SKIP.has(el.localName)) return;
      if (full && el.getAttribute('aria-hidden') === 'true' && !el.hidden && rendered(el)) {
        flush();
        // Hidden from screen readers, not from the eye: code editors draw their text in
        // aria-hidden layers and give assistive technology a hidden text field instead. The
        // model reads what the user sees, line by line as laid out, marked as such. An SVG
        // element (an icon library's aria-hidden <svg>) has no innerText: its text as written.
        for (const line of (el.innerText ?? el.textContent).split('\n')) {
          const text = line.replace(INVISIBLE, '').replace(/\s+$/, '').replace(/\u00a0/g, ' ');
          if (text.trim() && lines.length < limit) emit(depth, `text ${quote(clip(text, TEXT_MAX))} [aria-hidden]`, el);
        }
        return;
      }
      if (!visible(el)) {
        // display:contents and slots have no box but show their children
        if (getComputedStyle(el).display !== 'contents' && el.localName !== 'slot') return;
      }
      let role = ns.roleOf(el);
      let interactive = INTERACTIVE.has(role);
      // In full mode too (what `find` searches and an action's changes are told from): a
      // custom select's options are often such divs, and one the model finds must be one it
      // can click. `pointed`: made a control by the page's handler alone, so what it holds is
      // still walked (it may hold controls of its own).
      let pointed = false;
      if ((!role || POINTABLE.has(role)) && clickable(el)) {
        role ??= 'clickable';
        interactive = true;
        pointed = true;
      }
      const show = role && (full ? role !== 'label' || !el.control : interactive || LANDMARK.has(role));
      if (run && (show || !inline(el))) flush(); // not part of the text before it
      const at = lines.length; // this element's line, if it is shown
      let d = depth;
      let context = -1; // the index of an interactive-mode context line, dropped if it says nothing
      if (show) {
        const name = ns.lineName(el, role, pointed);
        const parts = [role];
        if (name) parts.push(quote(name));
        if (full || !READ_ONLY.has(role)) parts.push(`[ref=\u0001${ns.refFor(el, role, name)}]`);
        parts.push(...states(el, role));
        const shown = shownText(el, role, name);
        if (shown) parts.push(`[text=${quote(shown)}]`);
        if (!full && !interactive && !name) context = lines.length;
        if (role === 'iframe') {
          // The worker matches it to its frame by address, else by order (lib/snapshot-text.js,
          // childFrames).
          emit(depth, parts.join(' '), el, { n: frames++, src: el.src || 'about:blank' });
          return;
        }
        emit(depth, parts.join(' '), el);
        if (exact) places(lines[lines.length - 1], el, role);
        named = name;
        namedAt = lines.length - 1;
        d = depth + 1;
        // A control's own text is its name: do not repeat it as text lines. But a list box's
        // options, a grid cell's editor or checkbox, a tree item's own items are controls of
        // their own, which a person sees and uses: those are walked into (not the options of
        // a list box drawn at no size, kept for screen readers beside the one on screen).
        if (interactive && !pointed && !el.shadowRoot && el.localName !== 'select' && !(HOLDS.has(role) && el.querySelector(CONTROL) && hasArea(el))) return;
      }
      if (el.localName === 'slot') {
        const assigned = el.assignedNodes({ flatten: true });
        for (const c of assigned.length ? assigned : el.childNodes) walk(c, d, hidden);
        return;
      }
      if (el.shadowRoot) {
        ns.shadows.add(el.shadowRoot);
        walk(el.shadowRoot, d, hidden);
      }
      else for (const c of inRowOrder(el)) walk(c, d, hidden);
      if (run && (show || !inline(el))) flush();
      if (full && show && lines[at]?.t.startsWith(`${role} [`)) fold(at, role, d);
      // An unnamed landmark with no control inside (an empty status line, a form of text):
      // context for nothing.
      if (context >= 0 && lines.length === context + 1) lines.pop();
    };
    indexLabels();
    displays = new Map();
    exact = whole;
    try {
      walk(rootEl, 0, false);
      flush();
    } finally {
      labelIndex = null;
      displays = null;
      exact = false;
      kept = '';
    }
    return { lines, truncated: lines.length >= limit };
  };

  // The readable text of the page as markdown: headings, paragraphs, lists, links.
  ns.text = (rootEl = document.body) => {
    const out = [];
    let inline = '';
    const flush = () => {
      const t = squash(inline);
      if (t) out.push(t);
      inline = '';
    };
    const walk = (node, list) => {
      if (node.nodeType === 3) {
        inline += node.data;
        return;
      }
      if (node.nodeType === 11) return node.childNodes.forEach((c) => walk(c, list));
      if (node.nodeType !== 1) return;
      const el = node;
      if (SKIP.has(el.localName) || !visible(el)) return;
      const tag = el.localName;
      const kids = () => (el.shadowRoot ?? el).childNodes.forEach((c) => walk(c, list));
      if (/^h[1-6]$/.test(tag)) {
        flush();
        out.push(`${'#'.repeat(Number(tag[1]))} ${squash(el.innerText)}`);
      } else if (tag === 'a' && el.hasAttribute('href')) {
        inline += ` [${squash(el.innerText)}](${el.getAttribute('href')}) `;
      } else if (tag === 'li') {
        flush();
        kids();
        const t = squash(inline);
        inline = '';
        if (t) out.push(`- ${t}`);
      } else if (tag === 'img') {
        const alt = squash(el.alt);
        if (alt) inline += ` ![${alt}] `;
      } else if (tag === 'input' || tag === 'textarea' || tag === 'select') {
        // controls are read_page's business
      } else if (getComputedStyle(el).display.startsWith('inline')) {
        kids();
      } else {
        flush();
        kids();
        flush();
      }
    };
    walk(rootEl, false);
    flush();
    return out.join('\n');
  };
})();
