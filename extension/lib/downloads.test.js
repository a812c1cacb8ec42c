// Which site started a download, whether its file counts and whose it is (lib/downloads.js),
// without a browser: node --test extension/lib/*.test.js
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { baseName, initiatorOf, shownTo, sourceAllowed, sourceOf, sourcePath, whose } from './downloads.js';

test('the site that started a download is its referrer, else the origin inside a blob: URL', () => {
  assert.equal(initiatorOf({ referrer: 'http://127.0.0.1:8080/a/page.html?q=1', url: 'https://cdn.example/x.csv' }), 'http://127.0.0.1:8080');
  assert.equal(initiatorOf({ referrer: '', url: 'blob:http://127.0.0.1:8080/0b1c-uuid' }), 'http://127.0.0.1:8080');
  // No referrer and not a blob: no site named, not reported.
  assert.equal(initiatorOf({ referrer: '', url: 'http://127.0.0.1:8080/x.csv' }), null);
  assert.equal(initiatorOf({ url: 'data:text/csv,a,b' }), null);
  assert.equal(initiatorOf({ referrer: 'chrome://downloads/', url: 'blob:null/uuid' }), null);
});

test('a download says where its bytes came from and its file name', () => {
  assert.equal(sourceOf({ url: 'http://a.test/x', finalUrl: 'https://b.test/y?z' }), 'https://b.test');
  assert.equal(sourceOf({ url: 'blob:http://a.test:81/uuid' }), 'http://a.test:81');
  assert.equal(sourceOf({ url: 'data:text/csv,a' }), 'data:');
  assert.equal(baseName('/home/u/Downloads/report (1).csv'), 'report (1).csv');
  assert.equal(baseName('C:\\Users\\u\\Downloads\\r.csv'), 'r.csv');
});

const allowed = (origin) => origin === 'http://127.0.0.1:8080';

test('a download counts only when its bytes came from an allowed site, at every hop Chrome names', () => {
  assert.equal(sourceAllowed({ url: 'http://127.0.0.1:8080/x.csv', finalUrl: 'http://127.0.0.1:8080/x.csv' }, allowed), true);
  assert.equal(sourceAllowed({ url: 'blob:http://127.0.0.1:8080/uuid', finalUrl: 'blob:http://127.0.0.1:8080/uuid' }, allowed), true);
  assert.equal(sourceAllowed({ url: 'data:text/csv,a,b' }, allowed), true);
  // An allowed page's link to another site, where the user is signed in: that site's file.
  const elsewhere = { referrer: 'http://127.0.0.1:8080/page', url: 'http://127.0.0.1:9090/export?all=1', finalUrl: 'http://127.0.0.1:9090/export?all=1' };
  assert.equal(sourceAllowed(elsewhere, allowed), false);
  // Redirected there from the allowed site, or from there to it.
  assert.equal(sourceAllowed({ url: 'http://127.0.0.1:8080/go', finalUrl: 'https://bank.test/statement.csv' }, allowed), false);
  assert.equal(sourceAllowed({ url: 'https://bank.test/statement.csv', finalUrl: 'http://127.0.0.1:8080/x' }, allowed), false);
  assert.equal(sourceAllowed({ url: 'blob:https://bank.test/uuid' }, allowed), false);
  assert.equal(sourceAllowed({ url: 'filesystem:http://127.0.0.1:8080/x' }, allowed), false);
  assert.equal(sourceAllowed({}, allowed), false);
  // What is said of it: the origin and path of the hop not allowed, never the query.
  assert.equal(sourceOf(elsewhere, allowed), 'http://127.0.0.1:9090');
  assert.equal(sourcePath(elsewhere, allowed), '/export');
  const back = { url: 'https://bank.test/statement.csv', finalUrl: 'http://127.0.0.1:8080/x' };
  assert.equal(sourceOf(back, allowed), 'https://bank.test');
  assert.equal(sourcePath(back, allowed), '/statement.csv');
  assert.equal(sourcePath({ url: 'blob:http://127.0.0.1:8080/uuid' }), null);
});

test('a download is the session whose action or tab started it, else no one session', () => {
  assert.equal(whose(['a'], ['b', null]), 'a', 'the running action says, not the idle tabs');
  assert.equal(whose([null], ['a']), null, 'an action made for no session: the user\'s');
  assert.equal(whose([], ['a', 'a']), 'a');
  assert.equal(whose([], [null]), null, 'a tab in no live session\'s group: the user\'s');
  assert.equal(whose(['a', 'b'], []), undefined);
  assert.equal(whose([], ['a', null]), undefined, 'a session\'s tab and the user\'s of one site');
  assert.equal(whose([], []), undefined, 'no tab of that site is open any more');
});

test('a session is shown its own downloads and the user\'s, not another running session\'s', () => {
  const live = (id) => id === 'a' || id === 'b';
  assert.equal(shownTo('a', 'a', live), true);
  assert.equal(shownTo(null, 'a', live), true);
  assert.equal(shownTo('b', 'a', live), false);
  assert.equal(shownTo(undefined, 'a', live), false);
  assert.equal(shownTo('gone', 'a', live), true, 'an ended session\'s are the user\'s, as its tabs are');
  assert.equal(shownTo('b', null, live), true, 'a call made for no session sees them all');
  assert.equal(shownTo(undefined, null, live), true);
});
