// Exact ground truth per filter kind, cached on disk beside the dataset and keyed by the
// dataset's hash, so it is recomputed only when the inputs change (docs/contracts.md,
// "Ground-truth files").
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { FilterExpr } from '../contracts.ts';
import type { Dataset } from '../datasets/layout.ts';
import { filterKey, filterKind, matchingRows } from '../datasets/groups.ts';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic.ts';
import { Progress } from '../util/progress.ts';
import { sha256 } from '../util/hash.ts';
import { exactTopK, type Backend } from './exact.ts';
import { clearPartials, gtMemoryBytes, outOfCoreGroundTruth } from './outofcore.ts';

export const GT_FORMAT = 'vecbench-groundtruth/1';
export const GT_DEPTH = 1000;

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

/** Computes exact top-depth for every query under one filter kind. Queries sharing a filter
 * (same category, same range bucket, same cluster) go through one matrix product. */
export function computeGroundTruth(ds: Dataset, filterName: string, depth = Math.min(GT_DEPTH, ds.n), opts: { backend?: 'auto' | Backend; quiet?: boolean; live?: Int32Array } = {}): GroundTruth {
  const kind = filterKind(filterName);
  const { nq, d } = ds;
  const ids = new Int32Array(nq * depth).fill(-1);
  const dists = new Float32Array(nq * depth).fill(Infinity);
  const matches = new Int32Array(nq);
  const byFilter = new Map<string, { filter: FilterExpr | null; queries: number[] }>();
  for (let q = 0; q < nq; q++) {
    const f = kind.forQuery(q, ds.queryAttrs);
    const key = filterKey(f);
    let g = byFilter.get(key);
    if (!g) byFilter.set(key, (g = { filter: f, queries: [] }));
    g.queries.push(q);
  }
  const progress = new Progress(`ground truth ${ds.name} ${filterName}`, nq, opts.quiet);
  let done = 0;
  let backend: Backend = 'js';
  for (const { filter, queries } of byFilter.values()) {
    const rows = filter === null && !opts.live ? undefined : matchingRows(filter, ds.attrs, ds.n, opts.live);
    // Chunks of queries keep progress moving and memory bounded.
    const chunk = 256;
    for (let s = 0; s < queries.length; s += chunk) {
      const part = queries.slice(s, s + chunk);
      const qm = new Float32Array(part.length * d);
      part.forEach((q, i) => qm.set(ds.queries.subarray(q * d, q * d + d), i * d));
      const r = exactTopK({ base: ds.base, n: ds.n, d, queries: qm, nq: part.length, metric: ds.metric, k: depth, rows, backend: opts.backend });
      backend = r.backend;
      part.forEach((q, i) => {
        ids.set(r.ids.subarray(i * depth, (i + 1) * depth), q * depth);
        dists.set(r.dists.subarray(i * depth, (i + 1) * depth), q * depth);
        matches[q] = rows ? rows.length : ds.n;
      });
      done += part.length;
      if (done < nq) progress.update(done);
    }
  }
  progress.done(`(${backend})`);
  return { filter: filterName, depth, nq, ids, dists, matches, backend };
}

/** Loads the cached ground truth for a filter kind, computing and storing it when missing
 * or when the dataset changed. */
export function groundTruthFor(ds: Dataset, filterName: string, opts: { backend?: 'auto' | Backend; quiet?: boolean } = {}): GroundTruth {
  const dir = join(ds.dir, 'groundtruth');
  const indexPath = join(dir, 'index.json');
  const depth = Math.min(GT_DEPTH, ds.n);
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
    const r = outOfCoreGroundTruth(ds, filterName, depth, { backend: opts.backend, quiet: opts.quiet });
    gt = { filter: filterName, depth, nq: ds.nq, ids: r.ids, dists: r.dists, matches: r.matches, backend: r.backend };
  } else gt = computeGroundTruth(ds, filterName, depth, opts);
  writeFileAtomic(join(dir, `${filterName}.ids.i32`), bytes(gt.ids));
  writeFileAtomic(join(dir, `${filterName}.dists.f32`), bytes(gt.dists));
  writeFileAtomic(join(dir, `${filterName}.matches.i32`), bytes(gt.matches));
  index.filters[filterName] = { ids: sha256(bytes(gt.ids)), dists: sha256(bytes(gt.dists)), matches: sha256(bytes(gt.matches)) };
  writeJsonAtomic(indexPath, index);
  clearPartials(ds, filterName);
  return gt;
}
