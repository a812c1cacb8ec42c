// The site-pattern grammar against the table both languages pass (specs/site-patterns.json;
// proto/src/sites.rs reads the same file), and the URL helpers. node --test extension/lib/*.test.js

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import test from 'node:test';

import { DEFAULT_SITES, allowedBy, bareUrl, compile, everyPort, globMatch, matchPattern, normalise, originOf, withEveryPort, withoutFragment } from './sites.js';

const table = JSON.parse(readFileSync(new URL('../../specs/site-patterns.json', import.meta.url), 'utf8'));

test('every case of specs/site-patterns.json', () => {
  assert.ok(table.cases.length > 40);
  for (const c of table.cases) {
    if (!c.valid) {
      assert.throws(() => normalise(c.pattern), (e) => e.code === 'bad_request' && /scheme:\/\/host\[:port\]|a site pattern must be/.test(e.message), `${JSON.stringify(c.pattern)} is refused`);
      continue;
    }
    assert.equal(normalise(c.pattern), c.normal, `${JSON.stringify(c.pattern)} normalises`);
    const rules = compile([c.normal]);
    for (const origin of c.matches) assert.equal(allowedBy(origin, rules), c.normal, `${c.normal} allows ${origin}`);
    for (const origin of c.rejects) assert.equal(allowedBy(origin, rules), null, `${c.normal} does not allow ${origin}`);
  }
});

test('a refusal says what is wrong and what a pattern looks like', () => {
  assert.throws(() => normalise('https://*.com'), /two labels or more/);
  assert.throws(() => normalise('ftp://example.com'), /only on http and https/);
  assert.throws(() => normalise('https://example.com:080'), /no leading zeros/);
  assert.throws(() => normalise(null), /must be a string/);
});

test('the defaults are the three loopback names of a dev server', () => {
  const rules = compile(DEFAULT_SITES);
  assert.equal(allowedBy('http://127.0.0.1:8080', rules), 'http://127.0.0.1:*');
  assert.equal(allowedBy('http://127.0.0.2:8080', rules), null);
  assert.equal(allowedBy('https://localhost:3000', rules), null);
  for (const junk of ['', 'null', 'file:///etc/passwd', 'chrome-extension://abc', 'http://', undefined, null]) assert.equal(allowedBy(junk, rules), null);
});

test('Chrome match patterns: a missing port is any port to Chrome', () => {
  assert.equal(matchPattern('https://Example.com'), 'https://example.com/*');
  assert.equal(matchPattern('http://localhost:*'), 'http://localhost:*/*');
  assert.equal(matchPattern('https://*.example.com:8443'), 'https://*.example.com:8443/*');
});

test('what is reported of a URL', () => {
  assert.equal(originOf('https://a.example.com/x?q#f'), 'https://a.example.com');
  assert.equal(originOf('file:///x'), null);
  assert.equal(originOf('not a url'), null);
  assert.equal(withoutFragment('https://a.example/x?q=1#token'), 'https://a.example/x?q=1');
  assert.equal(bareUrl('https://user:pw@a.example/x/y?q=1#f'), 'https://a.example/x/y');
  assert.equal(bareUrl('data:text/html,<b>secret</b>'), 'data:');
  assert.equal(bareUrl('chrome://settings/?search=x#y'), 'chrome://settings/');
  assert.equal(bareUrl(''), '');
});

test("adapters' URL globs", () => {
  assert.ok(globMatch('https://claude.ai/*', 'https://claude.ai/chat/1'));
  assert.ok(globMatch('https://*.example.com/app', 'https://a.example.com/app'));
  assert.ok(!globMatch('https://claude.ai/*', 'https://claude.ai.evil.net/'));
  assert.ok(globMatch('https://x/', 'https://x/'));
  assert.ok(!globMatch('https://x/', 'https://x/y'));
  assert.ok(!globMatch('a*bb', 'ab'), 'the parts may not overlap');
});

test('only a pattern of every port of its hosts can hold cookies, which are kept per host', () => {
  for (const p of DEFAULT_SITES) assert.ok(everyPort(p), p);
  assert.ok(everyPort('https://*.example.com:*'));
  for (const p of ['http://127.0.0.1:3000', 'https://example.com', 'https://example.com:443', 'http://[::1]:8080', 'https://*.example.com'])
    assert.ok(!everyPort(p), p);
  assert.equal(withEveryPort('http://127.0.0.1:3000'), 'http://127.0.0.1:*');
  assert.equal(withEveryPort('https://example.com'), 'https://example.com:*');
  assert.equal(withEveryPort('https://*.example.com'), 'https://*.example.com:*');
  assert.equal(withEveryPort('http://[::1]:8080'), 'http://[::1]:*');
});
