// Filters as query text, one translator for every text dialect, and as any other form through
// foldFilter (an object for a document API, an expression string). The filters vecbench asks
// are conjunctions of `field = value` and `gte <= field < lt` over integer attributes, so every
// text dialect writes them alike: comparisons joined by AND. What differs is how a value is
// written (a placeholder that binds it, numbered or not, or the literal) and what an empty
// conjunction is (TRUE, 1). Field names reach the text, so each is checked against the fixed
// attribute list, and values must be 32-bit integers (what the attributes are).
import { ATTRIBUTES, type AttrName, type FilterExpr } from '../contracts.ts';

const FIELDS: ReadonlySet<string> = new Set(ATTRIBUTES);

/** How a dialect writes a value and an always-true condition. */
interface FilterDialect {
  /** The text standing for one value, in the order the filter is read. */
  value(v: number): string;
  /** The text of a conjunction of nothing. */
  always: string;
  /** Put before every column name (e.g. "t." for an aliased table). */
  prefix?: string;
}

function checkedField(field: AttrName): AttrName {
  if (!FIELDS.has(field)) throw new Error(`unknown filter field "${field}"; known fields: ${ATTRIBUTES.join(', ')}`);
  return field;
}

function int32(v: number, what: string): number {
  if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) throw new Error(`filter ${what}: ${v} is not a 32-bit integer`);
  return v;
}

/** How a dialect writes the three forms of a filter (a document's object, a query string):
 * each gets its field checked against the attribute list and its values as 32-bit integers. */
interface FilterForms<T> {
  eq(field: AttrName, value: number): T;
  range(field: AttrName, gte: number, lt: number): T;
  /** A conjunction of the parts, `args` the filters they were made of (empty: nothing to meet). */
  and(parts: T[], args: FilterExpr[]): T;
}

/** The filter in a dialect, built bottom-up from its forms: the one translator of every
 * participant whose engine takes filters as something other than SQL text. */
export function foldFilter<T>(f: FilterExpr, forms: FilterForms<T>): T {
  switch (f.op) {
    case 'eq':
      return forms.eq(checkedField(f.field), int32(f.value, `${f.field} =`));
    case 'range':
      return forms.range(checkedField(f.field), int32(f.gte, `${f.field} >=`), int32(f.lt, `${f.field} <`));
    case 'and':
      return forms.and(
        f.args.map((a) => foldFilter(a, forms)),
        f.args,
      );
    default:
      throw new Error(`unsupported filter op "${(f as { op: string }).op}"`);
  }
}

/** The filter as text in the dialect. Nested conjunctions are parenthesised. */
function filterText(f: FilterExpr, dialect: FilterDialect): string {
  const c = (field: AttrName) => `${dialect.prefix ?? ''}${field}`;
  return foldFilter<string>(f, {
    eq: (field, v) => `${c(field)} = ${dialect.value(v)}`,
    range: (field, gte, lt) => `${c(field)} >= ${dialect.value(gte)} AND ${c(field)} < ${dialect.value(lt)}`,
    and: (parts, args) => (parts.length === 0 ? dialect.always : parts.map((p, i) => (args[i].op === 'and' ? `(${p})` : p)).join(' AND ')),
  });
}

/** SQL whose values are bound as parameters: `?` each (SQLite), or `$n` from `firstNumber`
 * (PostgreSQL). `params` holds the values in placeholder order. */
export function filterSql(f: FilterExpr, opts: { numberedFrom?: number; always?: string; prefix?: string } = {}): { sql: string; params: number[] } {
  const params: number[] = [];
  const value = (v: number) => {
    params.push(v);
    return opts.numberedFrom === undefined ? '?' : `$${opts.numberedFrom + params.length - 1}`;
  };
  return { sql: filterText(f, { value, always: opts.always ?? 'TRUE', prefix: opts.prefix }), params };
}

/** The filter with its values written in, for APIs that take one expression string and bind
 * nothing; safe because values are checked integers and fields known names. */
export function filterLiteral(f: FilterExpr, always = 'TRUE'): string {
  return filterText(f, { value: (v) => String(v), always });
}
