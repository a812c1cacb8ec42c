// Tab ownership by tab group (node --test extension/lib/*.test.js).

import assert from 'node:assert/strict';
import test from 'node:test';

import { COLORS, access, colorFor, doneTitle, ended, othersLive, ownedMessage, ownerOf, shown } from './groups.js';

const state = {
  sessions: {
    a: { id: 'a', name: 'alpha', color: 'blue', done: false, groups: [11, 12] },
    b: { id: 'b', name: 'beta', color: 'red', done: false, groups: [21] },
    old: { id: 'old', name: 'gone', color: 'green', done: true, groups: [31] },
  },
};

test('a session owns the tabs of its groups; no group, a done one: the user', () => {
  assert.equal(ownerOf(state, 12).id, 'a');
  assert.equal(ownerOf(state, -1), null);
  assert.equal(ownerOf(state, undefined), null);
  assert.equal(access(state, 11, 'a').kind, 'own');
  assert.equal(access(state, -1, 'a').kind, 'user');
  assert.equal(access(state, 31, 'a').kind, 'user');
  const refused = access(state, 21, 'a');
  assert.equal(refused.kind, 'refused');
  assert.equal(refused.owner.name, 'beta');
  assert.equal(access(state, 21, null).kind, 'user', 'a call made for no session (the CLI) is the user');
});

test('only another live session with a group can refuse a call', () => {
  assert.equal(othersLive(state, 'a'), true);
  const alone = { sessions: { a: state.sessions.a, old: state.sessions.old } };
  assert.equal(othersLive(alone, 'a'), false);
  assert.equal(othersLive({ sessions: {} }, null), false);
});

test('list: own tabs shared, the user\'s not, other live sessions\' hidden', () => {
  const tab = (group_id) => ({ id: 1, url: 'http://x/', group_id });
  assert.deepEqual(shown(state, tab(11), 'a'), { id: 1, url: 'http://x/', shared: true, group: 'alpha' });
  assert.deepEqual(shown(state, tab(-1), 'a'), { id: 1, url: 'http://x/', shared: false });
  assert.deepEqual(shown(state, tab(31), 'a'), { id: 1, url: 'http://x/', shared: false, group: 'gone (done)' });
  assert.equal(shown(state, tab(21), 'a'), null);
});

test('sessions that went; colours and titles', () => {
  assert.deepEqual(ended(['a', 'b', 'c'], ['b']), ['a', 'c']);
  assert.deepEqual(ended([], ['b']), []);
  assert.equal(colorFor('lead-1'), colorFor('lead-1'));
  assert.ok(COLORS.includes(colorFor('x')));
  assert.equal(doneTitle('alpha'), 'alpha (done)');
  const said = ownedMessage(7, state.sessions.b, 'alpha');
  assert.match(said, /tab 7 is in the tab group "beta"/);
  assert.match(said, /your group "alpha"/);
});
