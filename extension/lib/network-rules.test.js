// A network rule's pattern and mocked body (node --test extension/lib/*.test.js).

import assert from 'node:assert/strict';
import test from 'node:test';

import { MAX_BODY, dataUrl, parsePattern, rulesForDocument } from './network-rules.js';

const local = (o) => o === 'http://localhost:5173' || o === 'http://127.0.0.1:8080';
const code = (c) => (e) => e.code === c;

test('a pattern is anchored at an allowed origin and its slash', () => {
  assert.deepEqual(parsePattern('http://localhost:5173/api/*', local), { origin: 'http://localhost:5173', pattern: 'http://localhost:5173/api/*' });
  assert.deepEqual(parsePattern('http://127.0.0.1:8080/a.js|', local), { origin: 'http://127.0.0.1:8080', pattern: 'http://127.0.0.1:8080/a.js|' });
  assert.equal(parsePattern('HTTP://LOCALHOST:5173/x', local).pattern, 'http://localhost:5173/x');
});

test('a pattern that could reach another site is refused', () => {
  for (const p of ['*://localhost:5173/', 'http://localhost:5173', 'http://localhost:5173*', '||localhost:5173/', 'http://*.localhost:5173/',
    'http://localhost:5173@evil.example/', 'http://localhost:5173/a|b', 'ws://localhost:5173/', 'http://localhost:5173/ü', '', null])
    assert.throws(() => parsePattern(p, local), code('bad_request'), String(p));
  assert.throws(() => parsePattern('http://127.0.0.2:8080/api', local), (e) => e.code === 'site_not_allowed' && e.message.includes('http://127.0.0.2:8080'));
  assert.throws(() => parsePattern('http://localhost:80/x', () => true), code('bad_request'), 'the default port is not written');
});

test('a mocked body is a base64 data: URL of its type', () => {
  const got = dataUrl('{"user":"é"}', 'application/json');
  assert.equal(got.bytes, 13);
  assert.equal(Buffer.from(got.url.split(',')[1], 'base64').toString('utf8'), '{"user":"é"}');
  assert.ok(got.url.startsWith('data:application/json;base64,'));
  assert.ok(dataUrl('x', 'text/html; charset=utf-8').url.startsWith('data:text/html;charset=utf-8;base64,'));
  assert.throws(() => dataUrl('x', 'text/html,<script>'), code('bad_request'));
  assert.throws(() => dataUrl(undefined, 'text/plain'), code('bad_request'));
  assert.throws(() => dataUrl('x'.repeat(MAX_BODY + 1), 'text/plain'), code('too_large'));
});

test('a document gets only the rules made for a page of its own origin', () => {
  const rules = [
    { page: 'http://127.0.0.1:8080', action: 'mock', pattern: 'http://127.0.0.1:8080/api/*', data: 'data:,x' },
    { page: 'http://127.0.0.1:8080', action: 'offline', pattern: 'http://127.0.0.1:8080/*' },
    { page: 'http://localhost:5173', action: 'block', pattern: 'http://127.0.0.1:8080/api/*' },
  ];
  assert.deepEqual(rulesForDocument(rules, 'http://127.0.0.1:8080'), [
    { action: 'mock', pattern: 'http://127.0.0.1:8080/api/*', data: 'data:,x' },
    { action: 'block', pattern: 'http://127.0.0.1:8080/*', data: null },
  ]);
  assert.deepEqual(rulesForDocument(rules, 'http://localhost:5173'), [{ action: 'block', pattern: 'http://127.0.0.1:8080/api/*', data: null }]);
  assert.deepEqual(rulesForDocument(rules, 'http://localhost:3000'), []);
});
