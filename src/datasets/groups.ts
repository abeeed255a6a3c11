// Query groups (docs/method.md §2): a group is (filter kind, k). A filter kind turns each query into a
// concrete FilterExpr; values come from a hash of the query index or from the query's own
// attributes, so every engine gets the same filters.
import type { AttrName, FilterExpr, RowAttributes } from '../contracts.ts';
import { UserError } from '../util/errors.ts';
import { hashMod } from '../util/hash.ts';
import { NUM_RANGE, TENANTS } from './attributes.ts';
import type { QueryAttrName } from './layout.ts';
import { REGIONS, regionWindow } from './regions.ts';

export const KS = [10, 100, 1000] as const;

interface FilterKind {
  name: string;
  /** Nominal share of rows kept, for the docs and the selectivity test (null: varies). */
  nominal: number | null;
  describe: string;
  forQuery(q: number, qa: Record<QueryAttrName, Int32Array>): FilterExpr | null;
  /** Opt-in kinds name their set (`--groups grid`): the embedded default run leaves them out, a
   * `--dataset` run asks them (datasetGroups), and prepare does not compute their ground truth. */
  set?: GroupSetName;
  /** Why the kind is asked however few rows its filter keeps (the `not asked` rule skips it). */
  askedAtAnySize?: string;
}

/** Named sets of opt-in groups, each at the ks listed. */
const GROUP_SETS = { grid: [10, 100], tenants: [10, 100] } as const;
type GroupSetName = keyof typeof GROUP_SETS;

const eq = (field: AttrName, value: number): FilterExpr => ({ op: 'eq', field, value });
/** Ranges come from a fixed set of buckets so many queries share one filter (ground truth
 * then runs one matrix product per distinct filter). */
const numBucket = (q: number, buckets: number, salt: number): FilterExpr => {
  const width = NUM_RANGE / buckets;
  const b = hashMod(q, salt, buckets);
  return { op: 'range', field: 'num', gte: b * width, lt: (b + 1) * width };
};

/** The selectivity x correlation grid's selectivities (percent of rows kept). */
const GRID_SELECTIVITIES = [1, 5, 20, 50] as const;
/** Tenants are numbered by size (src/datasets/attributes.ts): the largest, the median, the smallest. */
const TENANT_GROUPS = [
  { size: 'large', tenant: 0 },
  { size: 'median', tenant: TENANTS / 2 - 1 },
  { size: 'tiny', tenant: TENANTS - 1 },
] as const;

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
  // Real metadata (src/datasets/real-attributes.ts): asked where the dataset has it.
  {
    name: 'label',
    nominal: null,
    describe: "the query's own label (a class, a section): real metadata that agrees",
    forQuery: (q, qa) => eq('label', qa.label[q]),
  },
  { name: 'otherlabel', nominal: null, describe: 'another label: real metadata that does not agree', forQuery: (q, qa) => eq('label', qa.other_label[q]) },
  {
    name: 'measure10',
    // About 10 % where the dataset has a measure (more where many rows tie), none where it has not.
    nominal: null,
    describe: "measure in the tenth of the rows' values around the query's own (a real number, e.g. a size)",
    forQuery: (q, qa) => ({ op: 'range', field: 'measure', gte: qa.measure_lo[q], lt: qa.measure_hi[q] }),
  },
  {
    name: 'label+measure10',
    nominal: null,
    describe: "the query's own label AND measure around its own: two real fields",
    forQuery: (q, qa) => ({
      op: 'and',
      args: [eq('label', qa.label[q]), { op: 'range', field: 'measure', gte: qa.measure_lo[q], lt: qa.measure_hi[q] }],
    }),
  },
  ...GRID_SELECTIVITIES.flatMap((pct): FilterKind[] => [
    {
      name: `sel${pct}-scattered`,
      nominal: pct / 100,
      describe: `num in a range keeping ${pct} %: rows by a hash of their id, blind to the vector`,
      forQuery: (q) => numBucket(q, 100 / pct, 110 + pct),
      set: 'grid',
    },
    {
      name: `sel${pct}-clustered`,
      nominal: pct / 100,
      describe: `region in the ${pct} % of regions around the query's own: rows near the query, agreeing with the vector`,
      forQuery: (q, qa) => {
        const [gte, lt] = regionWindow(qa.region[q], (pct * REGIONS) / 100);
        return { op: 'range', field: 'region', gte, lt };
      },
      set: 'grid',
    },
  ]),
  ...TENANT_GROUPS.map(
    ({ size, tenant }): FilterKind => ({
      name: `tenant-${size}`,
      nominal: null,
      describe: `tenant = ${tenant}, the ${size} tenant of ${TENANTS} (Zipf sizes): an access boundary`,
      forQuery: () => eq('tenant', tenant),
      set: 'tenants',
      askedAtAnySize: 'a tenant is an access boundary, asked at any size: a small tenant is where the boundary is tested',
    }),
  ),
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
  if (!m) throw new UserError(`bad group "${key}"; write groups as FILTER/K, e.g. none/10 or cat100/10, or name a set (${Object.keys(GROUP_SETS).join(', ')})`);
  filterKind(m[1]);
  const k = Number(m[2]);
  if (!(KS as readonly number[]).includes(k)) throw new UserError(`bad group "${key}": k must be one of ${KS.join(', ')}`);
  return { filter: m[1], k };
}

/** `--groups` entries: FILTER/K keys and named sets (`grid`, `tenants`), in the order given. */
export function parseGroupList(entries: string[]): GroupKey[] {
  const out: GroupKey[] = [];
  for (const entry of entries) {
    const set = Object.hasOwn(GROUP_SETS, entry) ? (entry as GroupSetName) : null;
    if (set === null) out.push(parseGroupKey(entry));
    else for (const k of GROUP_SETS[set]) for (const f of FILTER_KINDS) if (f.set === set) out.push({ filter: f.name, k });
  }
  return out.filter((g, i) => out.findIndex((o) => groupKey(o) === groupKey(g)) === i);
}

/** The kinds every dataset is asked (and prepare computes): all but the opt-in sets. */
export const STANDARD_KINDS: FilterKind[] = FILTER_KINDS.filter((f) => f.set === undefined);

export function allGroups(): GroupKey[] {
  const out: GroupKey[] = [];
  for (const k of KS) for (const f of STANDARD_KINDS) out.push({ filter: f.name, k });
  return out;
}

/** The groups a `--dataset` run without `--groups` asks: every standard group, then the grid and
 * tenants sets whose filter fields the dataset has (a set read from files may lack one). */
export function datasetGroups(has: (field: AttrName) => boolean): GroupKey[] {
  const sets = parseGroupList(Object.keys(GROUP_SETS)).filter((g) => filterFields(filterKind(g.filter).forQuery(0, SAMPLE_QUERY)).every(has));
  return [...allGroups(), ...sets];
}

/** Query attributes for reading a set kind's fields: its fields do not depend on the values. */
const SAMPLE_QUERY: Record<QueryAttrName, Int32Array> = new Proxy({} as Record<QueryAttrName, Int32Array>, { get: () => new Int32Array(1) });

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

/** The tenant a filter confines its query to (an eq on tenant, alone or in an and), or null:
 * a returned row of another tenant then crosses an access boundary. */
export function tenantBoundary(filter: FilterExpr | null): number | null {
  if (filter === null) return null;
  if (filter.op === 'eq') return filter.field === 'tenant' ? filter.value : null;
  if (filter.op === 'and') {
    for (const f of filter.args) {
      const tenant = tenantBoundary(f);
      if (tenant !== null) return tenant;
    }
  }
  return null;
}

export function filterOps(filter: FilterExpr | null): FilterExpr['op'][] {
  if (filter === null) return [];
  if (filter.op === 'and') return [...new Set(['and' as const, ...filter.args.flatMap(filterOps)])];
  return [filter.op];
}
