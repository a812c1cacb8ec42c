// ISOLATED world, every frame of an allowed site: the pointer actions besides click (hover,
// scroll, drag) and setting a file input's files. Same rules as act.js: the target is
// scrolled into view and hit-tested first; the events are a user's, untrusted.
(() => {
  const ns = (globalThis.tabwireDom ??= {});
  const fail = (code, message) => {
    throw Object.assign(new Error(message), { code });
  };
  const at = (type, el, { x, y }, extra = {}) => {
    const init = { bubbles: true, cancelable: true, composed: true, view: window, clientX: x, clientY: y, ...extra };
    const ev = type.startsWith('pointer') ? new PointerEvent(type, { ...init, pointerId: 1, pointerType: 'mouse', isPrimary: true })
      : type.startsWith('drag') || type === 'drop' ? new DragEvent(type, init) : new MouseEvent(type, init);
    return el.dispatchEvent(ev);
  };

  // Move the pointer onto `el`: over/enter/move, as CSS :hover menus and tooltips expect.
  ns.hover = (el) => {
    const p = ns.target(el);
    for (const t of ['pointerover', 'pointerenter', 'mouseover', 'mouseenter', 'pointermove', 'mousemove']) at(t, el, p, { bubbles: !t.endsWith('enter') });
  };

  // Scroll `el` into view, or the page (or `el`'s own scroll box) by {dx, dy} pixels.
  ns.scroll = (el, { dx = 0, dy = 0 }) => {
    if (!Number.isFinite(dx) || !Number.isFinite(dy)) fail('bad_request', '`dx` and `dy` must be numbers of pixels');
    if (el && dx === 0 && dy === 0) return void el.scrollIntoView({ block: 'center', behavior: 'instant' });
    (el ?? document.scrollingElement ?? document.documentElement).scrollBy({ left: dx, top: dy, behavior: 'instant' });
  };

  // Drag `from` onto `to`: pointer events for libraries that follow the mouse, then HTML5
  // drag and drop events with one DataTransfer for those that use draggable.
  ns.drag = (from, to) => {
    const a = ns.target(from);
    at('pointerdown', from, a, { buttons: 1 });
    at('mousedown', from, a, { buttons: 1 });
    const data = new DataTransfer();
    const html5 = from.draggable && at('dragstart', from, a, { dataTransfer: data });
    const b = ns.target(to, { hitTest: false });
    at('pointermove', to, b, { buttons: 1 });
    at('mousemove', to, b, { buttons: 1 });
    if (html5) {
      at('dragenter', to, b, { dataTransfer: data });
      at('dragover', to, b, { dataTransfer: data });
      at('drop', to, b, { dataTransfer: data });
      at('dragend', from, b, { dataTransfer: data });
    }
    at('pointerup', to, b);
    at('mouseup', to, b);
  };

  // Give a file input these files ([{name, type, base64}], read by the bridge), as choosing
  // them in the file dialog would.
  ns.upload = (el, files) => {
    if (el.localName !== 'input' || el.type !== 'file') fail('not_actionable', `${ns.describe(el)} is not a file input (<input type=file>); find the file input itself (read_page shows it as button with [files=…] once set)`);
    if (el.disabled) fail('not_actionable', `${ns.describe(el)} is disabled`);
    if (files.length > 1 && !el.multiple) fail('bad_request', `${ns.describe(el)} takes one file; give one path`);
    const dt = new DataTransfer();
    for (const f of files) {
      const bytes = Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0));
      dt.items.add(new File([bytes], f.name, { type: f.type || 'application/octet-stream' }));
    }
    el.files = dt.files;
    el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    return [...el.files].map((f) => ({ name: f.name, size: f.size }));
  };
})();
