// Result files built in code for the report tests (no binary or JSON fixture is committed):
// two measured participants with curves that exercise every cell status, hostile strings in
// the places engines control, and extra sections of the kinds later features add.
import type { z } from 'zod';
import { resultSchema, type ResultFile, type ResultPoint } from '../src/results/schema.ts';

type ResultInput = z.input<typeof resultSchema>;
type ResultGroup = ResultInput['groups'][number];

export const HOSTILE = '<script>alert(1)</script>';

function point(ladder_index: number, knobs: ResultPoint['knobs'], view: ResultPoint['view'], recall: number, qps: number, extra: Partial<ResultPoint> = {}): ResultPoint {
  const mean = 1000 / qps;
  return {
    ladder_index,
    knobs,
    view,
    clients: view === 'latency' ? 1 : 4,
    queries: 100,
    query_slice: [ladder_index * 200 + 1, ladder_index * 200 + 100],
    recall,
    recall_strict: recall - 0.001,
    recall_threshold: Math.min(1, recall + 0.001),
    short_results: 0,
    low_recall_share: 0,
    unknown_ids: 0,
    duplicate_ids: 0,
    filter_violations: 0,
    qps,
    duration_s: 100 / qps,
    latency_ms: { mean, p50: mean * 0.9, p95: mean * 1.6, p99: mean * 2.2, p999: mean * 3, max: mean * 4 },
    flags: [],
    ...extra,
  };
}

/** A measured group: for each (knobs, recall, qps) a latency point and a throughput point. */
function measured(key: string, curve: [ResultPoint['knobs'], number, number][]): ResultGroup {
  const [filter, k] = key.split('/');
  return {
    key,
    filter,
    k: Number(k),
    status: 'measured',
    median_matches: 3000,
    first_query_ms: 1.5,
    points: curve.flatMap(([knobs, recall, qps], i) => [point(i, knobs, 'latency', recall, qps / 3), point(i, knobs, 'throughput', recall, qps)]),
    skipped: [],
  };
}

function status(key: string, s: 'not_asked' | 'unsupported' | 'failed', reason: string): ResultGroup {
  const [filter, k] = key.split('/');
  return { key, filter, k: Number(k), status: s, reason, median_matches: 3, points: [], skipped: [] };
}

function base(participant: string, engine: string, version: string, groups: ResultGroup[], extra: Record<string, unknown> = {}): ResultFile {
  return resultSchema.parse({
    format: 'vecbench-result/1',
    participant,
    engine,
    engine_version: version,
    origin: 'measured',
    dataset: { name: 'synthetic-fixture', n: 3000, d: 128, nq: 300, metric: 'ip', hash: 'f'.repeat(64) },
    settings: { index: { M: 16, efConstruction: 200 }, ladders: [{ knobs: { ef: [10, 20, 40, 80] } }], batch_size: 1000, notes: `note ${HOSTILE}` },
    filter_strategy: 'filtered during the graph walk',
    hardware: { cpu: 'Fixture CPU', cores: 2, memory_bytes: 24 * 2 ** 30, os: 'Linux 6', node: 'v20.20.2' },
    run: { vecbench_version: '0.1.0', started: '2025-11-29T00:00:00.000Z', updated: '2025-11-29T00:01:00.000Z', query_seed: 20251129, clients: 4, complete: true },
    load: { rows: 3000, ingest_s: 0.42, index_s: 1.7, disk_bytes: 3_500_000 },
    groups,
    extra,
  } satisfies ResultInput);
}

export function fixtureResults(): ResultFile[] {
  const alpha = base(
    'alpha',
    'alpha-engine',
    `1.2.3 ${HOSTILE}`,
    [
      measured('none/10', [[{ ef: 10 }, 0.85, 9000], [{ ef: 20 }, 0.94, 6000], [{ ef: 40 }, 0.96, 4000], [{ ef: 80, mode: HOSTILE }, 0.995, 1500]]),
      measured('cat10/10', [[{ ef: 10 }, 0.8, 5000], [{ ef: 40 }, 0.93, 2000]]),
      measured('none/100', [[{ ef: 100 }, 0.9, 2000], [{ ef: 400 }, 0.98, 600]]),
      status('cat1000/10', 'not_asked', 'the filter keeps 3 rows (median), fewer than 10 x k = 100'),
      status('lang/10', 'failed', `plan check: ${HOSTILE}`),
    ],
    {
      resources: {
        memory: { build: { anon_bytes: 52_000_000, file_bytes: 1_000_000 }, serving: { anon_bytes: 40_000_000, file_bytes: 3_000_000 } },
        cold_start: { health_s: 0.05, first_query_s: 0.08 },
      },
      concurrency: {
        points: [
          { concurrency: 1, qps: 900, p99_ms: 1.4 },
          { concurrency: 8, qps: 3100, p99_ms: 3.2 },
          { concurrency: 64, qps: 3300, p99_ms: 25 },
        ],
      },
    },
  );
  const beta = base('beta', 'beta-engine', '0.9.0', [
    measured('none/10', [[{ nprobes: 5 }, 0.9, 7000], [{ nprobes: 6 }, 0.97, 3000], [{ nprobes: 8 }, 0.985, 1800]]),
    measured('cat10/10', [[{ nprobes: 5 }, 0.91, 2500], [{ nprobes: 9 }, 0.97, 900]]),
    measured('none/100', [[{ nprobes: 5 }, 0.93, 1000], [{ nprobes: 20 }, 0.991, 200]]),
    status('cat1000/10', 'not_asked', 'the filter keeps 3 rows (median), fewer than 10 x k = 100'),
    status('lang/10', 'unsupported', 'filter field lang is not supported'),
  ]);
  return [alpha, beta];
}
