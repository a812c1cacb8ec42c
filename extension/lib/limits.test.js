// How deep a page's value may nest, counted without parsing (node --test extension/lib/*.test.js).

import assert from 'node:assert/strict';
import test from 'node:test';

import { MAX_DEPTH, deeperThan } from './limits.js';

const nested = (n) => `${'['.repeat(n)}${']'.repeat(n)}`;

test('arrays and objects count; the top value is level 1', () => {
  assert.equal(deeperThan(nested(MAX_DEPTH), MAX_DEPTH), false);
  assert.equal(deeperThan(nested(MAX_DEPTH + 1), MAX_DEPTH), true);
  assert.equal(deeperThan(`${'{"a":'.repeat(3)}1${'}'.repeat(3)}`, 2), true);
  assert.equal(deeperThan('[[1],[2],[3],[4]]', 2), false, 'siblings are not deeper');
});

test('brackets inside strings do not count, escaped quotes do not end them', () => {
  assert.equal(deeperThan(JSON.stringify(['[[[[[[[[[[[[']), 2), false);
  assert.equal(deeperThan(JSON.stringify(['a\\"[[[[[[[[[[', 'b']), 2), false);
  assert.equal(deeperThan(JSON.stringify(['\\', [[[1]]]]), 3), true, 'a string ending in a backslash ends');
});

test('text that is not JSON is left to the parser', () => {
  assert.equal(deeperThan(`"${'['.repeat(200)}`, 3), false);
});
