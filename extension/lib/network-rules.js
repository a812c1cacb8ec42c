// The pure parts of network_rules (worker/network.js): a rule's URL pattern, checked and written
// with its origin as the browser writes it, and a mocked body as a data: URL. No chrome.*.

import { fail } from './errors.js';

export const MAX_BODY = 512 * 1024; // bytes of a mocked body (it travels in the rule's URL)

// `pattern`: a URL of an allowed site, `*` standing for any characters, e.g.
// `http://localhost:5173/api/*`, a final `|` ending the URL. Its origin, and the pattern with the
// origin as the browser writes it, matched from the start of a URL (page-world/requests.js): it
// matches no URL of another site. `allows(origin)` says whether the user allowed the site.
export function parsePattern(pattern, allows) {
  if (typeof pattern !== 'string' || pattern.length > 2000 || !/^[\x21-\x7e]+$/.test(pattern))
    fail('bad_request', '`url_pattern` must be a URL of up to 2000 printable ASCII characters, such as http://localhost:5173/api/*');
  const head = /^(https?:\/\/[^/*^|?#@\\]+)\//i.exec(pattern);
  if (!head) fail('bad_request', `\`url_pattern\` must start with an origin and a slash, such as http://localhost:5173/api/* (\`*\` stands for any characters after the origin); got ${JSON.stringify(pattern)}`);
  let origin;
  try {
    origin = new URL(head[1]).origin;
  } catch {
    fail('bad_request', `\`url_pattern\` does not start with an origin: ${JSON.stringify(head[1])}`);
  }
  if (origin.toLowerCase() !== head[1].toLowerCase()) fail('bad_request', `write the origin of \`url_pattern\` as ${origin} (as the browser writes it); got ${head[1]}`);
  const rest = pattern.slice(head[1].length);
  if (rest.slice(0, -1).includes('|')) fail('bad_request', '`url_pattern` may hold `|` only at its end (the end of the URL)');
  if (!allows(origin))
    fail('site_not_allowed', `${origin} is a site tabwire is not allowed on, so no rule may match its requests; the user can allow it in the tabwire popup or with \`tabwire sites allow ${origin}\``);
  return { origin, pattern: `${origin}${rest}` };
}

// The data: URL that answers with `body` (UTF-8) as `type`, and the body's size in bytes.
export function dataUrl(body, type) {
  if (typeof body !== 'string') fail('bad_request', 'action mock needs `body`, the text the page gets');
  if (typeof type !== 'string' || !/^[\w.+-]+\/[\w.+-]+(;\s*[\w-]+=[\w.-]+)*$/.test(type))
    fail('bad_request', `\`content_type\` must be a media type such as application/json or text/html; charset=utf-8; got ${JSON.stringify(type)}`);
  const bytes = new TextEncoder().encode(body);
  if (bytes.length > MAX_BODY) fail('too_large', `a mocked body is at most ${MAX_BODY} bytes; this one is ${bytes.length}`);
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { url: `data:${type.replace(/;\s+/g, ';')};base64,${btoa(bin)}`, bytes: bytes.length };
}

// What a document of `origin` gets of its tab's rules (worker/network.js): those made for a page
// of that origin (`page`, the tab's origin when the rule was made), as page-world/requests.js
// reads them. A page sees, and its requests meet, the rules of its own tab and origin only —
// never those made for another allowed site's page that embeds it or that it embeds.
export function rulesForDocument(rules, origin) {
  return rules.filter((r) => r.page === origin).map((r) => ({ action: r.action === 'mock' ? 'mock' : 'block', pattern: r.pattern, data: r.data ?? null }));
}
