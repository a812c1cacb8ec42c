// Declared commands: what a page says about the commands it handles (tabwire.app(name) and
// onCommand's third argument, specs/page-sdk.md "Declared commands"), checked here before any
// of it goes on. The page is untrusted: its declaration is data with limits. A declaration that
// breaks one is refused whole, with an error saying which command and what to change; the page
// hears it (its SDK logs it) and the assistant keeps the page's previous list.

import { fail } from './errors.js';
import { deeperThan } from './limits.js';

export const MAX_COMMANDS = 64; // declared commands per page
export const MAX_NAME = 64; // characters of an app or command name
export const MAX_DESCRIPTION = 1024; // characters of a command's description
export const MAX_SCHEMA = 16 * 1024; // JSON text of one params or result schema
export const MAX_SCHEMA_DEPTH = 16; // objects and arrays inside one another in one schema
// What a parameter (a property, `required` or `$defs` entry of params) may be named: the names
// become the MCP tool's own, where no label can mark them as the page's words.
export const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const TYPES = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'];

// The page's declaration `{app, commands: [{type, description?, params?, result?, readOnly?,
// destructive?}]}` from its JSON text, checked; throws `bad_request` saying what is wrong.
export function checkDeclaration(json) {
  if (typeof json !== 'string' || json.length > MAX_COMMANDS * (2 * MAX_SCHEMA + MAX_DESCRIPTION + 256))
    fail('too_large', 'the command declarations are too large; declare fewer or smaller commands');
  let d;
  try {
    d = JSON.parse(json);
  } catch (e) {
    fail('bad_request', `the command declarations are not JSON: ${e.message}`);
  }
  if (d === null || typeof d !== 'object' || !Array.isArray(d.commands)) fail('bad_request', 'the command declarations must be {app, commands: [...]}');
  const app = d.app ?? null;
  if (app !== null && !named(app)) fail('bad_request', `tabwire.app(name) needs a name of 1 to ${MAX_NAME} characters`);
  if (d.commands.length > MAX_COMMANDS) fail('too_large', `a page declares at most ${MAX_COMMANDS} commands; this one has ${d.commands.length}`);
  const seen = new Set();
  const commands = d.commands.map((c) => {
    const type = c?.type;
    if (!named(type)) fail('bad_request', `a command's type must be a name of 1 to ${MAX_NAME} characters`);
    if (seen.has(type)) fail('bad_request', `command ${JSON.stringify(type)} is declared twice`);
    seen.add(type);
    return checkCommand(type, c);
  });
  return { app, commands };
}

function checkCommand(type, c) {
  const what = `command ${JSON.stringify(type)}`;
  const out = { type, description: null, params: null, result: null, readOnly: false, destructive: false, declared: c.declared === true };
  if (c.description != null) {
    if (typeof c.description !== 'string') fail('bad_request', `${what}: description must be a string`);
    if (c.description.length > MAX_DESCRIPTION) fail('too_large', `${what}: the description is ${c.description.length} characters, over ${MAX_DESCRIPTION}; say it shorter`);
    out.description = c.description;
  }
  for (const flag of ['readOnly', 'destructive']) {
    if (c[flag] != null && typeof c[flag] !== 'boolean') fail('bad_request', `${what}: ${flag} must be true or false`);
    out[flag] = c[flag] === true;
  }
  for (const key of ['params', 'result']) {
    if (c[key] == null) continue;
    out[key] = checkSchema(`${what}: ${key}`, c[key], key === 'params');
  }
  if (out.params) {
    if (out.params.type !== 'object')
      fail('bad_request', `${what}: params must be a JSON Schema of an object, the command's named parameters: {type: "object", properties: {…}, required: […]}`);
    if (out.params.properties && Object.hasOwn(out.params.properties, 'tab_id'))
      fail('bad_request', `${what}: the parameter name tab_id is tabwire's (it says which tab runs the command); name it otherwise`);
  }
  return out;
}

// A JSON Schema object, within the limits, with the keywords every schema needs well-formed;
// the bridge compiles it fully before it checks a payload against it.
// With `params`, every property, `required` and `$defs` name must be a PARAM_NAME.
function checkSchema(what, schema, params) {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema))
    fail('bad_request', `${what} is not a JSON Schema object (got ${Array.isArray(schema) ? 'an array' : typeof schema}); write {type: …, properties: …}`);
  const json = JSON.stringify(schema);
  if (json.length > MAX_SCHEMA) fail('too_large', `${what} is ${json.length} characters of JSON, over ${MAX_SCHEMA}; make the schema smaller`);
  if (deeperThan(json, MAX_SCHEMA_DEPTH)) fail('too_deep', `${what} nests deeper than ${MAX_SCHEMA_DEPTH} levels; make the schema flatter`);
  walk(what, schema, '', params);
  return schema;
}

// The keywords whose shape is easy to get wrong, checked wherever a subschema appears.
function walk(what, s, at, params) {
  if (typeof s === 'boolean') return;
  if (s === null || typeof s !== 'object' || Array.isArray(s)) fail('bad_request', `${what}: the schema at "${at || '/'}" is not a JSON Schema (an object or a boolean)`);
  const bad = (keyword, want) => fail('bad_request', `${what}: "${keyword}" at "${at || '/'}" must be ${want}`);
  if ('type' in s) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (types.length === 0 || !types.every((t) => TYPES.includes(t))) bad('type', `one of ${TYPES.join(', ')} (or a list of them)`);
  }
  if ('required' in s && !(Array.isArray(s.required) && s.required.every((r) => typeof r === 'string'))) bad('required', 'a list of property names');
  const param = (name) => {
    if (params && !PARAM_NAME.test(name))
      fail('bad_request', `${what}: the parameter name ${JSON.stringify(name.slice(0, 40))} at "${at || '/'}" is not allowed: a parameter name is a letter or _, then letters, digits or _, 64 characters at most; rename it`);
  };
  if (Array.isArray(s.required)) s.required.forEach(param);
  if ('enum' in s && !Array.isArray(s.enum)) bad('enum', 'a list of values');
  if ('$ref' in s && (typeof s.$ref !== 'string' || !s.$ref.startsWith('#'))) bad('$ref', 'a reference inside the schema ("#/$defs/…"): nothing is fetched');
  for (const key of ['properties', '$defs', 'patternProperties']) {
    if (!(key in s)) continue;
    if (s[key] === null || typeof s[key] !== 'object' || Array.isArray(s[key])) bad(key, 'an object of schemas');
    for (const [name, sub] of Object.entries(s[key])) {
      if (key !== 'patternProperties') param(name);
      walk(what, sub, `${at}/${key}/${name}`, params);
    }
  }
  for (const key of ['items', 'additionalProperties', 'not', 'contains', 'propertyNames', 'if', 'then', 'else']) if (key in s) walk(what, s[key], `${at}/${key}`, params);
  for (const key of ['allOf', 'anyOf', 'oneOf', 'prefixItems']) {
    if (!(key in s)) continue;
    if (!Array.isArray(s[key])) bad(key, 'a list of schemas');
    s[key].forEach((sub, i) => walk(what, sub, `${at}/${key}/${i}`, params));
  }
}

const named = (s) => typeof s === 'string' && s.length > 0 && s.length <= MAX_NAME;
