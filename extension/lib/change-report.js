// What an action changed in a document, as its report says it (isolated/agent.js): the lines of
// the full snapshot that came and went (what went with all it held, as one line) — and, where a
// grid's or a list's rows were re-ordered, filtered or replaced, a few lines that say so instead
// of every line of every row.
//
// A click on a sortable column of a data grid that draws only the rows in view (AG Grid) swaps
// every drawn row: about 80 changed lines, and the line diff, which ignores order, says nothing
// of the order itself. So a table or list whose rows were re-ordered, or more than FOLD_ROWS of
// whose rows came, went or changed, is told as one summary —
//
//   rows of grid [ref=e3]: re-ordered by columnheader "Price" [ref=e10] (ascending); 50 rows; first 5:
//     row [ref=e40]: "Fiat" "500" "15774" "unchecked"
//     …
//     … 45 more: read_page {"root": "e3"} lists the rows drawn
//
// — with the rows as they are now, in order (one line each: the row's ref and its cells'
// names), the first SHOWN of them in view; every row when there are hardly more. Rows changed in place, when
// few (a filter field in the grid's header, an edited cell), stay in the line diff.
//
// Lines are {t: the line with its indentation, k: what it is compared by, d: depth, v: in the
// viewport, i?: a row's aria-rowindex, n?: a table's aria-rowcount} (isolated/snapshot.js,
// `exact`); refs are written `[ref=\u0001e12]`. Pure, so `node --test` runs it: a classic
// script (injected before isolated/agent.js into the same world) that defines
// globalThis.tabwireChanges and nothing else.
(() => {
  const TABLES = new Set(['grid', 'treegrid', 'table', 'list', 'listbox', 'tree']);
  const ROWS = new Set(['row', 'listitem', 'option', 'treeitem']);
  const HEADERS = new Set(['columnheader', 'rowheader']);
  const FOLD_ROWS = 3; // rows that came, went or changed, beyond which they are summed up
  const SHOWN = 5; // rows listed in a summary

  const roleOf = (l) => l.t.trimStart().split(' ', 1)[0];
  const refOf = (l) => /\[ref=\u0001(e\d+)\]/.exec(l.t)?.[1];
  // The page's words of a line: the quoted name after its role (JSON, as snapshot.js wrote it).
  const nameOf = (l) => /^[^ "]+ ("(?:[^"\\]|\\.)*")/.exec(l.t.trimStart())?.[1] ?? null;
  // A column's sort order, which snapshot.js writes right after the ref (the page cannot
  // write \u0001, so no name can pass for it).
  const SORT = /(\[ref=\u0001e\d+\]) \[sort=(ascending|descending)\]/;
  const sortOf = (l) => SORT.exec(l.t)?.[2] ?? null;
  const unsorted = (s) => s.replace(SORT, '$1');

  // The tables of a snapshot by ref: {line, rows: [{ref, lines, key, i}], headers: [line]}.
  // A row is a row line whose nearest table is that one, with the lines nested in it; a row
  // that holds a column header is the table's header, not one of its rows.
  function tables(lines) {
    const out = new Map();
    const stack = []; // by depth: the table and the row of it that the line is in
    lines.forEach((l, at) => {
      stack.length = l.d;
      const up = stack[l.d - 1] ?? { table: null, row: null };
      const role = roleOf(l);
      let here = up;
      if (TABLES.has(role) && refOf(l)) {
        const table = { line: l, rows: [], headers: [] };
        out.set(refOf(l), table);
        here = { table, row: null };
      } else if (ROWS.has(role) && up.table && !up.row) {
        const row = { ref: refOf(l), at, i: l.i };
        up.table.rows.push(row);
        here = { table: up.table, row };
      } else if (HEADERS.has(role) && up.table) {
        up.table.headers.push(l);
        if (up.row) up.row.header = true;
      }
      stack[l.d] = here;
    });
    for (const t of out.values()) {
      t.rows = t.rows.filter((r) => !r.header);
      for (const r of t.rows) {
        let end = r.at + 1;
        while (end < lines.length && lines[end].d > lines[r.at].d) end++;
        r.lines = lines.slice(r.at, end);
        r.key = r.lines.map((l) => l.k).join('\n');
      }
    }
    return out;
  }

  // A row on one line: its own line (the row's name says it all, when it has one), else the
  // row's ref and states and the names of what it holds (its cells; a cell without a name by
  // the first name inside it), in order.
  function rowLine(r) {
    const [own, ...inside] = r.lines;
    if (nameOf(own) !== null) return own.t.trim();
    const names = [];
    let open = false; // a cell whose name is still to come
    for (const l of inside) {
      if (l.d === own.d + 1) open = true;
      const name = nameOf(l);
      if (open && name !== null) {
        names.push(name);
        open = false;
      }
    }
    return `${own.t.trim()}: ${names.join(' ')}`;
  }

  // The summary of one table's rows, or null when its changes are few enough for the line
  // diff. `fold`: the lines it stands for, left out of the line diff.
  function summary(ref, was, now, fold) {
    const before = new Map(was.rows.map((r) => [r.ref, r]));
    const after = new Map(now.rows.map((r) => [r.ref, r]));
    const came = now.rows.filter((r) => !before.has(r.ref));
    const went = was.rows.filter((r) => !after.has(r.ref));
    const changed = now.rows.filter((r) => before.has(r.ref) && before.get(r.ref).key !== r.key);
    // The rows kept, in their order before and now; those at another place among them moved.
    const keptWas = was.rows.filter((r) => after.has(r.ref));
    const keptNow = now.rows.filter((r) => before.has(r.ref));
    const moved = keptNow.filter((r, at) => keptWas[at].ref !== r.ref);
    const sorted = now.headers.filter((h) => sortOf(h));
    const wasSort = new Map(was.headers.map((h) => [refOf(h), sortOf(h)]));
    const resorted = now.headers.some((h) => wasSort.has(refOf(h)) && wasSort.get(refOf(h)) !== sortOf(h));
    const foldChanged = changed.length > FOLD_ROWS;
    const touched = came.length + went.length + (foldChanged ? changed.length : 0);
    if (moved.length === 0 && touched <= FOLD_ROWS && !(resorted && touched > 0)) return null;

    // Rows above the first one the change moved are the table's header (a row of filter
    // fields under the column headers): aria-rowcount counts them, the summary does not, and
    // their changes stay changed lines.
    const indexed = [...came, ...went, ...(foldChanged ? changed : []), ...moved].map((r) => r.i).filter(Number.isInteger);
    const head = indexed.length ? Math.min(...indexed) - 1 : 0;
    const body = (r) => !(Number.isInteger(r.i) && r.i <= head);
    // The rows the summary stands for: a row changed in place among rows re-ordered or
    // replaced is one of them (a grid may draw another row in the element of one that left).
    for (const r of [...came, ...went, ...changed.filter(body)]) for (const l of r.lines) fold.add(l);
    for (const r of changed.filter(body)) for (const l of before.get(r.ref).lines) fold.add(l);
    // A column header whose only change is its sort order: the summary says it.
    for (const h of now.headers) {
      const old = was.headers.find((o) => refOf(o) === refOf(h));
      if (old && old.k !== h.k && unsorted(old.k) === unsorted(h.k)) fold.add(h).add(old);
    }
    const rows = now.rows.filter(body);
    const count = (t, drawn) => (Number.isInteger(t.line.n) && t.line.n >= 0 ? t.line.n - head : drawn);
    const total = count(now, rows.length);
    const totalWas = count(was, was.rows.filter(body).length);

    const facts = [];
    const reordered = moved.length > 0 || resorted;
    if (reordered) {
      const by = sorted.map((h) => `${unsorted(h.t.trim())} (${sortOf(h)})`).join(', ');
      facts.push(by ? `re-ordered by ${by}` : 're-ordered');
    }
    facts.push(total !== totalWas ? `${total} rows now, ${totalWas} before` : `${total} rows`);
    if (!reordered && total === totalWas) facts.push(`${touched} came, went or changed`);
    const inView = rows.filter((r) => r.lines[0].v);
    // All of them when there are hardly more than SHOWN: a line saying how many more costs
    // about what a row does.
    const list = (inView.length ? inView : rows).slice(0, total <= SHOWN + 3 ? total : SHOWN);
    const name = nameOf(now.line);
    const title = `rows of ${roleOf(now.line)}${name === null ? '' : ` ${name}`} [ref=\u0001${ref}]: ${facts.join('; ')}`;
    if (list.length === 0) return [title];
    const all = list.length >= total;
    const out = [`${title}; ${all ? 'all' : `first ${list.length}${inView.length ? ' in view' : ''}`}:`];
    for (const r of list) out.push(`  ${rowLine(r)}`);
    if (!all) out.push(`  … ${total - list.length} more: read_page {"root": "\u0001${ref}"} lists the rows drawn`);
    return out;
  }

  // The lines of `before` in `gone`, each that went with every line nested in it (a menu, a
  // date picker's panel that closed) as one line that says so: what went is told by its top
  // line; what is in it was read when it came. `fold`: lines a summary stands for.
  function wholes(before, gone, fold) {
    const out = [];
    for (let at = 0; at < before.length; at++) {
      const l = before[at];
      if (!gone.has(l)) continue;
      let end = at + 1;
      while (end < before.length && before[end].d > l.d) end++;
      const inside = before.slice(at + 1, end);
      if (inside.length > 1 && inside.every((x) => gone.has(x) || fold.has(x))) {
        out.push({ ...l, t: `${l.t} (with the ${inside.length} lines in it)` });
        at = end - 1;
      } else out.push(l);
    }
    return out;
  }

  // The lines that differ between two snapshots: {added, removed, more, rows}; `added` and
  // `removed` at most `max` each (`more`: how many were left out), `rows`: the summaries.
  function diff(before, after, max = 40) {
    const fold = new Set();
    const rows = [];
    const was = tables(before);
    for (const [ref, now] of tables(after)) {
      const old = was.get(ref);
      const said = old && summary(ref, old, now, fold);
      if (said) rows.push(...said);
    }
    const count = (list) => list.reduce((m, l) => m.set(l.k, (m.get(l.k) ?? 0) + 1), new Map());
    const a = count(before);
    const b = count(after);
    const added = after.filter((l) => ((a.get(l.k) ?? 0) > 0 ? (a.set(l.k, a.get(l.k) - 1), false) : !fold.has(l)));
    // A line that changed shows once, as it is now: `removed` keeps the elements that went.
    const still = new Set(added.map(refOf));
    const gone = new Set(before.filter((l) => ((b.get(l.k) ?? 0) > 0 ? (b.set(l.k, b.get(l.k) - 1), false) : !fold.has(l) && !still.has(refOf(l)))));
    const removed = wholes(before, gone, fold);
    const shown = (list) => list.slice(0, max).map((l) => l.t);
    return { added: shown(added), removed: shown(removed), more: Math.max(0, added.length - max) + Math.max(0, removed.length - max), rows };
  }

  globalThis.tabwireChanges = { diff };
})();
