import assert from 'node:assert/strict';
import { test } from 'node:test';

import { baseName, initiatorOf, sourceOf } from './downloads.js';

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
