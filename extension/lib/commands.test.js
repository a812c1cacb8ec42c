// A page's declared commands, checked before any of it goes on (node --test).

import assert from 'node:assert/strict';
import test from 'node:test';

import { MAX_COMMANDS, MAX_SCHEMA, checkDeclaration } from './commands.js';

const declare = (d) => checkDeclaration(JSON.stringify(d));
const refused = (d, code, words) => assert.throws(() => declare(d), (e) => e.code === code && words.test(e.message), words);

test('a declaration is kept with every field in its place', () => {
  const got = declare({ app: 'todo', commands: [{ type: 'add', description: 'Add one', params: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, readOnly: false }] });
  assert.equal(got.app, 'todo');
  assert.deepEqual(got.commands[0], { type: 'add', description: 'Add one', params: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, result: null, readOnly: false, destructive: false, declared: false });
});

test('what is wrong is said, naming the command', () => {
  refused({ commands: 'x' }, 'bad_request', /must be \{app, commands/);
  refused({ commands: [{ type: 'a' }, { type: 'a' }] }, 'bad_request', /"a" is declared twice/);
  refused({ commands: [{ type: '' }] }, 'bad_request', /type must be a name/);
  refused({ commands: [{ type: 'a', params: { type: 'string' } }] }, 'bad_request', /command "a"/);
  refused({ commands: [{ type: 'a', params: { type: 'object', properties: { 'x y': {} } } }] }, 'bad_request', /parameter name "x y"/);
  refused({ commands: [{ type: 'a', params: { $ref: 'https://evil/schema' } }] }, 'bad_request', /nothing is fetched/);
  refused({ commands: [{ type: 'a', readOnly: 'yes' }] }, 'bad_request', /readOnly must be true or false/);
});

test('the limits', () => {
  refused({ commands: Array.from({ length: MAX_COMMANDS + 1 }, (_, i) => ({ type: `c${i}` })) }, 'too_large', /at most 64 commands/);
  refused({ commands: [{ type: 'a', result: { description: 'x'.repeat(MAX_SCHEMA) } }] }, 'too_large', /over 16384/);
  assert.throws(() => checkDeclaration('{'), /not JSON/);
});
