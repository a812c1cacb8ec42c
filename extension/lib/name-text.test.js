// Names from content (node --test extension/lib/*.test.js), on plain objects shaped like DOM
// nodes, each with the display the page's CSS gives it.

import assert from 'node:assert/strict';
import test from 'node:test';

import './name-text.js';

const { contentText, normalize } = globalThis.tabwireNameText;

// h('span', {display, hidden, 'aria-hidden', …}, ...children): an element; a string child is a
// text node.
function h(tag, attrs, ...children) {
  const a = attrs ?? {};
  return {
    nodeType: 1,
    localName: tag,
    hidden: !!a.hidden,
    display: a.display ?? 'inline',
    getAttribute: (k) => (k in a ? String(a[k]) : null),
    childNodes: children.map((c) => (typeof c === 'string' ? { nodeType: 3, data: c } : c)),
  };
}
const display = (el) => el.display;
const read = (el, opts) => contentText(el, { display, ...opts });

test('boxes side by side are read apart, as Swagger UI lays an operation out', () => {
  // A flex container: its items are blocks, whatever their tags.
  const button = h('button', { display: 'flex' },
    h('span', { display: 'block' }, 'GET'),
    h('span', { display: 'block' }, h('a', null, '\u200b/pets\u200b/{petId}')),
    h('div', { display: 'block' }, 'Find a pet by id'));
  assert.equal(read(button), 'GET /pets/{petId} Find a pet by id');
});

test('inline pieces run on as one word; inline-blocks, cells and line breaks stand apart', () => {
  assert.equal(read(h('a', null, 'Sign', h('b', null, 'in'), ' now')), 'Signin now');
  assert.equal(read(h('a', null, h('span', { display: 'inline-block' }, '3'), h('span', { display: 'inline-flex' }, 'items'))), '3 items');
  assert.equal(read(h('tr', null, h('td', { display: 'table-cell' }, 'a'), h('td', { display: 'table-cell' }, 'b'))), 'a b');
  assert.equal(read(h('button', null, 'Line one', h('br'), 'line two')), 'Line one line two');
  // display: contents has no box of its own: its children flow as if they were the parent's.
  assert.equal(read(h('a', null, 'x', h('span', { display: 'contents' }, 'y'))), 'xy');
});

test('what is not seen is not read: hidden parts, invisible characters', () => {
  const el = h('button', null,
    h('span', { 'aria-hidden': 'true', display: 'inline-block' }, 'smart_toy'),
    h('span', { display: 'none' }, 'tooltip'),
    h('span', { hidden: true }, 'later'),
    h('script', null, 'var x'),
    'Ask\u00ad\u2060 the\ufeff bot');
  assert.equal(read(el), 'Ask the bot');
  // The joiners of an emoji sequence stay.
  assert.equal(normalize(' 👩\u200d💻\u200b '), '👩\u200d💻');
});

test('a part with its own label or alt counts as that; a label leaves out its control', () => {
  const link = h('a', null, h('img', { alt: 'Home', display: 'inline' }), h('svg', { 'aria-label': 'icon', display: 'inline' }, 'x'));
  assert.equal(read(link), 'Homeicon');
  const control = h('select', { display: 'inline-block' }, h('option', null, 'One'), h('option', null, 'Two'));
  const label = h('label', null, 'Size ', control);
  assert.equal(read(label, { skip: (el) => el === control }), 'Size');
});

test('reading stops past the characters a name can show, whatever the spaces', () => {
  const many = h('li', null, ...Array.from({ length: 50 }, (_, i) => h('p', { display: 'block' }, `        item${i}        `)));
  const text = read(many, { max: 20 });
  assert.ok(text.startsWith('item0 item1 item2'), text);
  assert.ok(text.length < 60, text);
  assert.equal(read(many).split(' ').length, 50);
});
