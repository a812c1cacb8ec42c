// An action's changed lines, and the rows of grids and lists summed up (node --test
// extension/lib/*.test.js), on lines shaped as isolated/snapshot.js writes them with `exact`.

import assert from 'node:assert/strict';
import test from 'node:test';

import './change-report.js';

const { diff } = globalThis.tabwireChanges;

// A line at depth d; refs written `ref=eN` become the agent's `[ref=\u0001eN]`.
const line = (d, t, extra = {}) => {
  const text = `${'  '.repeat(d)}${t.replace(/\[ref=(e\d+)\]/g, '[ref=\u0001$1]')}`;
  return { d, t: text, k: text, v: true, ...extra };
};

const CARS = Array.from({ length: 50 }, (_, n) => ({ make: `Make${n}`, price: 10_000 + n * 1000 }));

// AG Grid's page as the snapshot reads it: a header row, a row of filter fields, and the rows
// drawn (their row index `i` from 3), each with the ref its element keeps; `rowcount` rows in
// all, header rows included.
function grid({ rows, rowcount, sort = null, filter = '' }) {
  const out = [
    line(0, 'heading "Cars" [ref=e1] [level=1]'),
    line(0, 'grid [ref=e3]', { n: rowcount }),
    line(1, 'rowgroup [ref=e4]'),
    line(2, 'row "Make Price" [ref=e5]', { i: 1 }),
    line(3, `columnheader "Make" [ref=e6]`),
    line(3, `columnheader "Price" [ref=e10]${sort ? ` [sort=${sort}]` : ''}`),
    line(2, 'row [ref=e14]', { i: 2 }),
    line(3, `gridcell "Make Filter Input" [ref=e15]`),
    line(4, `textbox "Make Filter Input" [ref=e16]${filter ? ` [value=${JSON.stringify(filter)}]` : ''}`),
  ];
  rows.forEach(({ car, ref, v = true }, at) => {
    out.push(line(2, `row [ref=e${ref}]`, { i: 3 + at, v }));
    out.push(line(3, `gridcell ${JSON.stringify(car.make)} [ref=e${ref + 1}]`, { v }));
    out.push(line(3, `gridcell "${car.price}" [ref=e${ref + 2}]`, { v }));
  });
  return out;
}

test('rows sorted in place: re-ordered by the column, every row listed in its new order', () => {
  const six = CARS.slice(0, 6).map((car, n) => ({ car, ref: 100 + n * 3 }));
  const before = grid({ rows: six, rowcount: 8 });
  const after = grid({ rows: [...six].reverse(), rowcount: 8, sort: 'descending' });
  const d = diff(before, after);
  assert.deepEqual(d.added, [], 'the sort of the header is in the summary');
  assert.deepEqual(d.removed, []);
  assert.equal(d.rows[0], 'rows of grid [ref=\u0001e3]: re-ordered by columnheader "Price" [ref=\u0001e10] (descending); 6 rows; all:');
  assert.equal(d.rows[1], '  row [ref=\u0001e115]: "Make5" "15000"');
  assert.equal(d.rows[6], '  row [ref=\u0001e100]: "Make0" "10000"');
  assert.equal(d.rows.length, 7);
});

test('a grid that draws only the rows in view, sorted: a few lines, not every row that came and went', () => {
  const drawn = (cars, from) => cars.slice(0, 16).map((car, n) => ({ car, ref: from + n * 3, v: n < 7 }));
  const before = grid({ rows: drawn(CARS, 100), rowcount: 52 });
  // The third row drawn in the element of a row that left, which kept its ref.
  const after = grid({ rows: drawn([...CARS].reverse(), 400).map((r, n) => (n === 2 ? { ...r, ref: 145 } : r)), rowcount: 52, sort: 'descending' });
  const d = diff(before, after);
  assert.deepEqual([d.added, d.removed, d.more], [[], [], 0]);
  assert.deepEqual(d.rows, [
    'rows of grid [ref=\u0001e3]: re-ordered by columnheader "Price" [ref=\u0001e10] (descending); 50 rows; first 5 in view:',
    '  row [ref=\u0001e400]: "Make49" "59000"',
    '  row [ref=\u0001e403]: "Make48" "58000"',
    '  row [ref=\u0001e145]: "Make47" "57000"',
    '  row [ref=\u0001e409]: "Make46" "56000"',
    '  row [ref=\u0001e412]: "Make45" "55000"',
    '  … 45 more: read_page {"root": "\u0001e3"} lists the rows drawn',
  ]);
  assert.ok(d.rows.join('\n').length < 600, d.rows.join('\n'));
});

test('a filter: how many rows are left of how many, all of them listed, and the field typed into', () => {
  const before = grid({ rows: CARS.slice(0, 16).map((car, n) => ({ car, ref: 100 + n * 3 })), rowcount: 52 });
  // Make1, Make10…Make19, Make21, Make31 and Make41 match "1"; the rows kept keep their
  // elements, the rest are new.
  const left = CARS.filter((c) => c.make.includes('1'));
  const after = grid({ rows: left.map((car) => ({ car, ref: 100 + CARS.indexOf(car) * 3 + (CARS.indexOf(car) < 16 ? 0 : 1000) })), rowcount: 2 + left.length, filter: '1' });
  const d = diff(before, after);
  assert.deepEqual(d.added, ['        textbox "Make Filter Input" [ref=\u0001e16] [value="1"]'], 'a row changed in place stays a changed line');
  assert.deepEqual(d.removed, []);
  assert.equal(d.rows[0], 'rows of grid [ref=\u0001e3]: 14 rows now, 50 before; first 5 in view:');
  assert.equal(d.rows[1], '  row [ref=\u0001e103]: "Make1" "11000"');
  assert.equal(d.rows.at(-1), '  … 9 more: read_page {"root": "\u0001e3"} lists the rows drawn');
});

test('a filter that leaves few rows lists them all', () => {
  const before = grid({ rows: CARS.slice(0, 16).map((car, n) => ({ car, ref: 100 + n * 3 })), rowcount: 52 });
  const after = grid({ rows: [{ car: CARS[40], ref: 900 }, { car: CARS[4], ref: 112 }], rowcount: 4, filter: '4' });
  const d = diff(before, after);
  assert.deepEqual(d.rows, [
    'rows of grid [ref=\u0001e3]: 2 rows now, 50 before; all:',
    '  row [ref=\u0001e900]: "Make40" "50000"',
    '  row [ref=\u0001e112]: "Make4" "14000"',
  ]);
});

test('a few rows that came or went are changed lines, as any', () => {
  const list = (items) => [line(0, 'list "Todo" [ref=e2]'), ...items.map(([name, ref]) => line(1, `listitem ${JSON.stringify(name)} [ref=e${ref}]`))];
  const d = diff(list([['Milk', 3], ['Bread', 4]]), list([['Milk', 3], ['Bread', 4], ['Eggs', 5]]));
  assert.deepEqual(d, { added: ['  listitem "Eggs" [ref=\u0001e5]'], removed: [], more: 0, rows: [] });
  // Moved by hand: re-ordered, with the names the items have.
  const moved = diff(list([['Milk', 3], ['Bread', 4]]), list([['Bread', 4], ['Milk', 3]]));
  assert.deepEqual(moved.rows, ['rows of list "Todo" [ref=\u0001e2]: re-ordered; 2 rows; all:', '  listitem "Bread" [ref=\u0001e4]', '  listitem "Milk" [ref=\u0001e3]']);
});

test("a column's name cannot pass for its sort order", () => {
  const header = (name) => [line(0, 'table [ref=e2]'), line(1, 'row [ref=e3]'), line(2, `columnheader ${JSON.stringify(name)} [ref=e4]`)];
  const rows = (order) => order.map((n) => line(1, `row "r${n}" [ref=e${10 + n}]`));
  const d = diff([...header('Name'), ...rows([1, 2])], [...header('Name [ref=\u0001e4] [sort=ascending]'), ...rows([2, 1])]);
  assert.equal(d.rows[0], 'rows of table [ref=\u0001e2]: re-ordered; 2 rows; all:', d.rows[0]);
});

test('what went with all it held is one line; what stays of it is not folded', () => {
  const panel = [line(0, 'dialog "Pick a day" [ref=e2]'), line(1, 'button "Previous month" [ref=e3]'), line(1, 'table [ref=e4]'), line(2, 'row [ref=e5]'), line(3, 'cell "1" [ref=e6]')];
  const field = line(0, 'textbox "Date" [ref=e1]');
  const d = diff([field, ...panel], [field]);
  assert.deepEqual(d.removed, ['dialog "Pick a day" [ref=\u0001e2] (with the 4 lines in it)']);
  // A button of it that stays (moved out of it) is no part of what went.
  const kept = diff([field, ...panel], [field, line(0, 'button "Previous month" [ref=e3]')]);
  assert.deepEqual(kept.removed.map((l) => l.trim()), ['dialog "Pick a day" [ref=\u0001e2]', 'table [ref=\u0001e4] (with the 2 lines in it)']);
});
