// How read_page's lines are written, cut and compared (node --test extension/lib/*.test.js).

import assert from 'node:assert/strict';
import test from 'node:test';

import { childFrames, diffLines, fit, inFrame, parseRef, tokens } from './snapshot-text.js';

test('refs: e12 in the top frame, f3e12 in frame 3; anything else is refused', () => {
  assert.deepEqual(parseRef('e12'), { frameId: 0, ref: 'e12' });
  assert.deepEqual(parseRef(' f3e12 '), { frameId: 3, ref: 'e12' });
  for (const bad of ['12', 'e', 'f3', 'e1 e2', null, 12]) assert.throws(() => parseRef(bad), (e) => e.code === 'bad_request');
});

test("a frame's lines get its prefix where the agent marked each ref", () => {
  assert.equal(inFrame('button "OK" [ref=\u0001e4]', 0), 'button "OK" [ref=e4]');
  assert.equal(inFrame('button "OK" [ref=\u0001e4]', 7), 'button "OK" [ref=f7e4]');
});

test('a budget cuts what is outside the viewport first, then the end, and says so', () => {
  const line = (t, v = true, d = 0) => ({ d, t, v });
  const lines = [line('a'.repeat(40)), line('off'.repeat(20), false), line('off'.repeat(20), false), line('b'.repeat(40), true, 1)];
  const all = fit(lines, 1000);
  assert.deepEqual(all.cut, { offscreen: 0, end: 0 });
  assert.equal(all.lines[3], `  ${'b'.repeat(40)}`);
  const some = fit(lines, 30);
  assert.equal(some.cut.offscreen, 2);
  assert.equal(some.lines[1], '… (outside the viewport, cut for the budget)', 'a run of cut lines is one line');
  const few = fit(Array.from({ length: 50 }, (_, i) => line(`line ${i} ${'x'.repeat(36)}`)), 100);
  assert.ok(few.cut.end > 0);
  assert.match(few.lines.at(-1), new RegExp(`^… ${few.cut.end} more lines cut for the budget`));
  assert.ok(few.total <= 100 + tokens(few.lines.at(-1)));
});

test('tokens are characters / 4, rounded up', () => {
  assert.equal(tokens(''), 0);
  assert.equal(tokens('abcd'), 1);
  assert.equal(tokens('abcde'), 2);
});

test('the diff counts repeated lines', () => {
  assert.deepEqual(diffLines(['a', 'b', 'b', 'c'], ['b', 'c', 'd']), { added: ['d'], removed: ['a', 'b'] });
  assert.deepEqual(diffLines(['x'], ['x']), { added: [], removed: [] });
});

test('iframes are matched to frames by address, then by order', () => {
  const frames = new Map([
    [0, { frameId: 0, parentFrameId: -1, url: 'https://a.example/' }],
    [5, { frameId: 5, parentFrameId: 0, url: 'https://b.example/x' }],
    [6, { frameId: 6, parentFrameId: 0, url: 'about:blank' }],
    [9, { frameId: 9, parentFrameId: 5, url: 'https://c.example/' }],
  ]);
  const lines = [{ f: { n: 0, src: 'https://moved.example/' } }, { t: 'text' }, { f: { n: 1, src: 'https://b.example/x' } }];
  const map = childFrames(frames, 0, lines);
  assert.equal(map.get(1).frameId, 5, 'by address');
  assert.equal(map.get(0).frameId, 6, 'the next one left');
  assert.equal(childFrames(frames, 5, [{ f: { n: 0, src: '' } }]).get(0).frameId, 9, 'only children of that frame');
});
