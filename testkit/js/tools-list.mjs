// The tool list as two clients see it, over the real `tabwire mcp` on stdio:
// - `check`: every tool's input and output schema compiles in Ajv's JSON Schema 2020-12
//   validator in strict mode (standard formats only, via ajv-formats), with no warning; prints
//   one line per problem and exits 1 if there is any.
// - `bench N`: the official MCP TypeScript SDK client lists the tools N times (each listing
//   also compiles the output schemas' validators, as every SDK client does, unless it has them
//   by `$id`); prints the first listing's time, the median and p90 of the others, the reply's
//   size and how many warnings the SDK printed per listing.
// - `tokens`: what the tool list costs a model, as clients hand it over: per tool its name,
//   description and input schema (JSON), in characters and ÷ 4 as tokens; beside it the
//   server's instructions (put once in the system prompt) and the size of the listing.
// Usage: node tools-list.mjs check|bench|tokens [N] -- /path/to/server [args…]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const [mode, n = '50'] = process.argv.slice(2, process.argv.indexOf('--'));
const [command, ...args] = process.argv.slice(process.argv.indexOf('--') + 1);

const warnings = [];
const warn = console.warn;
console.warn = (...a) => warnings.push(a.join(' '));

async function connect() {
  const transport = new StdioClientTransport({ command, args, env: process.env, stderr: 'inherit' });
  const client = new Client({ name: 'schema-check', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

function check(tools) {
  const problems = [];
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, logger: { log() {}, warn: (m) => problems.push(`warning: ${m}`), error: (m) => problems.push(`error: ${m}`) } });
  addFormats(ajv);
  for (const tool of tools) {
    for (const [what, schema] of [['inputSchema', tool.inputSchema], ['outputSchema', tool.outputSchema]]) {
      if (schema === undefined) continue;
      const before = problems.length;
      try {
        ajv.compile(schema);
      } catch (e) {
        problems.push(e.message);
      }
      for (let i = before; i < problems.length; i++) problems[i] = `${tool.name} ${what}: ${problems[i]}`;
    }
  }
  return problems;
}

const client = await connect();
if (mode === 'tokens') {
  const { tools } = await client.listTools();
  const chars = tools.reduce((n, t) => n + t.name.length + (t.description ?? '').length + JSON.stringify(t.inputSchema).length, 0);
  const instructions = (client.getInstructions() ?? '').length;
  console.log(JSON.stringify({ tools: tools.length, chars, tokens: Math.round(chars / 4), instructions_chars: instructions, with_instructions_tokens: Math.round((chars + instructions) / 4), list_bytes: JSON.stringify({ tools }).length }));
  await client.close();
} else if (mode === 'check') {
  const { tools } = await client.listTools();
  const problems = check(tools);
  for (const w of warnings) problems.push(`SDK client warning: ${w}`);
  console.log(JSON.stringify({ tools: tools.length, bytes: JSON.stringify(tools).length, problems }));
  await client.close();
  process.exit(problems.length ? 1 : 0);
} else {
  const times = [];
  let bytes = 0;
  let count = 0;
  warnings.length = 0;
  for (let i = 0; i < Number(n); i++) {
    const t0 = performance.now();
    const { tools } = await client.listTools();
    times.push(performance.now() - t0);
    bytes = JSON.stringify({ tools }).length;
    count = tools.length;
  }
  // The first listing compiles the output schemas' validators; later ones find them by $id.
  const first = times.shift();
  times.sort((a, b) => a - b);
  const at = (q) => +times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(2);
  const line = { tools: count, bytes, first_ms: +first.toFixed(2), runs: times.length, median_ms: at(0.5), p90_ms: at(0.9), warnings_per_listing: warnings.length / (times.length + 1) };
  console.log(JSON.stringify(line));
  await client.close();
}
console.warn = warn;
