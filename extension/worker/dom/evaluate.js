// Service worker, called by the bridges for evaluate: dom.evaluate runs the assistant's function in
// the page's own world and returns its value. Off unless the user turned on "Run scripts" for the
// site (sites.js switches): a script can do anything the page can. The function runs as the page's
// own code would, so the page's Content-Security-Policy applies: a page that forbids eval gets a
// clear error, and nothing ran.

import { fail } from '../../lib/errors.js';
import { requireSwitch } from '../sites.js';
import { tabId } from '../tabs.js';
import { runIn, topDocument } from './target.js';

const MAX_SOURCE = 100_000; // characters of the function's source
const MAX_RESULT = 1024 * 1024; // characters of its value as JSON

export const evaluateMethods = {
  'dom.evaluate': async (params) => {
    const id = tabId(params);
    const source = params.function;
    if (typeof source !== 'string' || source.trim() === '') fail('bad_request', '`function` must be the source of a JavaScript function, e.g. "() => document.title" or "async () => { … }"');
    if (source.length > MAX_SOURCE) fail('too_large', `the function is ${source.length} characters, over the ${MAX_SOURCE} tabwire runs; send a shorter one`);
    const doc = await topDocument(id, params);
    requireSwitch(id, doc.origin, 'scripts');
    const out = await runIn(doc, run, [source, MAX_RESULT], 'MAIN');
    const where = `${doc.origin} (tab ${id})`;
    if (!out || typeof out !== 'object') fail('page_error', `the script in ${where} gave no answer (the page replaced the functions tabwire relies on, or navigated)`);
    if (out.csp) fail('not_scriptable', `${where} forbids running code from text (its Content-Security-Policy has no 'unsafe-eval'), so nothing ran: ${out.csp}. Use read_page, find and the other page tools there instead`);
    if (out.syntax) fail('bad_request', `the function does not parse: ${out.syntax}`);
    if (out.kind) fail('bad_request', `\`function\` must evaluate to a function, e.g. "() => document.title"; it evaluates to ${out.kind}`);
    if (out.threw) fail('page_error', `the function threw in ${where}: ${out.threw}`);
    if (out.large) fail('too_large', `the function's value is ${out.large} characters as JSON, over the ${MAX_RESULT} tabwire returns; return less (a summary, a slice)`);
    if (out.unserializable) fail('page_error', `the function's value in ${where} cannot be turned into JSON (${out.unserializable}); return plain data`);
    return { origin: doc.origin, url: doc.url, result: JSON.parse(out.json) };
  },
};

// Runs in the page's world (a copy of it is injected): every path returns a plain object.
async function run(source, maxResult) {
  let fn;
  try {
    fn = (0, eval)(`(${source}\n)`);
  } catch (e) {
    if (e instanceof EvalError) return { csp: e.message };
    return { syntax: `${e.name}: ${e.message}` };
  }
  if (typeof fn !== 'function') return { kind: fn === null ? 'null' : typeof fn };
  let value;
  try {
    value = await fn();
  } catch (e) {
    return { threw: String(e?.stack ?? e).slice(0, 4000) };
  }
  let json;
  try {
    json = JSON.stringify(value === undefined ? null : value) ?? 'null';
  } catch (e) {
    return { unserializable: e.message };
  }
  return json.length > maxResult ? { large: json.length } : { json };
}
