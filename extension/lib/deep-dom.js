// Adapter selectors that reach into open shadow roots (specs/operations.md, "Site adapters"): a
// chat built as a web component (Deep Chat) keeps its box, buttons and bubbles in a shadow
// root, where document.querySelector does not look. A selector is matched in the document and
// in every open shadow root inside it, nested ones too, each tree on its own (a combinator does
// not cross a shadow boundary: `#text-input`, not `deep-chat #text-input`). Matches come tree by
// tree: the document's first, then each shadow root's in the order their hosts stand in the page.
// Closed shadow roots stay closed.
//
// One scope per document keeps the roots it has met, so a query is one querySelectorAll per
// root rather than a walk of the page; the roots are found by a walk at the start, in every
// subtree a MutationObserver reports added (`noticeAdded`), and again by `rescan` (a root
// attached to an element already in the page makes no mutation). Observers given to `observe`
// watch every root, so changes inside a shadow root are seen too (a document's observer does
// not see into them).
//
// Pure of the page: it reads nodes through querySelectorAll, querySelector, shadowRoot, host,
// isConnected and nodeType only, so `node --test extension/lib/deep-dom.test.js` runs it on
// plain objects. A classic script (isolated/chat-observer.js and isolated/chat-detect.js are
// injected after it into the same world): it defines globalThis.tabwireDeepDom and nothing else.
(() => {
  const ELEMENT = 1;

  // The open shadow roots inside `root` (a document, a shadow root or an element), nested ones
  // included, in tree order.
  function openRoots(root) {
    const out = [];
    const visit = (el) => {
      const inner = el.shadowRoot;
      if (!inner) return;
      out.push(inner);
      for (const nested of inner.querySelectorAll('*')) visit(nested);
    };
    if (root.nodeType === ELEMENT) visit(root);
    for (const el of root.querySelectorAll('*')) visit(el);
    return out;
  }

  class Scope {
    constructor(doc) {
      this.doc = doc;
      this.roots = [doc]; // the document, then its open shadow roots in tree order
      this.known = new Set();
      this.watchers = new Map(); // MutationObserver → its options
      this.rescan();
    }

    // Find the roots again by a walk of the page; true when one was new.
    rescan() {
      const now = openRoots(this.doc);
      const fresh = now.filter((r) => !this.known.has(r));
      this.roots = [this.doc, ...now];
      this.known = new Set(now);
      for (const r of fresh) for (const [mo, opts] of this.watchers) mo.observe(r, opts);
      return fresh.length > 0;
    }

    // A MutationObserver's records: the shadow roots in what was added join the scope (and are
    // watched). True when one did.
    noticeAdded(records) {
      let grew = false;
      for (const rec of records ?? [])
        for (const node of rec.addedNodes ?? []) {
          if (node.nodeType !== ELEMENT) continue;
          for (const r of openRoots(node)) {
            if (this.known.has(r)) continue;
            this.known.add(r);
            this.roots.push(r);
            for (const [mo, opts] of this.watchers) mo.observe(r, opts);
            grew = true;
          }
        }
      return grew;
    }

    // Roots whose host left the page are dropped as they are met.
    live() {
      const gone = this.roots.filter((r) => r !== this.doc && r.host && !r.host.isConnected);
      if (gone.length === 0) return this.roots;
      for (const r of gone) this.known.delete(r);
      this.roots = this.roots.filter((r) => !gone.includes(r));
      return this.roots;
    }

    first(sel) {
      for (const r of this.live()) {
        const el = r.querySelector(sel);
        if (el) return el;
      }
      return null;
    }

    all(sel) {
      const out = [];
      for (const r of this.live()) out.push(...r.querySelectorAll(sel));
      return out;
    }

    count(sel) {
      let n = 0;
      for (const r of this.live()) n += r.querySelectorAll(sel).length;
      return n;
    }

    // Watch the document and every root, now and as roots join.
    observe(mo, opts) {
      this.watchers.set(mo, opts);
      for (const r of this.roots) mo.observe(r, opts);
    }

    unobserve(mo) {
      this.watchers.delete(mo);
      mo.disconnect();
    }
  }

  // The element an event (a click) reached first, inside open shadow roots too: the first
  // element of its composed path that matches `sel`, or null.
  function matchInPath(event, sel) {
    for (const n of event.composedPath?.() ?? []) if (n.nodeType === ELEMENT && n.matches(sel)) return n;
    return null;
  }

  globalThis.tabwireDeepDom = { Scope, openRoots, matchInPath };
})();
