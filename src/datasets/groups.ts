// Query groups (docs/method.md §2): a group is (filter kind, k). A filter kind turns each query into a
// concrete FilterExpr; values come from a hash of the query index or from the query's own
// attributes, so every engine gets the same filters.
import type { AttrName, FilterExpr, RowAttributes } from '../contracts.ts';
import { UserError } from '../util/errors.ts';
import { hashMod } from '../util/hash.ts';
import { NUM_RANGE } from './attributes.ts';
import type { QueryAttrName } from './layout.ts';

export const KS = [10, 100, 1000] as const;

interface FilterKind {
  name: string;
  /** Nominal share of rows kept, for the docs and the selectivity test (null: varies). */
  nominal: number | null;
  describe: string;
  forQuery(q: number, qa: Record<QueryAttrName, Int32Array>): FilterExpr | null;
}

const eq = (field: AttrName, value: number): FilterExpr => ({ op: 'eq', field, value });
/** Ranges come from a fixed set of buckets so many queries share one filter (ground truth
 * then runs one matrix product per distinct filter). */
const numBucket = (q: number, buckets: number, salt: number): FilterExpr => {
  const width = NUM_RANGE / buckets;
  const b = hashMod(q, salt, buckets);
  return { op: 'range', field: 'num', gte: b * width, lt: (b + 1) * width };
};

export const FILTER_KINDS: FilterKind[] = [
  { name: 'none', nominal: 1, describe: 'no filter: the index alone', forQuery: () => null },
  { name: 'cat10', nominal: 0.1, describe: 'cat10 = v (10 %)', forQuery: (q) => eq('cat10', hashMod(q, 101, 10)) },
  { name: 'cat100', nominal: 0.01, describe: 'cat100 = v (1 %)', forQuery: (q) => eq('cat100', hashMod(q, 102, 100)) },
  { name: 'cat1000', nominal: 0.001, describe: 'cat1000 = v (0.1 %)', forQuery: (q) => eq('cat1000', hashMod(q, 103, 1000)) },
  { name: 'num10', nominal: 0.1, describe: 'num in a range keeping 10 %', forQuery: (q) => numBucket(q, 10, 104) },
  { name: 'num1', nominal: 0.01, describe: 'num in a range keeping 1 %', forQuery: (q) => numBucket(q, 100, 105) },
  {
    name: 'cat10+num10',
    nominal: 0.01,
    describe: 'cat10 = v AND num range 10 % (1 %)',
    forQuery: (q) => ({ op: 'and', args: [eq('cat10', hashMod(q, 106, 10)), numBucket(q, 10, 107)] }),
  },
  {
    name: 'cluster',
    nominal: null,
    describe: "the query's own k-means cluster (~2 %): agrees with the vector",
    forQuery: (q, qa) => eq('cluster', qa.cluster[q]),
  },
  {
    name: 'farcluster',
    nominal: null,
    describe: 'the cluster farthest from the query: fights the vector',
    forQuery: (q, qa) => eq('cluster', qa.far_cluster[q]),
  },
  { name: 'lang', nominal: null, describe: "the query's language: a real attribute that agrees", forQuery: (q, qa) => eq('lang', qa.lang[q]) },
  { name: 'otherlang', nominal: null, describe: 'another language: a real attribute that does not', forQuery: (q, qa) => eq('lang', qa.other_lang[q]) },
];

export function filterKind(name: string): FilterKind {
  const f = FILTER_KINDS.find((x) => x.name === name);
  if (!f) throw new UserError(`unknown filter "${name}"; known filters: ${FILTER_KINDS.map((x) => x.name).join(', ')}`);
  return f;
}

export interface GroupKey {
  filter: string;
  k: number;
}
export const groupKey = (g: GroupKey) => `${g.filter}/${g.k}`;

export function parseGroupKey(key: string): GroupKey {
  const m = /^(.+)\/(\d+)$/.exec(key);
  if (!m) throw new UserError(`bad group "${key}"; write groups as FILTER/K, e.g. none/10 or cat100/10`);
  filterKind(m[1]);
  const k = Number(m[2]);
  if (!(KS as readonly number[]).includes(k)) throw new UserError(`bad group "${key}": k must be one of ${KS.join(', ')}`);
  return { filter: m[1], k };
}

export function allGroups(): GroupKey[] {
  const out: GroupKey[] = [];
  for (const k of KS) for (const f of FILTER_KINDS) out.push({ filter: f.name, k });
  return out;
}

/** Evaluates a filter on one row. */
export function passes(filter: FilterExpr | null, attrs: RowAttributes, row: number): boolean {
  if (filter === null) return true;
  switch (filter.op) {
    case 'eq':
      return attrs[filter.field][row] === filter.value;
    case 'range': {
      const v = attrs[filter.field][row];
      return v >= filter.gte && v < filter.lt;
    }
    case 'and':
      return filter.args.every((f) => passes(f, attrs, row));
  }
}

/** Rows (ids ascending) that pass a filter among the first n rows, or among `live` rows. */
export function matchingRows(filter: FilterExpr | null, attrs: RowAttributes, n: number, live?: Int32Array): Int32Array {
  const candidates = live ?? null;
  const count = candidates ? candidates.length : n;
  const out = new Int32Array(count);
  let m = 0;
  for (let i = 0; i < count; i++) {
    const row = candidates ? candidates[i] : i;
    if (passes(filter, attrs, row)) out[m++] = row;
  }
  return out.slice(0, m);
}

/** Stable text key of a filter, to group queries that share one. */
export function filterKey(filter: FilterExpr | null): string {
  return filter === null ? '*' : JSON.stringify(filter);
}

/** The fields a filter reads. */
export function filterFields(filter: FilterExpr | null): AttrName[] {
  if (filter === null) return [];
  if (filter.op === 'and') return [...new Set(filter.args.flatMap(filterFields))];
  return [filter.field];
}

export function filterOps(filter: FilterExpr | null): FilterExpr['op'][] {
  if (filter === null) return [];
  if (filter.op === 'and') return [...new Set(['and' as const, ...filter.args.flatMap(filterOps)])];
  return [filter.op];
}
