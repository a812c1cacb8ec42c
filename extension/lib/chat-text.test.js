// The chat answer's text reader (node --test extension/lib/*.test.js), on plain objects shaped
// like DOM nodes.

import assert from 'node:assert/strict';
import test from 'node:test';

import './chat-text.js';

const { readText } = globalThis.tabwireChatText;

// h('p', {hidden, 'aria-hidden'}, ...children): an element; a string child is a text node.
function h(tag, attrs, ...children) {
  const a = attrs ?? {};
  return {
    nodeType: 1,
    localName: tag,
    hidden: !!a.hidden,
    getAttribute: (k) => (k in a ? String(a[k]) : null),
    childNodes: children.map((c) => (typeof c === 'string' ? { nodeType: 3, data: c } : c)),
  };
}

test('an icon ligature marked aria-hidden is not part of the answer', () => {
  const bubble = h('div', null, h('span', { 'aria-hidden': 'true', class: 'material-icons' }, 'smart_toy'), h('p', null, 'Hello there.'));
  assert.equal(readText(bubble), 'Hello there.');
});

test('indentation in <pre> stays when a highlighter splits the text into nodes', () => {
  const code = h('pre', null, h('code', null,
    h('span', { class: 'kw' }, 'def'), ' f():', '\n',
    '    ', h('span', { class: 'kw' }, 'return'), ' 1', '\n',
    h('span', null, '        '), h('span', null, '# deeper')));
  const bubble = h('div', null, h('p', null, 'Code:'), code, h('p', null, 'Done.'));
  assert.equal(readText(bubble), 'Code:\n\ndef f():\n    return 1\n        # deeper\n\nDone.');
});

test('paragraphs, list items, line breaks and cells kept apart; buttons and hidden parts left out', () => {
  const bubble = h('div', null,
    h('p', null, '  Answer   one '),
    h('ul', null, h('li', null, 'a'), h('li', null, 'b')),
    h('pre', null, h('code', null, 'x = 1'), h('button', null, 'Copy')),
    h('p', null, 'last', h('br'), '  line'),
    h('div', { hidden: true }, 'secret'),
    h('table', null, h('tr', null, h('td', null, 'k'), h('td', null, 'v'))));
  assert.equal(readText(bubble), 'Answer one\n\na\nb\nx = 1\n\nlast\nline\n\nk\tv');
});

test('white space between blocks (a markdown renderer\'s newlines) adds no blank lines', () => {
  const bubble = h('div', null,
    h('p', null, 'You asked: x'), '\n',
    h('p', null, 'Hours:'), '\n',
    h('ul', null, '\n', h('li', null, 'Mon'), '\n', h('li', null, 'Sat'), '\n'), '\n',
    h('p', null, 'Call ', h('code', null, '555'), ' now.'), '\n');
  assert.equal(readText(bubble), 'You asked: x\n\nHours:\n\nMon\nSat\n\nCall 555 now.');
});

test('nothing to read reads as empty', () => {
  assert.equal(readText(null), '');
  assert.equal(readText(h('div', null, h('span', { 'aria-hidden': 'true' }, 'smart_toy'))), '');
});
