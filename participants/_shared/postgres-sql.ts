// SQL shared by the pgvector participants (pgvector-pglite in WASM, pgvector on a native server):
// FilterExpr -> WHERE with positional parameters, the distance operator per metric, the
// search statement text, PostgreSQL's binary encodings (COPY rows, vector parameters) and
// the EXPLAIN plan checks, and the index settings both build with. Nothing here knows which
// PostgreSQL it talks to.
import { z } from 'zod';
import * as sdk from '../../src/sdk/index.ts';

/** The settings of the HNSW index and its filter indexes, alike in both participants (each adds
 * its own PostgreSQL's settings and checks them with `pgvectorGraphRule`). */
export const pgvectorGraphSettings = {
  /** HNSW graph degree (pgvector `m`; layer 0 keeps 2 x m links). */
  m: sdk.intSetting(2, 100, 16),
  /** Candidate list while building (pgvector `ef_construction`, >= 2 x m). */
  ef_construction: sdk.intSetting(4, 1000, 64),
  /** btree indexes on the filter columns, so the planner may choose an exact scan of a
   * filter's matches instead of the HNSW walk. */
  filter_indexes: z.boolean().default(true),
};

/** pgvector refuses an ef_construction below 2 x m: said before a build starts. */
export const pgvectorGraphRule: [(s: { m: number; ef_construction: number }) => boolean, { path: string[]; message: string }] = [
  (s) => s.ef_construction >= 2 * s.m,
  { path: ['ef_construction'], message: 'pgvector needs ef_construction >= 2 x m' },
];

export const TABLE = 'items';
export const HNSW_INDEX = 'items_embedding_hnsw';
/** Column order of the items table (and of COPY rows). */
export const COLUMNS = ['id', 'embedding', ...sdk.ATTRIBUTES] as const;

interface SqlWhere {
  /** The condition text, e.g. "cat10 = $2 AND num >= $3 AND num < $4"; "" for no filter. */
  sql: string;
  /** Parameter values in the order of their $n, starting at the firstParam given. */
  params: number[];
  /** A key that is equal for two filters exactly when their SQL text is equal. */
  shape: string;
}

/** Translates a filter into a WHERE condition whose values are parameters $firstParam.. */
export function filterToSql(filter: sdk.FilterExpr | null, firstParam = 1): SqlWhere {
  if (filter === null) return { sql: '', params: [], shape: '' };
  const { sql, params } = sdk.filterSql(filter, { numberedFrom: firstParam });
  return { sql, params, shape: sql };
}

/** pgvector's ordering operator: `<#>` is the negative inner product (ascending = best first),
 * used for ip and for cosine on unit-length vectors; `<->` is Euclidean distance. */
export function distanceOperator(metric: sdk.Metric): '<#>' | '<->' {
  return metric === 'l2' ? '<->' : '<#>';
}

/** The HNSW operator class matching distanceOperator. */
export function hnswOpclass(metric: sdk.Metric): 'vector_ip_ops' | 'vector_l2_ops' {
  return metric === 'l2' ? 'vector_l2_ops' : 'vector_ip_ops';
}

interface SearchStatement {
  text: string;
  /** Filter values, bound after the query vector ($1). */
  params: number[];
  /** Statement identity: equal keys mean equal text. */
  key: string;
}

/**
 * The k-NN statement for (k, filter shape): $1 is the query vector, the filter's values follow.
 * - `resort` wraps it so rows come back best first even when the index returns them slightly
 *   out of order (pgvector's iterative_scan = relaxed_order). The outer sort is on `dist + 0`:
 *   on `dist` itself PostgreSQL 17+ takes the subquery as already sorted (the index scan's
 *   order) and plans an Incremental Sort that leaves relaxed_order's disorder in place.
 * - `fetch` (>= k, default k) asks the index for that many rows and keeps the k closest of them
 *   (a wider candidate list, re-sorted on the exact distance the scan already computed).
 * - `exact` orders by `(distance) + 0`, an expression no vector index can serve: the planner
 *   then reads the filter's matches (btree / bitmap scan, or a sequential scan) and sorts them.
 */
export function searchStatement(
  metric: sdk.Metric,
  k: number,
  filter: sdk.FilterExpr | null,
  opts: { resort?: boolean; fetch?: number; exact?: boolean } = {},
): SearchStatement {
  if (!Number.isInteger(k) || k <= 0) throw new Error(`k must be a positive integer, got ${k}`);
  const where = filterToSql(filter, 2);
  const op = distanceOperator(metric);
  const cond = where.sql ? ` WHERE ${where.sql}` : '';
  if (opts.exact) {
    const text = `SELECT id FROM ${TABLE}${cond} ORDER BY (embedding ${op} $1) + 0, id LIMIT ${k}`;
    return { text, params: where.params, key: `${metric}|${k}|exact|${where.shape}` };
  }
  const fetch = opts.fetch ?? k;
  if (!Number.isInteger(fetch) || fetch < k) throw new Error(`fetch must be an integer >= k (${k}), got ${fetch}`);
  const resort = opts.resort === true || fetch > k;
  const inner = `SELECT id, embedding ${op} $1 AS dist FROM ${TABLE}${cond} ORDER BY embedding ${op} $1 LIMIT ${fetch}`;
  const text = resort
    ? `SELECT id FROM (${inner}) AS nn ORDER BY dist + 0, id${fetch > k ? ` LIMIT ${k}` : ''}`
    : `SELECT id FROM ${TABLE}${cond} ORDER BY embedding ${op} $1 LIMIT ${k}`;
  return { text, params: where.params, key: `${metric}|${k}|${fetch}|${resort ? 'resort' : 'plain'}|${where.shape}` };
}

/** Text form of a vector, pgvector's input syntax '[1,2,3]'. */
export function vectorLiteral(v: ArrayLike<number>): string {
  let s = '[';
  for (let i = 0; i < v.length; i++) s += (i ? ',' : '') + v[i];
  return `${s}]`;
}

/** pgvector's binary form of a vector (vector_recv): int16 dim, int16 unused, dim x float4, big-endian. */
export function vectorBinary(v: Float32Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(4 + 4 * v.length);
  const dv = new DataView(out.buffer);
  dv.setInt16(0, v.length);
  dv.setInt16(2, 0);
  for (let i = 0; i < v.length; i++) dv.setFloat32(4 + 4 * i, v[i]);
  return out;
}

const COPY_SIGNATURE = [0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00];

/** A PostgreSQL binary COPY stream of a batch, columns in COLUMNS order (`COPY items FROM ...
 * WITH (FORMAT binary)`). Binary avoids printing and parsing every float as text. */
export function copyBinary(batch: sdk.RowBatch, d: number): Uint8Array<ArrayBuffer> {
  const n = batch.ids.length;
  if (batch.vectors.length !== n * d) throw new Error(`batch has ${batch.vectors.length} floats for ${n} rows of dimension ${d}`);
  const fields = COLUMNS.length;
  const rowBytes = 2 + (4 + 4) + (4 + 4 + 4 * d) + sdk.ATTRIBUTES.length * (4 + 4);
  const out = new Uint8Array(COPY_SIGNATURE.length + 8 + n * rowBytes + 2);
  const dv = new DataView(out.buffer);
  out.set(COPY_SIGNATURE, 0);
  let o = COPY_SIGNATURE.length + 8; // flags and header extension length: both 0
  const attrs = sdk.ATTRIBUTES.map((a) => batch.attrs[a]);
  for (let i = 0; i < n; i++) {
    dv.setInt16(o, fields);
    dv.setInt32(o + 2, 4);
    dv.setInt32(o + 6, batch.ids[i]);
    dv.setInt32(o + 10, 4 + 4 * d);
    dv.setInt16(o + 14, d);
    dv.setInt16(o + 16, 0);
    o += 18;
    const base = i * d;
    for (let j = 0; j < d; j++, o += 4) dv.setFloat32(o, batch.vectors[base + j]);
    for (const col of attrs) {
      dv.setInt32(o, 4);
      dv.setInt32(o + 4, col[i]);
      o += 8;
    }
  }
  dv.setInt16(o, -1);
  return out;
}

// ---- EXPLAIN plans ----

type ScanKind = 'Seq Scan' | 'Index Scan' | 'Index Only Scan' | 'Bitmap Index Scan' | 'Bitmap Heap Scan';

interface PlanScan {
  kind: ScanKind;
  /** The index, for index scans. */
  index?: string;
  /** The table, where the plan names it. */
  relation?: string;
}

const SCAN_LINE =
  /(?:->\s*|^\s*)(Seq Scan|Index Only Scan|Index Scan|Bitmap Index Scan|Bitmap Heap Scan)(?:\s+(?:Backward\s+)?using\s+("[^"]+"|\S+))?(?:\s+on\s+("[^"]+"|\S+))?/;

const unquote = (s: string | undefined) => (s === undefined ? undefined : s.replace(/^"|"$/g, ''));

/** The scan nodes of a PostgreSQL EXPLAIN (FORMAT TEXT) plan, top to bottom. */
export function planScans(plan: string): PlanScan[] {
  const out: PlanScan[] = [];
  for (const line of plan.split('\n')) {
    const m = SCAN_LINE.exec(line);
    if (!m) continue;
    const kind = m[1] as ScanKind;
    // "Bitmap Index Scan on idx": for that node the `on` name is the index.
    if (kind === 'Bitmap Index Scan') out.push({ kind, index: unquote(m[3]) });
    else out.push({ kind, index: unquote(m[2]), relation: unquote(m[3]) });
  }
  return out;
}

type PlanPath = 'hnsw' | 'exact-index' | 'seq-scan' | 'unknown';

/** Which way the plan reaches the rows: the HNSW index's ordered scan; an exact scan of the
 * filter's matches through a btree / bitmap index followed by a sort; a sequential scan. */
export function planPath(plan: string, hnswIndex = HNSW_INDEX): PlanPath {
  const scans = planScans(plan);
  if (scans.some((s) => (s.kind === 'Index Scan' || s.kind === 'Index Only Scan') && s.index === hnswIndex)) return 'hnsw';
  if (scans.some((s) => s.kind !== 'Seq Scan')) return 'exact-index';
  if (scans.some((s) => s.kind === 'Seq Scan')) return 'seq-scan';
  return 'unknown';
}

/** A one-line note naming the path a plan takes, prefixed to recorded plans. */
export function describePath(plan: string, hnswIndex = HNSW_INDEX): string {
  const path = planPath(plan, hnswIndex);
  const scans = planScans(plan)
    .map((s) => `${s.kind}${s.index ? ` using ${s.index}` : ''}`)
    .join(', ');
  const what = {
    hnsw: `approximate: HNSW index scan on ${hnswIndex}`,
    'exact-index': 'exact: the filter matches read through a btree/bitmap index, then sorted by distance',
    'seq-scan': 'exact: sequential scan of the table, then sorted by distance',
    unknown: 'no scan node recognised',
  }[path];
  return `path: ${path} (${what}; scans: ${scans || 'none'})`;
}

/** The group name a request belongs to, as far as the request tells it. */
function requestGroup(filter: sdk.FilterExpr | null, k: number): string {
  if (filter === null) return `none/${k}`;
  const fields = [...new Set(flatten(filter).map((f) => `${f.field} ${f.op === 'eq' ? '=' : 'range'}`))];
  return `filtered (${fields.join(' AND ')})/${k}`;
}

function flatten(f: sdk.FilterExpr): Exclude<sdk.FilterExpr, { op: 'and' }>[] {
  return f.op === 'and' ? f.args.flatMap(flatten) : [f];
}

/**
 * Throws when the plan breaks what the settings promise. Unfiltered: the HNSW index must be
 * scanned (a silent fall-back to a sequential scan fails the group). Filtered: either the HNSW
 * scan or an exact scan of the matches through an index is fine; a sequential scan is accepted
 * only when `allowFilteredSeqScan` (no btree indexes were built, so it is the exact path).
 */
export function checkPlanText(plan: string, opts: { filter: sdk.FilterExpr | null; k: number; hnswIndex?: string; allowFilteredSeqScan?: boolean }): PlanPath {
  const index = opts.hnswIndex ?? HNSW_INDEX;
  const path = planPath(plan, index);
  const group = requestGroup(opts.filter, opts.k);
  if (opts.filter === null) {
    if (path !== 'hnsw') {
      throw new Error(`group ${group}: the plan does not scan the HNSW index ${index} (path: ${path}); the settings promise an HNSW search. Plan:\n${plan}`);
    }
    return path;
  }
  if (path === 'hnsw' || path === 'exact-index') return path;
  if (path === 'seq-scan' && opts.allowFilteredSeqScan) return path;
  throw new Error(`group ${group}: the plan uses neither the HNSW index ${index} nor an index on the filter columns (path: ${path}). Plan:\n${plan}`);
}

/** The strategy a plan shows (observed): the HNSW index walked (with the filter applied to its
 * candidates, iteratively when hnsw.iterative_scan is on), the filter's matches read through an
 * index and ranked exactly, or a sequential scan. */
export function planStrategy(plan: string, filtered: boolean, iterativeScan: string, hnswIndex = HNSW_INDEX): sdk.Strategy {
  const path = planPath(plan, hnswIndex);
  const label =
    path === 'hnsw'
      ? !filtered
        ? 'graph walk'
        : iterativeScan === 'off'
          ? 'graph walk + post-filter'
          : 'iterative scan'
      : path === 'exact-index'
        ? 'exact scan of matches'
        : path === 'seq-scan'
          ? 'exact scan'
          : 'unrecognised plan';
  return { label, observed: true };
}
