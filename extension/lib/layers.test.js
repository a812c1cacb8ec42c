// Imports point down (docs/architecture.md, "Imports point down"): the extension's pages (ui/)
// load lib/ and their own modules, never the service worker's (worker/): a page that loaded the
// worker's modules would run their listeners a second time and could load worker/native.js, the
// native port's code. And lib/ loads only lib/. Read from the files as they are, every import
// followed. node --test extension/lib/*.test.js

import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

const EXTENSION = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// The specifiers a module's source imports: static, re-exported, bare and dynamic.
function specifiersIn(source) {
  const forms = [
    /^\s*(?:import|export)\s[^;]*?\sfrom\s*['"]([^'"]+)['"]/gm, // import { a } from '…', export { a } from '…'
    /^\s*import\s*['"]([^'"]+)['"]/gm, // import '…'
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g, // import('…')
  ];
  return forms.flatMap((form) => [...source.matchAll(form)].map((m) => m[1]));
}

// The modules `file` imports, as absolute paths.
const importsOf = (file) => specifiersIn(readFileSync(file, 'utf8')).map((s) => resolve(dirname(file), s));

// The scripts an HTML page loads.
function scriptsOf(page) {
  return [...readFileSync(page, 'utf8').matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g)].map((m) => resolve(dirname(page), m[1]));
}

// Every module reachable from `roots`, each with the chain of imports that reaches it.
function reachable(roots) {
  const seen = new Map(roots.map((r) => [r, [r]]));
  const todo = [...roots];
  while (todo.length > 0) {
    const file = todo.pop();
    assert.ok(existsSync(file), `${name(file)} is imported (${seen.get(file).map(name).join(' → ')}) but does not exist`);
    for (const next of importsOf(file)) {
      if (seen.has(next)) continue;
      seen.set(next, [...seen.get(file), next]);
      todo.push(next);
    }
  }
  return seen;
}

const name = (file) => relative(EXTENSION, file);
const filesIn = (dir, ext) => readdirSync(join(EXTENSION, dir)).filter((f) => f.endsWith(ext)).map((f) => join(EXTENSION, dir, f));
const under = (dir) => (file) => name(file).startsWith(`${dir}/`);

test('the import reader sees every form of import', () => {
  const source = [
    "import { a, b } from './one.js';",
    'import {\n  c,\n  d,\n} from "../two.js";',
    "import * as e from './three.js';",
    "import './four.js';",
    "export { f } from './five.js';",
    "const g = await import('./six.js');",
    "// a comment: nothing from './seven.js' is imported here",
  ].join('\n');
  assert.deepEqual(specifiersIn(source).sort(), ['../two.js', './five.js', './four.js', './one.js', './six.js', './three.js']);
  assert.ok(importsOf(join(EXTENSION, 'worker', 'background.js')).map(name).includes('worker/native.js'));
});

test('the pages (ui/) load no module of the worker, so not its native port', () => {
  const roots = [...filesIn('ui', '.html').flatMap(scriptsOf), ...filesIn('ui', '.js')];
  assert.ok(roots.some((r) => name(r) === 'ui/popup.js'), 'popup.html loads ui/popup.js');
  const modules = reachable(roots);
  const worker = [...modules].filter(([file]) => under('worker')(file));
  assert.deepEqual(worker.map(([, chain]) => chain.map(name).join(' → ')), [], 'ui/ reaches into worker/');
  assert.ok([...modules.keys()].some(under('lib')), 'the popup reads the stored state from lib/');
});

test('lib/ imports only lib/', () => {
  for (const file of filesIn('lib', '.js').filter((f) => !f.endsWith('.test.js'))) {
    for (const dep of importsOf(file)) assert.ok(under('lib')(dep), `${name(file)} imports ${name(dep)}, outside lib/`);
  }
});
