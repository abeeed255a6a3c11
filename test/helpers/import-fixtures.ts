// Files of other harnesses, written by the tests themselves (nothing binary is committed):
// a VectorBench result JSON and a set of ann-benchmarks HDF5 result files (h5wasm).
//
// The ann-benchmarks runs are built from an exact search done HERE (naive brute force over
// the prepared dataset, independent of src/groundtruth): run j returns the true top-k of
// each query with a known number of its ids swapped for far rows, so its recall is known
// before vecbench scores it.
import { writeFileSync } from 'node:fs';
import type { Dataset } from '../../src/datasets/layout.ts';

export const HOSTILE = '<script>alert(1)</script>';

/** A VectorBench result file: throughput and latency groups of none/10, an exact-search group,
 * a filtered group and an unsupported one; hostile strings where engines control text. */
export function vectorBenchFixture(dataset: string) {
  const lat = (avg: number) => ({ n: 200, min: avg / 3, avg, p50: avg * 0.95, p95: avg * 1.5, p99: avg * 2, max: avg * 3 });
  const tp = (i: number, ef: number, recall: number, qps: number) => ({
    ladder_index: i,
    knobs: { hnsw_ef: ef },
    recall,
    recall_strict: recall - 0.002,
    tail: { p1: recall - 0.2 },
    short_results: 0,
    qps,
    latency_ms: lat(4000 / qps),
    queries: 200,
    duration: 200 / qps,
  });
  return {
    participant: 'qdrant-default',
    name: 'Qdrant (default settings)',
    system: 'qdrant',
    version: `1.12.0 ${HOSTILE}`,
    dataset,
    hardware: { cpu: 'AMD EPYC 7B13', cores: 8, memory_bytes: 32 * 2 ** 30, os: 'Linux 6.1' },
    index: { params: { m: 16, ef_construct: 100, note: HOSTILE } },
    groups: [
      {
        key: 'none/10',
        filter: 'none',
        k: 10,
        exact: false,
        view: 'throughput',
        clients: 8,
        status: 'measured',
        startup: { first_query_ms: 3.1 },
        points: [tp(0, 16, 0.88, 5200), tp(1, 32, 0.945, 3900), tp(2, 64, 0.962, 2700), tp(3, 128, 0.993, 1500)].map((p, i) =>
          i === 3 ? { ...p, knobs: { hnsw_ef: 128, mode: HOSTILE } } : p,
        ),
      },
      {
        key: 'none/10',
        filter: 'none',
        k: 10,
        exact: false,
        view: 'latency',
        clients: 1,
        status: 'measured',
        points: [tp(0, 16, 0.881, 900), tp(1, 32, 0.944, 700), tp(2, 64, 0.963, 500), tp(3, 128, 0.992, 300)],
      },
      {
        key: 'exact/none/10',
        filter: 'none',
        k: 10,
        exact: true,
        view: 'throughput',
        clients: 8,
        status: 'measured',
        points: [{ ...tp(0, 0, 1, 90), knobs: {} }],
      },
      {
        key: 'cat10/10',
        filter: 'cat10',
        k: 10,
        exact: false,
        view: 'throughput',
        clients: 8,
        status: 'measured',
        points: [tp(0, 16, 0.91, 3000), tp(1, 32, 0.95, 2000)],
      },
      {
        key: 'lang/10',
        filter: 'lang',
        k: 10,
        exact: false,
        view: 'throughput',
        clients: 8,
        status: 'unsupported',
        reason: 'no lang payload index',
        points: [],
      },
    ],
  };
}

/** Exact top-k ids of every query, by brute force here (ip: higher dot is closer; l2: lower). */
export function naiveTopK(ds: Dataset, k: number): Int32Array[] {
  const { n, d, base, queries, metric } = ds;
  const out: Int32Array[] = [];
  const keep = Math.min(n, Math.max(k, 400));
  const score = new Float64Array(n);
  const order = new Int32Array(n);
  for (let q = 0; q < ds.nq; q++) {
    for (let r = 0; r < n; r++) {
      let s = 0;
      if (metric === 'l2') {
        for (let j = 0; j < d; j++) {
          const t = base[r * d + j] - queries[q * d + j];
          s += t * t;
        }
      } else {
        for (let j = 0; j < d; j++) s -= base[r * d + j] * queries[q * d + j];
      }
      score[r] = s;
      order[r] = r;
    }
    order.sort((a, b) => score[a] - score[b] || a - b);
    out.push(order.slice(0, keep));
  }
  return out;
}

export interface AbRunSpec {
  ef: number;
  /** seconds per query (stored as float32, as ann-benchmarks does) */
  time: number;
  /** ids swapped for far rows in query q */
  wrong: (q: number) => number;
  /** queries whose wrong ids are returned as -1 padding instead (short answers) */
  short?: (q: number) => boolean;
}

/** The four runs the tests use: tie-aware recall 0.80, 0.94, 0.96 and 1.00 at QPS 1000, 500,
 * 250 and 125. */
export const AB_RUNS: AbRunSpec[] = [
  { ef: 10, time: 0.001, wrong: () => 2, short: (q) => q === 0 },
  { ef: 20, time: 0.002, wrong: (q) => (q % 5 < 3 ? 1 : 0) },
  { ef: 40, time: 0.004, wrong: (q) => (q % 5 < 2 ? 1 : 0) },
  { ef: 80, time: 0.008, wrong: () => 0 },
];
export const AB_EXPECTED = [
  { recall: 0.8, qps: 1 / Math.fround(0.001) },
  { recall: 0.94, qps: 1 / Math.fround(0.002) },
  { recall: 0.96, qps: 1 / Math.fround(0.004) },
  { recall: 1, qps: 1 / Math.fround(0.008) },
];

/** Writes one ann-benchmarks result file per spec into dir (algo names the algorithm); returns
 * their paths. */
export async function writeAnnBenchmarksFixtures(dir: string, ds: Dataset, truth: Int32Array[], k = 10, specs = AB_RUNS, algo = 'fakeann'): Promise<string[]> {
  const h5 = await import('h5wasm/node');
  await h5.ready;
  const paths: string[] = [];
  for (const spec of specs) {
    const nq = ds.nq;
    const neighbors = new Int32Array(nq * k);
    const distances = new Float32Array(nq * k);
    for (let q = 0; q < nq; q++) {
      const t = truth[q];
      const wrong = spec.wrong(q);
      for (let i = 0; i < k; i++) {
        // The last `wrong` slots get rows ranked 300+ (far from the k-th true distance).
        const id = i < k - wrong ? t[i] : spec.short?.(q) ? -1 : t[300 + i];
        neighbors[q * k + i] = id;
        distances[q * k + i] = id < 0 ? Infinity : i;
      }
    }
    const path = `${dir}/fakeann-ef${spec.ef}.hdf5`;
    const f = new h5.File(path, 'w');
    f.create_attribute('algo', algo);
    f.create_attribute('name', `FakeANN(M=16, ef=${spec.ef})`);
    f.create_attribute('dataset', ds.name);
    f.create_attribute('distance', ds.metric === 'l2' ? 'euclidean' : 'angular');
    f.create_attribute('count', k);
    f.create_attribute('build_time', 1.25);
    f.create_attribute('index_size', 5120);
    f.create_attribute('best_search_time', spec.time * 0.97);
    f.create_attribute('candidates', 10);
    f.create_attribute('run_count', 1);
    f.create_dataset({ name: 'times', data: new Float32Array(nq).fill(spec.time), shape: [nq], dtype: '<f' });
    f.create_dataset({ name: 'neighbors', data: neighbors, shape: [nq, k], dtype: '<i' });
    f.create_dataset({ name: 'distances', data: distances, shape: [nq, k], dtype: '<f' });
    f.close();
    paths.push(path);
  }
  return paths;
}

export function writeJson(path: string, value: unknown): string {
  writeFileSync(path, JSON.stringify(value, null, 1));
  return path;
}
