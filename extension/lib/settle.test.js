// When a page has settled, and what an action did (node --test extension/lib/*.test.js).

import assert from 'node:assert/strict';
import test from 'node:test';

import { DEFAULT_CAP_MS, QUIET_MS, capOf, effectOf, quietFor } from './settle.js';

test('quiet for as long as the agent said, and since it said it', () => {
  assert.equal(quietFor({ idle: 10, measured: 100, now: 105 }), 15);
  assert.equal(quietFor({ idle: 0, measured: 100, now: 100 }), 0, 'a request runs');
  assert.ok(quietFor({ idle: 0, measured: 0, now: QUIET_MS }) >= QUIET_MS);
});

test("the cap is settle_ms, inside the call's own timeout", () => {
  assert.equal(capOf(undefined, 30_000), DEFAULT_CAP_MS);
  assert.equal(capOf(200, 30_000), 200);
  assert.equal(capOf(60_000, 10_000), 9_500);
  assert.equal(capOf(undefined, 300), 100, 'never under 100 ms');
});

test('an effect is what a user would see; mutations alone are not one', () => {
  const none = { added: 0, removed: 0, navigated: false, newTab: null, dialog: null, requests: 0 };
  assert.equal(effectOf(none), 'none');
  for (const [k, v] of [['added', 1], ['removed', 2], ['rows', 3], ['navigated', true], ['newTab', 12], ['dialog', { type: 'alert' }], ['requests', 1], ['selection', true]])
    assert.equal(effectOf({ ...none, [k]: v }), 'changed', k);
});
