// The wire form of what a handler throws (node --test extension/lib/*.test.js).

import assert from 'node:assert/strict';
import test from 'node:test';

import { TabwireError, fail, toWire } from './errors.js';

test('a TabwireError keeps its code and words; anything else is a bug, named where', () => {
  assert.deepEqual(toWire(new TabwireError('no_such_tab', 'no tab has id 3')), { code: 'no_such_tab', message: 'no tab has id 3' });
  assert.deepEqual(toWire(new TypeError('x is undefined'), 'dom.read'), { code: 'internal', message: 'dom.read failed in the extension: x is undefined' });
  assert.throws(() => fail('bad_request', 'say why'), (e) => e instanceof TabwireError && e.code === 'bad_request');
});
