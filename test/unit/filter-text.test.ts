// The SDK's filter-to-text translator (src/adapters/filter-text.ts), one for every text dialect
// the participants speak: SQL with ? or $n parameters (SQLite, libSQL, PostgreSQL) and
// expressions with the values written in (LanceDB's where, zvec's filter), and foldFilter, the
// translator of the other dialects (documents for Chroma, OpenSearch, Orama; Redis's and
// Weaviate's expressions), each participant giving only its three forms.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { filterLiteral, filterSql, foldFilter, type FilterExpr } from '../../src/sdk/index.ts';

const eq: FilterExpr = { op: 'eq', field: 'cat10', value: 3 };
const range: FilterExpr = { op: 'range', field: 'num', gte: 100, lt: 200 };
const nested: FilterExpr = { op: 'and', args: [eq, { op: 'and', args: [range, { op: 'eq', field: 'lang', value: 2 }] }] };

test('SQL with ? placeholders binds the values in the order they are written', () => {
  assert.deepEqual(filterSql(eq), { sql: 'cat10 = ?', params: [3] });
  assert.deepEqual(filterSql(nested, { prefix: 't.' }), {
    sql: 't.cat10 = ? AND (t.num >= ? AND t.num < ? AND t.lang = ?)',
    params: [3, 100, 200, 2],
  });
});

test('SQL with $n placeholders numbers them from the first free parameter', () => {
  assert.deepEqual(filterSql(nested, { numberedFrom: 3 }), { sql: 'cat10 = $3 AND (num >= $4 AND num < $5 AND lang = $6)', params: [3, 100, 200, 2] });
  // Equal shapes, equal text: statements are cached by it whatever the values.
  assert.equal(filterSql({ op: 'eq', field: 'cat10', value: 9 }, { numberedFrom: 3 }).sql, filterSql(eq, { numberedFrom: 3 }).sql);
});

test('an expression with its values written in; an empty conjunction is the dialect\'s "always"', () => {
  assert.equal(filterLiteral(nested), 'cat10 = 3 AND (num >= 100 AND num < 200 AND lang = 2)');
  assert.equal(filterLiteral({ op: 'and', args: [] }), 'TRUE');
  assert.deepEqual(filterSql({ op: 'and', args: [] }, { always: '1' }), { sql: '1', params: [] });
  assert.equal(filterLiteral({ op: 'range', field: 'num', gte: -5, lt: 0 }), 'num >= -5 AND num < 0');
});

test('names and values that would reach query text are checked: a known attribute, a 32-bit integer', () => {
  assert.throws(
    () => filterSql({ op: 'eq', field: 'cat10; drop table items' as never, value: 1 }),
    /unknown filter field "cat10; drop table items"; known fields: cat10/,
  );
  assert.throws(() => filterLiteral({ op: 'eq', field: 'cat10', value: 1.5 }), /filter cat10 =: 1\.5 is not a 32-bit integer/);
  assert.throws(() => filterLiteral({ op: 'range', field: 'num', gte: 0, lt: 2 ** 31 }), /filter num <: 2147483648 is not a 32-bit integer/);
  assert.throws(() => filterLiteral({ op: 'or', args: [] } as never), /unsupported filter op "or"/);
});

test('foldFilter builds a dialect bottom-up from its forms, with fields and values checked first', () => {
  const forms = {
    eq: (field: string, v: number) => ({ [field]: v }),
    range: (field: string, gte: number, lt: number) => ({ [field]: [gte, lt] }),
    and: (parts: object[], args: FilterExpr[]) => ({ all: parts, nested: args.map((a) => a.op === 'and') }),
  };
  assert.deepEqual(foldFilter(nested, forms), {
    all: [{ cat10: 3 }, { all: [{ num: [100, 200] }, { lang: 2 }], nested: [false, false] }],
    nested: [false, true],
  });
  assert.deepEqual(foldFilter({ op: 'and', args: [] }, forms), { all: [], nested: [] });
  assert.throws(() => foldFilter({ op: 'eq', field: 'color' as 'cat10', value: 1 }, forms), /unknown filter field "color"; known fields: cat10/);
  assert.throws(() => foldFilter({ op: 'range', field: 'num', gte: 0.5, lt: 2 }, forms), /filter num >=: 0\.5 is not a 32-bit integer/);
  assert.throws(() => foldFilter({ op: 'or' } as never, forms), /unsupported filter op "or"/);
});
