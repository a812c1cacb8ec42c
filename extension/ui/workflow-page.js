// The extension's page of live workflows (workflow.html; specs/workflows.md): every workflow
// session the bridges told this browser about, most recently changed first — its graph with
// the current state highlighted, its items, batches and tasks. It follows them all on a port
// to the worker (worker/workflow.js) and redraws a session's card at each change.

const SVG = 'http://www.w3.org/2000/svg';
const NODE_W = 176;
const NODE_H = 26;
const GAP_X = 64;
const GAP_Y = 14;
const PAD = 14;
const HEAD = 44; // room for a column's phase label, and the lane of edges that skip columns
const LANE = PAD + 34; // y of the top lane (each edge on it a little higher than the last)
const MAX_ROWS = 12; // a phase with more states wraps into another column

const sessions = new Map(); // JSON [project, session] → { data, card }
const el = (id) => document.getElementById(id);

follow();

// Follow every workflow; after a worker restart, again (the bridges send them anew).
function follow() {
  const port = chrome.runtime.connect({ name: 'workflow' });
  port.onMessage.addListener((msg) => {
    if (msg?.type === 'workflow') show(JSON.parse(msg.json));
  });
  port.onDisconnect.addListener(() => setTimeout(follow, 500));
  port.postMessage({ type: 'watch_all' });
}

function show(data) {
  const key = JSON.stringify([data.project, data.session]);
  let s = sessions.get(key);
  if (!s) {
    s = { card: document.createElement('section') };
    s.card.className = 'workflow';
    sessions.set(key, s);
  }
  s.data = data;
  draw(s.card, data);
  // Most recently changed first.
  const order = [...sessions.values()].sort((a, b) => b.data.state.lastActivity - a.data.state.lastActivity);
  el('workflows').replaceChildren(...order.map((x) => x.card));
  el('empty').hidden = sessions.size > 0;
}

function draw(card, { project, session, state, graph }) {
  const here = graph.states.find((st) => st.id === state.state);
  card.dataset.project = project;
  card.dataset.session = session;
  card.dataset.state = state.state;
  card.dataset.revision = String(state.revision);
  const title = h('h2', {}, `${state.workflow} `, h('span', { class: 'where' }, `— ${project} · session ${session}`));
  card.replaceChildren(title, h('p', { class: 'now' }, ...now(state, here)), graphOf(graph, state.state), facts(state));
}

// "Now: <state> — run <skill> · phase · item · revision · time"
function now(state, here) {
  const parts = [];
  const item = state.items.find((i) => i.number === state.currentItem);
  if (here?.skill) parts.push(`run ${here.skill}${here.id.startsWith('clear-') ? ' after clearing the context' : ''}`);
  else parts.push('done');
  if (state.phase) parts.push(`phase ${state.phase}`);
  if (item) parts.push(`item ${item.number} of ${state.totalItems}: ${item.title}${item.type ? ` (${item.type})` : ''}`);
  if (state.currentBatch !== null && state.batches[state.currentBatch]) parts.push(`batch ${state.currentBatch}: ${state.batches[state.currentBatch].id}`);
  parts.push(`revision ${state.revision}`, new Date(state.lastActivity).toLocaleTimeString());
  return ['Now: ', h('b', { class: 'current-state' }, state.state), ` — ${parts.join(' · ')}`];
}

// The graph: a column per phase (in the order the workflow names them), states top-down in
// their declared order; routing nodes dashed, clear-* states yellow, the current one blue.
function graphOf(graph, current) {
  const columns = [];
  for (const [i, st] of graph.states.entries()) {
    const phase = st.phase ?? '';
    let col = columns.findLast((c) => c.phase === phase);
    if (!col || col.ids.length >= MAX_ROWS) columns.push((col = { phase, ids: [] }));
    col.ids.push(i);
  }
  const at = new Map(); // state id → {x, y, col, row}
  columns.forEach((col, c) => col.ids.forEach((i, r) => {
    at.set(graph.states[i].id, { x: PAD + c * (NODE_W + GAP_X), y: PAD + HEAD + r * (NODE_H + GAP_Y), col: c, row: r });
  }));
  const rows = Math.max(...columns.map((c) => c.ids.length));
  const bottom = PAD + HEAD + rows * (NODE_H + GAP_Y);
  const width = PAD * 2 + columns.length * (NODE_W + GAP_X) - GAP_X;
  const height = bottom + 40;
  const svg = s('svg', { width, height, viewBox: `0 0 ${width} ${height}` });
  svg.append(s('defs', {}, arrow('arrow', '#8c959f'), arrow('arrow-current', '#0969da')));
  columns.forEach((col, c) => {
    if (col.phase && (c === 0 || columns[c - 1].phase !== col.phase))
      svg.append(s('text', { class: 'phase', x: PAD + c * (NODE_W + GAP_X), y: PAD + 10 }, col.phase));
  });
  let lanes = 0; // edges on the top lane so far
  for (const st of graph.states) {
    for (const t of st.transitions ?? []) {
      const from = at.get(st.id);
      const to = at.get(t.to);
      if (!from || !to) continue;
      const skips = to.col > from.col + 1;
      const { d, label } = route(from, to, bottom, skips ? lanes++ : 0);
      const cls = st.id === current ? 'edge from-current' : 'edge';
      svg.append(s('path', { class: cls, d, 'marker-end': `url(#${st.id === current ? 'arrow-current' : 'arrow'})` }));
      if (t.condition) svg.append(s('text', { class: 'edge-label', ...label }, describe(t.condition)));
    }
  }
  for (const st of graph.states) {
    const p = at.get(st.id);
    const cls = ['node'];
    if (st.skill === null) cls.push(st.transitions?.length ? 'routing' : 'end');
    if (st.id.startsWith('clear-')) cls.push('clear');
    if (st.id === current) cls.push('current');
    const g = s('g', { class: cls.join(' '), 'data-state': st.id });
    const tip = `${st.id}\nskill: ${st.skill ?? '(routing)'}\n→ ${(st.transitions ?? []).map((t) => t.to + (t.condition ? ` if ${describe(t.condition)}` : '')).join('; ') || 'the end'}`;
    g.append(
      s('title', {}, tip),
      s('rect', { x: p.x, y: p.y, width: NODE_W, height: NODE_H, rx: st.skill === null ? 13 : 5 }),
      s('text', { x: p.x + 8, y: p.y + 17 }, st.id),
    );
    svg.append(g);
  }
  const box = h('div', { class: 'graph' });
  box.append(svg);
  return box;
}

// A path from one node to another, and where its label goes. Edges keep to the gaps: to the
// next column, a curve; further right, up to the top lane, across, and down into the target
// (lane `k`, each a little higher); back to an earlier column, along the bottom; within a
// column, straight down to the next one, else around the right side.
function route(a, b, bottom, k) {
  const cx = (p) => p.x + NODE_W / 2;
  const cy = (p) => p.y + NODE_H / 2;
  const left = { 'text-anchor': 'end', x: b.x - 4, y: cy(b) - 5 };
  if (b.col === a.col + 1) {
    const [x0, y0, x3, y3] = [a.x + NODE_W, cy(a), b.x, cy(b)];
    const mx = (x0 + x3) / 2;
    return { d: `M${x0},${y0} C${mx},${y0} ${mx},${y3} ${x3},${y3}`, label: left };
  }
  if (b.col > a.col) {
    const lane = LANE - 5 * k;
    const x1 = a.x + NODE_W + 12 + 4 * k;
    const x2 = b.x - 14 - 4 * k;
    return { d: corners([[a.x + NODE_W, cy(a)], [x1, cy(a)], [x1, lane], [x2, lane], [x2, cy(b)], [b.x, cy(b)]]), label: left };
  }
  if (b.col === a.col && b.row === a.row + 1) {
    return { d: `M${cx(a)},${a.y + NODE_H} L${cx(b)},${b.y}`, label: { x: cx(a) + 8, y: a.y + NODE_H + 10 } };
  }
  if (b.col === a.col) {
    const bulge = 22 + 4 * Math.abs(b.row - a.row);
    const [x0, y0, x3, y3] = [a.x + NODE_W, cy(a), b.x + NODE_W, cy(b)];
    return { d: `M${x0},${y0} C${x0 + bulge},${y0} ${x3 + bulge},${y3} ${x3},${y3}`, label: { x: x0 + bulge + 2, y: (y0 + y3) / 2 } };
  }
  const low = bottom + 10;
  return { d: corners([[cx(a), a.y + NODE_H], [cx(a), low], [cx(b), low], [cx(b), b.y + NODE_H]]), label: { x: cx(b) + 4, y: low - 3 } };
}

// A polyline through `points` with rounded corners.
function corners(points, r = 6) {
  let d = `M${points[0]}`;
  for (let i = 1; i < points.length - 1; i++) {
    const [p, q, n] = [points[i - 1], points[i], points[i + 1]];
    const toward = (from, to) => {
      const len = Math.hypot(to[0] - from[0], to[1] - from[1]) || 1;
      const m = Math.min(r, len / 2);
      return [from[0] + ((to[0] - from[0]) * m) / len, from[1] + ((to[1] - from[1]) * m) / len];
    };
    d += ` L${toward(q, p)} Q${q} ${toward(q, n)}`;
  }
  return `${d} L${points.at(-1)}`;
}

function describe(c) {
  switch (c.type) {
    case 'item_type': return c.value;
    case 'items_remaining': return 'items left';
    case 'no_items_remaining': return 'no items left';
    case 'batches_remaining': return 'batches left';
    case 'no_batches_remaining': return 'no batches left';
    default: return c.type;
  }
}

// Items, and the batches with their tasks.
function facts(state) {
  const items = h('div', {}, h('h3', {}, `Items — ${state.documentedItems} of ${state.totalItems} documented`));
  if (state.items.length === 0) items.append(h('p', { class: 'muted' }, 'None recorded yet (update_workflow {items}).'));
  else {
    const rows = state.items.map((i) => h('tr', { class: i.number === state.currentItem ? 'current' : '', 'data-item': i.number },
      h('td', {}, String(i.number)), h('td', {}, i.title), h('td', {}, i.type ?? '—'), h('td', {}, i.status)));
    items.append(h('table', {}, h('tr', {}, h('th', {}, '#'), h('th', {}, 'title'), h('th', {}, 'type'), h('th', {}, 'status')), ...rows));
  }
  const done = new Set(state.completedTasks);
  const completed = state.batches.filter((b) => b.status === 'completed').length;
  const batches = h('div', {}, h('h3', {}, `Batches — ${completed} of ${state.batches.length} completed`));
  if (state.batches.length === 0) batches.append(h('p', { class: 'muted' }, 'No plan recorded yet (update_workflow {batches}).'));
  state.batches.forEach((b, i) => {
    const tasks = b.tasks.map((t) => {
      const ready = t.status !== 'completed' && t.dependsOn.every((d) => done.has(d));
      const after = t.dependsOn.length ? ` ← ${t.dependsOn.join(', ')}` : '';
      return h('span', { class: `task ${t.status}${ready ? ' ready' : ''}`, title: `${t.id}: ${t.status}${ready ? ', ready' : ''}${after}` }, `${t.id} ${t.status.replace('_', ' ')}${after}`);
    });
    batches.append(h('div', { class: `batch${i === state.currentBatch ? ' current' : ''}`, 'data-batch': b.id },
      h('div', {}, h('b', {}, `${i}. ${b.id}`), ` — ${b.status.replace('_', ' ')}`), h('div', {}, ...tasks)));
  });
  return h('div', { class: 'facts' }, items, batches);
}

function h(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== '') e.setAttribute(k, v);
  e.append(...children);
  return e;
}

function s(tag, attrs, ...children) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  e.append(...children);
  return e;
}

function arrow(id, color) {
  return s('marker', { id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
    s('path', { d: 'M0,0 L10,5 L0,10 z', fill: color }));
}
