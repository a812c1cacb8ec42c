// How the worker writes what read_page and find return, from the lines the agents of a tab's
// frames read (isolated/snapshot.js): refs, frames nested, the token budget, the diff of
// `since`. Pure: worker/dom.js does the asking and the waiting.

import { fail } from './errors.js';

// Budget: tokens are counted as characters / 4 (docs/design.md, "How read_page counts tokens").
export const tokens = (text) => Math.ceil(text.length / 4);

// A ref as the tool gives it ("e12", "f3e12") → { frameId, ref: "e12" }.
export function parseRef(ref) {
  const m = /^(?:f(\d+))?(e\d+)$/.exec(typeof ref === 'string' ? ref.trim() : '');
  if (!m) fail('bad_request', `${JSON.stringify(ref)} is not a ref; refs look like e12 (or f3e12 inside a frame) and come from read_page or find`);
  return { frameId: m[1] ? Number(m[1]) : 0, ref: m[2] };
}

// A line of frame `frameId` as the assistant sees it: the agent writes \u0001 where the
// frame's prefix goes before each ref (JSON quoting keeps the page's words from holding one).
export const inFrame = (line, frameId) => line.replaceAll('\u0001', frameId === 0 ? '' : `f${frameId}`);

// Which frame each iframe line of a document is (by its number there): the child frame at
// the iframe's address, else the next one not yet matched, in the order Chrome lists them
// (content scripts cannot ask Chrome for an iframe's frame id). `frames`: Chrome's frames of
// the tab by id; `lines`: the document's, some with `f: {n, src}`.
export function childFrames(frames, parentId, lines) {
  const free = [...frames.values()].filter((f) => f.parentFrameId === parentId);
  const map = new Map();
  const iframes = lines.filter((l) => l.f !== undefined).map((l) => l.f);
  for (const f of iframes) {
    const i = free.findIndex((c) => c.url === f.src);
    if (i >= 0) map.set(f.n, free.splice(i, 1)[0]);
  }
  for (const f of iframes) if (!map.has(f.n) && free.length) map.set(f.n, free.shift());
  return map;
}

// Fit lines ({d: depth, t: text, v: in the viewport}) to `budget` tokens: drop what is outside
// the viewport first, then the end. { lines: text lines, total: tokens, cut: {offscreen, end} }.
export function fit(lines, budget) {
  const text = (l) => `${'  '.repeat(l.d)}${l.t}`;
  let total = lines.reduce((n, l) => n + tokens(text(l)), 0);
  const cut = { offscreen: 0, end: 0 };
  if (total <= budget) return { lines: lines.map(text), total, cut };
  const kept = [];
  for (const l of lines) {
    if (l.v) kept.push(text(l));
    else if (kept.at(-1)?.startsWith('… ')) cut.offscreen += 1;
    else {
      cut.offscreen += 1;
      kept.push('… ');
    }
  }
  const out = kept.map((l) => (l === '… ' ? '… (outside the viewport, cut for the budget)' : l));
  total = 0;
  for (let i = 0; i < out.length; i++) {
    total += tokens(out[i]);
    if (total > budget) {
      cut.end = out.length - i;
      out.length = i;
      out.push(`… ${cut.end} more lines cut for the budget: pass a larger budget, or root: REF for one part`);
      break;
    }
  }
  return { lines: out, total: out.reduce((n, l) => n + tokens(l), 0), cut };
}

// The lines of `after` not in `before` and those of `before` not in `after`, each line counted
// as often as it occurs (a list repeated three times and now twice lost one).
export function diffLines(before, after) {
  const count = (list) => list.reduce((m, l) => m.set(l, (m.get(l) ?? 0) + 1), new Map());
  const a = count(before);
  const b = count(after);
  const added = after.filter((l) => ((a.get(l) ?? 0) > 0 ? (a.set(l, a.get(l) - 1), false) : true));
  const removed = before.filter((l) => ((b.get(l) ?? 0) > 0 ? (b.set(l, b.get(l) - 1), false) : true));
  return { added, removed };
}
