// Exact ground truth per filter kind, cached on disk beside the dataset and keyed by the
// dataset's hash, so it is recomputed only when the inputs change (docs/contracts.md,
// "Ground-truth files").
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { FilterExpr } from '../contracts.ts';
import type { Dataset } from '../datasets/layout.ts';
import { matchingRows, STANDARD_KINDS } from '../datasets/groups.ts';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic.ts';
import { Progress, log } from '../util/progress.ts';
import { sha256 } from '../util/hash.ts';
import { exactDistance, exactTopK, pickBackend, type Backend } from './exact.ts';
import { clearPartials, gtMemoryBytes, outOfCoreGroundTruth } from './outofcore.ts';
import { groupQueries } from './partial-topk.ts';

const GT_FORMAT = 'vecbench-groundtruth/1';
const GT_DEPTH = 1000;

export interface GroundTruth {
  filter: string;
  /** Entries kept per query (min(1000, n)). */
  depth: number;
  nq: number;
  /** nq x depth row ids, best first, -1 padding. */
  ids: Int32Array;
  /** nq x depth distances (lower is closer), +Inf padding. */
  dists: Float32Array;
  /** Rows that pass each query's filter. */
  matches: Int32Array;
  backend: Backend | 'cache';
  /** When computed (not read from the cache): wall seconds and the floating-point operations
   * the distances took (2 x d per (query, matching row) pair), for throughput figures. */
  seconds?: number;
  flops?: number;
  /** CPU seconds of the process (every thread) meanwhile: on a shared machine the wall
   * figure depends on the load, GFLOP per CPU second much less. */
  cpuSeconds?: number;
}

/** CPU seconds this process (all its threads) has used. */
function cpuSecondsNow(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** Floating-point operations of brute force over every query's matching rows. */
function groundTruthFlops(matches: Int32Array, d: number): number {
  let pairs = 0;
  for (const m of matches) pairs += m;
  return 2 * d * pairs;
}

/** "1234 queries/s, 56.7 GFLOP/s (30.1 per CPU second)" for a computed ground truth. */
function throughputText(nq: number, seconds: number, flops: number, cpuSeconds?: number): string {
  const s = Math.max(seconds, 1e-9);
  const cpu = cpuSeconds === undefined ? '' : ` (${(flops / Math.max(cpuSeconds, 1e-9) / 1e9).toFixed(1)} per CPU second, ${cpuSeconds.toFixed(1)} CPU s)`;
  return `${Math.round(nq / s).toLocaleString('en-US')} queries/s, ${(flops / s / 1e9).toFixed(1)} GFLOP/s${cpu}`;
}

interface GtIndex {
  format: string;
  dataset_hash: string;
  depth: number;
  filters: Record<string, { ids: string; dists: string; matches: string }>;
}

const bytes = (a: Int32Array | Float32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

function readArray<T extends Int32Array | Float32Array>(path: string, ctor: { new (b: ArrayBuffer): T }, expectSha: string): T | null {
  if (!existsSync(path)) return null;
  const buf = readFileSync(path);
  if (sha256(buf) !== expectSha) return null;
  const ab = new ArrayBuffer(buf.byteLength);
  new Uint8Array(ab).set(buf);
  return new ctor(ab);
}

/** One exactTopK call of computeGroundTruth: queries sharing one concrete filter, in chunks. */
export interface GtUnit {
  filter: FilterExpr | null;
  queries: number[];
}

/** The calls computeGroundTruth makes for a filter kind, in its order. A sharded run
 * (groundtruth/plan.ts) hands whole units to shards, so each query's list comes out of the very
 * same call, and the merged files are byte-identical to these. */
export function groundTruthUnits(ds: Pick<Dataset, 'nq' | 'queryAttrs'>, filterName: string, backend?: 'auto' | Backend): GtUnit[] {
  // Chunks of queries keep progress moving and memory bounded. The addon gives each thread
  // whole groups of 256 queries (splitting the rows, and so the work of selection, only when
  // there are fewer groups than threads), so it gets two groups per thread at a time.
  const chunk = pickBackend(backend ?? 'auto') === 'native' ? Math.min(4096, 512 * availableParallelism()) : 256;
  const units: GtUnit[] = [];
  // The queries grouped by their concrete filter, as the out-of-core shards group them.
  for (const { filter, queries } of groupQueries(ds, filterName))
    for (let s = 0; s < queries.length; s += chunk) units.push({ filter, queries: Array.from(queries.subarray(s, s + chunk)) });
  return units;
}

/** Runs one unit: writes each of its queries' lists into ids/dists/matches (nq-sized arrays). */
export function computeUnit(
  ds: Dataset,
  unit: GtUnit,
  depth: number,
  out: { ids: Int32Array; dists: Float32Array; matches: Int32Array },
  opts: { backend?: 'auto' | Backend; live?: Int32Array; slot?: (q: number) => number } = {},
): Backend {
  const { d } = ds;
  const { filter, queries: part } = unit;
  const rows = filter === null && !opts.live ? undefined : matchingRows(filter, ds.attrs, ds.n, opts.live);
  const qm = new Float32Array(part.length * d);
  part.forEach((q, i) => qm.set(ds.queries.subarray(q * d, q * d + d), i * d));
  const r = exactTopK({ base: ds.base, n: ds.n, d, queries: qm, nq: part.length, metric: ds.metric, k: depth, rows, backend: opts.backend });
  const slot = opts.slot ?? ((q: number) => q);
  part.forEach((q, i) => {
    const s = slot(q);
    out.ids.set(r.ids.subarray(i * depth, (i + 1) * depth), s * depth);
    out.dists.set(r.dists.subarray(i * depth, (i + 1) * depth), s * depth);
    out.matches[s] = rows ? rows.length : ds.n;
  });
  return r.backend;
}

/** Computes exact top-depth for every query under one filter kind. Queries sharing a filter
 * (same category, same range bucket, same cluster) go through one matrix product. */
export function computeGroundTruth(
  ds: Dataset,
  filterName: string,
  depth = Math.min(GT_DEPTH, ds.n),
  opts: { backend?: 'auto' | Backend; quiet?: boolean; live?: Int32Array } = {},
): GroundTruth {
  const { nq, d } = ds;
  const ids = new Int32Array(nq * depth).fill(-1);
  const dists = new Float32Array(nq * depth).fill(Infinity);
  const matches = new Int32Array(nq);
  const progress = new Progress(`ground truth ${ds.name} ${filterName}`, nq, opts.quiet);
  const t0 = performance.now();
  const cpu0 = cpuSecondsNow();
  let done = 0;
  let backend: Backend = 'js';
  for (const unit of groundTruthUnits(ds, filterName, opts.backend)) {
    backend = computeUnit(ds, unit, depth, { ids, dists, matches }, opts);
    done += unit.queries.length;
    if (done < nq) progress.update(done);
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpuSeconds = cpuSecondsNow() - cpu0;
  const flops = groundTruthFlops(matches, d);
  progress.done(`(${backend}, ${throughputText(nq, seconds, flops, cpuSeconds)})`);
  return { filter: filterName, depth, nq, ids, dists, matches, backend, seconds, flops, cpuSeconds };
}

/** The depth the cache keeps for a dataset. */
export const cacheDepth = (ds: Pick<Dataset, 'n'>) => Math.min(GT_DEPTH, ds.n);

/** The cache's index, reset (files removed) when the dataset or the format changed. */
function openIndex(ds: Dataset): GtIndex {
  const dir = join(ds.dir, 'groundtruth');
  const indexPath = join(dir, 'index.json');
  const depth = cacheDepth(ds);
  let index: GtIndex | null = null;
  if (existsSync(indexPath)) {
    try {
      index = JSON.parse(readFileSync(indexPath, 'utf8')) as GtIndex;
    } catch {
      index = null;
    }
  }
  if (!index || index.format !== GT_FORMAT || index.dataset_hash !== ds.hash || index.depth !== depth) {
    // Out-of-core checkpoints (partial/) survive: their own headers say whether they still fit.
    if (existsSync(dir)) for (const f of readdirSync(dir)) if (f !== 'partial') rmSync(join(dir, f), { recursive: true, force: true });
    index = { format: GT_FORMAT, dataset_hash: ds.hash, depth, filters: {} };
  }
  return index;
}

/** Stores one filter kind's lists in the cache (the files prepare writes). */
export function storeGroundTruth(ds: Dataset, gt: Pick<GroundTruth, 'filter' | 'ids' | 'dists' | 'matches'>): void {
  const dir = join(ds.dir, 'groundtruth');
  const index = openIndex(ds);
  const f = gt.filter;
  writeFileAtomic(join(dir, `${f}.ids.i32`), bytes(gt.ids));
  writeFileAtomic(join(dir, `${f}.dists.f32`), bytes(gt.dists));
  writeFileAtomic(join(dir, `${f}.matches.i32`), bytes(gt.matches));
  index.filters[f] = { ids: sha256(bytes(gt.ids)), dists: sha256(bytes(gt.dists)), matches: sha256(bytes(gt.matches)) };
  writeJsonAtomic(join(dir, 'index.json'), index);
}

/** Loads the cached ground truth for a filter kind, computing and storing it when missing
 * or when the dataset changed. */
export function groundTruthFor(ds: Dataset, filterName: string, opts: { backend?: 'auto' | Backend; quiet?: boolean } = {}): GroundTruth {
  const dir = join(ds.dir, 'groundtruth');
  const depth = cacheDepth(ds);
  const index = openIndex(ds);
  const entry = index.filters[filterName];
  if (entry) {
    const ids = readArray(join(dir, `${filterName}.ids.i32`), Int32Array, entry.ids);
    const dists = readArray(join(dir, `${filterName}.dists.f32`), Float32Array, entry.dists);
    const matches = readArray(join(dir, `${filterName}.matches.i32`), Int32Array, entry.matches);
    if (ids && dists && matches && ids.length === ds.nq * depth && matches.length === ds.nq) {
      return { filter: filterName, depth, nq: ds.nq, ids, dists, matches, backend: 'cache' };
    }
  }
  // A base larger than the memory setting (VECBENCH_GT_MEMORY) is read from base.f32 in
  // blocks, resumably (outofcore.ts); smaller ones are computed in memory.
  let gt: GroundTruth;
  if (ds.n * ds.d * 4 > gtMemoryBytes()) {
    const cpu0 = cpuSecondsNow();
    const r = outOfCoreGroundTruth(ds, filterName, depth, { backend: opts.backend, quiet: opts.quiet });
    const cpuSeconds = cpuSecondsNow() - cpu0;
    const flops = groundTruthFlops(r.matches, ds.d);
    if (!opts.quiet) log(`ground truth ${ds.name} ${filterName}: ${r.backend}, out of core, ${throughputText(ds.nq, r.seconds, flops, cpuSeconds)}`);
    gt = { filter: filterName, depth, nq: ds.nq, ids: r.ids, dists: r.dists, matches: r.matches, backend: r.backend, seconds: r.seconds, flops, cpuSeconds };
  } else gt = computeGroundTruth(ds, filterName, depth, opts);
  storeGroundTruth(ds, gt);
  clearPartials(ds, filterName);
  return gt;
}

/** Computes (or reads from the cache) the exact ground truth of every standard filter kind and
 * logs the throughput: part of preparing a set, so `run` starts measuring at once. The opt-in
 * kinds (the grid, tenants) are computed by the first run that asks them, then cached. */
export function prepareGroundTruth(ds: Dataset, opts: { quiet?: boolean } = {}): { seconds: number; flops: number; queries: number; cpuSeconds: number } {
  let seconds = 0;
  let flops = 0;
  let queries = 0;
  let cpuSeconds = 0;
  for (const kind of STANDARD_KINDS) {
    const gt = groundTruthFor(ds, kind.name, { quiet: opts.quiet });
    if (gt.seconds === undefined) continue; // cached
    seconds += gt.seconds;
    flops += gt.flops ?? 0;
    cpuSeconds += gt.cpuSeconds ?? 0;
    queries += gt.nq;
  }
  if (queries > 0 && !opts.quiet) {
    log(
      `ground truth ${ds.name}: ${STANDARD_KINDS.length} filter kinds, ${queries.toLocaleString('en-US')} query lists in ${seconds.toFixed(1)}s: ${throughputText(queries, seconds, flops, cpuSeconds)} (effective: 2 x d per query and matching row)`,
    );
  }
  return { seconds, flops, queries, cpuSeconds };
}

/** The true distances of query q to score a group at k: the first kt = min(k, matches)
 * entries, the kt-th recomputed in float64 with the harness's own distance. The cache keeps
 * float32, whose rounding (~1e-4 at an L2 distance of 1,000, e.g. Fashion-MNIST pixels) would
 * swamp the 1e-6 tie tolerance and refuse even the true kt-th neighbour. */
export function scoringDists(ds: Pick<Dataset, 'd' | 'metric' | 'base' | 'queries'>, gt: GroundTruth, q: number, k: number): Float64Array {
  const kt = Math.max(0, Math.min(k, gt.depth, gt.matches[q]));
  const out = Float64Array.from(gt.dists.subarray(q * gt.depth, q * gt.depth + kt));
  const id = kt > 0 ? gt.ids[q * gt.depth + kt - 1] : -1;
  if (id >= 0) out[kt - 1] = exactDistance(ds.metric, ds.queries, q * ds.d, ds.base, id * ds.d, ds.d);
  return out;
}
