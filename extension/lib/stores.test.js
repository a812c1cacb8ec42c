// The stored state the popup and the worker share (sites-store.js, pause-store.js,
// groups-store.js), run against a chrome.storage kept in memory that behaves as Chrome's does
// where these modules depend on it: values are copies, onChanged names only the keys whose value
// changed and runs before set() resolves, in every context (here, the one). Chrome's "Site
// access" is a set of granted match patterns. node --test extension/lib/*.test.js

import assert from 'node:assert/strict';
import test from 'node:test';

// One storage area: `area` names it to chrome.storage.onChanged.
function storageArea(area, onAnyChange) {
  const data = new Map();
  const listeners = new Set();
  const copy = (v) => (v === undefined ? undefined : structuredClone(v));
  return {
    data,
    failReads: false,
    held: null, // a promise every read waits for, while set
    async get(keys) {
      await this.held;
      if (this.failReads) throw new Error('storage is not available');
      const wanted = typeof keys === 'string' ? [keys] : keys;
      return Object.fromEntries(wanted.filter((k) => data.has(k)).map((k) => [k, copy(data.get(k))]));
    },
    async set(items) {
      const changes = {};
      for (const [k, v] of Object.entries(items)) {
        const oldValue = data.get(k);
        if (JSON.stringify(oldValue) === JSON.stringify(v)) continue;
        data.set(k, copy(v));
        changes[k] = { oldValue: copy(oldValue), newValue: copy(v) };
      }
      if (Object.keys(changes).length === 0) return;
      for (const fn of listeners) fn(changes);
      onAnyChange(changes, area);
    },
    onChanged: { addListener: (fn) => listeners.add(fn) },
  };
}

const anyChange = new Set();
const granted = new Set(['<all_urls>']);
globalThis.chrome = {
  runtime: { id: 'abcdefghijklmnopabcdefghijklmnop' },
  permissions: { contains: async ({ origins }) => origins.every((o) => granted.has('<all_urls>') || granted.has(o)) },
  storage: {
    onChanged: { addListener: (fn) => anyChange.add(fn) },
  },
};
const fire = (changes, area) => anyChange.forEach((fn) => fn(changes, area));
chrome.storage.local = storageArea('local', fire);
chrome.storage.session = storageArea('session', fire);

// Imported once the storage exists: each reads it as it loads, as in the worker and the popup.
// The first read of the sites waits until the first test has looked.
let release;
chrome.storage.local.held = new Promise((r) => (release = r));
const sites = await import('./sites-store.js');
const pause = await import('./pause-store.js');
const groups = await import('./groups-store.js');
const { DEFAULT_SITES, cookiesNeedEveryPort } = await import('./sites.js');

const refused = (code, text) => (e) => e.code === code && text.test(e.message);

test('with nothing stored, the default sites are allowed, and nothing before they are read', async () => {
  assert.equal(sites.allows('http://localhost:3000'), false, 'not yet read');
  assert.deepEqual(sites.currentSites(), []);
  chrome.storage.local.held = null;
  release();
  await sites.sitesReady;
  assert.deepEqual(sites.currentSites(), [...DEFAULT_SITES]);
  assert.equal(sites.allows('http://localhost:3000'), true);
  assert.equal(sites.allowedBy('http://127.0.0.1:8080'), 'http://127.0.0.1:*');
  assert.equal(sites.allows('https://example.com'), false);
  assert.equal(sites.allows(undefined), false);
});

test('allowing a site stores it normalised, once, and tells each listener once', async () => {
  const heard = [];
  sites.onSitesChanged((list) => heard.push(list));
  const first = await sites.allowSite('HTTPS://Example.com/');
  assert.deepEqual(first, { sites: [...DEFAULT_SITES, 'https://example.com'], options: {}, pattern: 'https://example.com', changed: true });
  assert.deepEqual(chrome.storage.local.data.get('sites'), [...DEFAULT_SITES, 'https://example.com']);
  assert.equal(sites.allows('https://example.com'), true, 'the copy follows at once');
  assert.equal(sites.allows('https://example.com:8443'), false, 'only the default port');
  const again = await sites.allowSite('https://example.com');
  assert.equal(again.changed, false);
  assert.equal(heard.length, 1);
});

test('two changes at once both land: each starts from storage as the other left it', async () => {
  await Promise.all([sites.allowSite('https://a.example'), sites.allowSite('https://b.example')]);
  assert.ok(['https://a.example', 'https://b.example'].every((p) => sites.currentSites().includes(p)));
});

test('a switch: only on an allowed site, only a known one, Cookies only for every port', async () => {
  await sites.setSwitch('https://example.com', 'scripts', true);
  assert.deepEqual(sites.switchesFor('https://example.com'), { scripts: true, trusted_input: false, cookies: false });
  assert.deepEqual(sites.currentOptions(), { 'https://example.com': { scripts: true } });
  await assert.rejects(sites.setSwitch('https://not-allowed.example', 'scripts', true), refused('bad_request', /is not an allowed site; allow it first/));
  assert.throws(() => sites.setSwitch('https://example.com', 'everything', true), refused('bad_request', /no switch "everything"; the switches are scripts, trusted_input, cookies/));
  assert.throws(() => sites.setSwitch('https://example.com', 'cookies', true), refused('bad_request', /Cookies switch stays off/));
  await assert.rejects(sites.allowSite('https://example.com', { cookies: true }), (e) => e.code === 'bad_request' && e.message.endsWith(cookiesNeedEveryPort('https://example.com')));
  await assert.rejects(sites.allowSite('https://example.com', { scripts: 'yes' }), refused('bad_request', /must be true or false/));
  await sites.setSwitch('https://example.com', 'scripts', false);
  assert.deepEqual(sites.currentOptions(), {}, 'a switch turned off leaves nothing stored');
});

test('Cookies on a pattern of every port hold for a narrower pattern listed before it', async () => {
  await sites.allowSite('https://example.com:*', { cookies: true });
  assert.equal(sites.allowedBy('https://example.com'), 'https://example.com');
  assert.deepEqual(sites.switchesFor('https://example.com'), { scripts: false, trusted_input: false, cookies: true });
  assert.deepEqual(sites.switchesFor('https://other.example'), { scripts: false, trusted_input: false, cookies: false });
  await sites.allowSite('https://example.com:*', {});
  assert.equal(sites.switchesFor('https://example.com').cookies, false, 'switches given are set exactly');
});

test('revoking a site drops it and its switches', async () => {
  await sites.allowSite('https://gone.example', { scripts: true });
  const result = await sites.revokeSite('https://gone.example');
  assert.equal(result.changed, true);
  assert.equal(sites.allows('https://gone.example'), false);
  assert.equal('https://gone.example' in sites.currentOptions(), false);
  assert.equal('https://gone.example' in chrome.storage.local.data.get('site_options'), false);
  assert.equal((await sites.revokeSite('https://gone.example')).changed, false);
});

test('a site Chrome does not grant is not allowed, and the user is told where to grant it', async () => {
  granted.clear();
  granted.add('https://granted.example/*');
  try {
    await assert.rejects(sites.allowSite('https://refused.example'), refused('site_not_allowed', /Chrome does not let tabwire read https:\/\/refused\.example.*chrome:\/\/extensions\/\?id=abcdefghijklmnopabcdefghijklmnop → Site access/));
    await sites.allowSite('https://granted.example');
    assert.equal(await sites.chromeGrants('https://refused.example'), false);
  } finally {
    granted.add('<all_urls>');
  }
});

test('what another context stored is read back cleaned: bad patterns, unknown switches and port-wide cookies dropped', async (t) => {
  const logged = t.mock.method(console, 'error', () => {});
  await chrome.storage.local.set({
    sites: ['HTTPS://A.example', 'not a pattern', 'https://a.example', 'http://b.example:*'],
    site_options: { 'https://a.example': { scripts: true, cookies: true, everything: true }, 'http://b.example:*': { cookies: true, trusted_input: 'yes' }, 'https://gone.example': { scripts: true } },
  });
  assert.deepEqual(sites.currentSites(), ['https://a.example', 'http://b.example:*']);
  assert.deepEqual(sites.currentOptions(), { 'https://a.example': { scripts: true }, 'http://b.example:*': { cookies: true } });
  await chrome.storage.local.set({ sites: 'https://a.example' });
  assert.deepEqual(sites.currentSites(), [], 'a list that is not a list allows nothing');
  assert.equal(sites.allows('https://a.example'), false);
  assert.deepEqual(logged.mock.calls.map((c) => c.arguments.join(' ').replace(/: ".*/, '')), [
    'tabwire: ignored a stored site',
    'tabwire: the stored allowed sites are not a list; none are allowed until the list is set again',
  ]);
});

test('Stop all and a session\'s Stop are stored, read back and heard', async () => {
  assert.equal(await pause.isPaused(), false);
  assert.deepEqual(await pause.sessionsPaused(), {});
  const heard = [];
  pause.onPauseChanged((paused, sessions) => heard.push([paused, { ...sessions }]));
  await pause.setPaused(true);
  assert.equal(await pause.isPaused(), true);
  assert.deepEqual(pause.currentPause(), { paused: true, sessions: {} });
  await pause.setSessionPaused({ id: 's1', name: 'one' }, true);
  await pause.setSessionPaused({ id: 's2', name: 'two' }, true);
  await pause.setSessionPaused({ id: 's1', name: 'one' }, false);
  assert.deepEqual(await pause.sessionsPaused(), { s2: 'two' });
  await pause.setPaused('yes');
  assert.equal(await pause.isPaused(), false, 'only true stops');
  assert.deepEqual(heard, [[true, {}], [true, { s1: 'one' }], [true, { s1: 'one', s2: 'two' }], [true, { s2: 'two' }], [false, { s2: 'two' }]]);
  await chrome.storage.session.set({ paused_sessions: ['s2'] });
  assert.deepEqual(pause.currentPause().sessions, {}, 'stored junk stops no session');
});

test('the sessions\' groups are stored as the worker saved them; junk or an unreadable store is no session', async () => {
  assert.deepEqual(await groups.loadGroups(), { sessions: {} });
  const heard = [];
  groups.followGroups((state) => heard.push(state));
  await new Promise((r) => setTimeout(r, 0));
  const state = { sessions: { s1: { id: 's1', name: 'one', color: 'blue', done: false, groups: [7] } } };
  await groups.saveGroups(state);
  assert.deepEqual(await groups.loadGroups(), state);
  await chrome.storage.session.set({ groups: 'junk' });
  assert.deepEqual(heard, [{ sessions: {} }, state, { sessions: {} }], 'as stored at first, then each change');
  chrome.storage.session.failReads = true;
  try {
    assert.deepEqual(await groups.loadGroups(), { sessions: {} });
  } finally {
    chrome.storage.session.failReads = false;
  }
});

test('what becomes of an ended session\'s tabs: keep unless the user chose close', async () => {
  assert.equal(await groups.whenEnded(), 'keep');
  await groups.setWhenEnded('close');
  assert.equal(await groups.whenEnded(), 'close');
  assert.throws(() => groups.setWhenEnded('burn'), refused('bad_request', /"keep" or "close", not "burn"/));
  await chrome.storage.local.set({ when_ended: 'burn' });
  assert.equal(await groups.whenEnded(), 'keep');
  chrome.storage.local.failReads = true;
  try {
    assert.equal(await groups.whenEnded(), 'keep');
  } finally {
    chrome.storage.local.failReads = false;
  }
});
