// Filters as query text, one translator for every text dialect. The filters vecbench asks
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

function column(field: AttrName, prefix: string): string {
  if (!FIELDS.has(field)) throw new Error(`unknown filter field "${field}"; known fields: ${ATTRIBUTES.join(', ')}`);
  return `${prefix}${field}`;
}

function int32(v: number, what: string): number {
  if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) throw new Error(`filter ${what}: ${v} is not a 32-bit integer`);
  return v;
}

/** The filter as text in the dialect. Nested conjunctions are parenthesised. */
function filterText(f: FilterExpr, dialect: FilterDialect): string {
  const prefix = dialect.prefix ?? '';
  const walk = (e: FilterExpr): string => {
    switch (e.op) {
      case 'eq':
        return `${column(e.field, prefix)} = ${dialect.value(int32(e.value, `${e.field} =`))}`;
      case 'range': {
        const c = column(e.field, prefix);
        return `${c} >= ${dialect.value(int32(e.gte, `${e.field} >=`))} AND ${c} < ${dialect.value(int32(e.lt, `${e.field} <`))}`;
      }
      case 'and':
        if (e.args.length === 0) return dialect.always;
        return e.args.map((a) => (a.op === 'and' ? `(${walk(a)})` : walk(a))).join(' AND ');
      default:
        throw new Error(`unsupported filter op "${(e as { op: string }).op}"`);
    }
  };
  return walk(f);
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
