// Selectors through open shadow roots (node --test extension/lib/*.test.js), on plain objects
// shaped like DOM nodes: a selector here is a tag name, `.class` or `*`.

import assert from 'node:assert/strict';
import test from 'node:test';

import './deep-dom.js';

const { Scope, openRoots, matchInPath } = globalThis.tabwireDeepDom;

function matches(el, sel) {
  return sel === '*' || (sel.startsWith('.') ? el.cls.includes(sel.slice(1)) : el.localName === sel);
}

// A tree (document, shadow root or element) answers queries over its own descendants only,
// never into the shadow roots below it, as the DOM does.
function tree(node, kids) {
  node.children = kids;
  for (const k of kids) k.parent = node;
  node.querySelectorAll = (sel) => {
    const out = [];
    const walk = (n) => {
      for (const c of n.children) {
        if (matches(c, sel)) out.push(c);
        walk(c);
      }
    };
    walk(node);
    return out;
  };
  node.querySelector = (sel) => node.querySelectorAll(sel)[0] ?? null;
  return node;
}

function h(tag, cls, ...kids) {
  const el = tree({ nodeType: 1, localName: tag, cls: cls ?? '', shadowRoot: null, isConnected: true }, kids);
  el.matches = (sel) => matches(el, sel);
  return el;
}

function shadow(host, ...kids) {
  host.shadowRoot = tree({ nodeType: 11, host }, kids);
  return host;
}

const doc = (...kids) => tree({ nodeType: 9 }, kids);

test('selectors match in the document and in open shadow roots, nested ones too, tree by tree', () => {
  const inner = shadow(h('x-bubble'), h('p', 'msg deep'));
  const app = shadow(h('x-chat'), h('div', 'msg a'), inner, h('textarea'));
  const d = doc(h('div', 'msg top'), app);
  assert.deepEqual(openRoots(d), [app.shadowRoot, inner.shadowRoot]);
  const scope = new Scope(d);
  assert.deepEqual(scope.all('.msg').map((e) => e.cls), ['msg top', 'msg a', 'msg deep']);
  assert.equal(scope.count('.msg'), 3);
  assert.equal(scope.first('textarea').localName, 'textarea');
  assert.equal(scope.first('button'), null);
});

test('a root added later is found from the mutation records or a rescan, and watched', () => {
  const d = doc(h('main'));
  const watched = [];
  const mo = { observe: (root) => watched.push(root), disconnect: () => {} };
  const scope = new Scope(d);
  scope.observe(mo, { childList: true });
  assert.deepEqual(watched, [d]);

  const added = shadow(h('x-chat'), h('div', 'msg'));
  d.children.push(added);
  assert.equal(scope.count('.msg'), 0, 'not yet met');
  assert.equal(scope.noticeAdded([{ addedNodes: [added] }]), true);
  assert.equal(scope.count('.msg'), 1);
  assert.deepEqual(watched, [d, added.shadowRoot]);
  assert.equal(scope.noticeAdded([{ addedNodes: [added] }]), false, 'known already');

  // A shadow root attached to an element already in the page: no record says so.
  const late = d.children[0];
  shadow(late, h('div', 'msg'));
  assert.equal(scope.count('.msg'), 1);
  assert.equal(scope.rescan(), true);
  assert.equal(scope.count('.msg'), 2);
  assert.deepEqual(watched, [d, added.shadowRoot, late.shadowRoot]);

  // A host that left the page takes its root's matches with it.
  added.isConnected = false;
  assert.equal(scope.count('.msg'), 1);
});

test('a click inside a shadow root is matched on its composed path', () => {
  const stop = h('div', 'stop');
  const icon = h('span', 'icon');
  const event = { composedPath: () => [icon, stop, { nodeType: 11 }, h('x-chat'), { nodeType: 9 }] };
  assert.equal(matchInPath(event, '.stop'), stop);
  assert.equal(matchInPath(event, '.send'), null);
});
