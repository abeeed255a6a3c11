// Exact top-k ground truth. Two backends select candidates: a native N-API addon (OpenBLAS sgemm
// over row blocks plus a thresholded buffer per query, native/topk.c) and a portable TypeScript
// fallback (exact-js.ts). Both then recompute the selected candidates' distances in float64 with the same
// arithmetic as exactDistance (the addon in its own threads, bit for bit) and sort them by
// (distance, id), so identical ids always carry identical distances whichever backend ran.
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import type { Metric } from '../contracts.ts';
import { join } from 'node:path';
import { ROOT } from '../util/code-paths.ts';
import { jsCandidates } from './exact-js.ts';

export type Backend = 'native' | 'js';

export interface ExactResult {
  k: number;
  nq: number;
  /** nq*k row ids, best first, -1 padding when fewer candidates than k */
  ids: Int32Array;
  /** nq*k distances (lower is closer), +Infinity padding */
  dists: Float32Array;
  /** nq: number of valid entries per query = min(k, candidate rows) */
  counts: Int32Array;
  backend: Backend;
}

export interface ExactArgs {
  /** row-major n x d */
  base: Float32Array;
  n: number;
  d: number;
  /** row-major nq x d */
  queries: Float32Array;
  nq: number;
  metric: Metric;
  k: number;
  /** restrict candidates to these row ids (a filter's matches); ids returned are base row ids */
  rows?: Int32Array;
  /** auto: native when available, else js (VECBENCH_GT_BACKEND=js forces js) */
  backend?: 'auto' | Backend;
  threads?: number;
}

interface NativeModule {
  /** Candidate ids: the kk best per query by float32 score (unordered, -1 padding). */
  topk(
    base: Float32Array,
    n: number,
    d: number,
    queries: Float32Array,
    nq: number,
    metric: number,
    kk: number,
    rows: Int32Array | null,
    threads: number,
  ): Int32Array;
  /** topk, then the candidates ranked as rerank() does, the k best written to ids / dists. */
  ranked?(
    base: Float32Array,
    n: number,
    d: number,
    queries: Float32Array,
    nq: number,
    metric: number,
    kk: number,
    rows: Int32Array | null,
    threads: number,
    k: number,
    ids: Int32Array,
    dists: Float32Array,
  ): void;
  cores: number;
}

const METRIC_CODE: Record<Metric, number> = { ip: 0, cosine: 1, l2: 2 };
const NATIVE_PATH = join(ROOT, 'native', 'build', 'Release', 'topk.node');

let nativeModule: NativeModule | null | undefined;
let nativeError = '';

function loadNative(): NativeModule | null {
  if (nativeModule === undefined) {
    try {
      const mod = createRequire(import.meta.url)(NATIVE_PATH) as NativeModule;
      if (typeof mod.topk !== 'function') throw new Error('topk.node exports no topk function');
      nativeModule = mod;
    } catch (err) {
      nativeModule = null;
      nativeError = err instanceof Error ? err.message : String(err);
    }
  }
  return nativeModule;
}

/** Whether native/build/Release/topk.node exists and loads. */
export function nativeAvailable(): boolean {
  return loadNative() !== null;
}

/** Float64 accumulation. ip -> -dot, cosine -> 1 - dot, l2 -> sqrt(sum of squares). */
export function exactDistance(metric: Metric, a: Float32Array, aOff: number, b: Float32Array, bOff: number, d: number): number {
  let s = 0;
  if (metric === 'l2') {
    for (let i = 0; i < d; i++) {
      const t = a[aOff + i] - b[bOff + i];
      s += t * t;
    }
    return Math.sqrt(s);
  }
  for (let i = 0; i < d; i++) s += a[aOff + i] * b[bOff + i];
  return metric === 'ip' ? -s : 1 - s;
}

function fail(message: string): never {
  throw new Error(`exactTopK: ${message}`);
}

function checkCount(name: string, v: unknown, min: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > 0x7fffffff) {
    fail(`${name} must be an integer >= ${min} (got ${String(v)})`);
  }
  return v;
}

function validate(args: ExactArgs): void {
  const { base, queries, rows } = args;
  const n = checkCount('n', args.n, 0);
  const d = checkCount('d', args.d, 1);
  const nq = checkCount('nq', args.nq, 0);
  checkCount('k', args.k, 1);
  if (!(base instanceof Float32Array)) fail('base must be a Float32Array');
  if (!(queries instanceof Float32Array)) fail('queries must be a Float32Array');
  if (base.length !== n * d) fail(`base.length (${base.length}) !== n*d (${n}*${d})`);
  if (queries.length !== nq * d) fail(`queries.length (${queries.length}) !== nq*d (${nq}*${d})`);
  if (!Object.hasOwn(METRIC_CODE, args.metric)) fail(`metric must be ip, cosine or l2 (got ${String(args.metric)})`);
  if (args.threads !== undefined) checkCount('threads', args.threads, 1);
  const be = args.backend;
  if (be !== undefined && be !== 'auto' && be !== 'native' && be !== 'js') fail(`backend must be auto, native or js (got ${String(be)})`);
  if (rows !== undefined) {
    if (!(rows instanceof Int32Array)) fail('rows must be an Int32Array');
    const seen = new Uint8Array(n);
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      if (r < 0 || r >= n) fail(`rows[${i}] = ${r} is out of range 0..${n - 1}`);
      if (seen[r]) fail(`rows contains row id ${r} twice`);
      seen[r] = 1;
    }
  }
}

/** The backend a request for `want` gets: native when asked or, for auto, when the addon loads
 * (VECBENCH_GT_BACKEND=js forces js). Shared by the in-memory and out-of-core paths. */
export function pickBackend(want: ExactArgs['backend']): Backend {
  if (want === 'js') return 'js';
  if (want === 'native') {
    if (!loadNative()) throw new Error(`exactTopK: native backend unavailable (${nativeError}); run "node scripts/build-native.mjs"`);
    return 'native';
  }
  if (process.env.VECBENCH_GT_BACKEND === 'js') return 'js';
  return loadNative() ? 'native' : 'js';
}

/** Exact top-k of every query among the base rows (or among `rows`). Synchronous. */
export function exactTopK(args: ExactArgs): ExactResult {
  validate(args);
  const { base, n, d, queries, nq, metric, k, rows } = args;
  const backend = pickBackend(args.backend ?? 'auto');
  const cands = rows ? rows.length : n;
  // Select a few more than k in single precision and settle the order in float64 below, so
  // float32 rounding in sgemm cannot push a true top-k row just past the cut.
  const kk = Math.min(cands, k + 8 + (k >> 3));
  let candIds: Int32Array;
  if (kk === 0 || nq === 0) candIds = new Int32Array(0);
  else if (backend === 'native') {
    const threads = args.threads ?? availableParallelism();
    const mod = loadNative()!;
    if (mod.ranked) {
      // The addon ranks too, in its threads: one JS thread sorting nq x kk candidates would
      // otherwise take as long as the whole selection on a large k.
      const ids = new Int32Array(nq * k);
      const dists = new Float32Array(nq * k);
      mod.ranked(base, n, d, queries, nq, METRIC_CODE[metric], kk, rows ?? null, threads, k, ids, dists);
      return { k, nq, ids, dists, counts: new Int32Array(nq).fill(Math.min(k, kk)), backend };
    }
    candIds = mod.topk(base, n, d, queries, nq, METRIC_CODE[metric], kk, rows ?? null, threads);
  } else candIds = jsCandidates(base, d, queries, nq, metric, kk, rows, cands);
  return rerank(base, d, queries, nq, metric, k, kk, candIds, backend);
}

function rerank(
  base: Float32Array,
  d: number,
  queries: Float32Array,
  nq: number,
  metric: Metric,
  k: number,
  kk: number,
  candIds: Int32Array,
  backend: Backend,
): ExactResult {
  const ids = new Int32Array(nq * k).fill(-1);
  const dists = new Float32Array(nq * k).fill(Infinity);
  const counts = new Int32Array(nq);
  const cd = new Float64Array(kk);
  const ci = new Int32Array(kk);
  const order: number[] = [];
  for (let q = 0; q < nq; q++) {
    let c = 0;
    for (let e = 0; e < kk; e++) {
      const id = candIds[q * kk + e];
      if (id >= 0) ci[c++] = id;
    }
    candidateDistances(metric, queries, q * d, base, ci, c, d, cd);
    order.length = c;
    for (let e = 0; e < c; e++) order[e] = e;
    order.sort((x, y) => cd[x] - cd[y] || ci[x] - ci[y]);
    const m = Math.min(k, c);
    for (let e = 0; e < m; e++) {
      ids[q * k + e] = ci[order[e]];
      dists[q * k + e] = cd[order[e]];
    }
    counts[q] = m;
  }
  return { k, nq, ids, dists, counts, backend };
}

/**
 * out[e] = exactDistance(metric, q, qOff, base, ids[e] * d, d) for e < c, bit for bit: four
 * candidates at a time, each sum accumulated in the same order with the same float64 operations
 * (the interleaving only hides the add latency; the test suite checks the equality).
 */
function candidateDistances(metric: Metric, q: Float32Array, qOff: number, base: Float32Array, ids: Int32Array, c: number, d: number, out: Float64Array): void {
  const l2 = metric === 'l2';
  let e = 0;
  for (; e + 4 <= c; e += 4) {
    const b0 = ids[e] * d,
      b1 = ids[e + 1] * d,
      b2 = ids[e + 2] * d,
      b3 = ids[e + 3] * d;
    let s0 = 0,
      s1 = 0,
      s2 = 0,
      s3 = 0;
    if (l2) {
      for (let i = 0; i < d; i++) {
        const v = q[qOff + i];
        const t0 = v - base[b0 + i],
          t1 = v - base[b1 + i],
          t2 = v - base[b2 + i],
          t3 = v - base[b3 + i];
        s0 += t0 * t0;
        s1 += t1 * t1;
        s2 += t2 * t2;
        s3 += t3 * t3;
      }
      out[e] = Math.sqrt(s0);
      out[e + 1] = Math.sqrt(s1);
      out[e + 2] = Math.sqrt(s2);
      out[e + 3] = Math.sqrt(s3);
    } else {
      for (let i = 0; i < d; i++) {
        const v = q[qOff + i];
        s0 += v * base[b0 + i];
        s1 += v * base[b1 + i];
        s2 += v * base[b2 + i];
        s3 += v * base[b3 + i];
      }
      if (metric === 'ip') {
        out[e] = -s0;
        out[e + 1] = -s1;
        out[e + 2] = -s2;
        out[e + 3] = -s3;
      } else {
        out[e] = 1 - s0;
        out[e + 1] = 1 - s1;
        out[e + 2] = 1 - s2;
        out[e + 3] = 1 - s3;
      }
    }
  }
  for (; e < c; e++) out[e] = exactDistance(metric, q, qOff, base, ids[e] * d, d);
}
