// The one text reader of a chat answer (specs/operations.md, "In the page"): the progress
// excerpts and the final text of an operation both come from it, so they never disagree. Pure —
// it reads nodes through childNodes, nodeType, data, localName, hidden and getAttribute only —
// so `node --test extension/lib/chat-text.test.js` runs it on plain objects. A classic script
// (isolated/chat-observer.js is injected after it into the same world): it defines
// globalThis.tabwireChatText and nothing else.
//
// The text is as innerText would give it — paragraphs, line breaks, list items and table cells
// kept apart — but from the DOM alone: innerText lays the page out first, which cost more than
// the whole way of a milestone to the assistant. Left out: hidden elements (`hidden`,
// `aria-hidden="true"`: an avatar's icon-font ligature such as `smart_toy`), buttons (a code
// block's "Copy"), scripts, styles, svg. Inside <pre>, the text is kept as it is, however a
// syntax highlighter splits it into nodes: its indentation and line breaks stay.
(() => {
  const TEXT = 3;
  const ELEMENT = 1;
  const BLOCK = new Set(['address', 'article', 'aside', 'blockquote', 'dd', 'details', 'div', 'dl', 'dt', 'fieldset',
    'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav',
    'ol', 'pre', 'section', 'summary', 'table', 'tr', 'ul']);
  const SKIP = new Set(['script', 'style', 'noscript', 'template', 'button', 'svg']);

  function readText(root) {
    if (!root) return '';
    // Strings of text (pre: kept verbatim) and {breaks: n} where a block starts or ends.
    const parts = [];
    (function walk(node, pre) {
      for (const child of node.childNodes ?? []) {
        if (child.nodeType === TEXT) {
          parts.push(pre ? { pre: child.data } : child.data.replace(/\s+/g, ' '));
          continue;
        }
        if (child.nodeType !== ELEMENT) continue;
        const tag = child.localName;
        if (SKIP.has(tag) || child.hidden || child.getAttribute?.('aria-hidden') === 'true') continue;
        if (tag === 'br') {
          parts.push({ pre: '\n' });
          continue;
        }
        const around = tag === 'p' ? 2 : BLOCK.has(tag) ? 1 : 0;
        if (around) parts.push({ breaks: around });
        walk(child, pre || tag === 'pre');
        if (around) parts.push({ breaks: around });
        else if (tag === 'td' || tag === 'th') parts.push('\t');
      }
    })(root, false);
    // Runs of required breaks become the largest of them; none at the ends. Spaces around a
    // line break of flowing text go; verbatim text keeps every space it has.
    let out = '';
    let pending = 0;
    for (const part of parts) {
      if (part.breaks) {
        pending = Math.max(pending, part.breaks);
        continue;
      }
      const verbatim = typeof part !== 'string';
      const s = verbatim ? part.pre : part;
      if (s === '') continue;
      // White space between blocks (a markdown renderer's newline between </p> and <p>) is no
      // text: it neither ends a run of breaks nor starts a line.
      if (!verbatim && s.trim() === '' && (pending || out === '' || out.endsWith('\n'))) continue;
      if (pending && out !== '') out = out.replace(/ +$/, '') + '\n'.repeat(pending);
      pending = 0;
      out += !verbatim && (out === '' || out.endsWith('\n')) ? s.replace(/^ +/, '') : s;
    }
    return out.replace(/\s+$/, '').replace(/^\n+/, '');
  }

  globalThis.tabwireChatText = { readText };
})();
