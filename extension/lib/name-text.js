// An element's name from its content, as a person reads it (isolated/snapshot.js): its text,
// with a space between the pieces the page lays out as boxes of their own — blocks, flex and
// grid items, inline-blocks, table cells, line breaks — where textContent glues them together
// (`GET/pets/{petId}Find a pet by id` for three boxes side by side), and without the characters
// that take no room on screen (zero-width spaces, word joiners, soft hyphens). Hidden parts
// (`hidden`, display none, and `aria-hidden="true"`: an icon font's ligature such as `close`)
// are left out, as in an accessible name; a part with its own `aria-label`, or an image, counts
// as that label or its `alt`.
//
// Pure — it reads nodes through childNodes, nodeType, data, localName, hidden and getAttribute,
// and each element's display through the caller's `display(el)` — so
// `node --test extension/lib/name-text.test.js` runs it on plain objects. A classic script
// (injected before isolated/snapshot.js into the same world): it defines
// globalThis.tabwireNameText and nothing else.
(() => {
  const TEXT = 3;
  const ELEMENT = 1;
  const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'title']);
  // Take no room on screen: ZERO WIDTH SPACE, WORD JOINER, ZERO WIDTH NO-BREAK SPACE (a BOM),
  // SOFT HYPHEN. The zero-width joiners (U+200C, U+200D) stay: they join emoji and letters.
  const INVISIBLE = /[\u200b\u2060\ufeff\u00ad]/g;
  // Elements looked at for one name at most: a name is cut at 100 characters anyway.
  const MAX_ELEMENTS = 2000;

  // Whitespace runs as one space, invisible characters gone, no space at the ends.
  const normalize = (s) => (s ?? '').replace(INVISIBLE, '').replace(/\s+/g, ' ').trim();

  // Displays that keep a piece on the line of the text around it, with no space of their own.
  const flowing = (display) => display === 'inline' || display === 'contents' || display === '' || display == null;

  // The text of `root`'s content, normalized; reading stops once it has more than `max`
  // characters that are not spaces (the caller cuts it). `display(el)`: the element's computed
  // display ('none': not drawn). `skip(el)`: an element left out with what it holds (a label's
  // own control).
  function contentText(root, { display = () => 'inline', max = Infinity, skip = null } = {}) {
    let out = '';
    let seen = 0; // characters that are not spaces
    let elements = 0;
    const full = () => seen > max || elements > MAX_ELEMENTS;
    const add = (s) => {
      out += s;
      seen += s.replace(/\s/g, '').length;
    };
    (function walk(node) {
      for (const child of node.childNodes ?? []) {
        if (full()) return;
        if (child.nodeType === TEXT) {
          add(child.data ?? '');
          continue;
        }
        if (child.nodeType !== ELEMENT) continue;
        elements += 1;
        const tag = child.localName;
        if (SKIP.has(tag) || child.hidden || child.getAttribute?.('aria-hidden') === 'true' || skip?.(child)) continue;
        if (tag === 'br') {
          out += ' ';
          continue;
        }
        const shown = display(child);
        if (shown === 'none') continue;
        const apart = !flowing(shown);
        if (apart) out += ' ';
        const label = normalize(child.getAttribute?.('aria-label'));
        if (label) add(label);
        else if (tag === 'img') add(child.getAttribute?.('alt') ?? '');
        else walk(child);
        if (apart) out += ' ';
      }
    })(root);
    return normalize(out);
  }

  globalThis.tabwireNameText = { contentText, normalize, INVISIBLE };
})();
