// The JS side of a participant whose own native addon searches a graph with the filter evaluated
// inside the walk: filters compiled once to the addon's triples (and to a predicate for the
// re-check of the few ids returned), and a pass timed in C++ query by query, so the figure is
// the library's search and not the call from JS around each one (docs/measurement.md, "Harness
// overhead").
import type { FilterExpr, RowAttributes, SearchRequest, TimedPass } from '../contracts.ts';
import { filterKey } from '../datasets/groups.ts';
import { filterClauses, type FilterClauses } from './filter-clauses.ts';
import { compileFilter, type RowPredicate } from './kit.ts';

/** A filter as the addon takes it, and the same filter as a predicate over the columns. */
export interface NativeFilter extends FilterClauses {
  pred: RowPredicate;
}

/** The search calls of a graph addon whose filters are NativeFilters' triples (`clauses`, null
 * for none) over attribute columns passed after them. `H` is the addon's index handle. */
export interface NativeGraphSearch<H> {
  search(h: H, query: Float32Array, k: number, clauses?: Float64Array | null, ...columns: Int32Array[]): Int32Array;
  /** n queries (n x d), each searched as search() does and timed alone in C++: ids one query
   * after another, their offsets (n + 1) and each query's nanoseconds. */
  timedSearch(h: H, queries: Float32Array, k: number, clauses: Float64Array | null, ...columns: Int32Array[]): [Int32Array, Int32Array, Float64Array];
  free(h: H): void;
}

/** Compiled filters by key, over the columns `columns()` returns now (clear() when they grow). */
export class NativeFilters {
  private readonly cache = new Map<string, NativeFilter>();

  /** `maxFields`: the most attributes one filter may read (the addon's column slots). */
  constructor(
    private readonly engine: string,
    private readonly columns: () => RowAttributes,
    private readonly maxFields?: number,
  ) {}

  get(filter: FilterExpr): NativeFilter {
    const key = filterKey(filter);
    let c = this.cache.get(key);
    if (!c) {
      if (this.cache.size >= 4096) this.cache.clear();
      c = { ...filterClauses(filter, this.engine, this.maxFields), pred: compileFilter(filter, this.columns()) };
      this.cache.set(key, c);
    }
    return c;
  }

  /** The columns of a filter's slots, in slot order. */
  columnsOf(fields: readonly string[]): Int32Array[] {
    const cols = this.columns() as Record<string, Int32Array>;
    return fields.map((a) => cols[a]);
  }

  clear(): void {
    this.cache.clear();
  }
}

/** Ids that are live and pass the predicate: the addon applied both already; re-checking k ids
 * costs nothing and guards the contract. */
function keptIds(ids: Int32Array, live: Uint8Array, pred: RowPredicate | null): Int32Array {
  let j = 0;
  while (j < ids.length && live[ids[j]] === 1 && (pred === null || pred(ids[j]))) j++;
  return j === ids.length ? ids : ids.filter((id) => live[id] === 1 && (pred === null || pred(id)));
}

/** A filter as a pass hands it to the addon: its triples (any typed array), the attributes its
 * slots read, and the predicate that re-checks the returned ids (null: none needed). */
interface PassFilter {
  clauses: ArrayLike<number>;
  fields: readonly string[];
  pred: RowPredicate | null;
}

/** What a timed pass needs of the session. */
export interface NativePassSession {
  d: number;
  /** Whether the index holds nothing (every request answers empty, one at a time). */
  empty: boolean;
  /** The k the addon is asked for a request's k (e.g. clamped to the index's capacity). */
  kOf(k: number): number;
  compile(filter: FilterExpr): PassFilter;
  /** The addon's timed search of n queries, with every query's triples one after another (null
   * without a filter) over the columns of `fields`. */
  timedSearch(queries: Float32Array, k: number, clauses: Float64Array | null, fields: readonly string[]): [Int32Array, Int32Array, Float64Array];
  /** A request's answer from the addon's ids (e.g. keptIds over the live flags). */
  kept(ids: Int32Array, pred: RowPredicate | null): ArrayLike<number>;
  search(request: SearchRequest): Promise<ArrayLike<number>>;
}

/** A pass timed in C++: requests of one k whose filters, if any, read the same fields (a query
 * group's) go to the addon in one call; anything else is searched one request at a time, each
 * timed here. */
export async function timedNativePass(s: NativePassSession, requests: SearchRequest[]): Promise<TimedPass> {
  const n = requests.length;
  const errors = new Array<string | null>(n).fill(null);
  const compiled = requests.map((r) => (r.filter === null ? null : s.compile(r.filter)));
  const first = compiled[0] ?? null;
  const fields = first?.fields.join() ?? null;
  const uniform =
    !s.empty &&
    requests.every((r, i) => r.k === requests[0].k && (compiled[i]?.fields.join() ?? null) === fields && compiled[i]?.clauses.length === first?.clauses.length);
  if (!uniform) {
    const results: ArrayLike<number>[] = [];
    const latenciesMs = new Float64Array(n);
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const start = performance.now();
      results.push(await s.search(requests[i]));
      latenciesMs[i] = performance.now() - start;
    }
    return { results, latenciesMs, errors, wallS: (performance.now() - t0) / 1000 };
  }
  const queries = new Float32Array(n * s.d);
  for (let i = 0; i < n; i++) queries.set(requests[i].vector, i * s.d);
  let clauses: Float64Array | null = null;
  if (first !== null) {
    clauses = new Float64Array(n * first.clauses.length);
    for (let i = 0; i < n; i++) clauses.set(compiled[i]!.clauses, i * first.clauses.length);
  }
  const t0 = performance.now();
  const [labels, offsets, ns] = s.timedSearch(queries, s.kOf(requests[0]?.k ?? 0), clauses, first?.fields ?? []);
  const wallS = (performance.now() - t0) / 1000;
  const results = Array.from({ length: n }, (_, i) => s.kept(labels.subarray(offsets[i], offsets[i + 1]), compiled[i]?.pred ?? null));
  return { results, latenciesMs: ns.map((x) => x / 1e6), errors, wallS };
}

/** A session's searches through a graph addon (NativeGraphSearch): each filter compiled once, its
 * columns passed in slot order, the ids the addon returns re-checked against the live flags;
 * `rows()` is the session's RowColumns now (call filters.clear() when they grow). */
export class NativeGraphSearcher<H> {
  readonly filters: NativeFilters;

  constructor(
    engine: string,
    private readonly addon: NativeGraphSearch<H>,
    private readonly rows: () => { cols: RowAttributes; live: Uint8Array },
  ) {
    this.filters = new NativeFilters(engine, () => rows().cols);
  }

  search(handle: H, vector: Float32Array, k: number, filter: FilterExpr | null): Int32Array {
    const live = this.rows().live;
    if (filter === null) return keptIds(this.addon.search(handle, vector, k), live, null);
    const c = this.filters.get(filter);
    const cols = this.filters.columnsOf(c.fields);
    // The common shapes (one or two fields) without spreading an array into the call.
    const ids =
      cols.length === 1
        ? this.addon.search(handle, vector, k, c.clauses, cols[0])
        : cols.length === 2
          ? this.addon.search(handle, vector, k, c.clauses, cols[0], cols[1])
          : this.addon.search(handle, vector, k, c.clauses, ...cols);
    return keptIds(ids, live, c.pred);
  }

  /** A pass timed in C++ (timedNativePass over the addon's timedSearch). */
  timedPass(handle: H, session: Pick<NativePassSession, 'd' | 'empty' | 'kOf' | 'search'>, requests: SearchRequest[]): Promise<TimedPass> {
    return timedNativePass(
      {
        ...session,
        compile: (f) => this.filters.get(f),
        timedSearch: (queries, k, clauses, fields) => this.addon.timedSearch(handle, queries, k, clauses, ...this.filters.columnsOf(fields)),
        kept: (ids, pred) => keptIds(ids, this.rows().live, pred),
      },
      requests,
    );
  }
}
