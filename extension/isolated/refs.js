// ISOLATED world, every frame of an allowed site (worker/content-scripts.js registers it before
// the agent's other scripts, which share its `tabwireDom` namespace — a global of the
// extension's isolated world, which the page's scripts cannot see, read or write).
//
// Refs name elements for the assistant: `e12` in this document. They live here, never in
// the DOM, so a page cannot read, forge or move them. A ref keeps its element while the
// element lives (a WeakRef: re-renders that keep the node keep the ref). When the element was
// replaced (a framework re-rendered it), the ref re-binds only to the one element whose role,
// name and ancestry are exactly those it had, and says so; otherwise it is stale.
(() => {
  const ns = (globalThis.tabwireDom ??= {});
  const byRef = new Map(); // "e12" → { el: WeakRef, role, name, path }
  const byEl = new WeakMap(); // element → "e12"
  const byKey = new Map(); // role, name and ancestry → the last ref given for them
  let next = 1; // refs are numbered per tab: the worker passes the first free number (`base`)

  // The ref of `el`, made on first sight. `role`/`name` are what the snapshot shows for it.
  ns.refFor = (el, role, name) => {
    let ref = byEl.get(el);
    if (ref) {
      const entry = byRef.get(ref);
      entry.role = role;
      entry.name = name;
      return ref;
    }
    // An element that replaced one with the same role, name and place (a re-render) takes
    // over its ref, so refs outlive re-renders.
    const path = ancestry(el);
    const key = `${role}\u0000${name}\u0000${path}`;
    const was = byKey.get(key);
    const old = was && byRef.get(was);
    if (old && !old.el.deref()?.isConnected) {
      old.el = new WeakRef(el);
      byEl.set(el, was);
      return was;
    }
    if (byRef.size >= SWEEP_AT) sweep();
    ref = `e${next++}`;
    byEl.set(el, ref);
    byRef.set(ref, { el: new WeakRef(el), role, name, path });
    byKey.set(key, ref);
    return ref;
  };

  // Forget refs whose element is gone, once there are many (a page that re-renders all day).
  const SWEEP_AT = 50_000;
  function sweep() {
    for (const [ref, entry] of byRef) {
      if (entry.el.deref()?.isConnected) continue;
      byRef.delete(ref);
      byKey.delete(`${entry.role}\u0000${entry.name}\u0000${entry.path}`);
    }
  }

  ns.nextRef = () => next;
  ns.startRefsAt = (base) => {
    if (Number.isInteger(base) && base > next) next = base;
  };

  // The element a ref names: {el, rebound?}, or a TabwireError-shaped {error}.
  ns.resolve = (ref) => {
    const entry = byRef.get(ref);
    if (!entry) return { error: { code: 'stale_ref', message: `ref ${ref} was not given out for the page now in this frame (it navigated or reloaded since, or the ref was never issued); call read_page or find for fresh refs` } };
    const el = entry.el.deref();
    if (el?.isConnected) return { el };
    const twins = [];
    // Named as the snapshot's line names it (a clickable element as a button, snapshot.js).
    for (const c of ns.candidates(entry.role)) {
      if (ns.lineName(c, entry.role) === entry.name && ancestry(c) === entry.path) twins.push(c);
      if (twins.length > 1) break;
    }
    if (twins.length !== 1) {
      const why = twins.length === 0 ? 'no element with the same role, name and place replaced it' : 'several elements have its role, name and place';
      return { error: { code: 'stale_ref', message: `ref ${ref} (${entry.role} "${entry.name}") is gone from the page: ${why}; call read_page or find for fresh refs` } };
    }
    const now = twins[0];
    entry.el = new WeakRef(now);
    byEl.set(now, ref);
    return { el: now, rebound: `ref ${ref} (${entry.role} "${entry.name}") was re-rendered; it now names the one element with the same role, name and place` };
  };

  // What a test runner can find `el` by again, for export_test (bridge/src/mcp/webdev/export.rs
  // chooses among them, in one place): its role and name as read_page's line shows them, its
  // test id, label, placeholder and text, and what kind of control it is (a password field's
  // value is never written into a test).
  ns.facts = (el) => {
    const role = ns.roleOf(el);
    const squash = (s) => globalThis.tabwireNameText.normalize(s).slice(0, 100);
    const f = { role, name: role ? ns.lineName(el, role) : '', tag: el.localName };
    if (el.localName === 'input') f.type = el.type;
    const add = (k, v) => v && (f[k] = squash(v));
    add('test_id', el.getAttribute('data-testid'));
    add('label', el.labels?.[0]?.innerText || el.getAttribute('aria-label'));
    add('placeholder', el.getAttribute('placeholder'));
    if (!('value' in el) || el.localName === 'button') add('text', el.innerText);
    if (window !== top) f.frame = true;
    return f;
  };

  // Where an element sits: tag names from the document (or shadow root) down, with the index
  // among same-tag siblings left out (re-rendered lists shift them).
  function ancestry(el) {
    const parts = [];
    for (let n = el; n && parts.length < 32; ) {
      if (n.nodeType !== 1) {
        n = n.host ?? null; // a shadow root: continue from its host
        continue;
      }
      parts.push(n.localName + (n.id && !/\d{3,}/.test(n.id) ? `#${n.id}` : ''));
      n = n.parentNode;
    }
    return parts.reverse().join('>');
  }
})();
