// ann-benchmarks' HDF5 result files -> points of a vecbench ResultFile (origin 'imported').
//
// One ann-benchmarks file is one run of one algorithm at one query setting: attributes
// (`algo`, `name` such as "Annoy(n_trees=100,search_k=100)", `build_time`, `index_size`,
// `best_search_time`, `count`, `distance`, `dataset`, ...) and datasets `times` (seconds per
// query), `neighbors` (queries x count row ids, -1 padding) and `distances`. Several files of
// the same algo make its curve: each becomes one ladder point of the group none/<count>.
//
// Recall is never taken from the file: it is computed here, query by query, with
// src/metrics/recall.ts scoreQuery against the exact ground truth of the vecbench dataset the
// user names (prepared from the same data, so query i and row ids mean the same thing).
// ann-benchmarks times one query at a time, serially: QPS = 1 / mean(times), the point is a
// single-client measurement (clients 1, flag `serial`), and latencies are the per-query times.
import { basename } from 'node:path';
import type { Dataset } from '../../datasets/layout.ts';
import type { GroundTruth } from '../../groundtruth/cache.ts';
import { exactDistance } from '../../groundtruth/exact.ts';
import { scoreQuery, pointReadings, summarize } from '../../metrics/recall.ts';
import type { ResultPoint } from '../../results/schema.ts';
import { latencySummary } from '../../metrics/latency.ts';
import { UserError } from '../../util/errors.ts';
import { knobsFromName } from './common.ts';

export const ANN_BENCHMARKS = 'ann-benchmarks';

/** The HDF5 signature; ann-benchmarks files (h5py) start with it. */
export const HDF5_MAGIC = Uint8Array.from([0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a]);

interface AnnBenchmarksRun {
  attrs: Record<string, unknown>;
  /** seconds per query */
  times: Float64Array;
  /** rows x count */
  neighbors: Int32Array;
  rows: number;
  count: number;
}

type H5 = typeof import('h5wasm/node');
let h5: Promise<H5> | null = null;
async function loadH5(): Promise<H5> {
  h5 ??= import('h5wasm/node').then(async (m) => {
    await m.ready;
    return m;
  });
  return h5;
}

function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.length === 1 ? plain(v[0]) : v.map(plain);
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
    const arr = Array.from(v as unknown as ArrayLike<number | bigint>, (x) => (typeof x === 'bigint' ? Number(x) : x));
    return arr.length === 1 ? arr[0] : arr;
  }
  return v;
}

/** Reads one ann-benchmarks result file (h5wasm; the file is opened read-only). */
export async function readAnnBenchmarks(path: string): Promise<AnnBenchmarksRun> {
  const m = await loadH5();
  let f: InstanceType<H5['File']>;
  try {
    f = new m.File(path, 'r');
  } catch (e) {
    throw new UserError(`${path}: not a readable HDF5 file (${(e as Error).message})`);
  }
  try {
    const attrs: Record<string, unknown> = {};
    for (const [k, a] of Object.entries(f.attrs)) attrs[k] = plain(a.json_value);
    const get = (name: string) => {
      const d = f.get(name);
      if (!(d instanceof m.Dataset)) throw new UserError(`${path}: no dataset "${name}"; an ann-benchmarks result file has times, neighbors and distances`);
      return d;
    };
    const timesDs = get('times');
    const nbDs = get('neighbors');
    const shape = nbDs.shape ?? [];
    if (shape.length !== 2) throw new UserError(`${path}: neighbors has shape [${shape.join(', ')}], expected queries x count`);
    const [rows, count] = shape;
    const times = Float64Array.from(timesDs.value as ArrayLike<number>);
    const raw = nbDs.value as ArrayLike<number | bigint>;
    const neighbors = Int32Array.from(raw, (x) => Number(x));
    if (times.length !== rows) throw new UserError(`${path}: times has ${times.length} entries for ${rows} rows of neighbors`);
    return { attrs, times, neighbors, rows, count };
  } finally {
    f.close();
  }
}

/** Which vecbench metrics an ann-benchmarks distance name is compatible with. */
const DISTANCES: Record<string, string[]> = {
  angular: ['cosine', 'ip'],
  cosine: ['cosine', 'ip'],
  euclidean: ['l2'],
  l2: ['l2'],
  ip: ['ip'],
  dot: ['ip'],
  inner_product: ['ip'],
};

interface ScoredRun {
  algo: string;
  /** ann-benchmarks' name of the run (algo and arguments) */
  name: string;
  k: number;
  point: ResultPoint;
  facts: Record<string, unknown>;
}

/** Scores one run against the dataset's unfiltered ground truth. */
export function scoreAnnBenchmarks(run: AnnBenchmarksRun, source: string, ds: Dataset, gt: GroundTruth): ScoredRun {
  const a = run.attrs;
  const algo = typeof a.algo === 'string' && a.algo ? a.algo : typeof a.name === 'string' ? a.name.split(/[(\s]/)[0] : '';
  if (!algo) throw new UserError(`${source}: no algo attribute; is this an ann-benchmarks result file?`);
  const name = typeof a.name === 'string' ? a.name : algo;
  const k = typeof a.count === 'number' && Number.isInteger(a.count) && a.count > 0 ? a.count : run.count;
  if (k > run.count) throw new UserError(`${source}: count is ${k} but neighbors has ${run.count} columns`);
  if (k > gt.depth) throw new UserError(`${source}: k = ${k} is deeper than the ground truth (${gt.depth})`);
  if (run.rows > ds.nq) {
    throw new UserError(
      `${source}: ${run.rows} queries, but dataset ${ds.name} has ${ds.nq}; pass --dataset with the vecbench dataset prepared from the same ann-benchmarks data`,
    );
  }
  if (typeof a.distance === 'string' && DISTANCES[a.distance] && !DISTANCES[a.distance].includes(ds.metric)) {
    throw new UserError(
      `${source}: ann-benchmarks distance "${a.distance}" does not match dataset ${ds.name} (metric ${ds.metric}); pass the dataset prepared from the same data`,
    );
  }
  if (run.times.some((t) => !(t > 0) || !Number.isFinite(t))) throw new UserError(`${source}: times holds a value that is not a positive number of seconds`);

  const { d, metric } = ds;
  const scores = [];
  for (let q = 0; q < run.rows; q++) {
    const row = run.neighbors.subarray(q * run.count, q * run.count + k);
    // ann-benchmarks pads short answers with -1: those are not returned ids.
    let len = row.length;
    while (len > 0 && row[len - 1] === -1) len--;
    scores.push(
      scoreQuery({
        returned: row.subarray(0, len),
        k,
        trueIds: gt.ids.subarray(q * gt.depth, (q + 1) * gt.depth),
        trueDists: gt.dists.subarray(q * gt.depth, (q + 1) * gt.depth),
        matches: gt.matches[q],
        isKnownId: (id) => id >= 0 && id < ds.n,
        passes: () => true,
        distanceOf: (id) => exactDistance(metric, ds.queries, q * d, ds.base, id * d, d),
      }),
    );
  }
  const s = summarize(scores);
  let total = 0;
  for (const t of run.times) total += t;
  const meanS = total / run.rows;
  const flags = ['imported', 'serial'];
  if (a.batch_mode === true || a.batch_mode === 1) flags.push('batch-mode');
  if (s.unknownIds + s.duplicateIds > 0) flags.push('invalid-results');
  const point: ResultPoint = {
    ladder_index: 0,
    knobs: Object.keys(knobsFromName(name)).length > 0 ? knobsFromName(name) : { name },
    view: 'throughput',
    clients: 1,
    queries: run.rows,
    query_slice: [0, run.rows - 1],
    ...pointReadings(s),
    qps: 1 / meanS,
    duration_s: total,
    latency_ms: latencySummary(Float64Array.from(run.times, (t) => t * 1000)),
    flags,
  };
  const facts: Record<string, unknown> = { file: basename(source), name };
  for (const key of ['dataset', 'distance', 'build_time', 'index_size', 'best_search_time', 'candidates', 'run_count', 'batch_mode', 'expect_extra']) {
    if (key in a) facts[key] = a[key];
  }
  return { algo, name, k, point, facts };
}
