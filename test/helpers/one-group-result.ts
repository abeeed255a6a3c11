// A result file of one measured group built in code, and its timed points: for tests that derive
// cells from a handful of points (intervals, the cold spread).
import { resultSchema, type ResultPoint } from '../../src/results/schema.ts';

/** A timed point at ladder index `li` (knobs ef = 10 + li), its QPS interval ±3 %. */
export function timedPoint(li: number, view: 'latency' | 'throughput', recall: number, qps: number, extra: Partial<ResultPoint> = {}): ResultPoint {
  const m = 1000 / qps;
  return {
    ladder_index: li,
    knobs: { ef: 10 + li },
    view,
    clients: 2,
    queries: 1000,
    query_slice: [0, 999],
    recall,
    recall_strict: recall,
    recall_threshold: recall,
    short_results: 0,
    low_recall_share: 0,
    unknown_ids: 0,
    duplicate_ids: 0,
    filter_violations: 0,
    qps,
    duration_s: 1,
    latency_ms: { mean: m, p50: m, p95: m, p99: m, p999: m, max: m },
    flags: [],
    ci: { qps: [qps * 0.97, qps * 1.03], recall: [recall, recall], latency_ms: { mean: [m, m], p50: [m, m], p95: [m, m], p99: [m, m], p999: [m, m] } },
    ...extra,
  };
}

/** A result of one measured group (none/10) holding `points`, measured under `protocol`. */
export function oneGroupResult(points: ResultPoint[], protocol: 'warm' | 'cold' = 'warm', participant = 'p') {
  return resultSchema.parse({
    format: 'vecbench-result/1',
    participant,
    engine: 'e',
    engine_version: '1',
    dataset: { name: 'd', n: 1, d: 1, nq: 1, metric: 'ip', hash: 'h' },
    settings: { index: {}, ladders: [] },
    filter_strategy: 'x',
    hardware: { cpu: 'x', cores: 2, memory_bytes: 1, os: 'x', node: 'x' },
    run: { vecbench_version: '0', started: 'x', updated: 'x', query_seed: 1, clients: 2, complete: true, protocol },
    load: null,
    groups: [{ key: 'none/10', filter: 'none', k: 10, status: 'measured', median_matches: 10, points, complete: true, skipped: [] }],
  });
}
