// Result files built in code for the report tests (no binary or JSON fixture is committed):
// two measured participants with curves that exercise every cell status, hostile strings in
// the places engines control, and extra sections of the kinds later features add.
import type { z } from 'zod';
import { resultSchema, type ResultFile, type ResultPoint } from '../../src/results/schema.ts';

type ResultInput = z.input<typeof resultSchema>;
type ResultGroup = ResultInput['groups'][number];

export const HOSTILE = '<script>alert(1)</script>';

function point(
  ladder_index: number,
  knobs: ResultPoint['knobs'],
  view: ResultPoint['view'],
  recall: number,
  qps: number,
  extra: Partial<ResultPoint> = {},
): ResultPoint {
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
    run: {
      vecbench_version: '0.1.0',
      started: '2025-11-29T00:00:00.000Z',
      updated: '2025-11-29T00:01:00.000Z',
      query_seed: 20251129,
      clients: 4,
      complete: true,
    },
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
      measured('none/10', [
        [{ ef: 10 }, 0.85, 9000],
        [{ ef: 20 }, 0.94, 6000],
        [{ ef: 40 }, 0.96, 4000],
        [{ ef: 80, mode: HOSTILE }, 0.995, 1500],
      ]),
      measured('cat10/10', [
        [{ ef: 10 }, 0.8, 5000],
        [{ ef: 40 }, 0.93, 2000],
      ]),
      measured('none/100', [
        [{ ef: 100 }, 0.9, 2000],
        [{ ef: 400 }, 0.98, 600],
      ]),
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
    measured('none/10', [
      [{ nprobes: 5 }, 0.9, 7000],
      [{ nprobes: 6 }, 0.97, 3000],
      [{ nprobes: 8 }, 0.985, 1800],
    ]),
    measured('cat10/10', [
      [{ nprobes: 5 }, 0.91, 2500],
      [{ nprobes: 9 }, 0.97, 900],
    ]),
    measured('none/100', [
      [{ nprobes: 5 }, 0.93, 1000],
      [{ nprobes: 20 }, 0.991, 200],
    ]),
    status('cat1000/10', 'not_asked', 'the filter keeps 3 rows (median), fewer than 10 x k = 100'),
    status('lang/10', 'unsupported', 'filter field lang is not supported'),
  ]);
  return [alpha, beta];
}

// ---------- stable points: intervals, calibration, flags, builds, how each was driven ----------

interface StableOptions {
  build?: number;
  calibratedFor?: number;
  flags?: string[];
  /** How the throughput view was driven (the latency view: one at a time). */
  driven: string;
  /** Relative half-width of the QPS and latency intervals. */
  spread: number;
}

/** A warm point with its per-pass figures and 95 % intervals, as the stable-point runner stores it. */
function stablePoint(ladder_index: number, knobs: ResultPoint['knobs'], view: ResultPoint['view'], recall: number, qps: number, o: StableOptions): ResultPoint {
  const p = point(ladder_index, knobs, view, recall, qps, { flags: o.flags ?? [], clients: view === 'latency' ? 1 : 2 });
  const band = (v: number): [number, number] => [v * (1 - o.spread), v * (1 + o.spread)];
  const passes = (v: number) => [v * (1 - o.spread / 2), v, v * (1 + o.spread / 2)];
  const lat = p.latency_ms;
  // Recall's interval narrows towards 1, as a bootstrap over ~3000 answers would.
  const recallHalf = 1.96 * Math.sqrt((recall * (1 - recall)) / 3000);
  return {
    ...p,
    passes: 3,
    pass: {
      qps: passes(qps),
      wall_s: passes(p.duration_s),
      latency_ms: { mean: passes(lat.mean), p50: passes(lat.p50), p95: passes(lat.p95), p99: passes(lat.p99), p999: passes(lat.p999) },
    },
    ci: {
      qps: band(qps),
      recall: [Math.max(0, recall - recallHalf), Math.min(1, recall + recallHalf)],
      latency_ms: { mean: band(lat.mean), p50: band(lat.p50), p95: band(lat.p95), p99: band(lat.p99), p999: band(lat.p999) },
    },
    driven: view === 'latency' ? '1 at a time' : o.driven,
    ...(o.build !== undefined ? { build: o.build } : {}),
    ...(o.calibratedFor !== undefined ? { calibrated_for: o.calibratedFor } : {}),
  };
}

type StableRow = { knobs: ResultPoint['knobs']; recall: number; qps: number; calibratedFor?: number; flags?: string[] };

/** A measured group of stable points: each row in both views (the flags only in the throughput view). */
function stableGroup(key: string, rows: StableRow[], o: Omit<StableOptions, 'calibratedFor' | 'flags'>, calibration?: ResultGroup['calibration']): ResultGroup {
  const [filter, k] = key.split('/');
  return {
    key,
    filter,
    k: Number(k),
    status: 'measured',
    median_matches: 3000,
    first_query_ms: 1.1,
    points: rows.flatMap((r, i) => [
      stablePoint(i, r.knobs, 'latency', r.recall, r.qps / 3, { ...o, calibratedFor: r.calibratedFor }),
      stablePoint(i, r.knobs, 'throughput', r.recall, r.qps, { ...o, calibratedFor: r.calibratedFor, flags: r.flags }),
    ]),
    skipped: [],
    ...(calibration ? { calibration } : {}),
  };
}

/** Points of several builds merged into one group (each build measured the same ladder). */
function merged(groups: ResultGroup[]): ResultGroup {
  return { ...groups[0], points: groups.flatMap((g) => g.points) };
}

export const STABLE_DATASET = 'stable-fixture';

/**
 * Two participants measured with stable points on their own dataset:
 * - gamma: an in-process engine driven by 2 threads, 2 index builds, calibrated points for every
 *   target; in build 0 a busy-machine point that would dominate none/10 at 0.95 if it were read;
 *   cat10/10 has calibration accounts (below range, a failed probe, not reached).
 * - delta: a server driven with 32 in flight, one build; a client-limited point that would
 *   dominate none/10 at 0.95; none/10 at 0.95 ties gamma's (the intervals overlap), at 0.90 and
 *   0.99 gamma leads.
 */
export function stableFixtureResults(): ResultFile[] {
  const gammaNone = (build: number, scale: number, extra: StableRow[]): ResultGroup =>
    stableGroup(
      'none/10',
      [
        { knobs: { ef: 10 }, recall: 0.85, qps: 9000 * scale },
        { knobs: { ef: 20 }, recall: 0.93, qps: 6000 * scale },
        { knobs: { ef: 40 }, recall: 0.96, qps: 4000 * scale },
        ...extra,
        { knobs: { ef: 80 }, recall: 0.995, qps: 1500 * scale },
        { knobs: { ef: 16 }, recall: 0.902, qps: 7400 * scale, calibratedFor: 0.9 },
        { knobs: { ef: 33 }, recall: 0.951, qps: 5000 * scale, calibratedFor: 0.95 },
        { knobs: { ef: 70 }, recall: 0.989, qps: 1900 * scale, calibratedFor: 0.99 },
      ],
      { build, driven: '2 threads', spread: 0.03 },
    );
  const gammaCat = (build: number, scale: number): ResultGroup =>
    stableGroup(
      'cat10/10',
      [
        { knobs: { ef: 10 }, recall: 0.93, qps: 3000 * scale },
        { knobs: { ef: 20 }, recall: 0.97, qps: 2000 * scale },
      ],
      { build, driven: '2 threads', spread: 0.03 },
      [
        { target: 0.9, knob: 'ef', status: 'below_range', knobs: [], probes: [{ knobs: { ef: 10 }, recall: 0.93 }] },
        { target: 0.95, knob: 'ef', status: 'failed', knobs: [], probes: [], reason: 'a probe timed out' },
        { target: 0.99, knob: 'ef', status: 'not_reached', knobs: [], probes: [{ knobs: { ef: 200 }, recall: 0.97 }] },
      ],
    );
  const gamma = base('gamma', 'gamma-engine', '2.0.0', [
    merged([
      gammaNone(0, 1, [{ knobs: { ef: 60 }, recall: 0.975, qps: 12000, flags: ['busy-machine'] }]),
      gammaNone(1, 1.04, [{ knobs: { ef: 60 }, recall: 0.975, qps: 3000 * 1.04 }]),
    ]),
    merged([gammaCat(0, 1), gammaCat(1, 1.04)]),
  ]);
  const delta = base('delta', 'delta-engine', '0.4.0', [
    stableGroup(
      'none/10',
      [
        { knobs: { nprobes: 5 }, recall: 0.9, qps: 7000 },
        { knobs: { nprobes: 6 }, recall: 0.95, qps: 4900 },
        { knobs: { nprobes: 7 }, recall: 0.97, qps: 9000, flags: ['client-limited'] },
        { knobs: { nprobes: 8 }, recall: 0.985, qps: 1800 },
        { knobs: { nprobes: 9 }, recall: 0.998, qps: 900 },
      ],
      { driven: '32 in flight', spread: 0.02 },
    ),
    stableGroup(
      'cat10/10',
      [
        { knobs: { nprobes: 5 }, recall: 0.91, qps: 2500 },
        { knobs: { nprobes: 9 }, recall: 0.97, qps: 900 },
      ],
      { driven: '32 in flight', spread: 0.02 },
    ),
  ]);
  for (const r of [gamma, delta]) {
    r.dataset.name = STABLE_DATASET;
    r.run.protocol = 'warm';
    r.run.timing = { min_passes: 3, min_seconds: 1, max_passes: 10 };
  }
  gamma.run.builds = 2;
  gamma.run.threads = 2;
  gamma.run.clients = 2;
  delta.run.clients = 32;
  return [gamma, delta];
}

// ---------- exact-search points beside the index's ----------

/**
 * A participant whose ladder also measures an exact scan (settings `exact_search`): its index
 * tops out at recall 0.985 in none/10, the scan reaches 1.0. Read together, 0.99 would be
 * interpolated between the index's best and the scan.
 */
export function exactSearchFixture(): ResultFile {
  const r = base('epsilon', 'epsilon-engine', '1.0.0', [
    measured('none/10', [
      [{ ef_search: 10 }, 0.9, 8000],
      [{ ef_search: 20 }, 0.95, 5000],
      [{ ef_search: 40 }, 0.985, 3000],
      [{ ef_search: 'exact' }, 1, 400],
    ]),
    measured('cat10/10', [
      [{ ef_search: 10 }, 0.92, 3000],
      [{ ef_search: 40 }, 0.97, 1500],
    ]),
  ]);
  r.settings.exact_search = { ef_search: 'exact' };
  return r;
}

// ---------- many participants: does the page stay readable? ----------

/** Resources as the runner records them, scaled per participant; `unmeasured` names the nulls. */
function resourcesFor(i: number, kind: 'full' | 'no-cold' | 'remote' | 'probe-error'): NonNullable<ResultFile['resources']> {
  const mb = (x: number) => Math.round(x * (1 + i / 7) * 2 ** 20);
  const r: NonNullable<ResultFile['resources']> = {
    measured_process: i % 2 === 0 ? 'server' : 'host',
    disk_bytes: mb(180),
    disk_stopped_bytes: mb(190),
    mem_baseline_anon_bytes: mb(40),
    mem_baseline_file_bytes: mb(12),
    mem_build_peak_bytes: mb(620),
    mem_build_peak_anon_bytes: mb(580),
    mem_build_peak_file_bytes: mb(40),
    mem_serving_anon_bytes: mb(410),
    mem_serving_file_bytes: mb(35),
    mem_serving_shmem_bytes: i % 2 === 0 ? mb(128) : 0,
    mem_serving_peak_bytes: mb(470),
    mem_sample_interval_ms: { build: 200, serving: 1000 },
    mem_samples: { build: 140 + i, serving: 61 + i },
    cold_accept_s: 0.21 + i / 50,
    cold_first_query_s: 0.48 + i / 40,
    cold_eviction: { method: 'vmtouch -e, drop_caches', resident_before_bytes: mb(180), resident_after_bytes: 8192, drop_caches: true },
    probe: {
      queries: 20,
      answered: true,
      knobs: { ef_search: 40, iterative_scan: 'relaxed_order' },
      recall: 0.912,
      short_results: 0,
      latency_ms_p50: 1.37,
      error: null,
    },
    group_evictions: [],
    unmeasured: {},
  };
  if (kind === 'no-cold') {
    const why = 'vmtouch is not installed (it evicts data files from the page cache): apt-get install vmtouch';
    Object.assign(r, { cold_accept_s: null, cold_first_query_s: null, disk_stopped_bytes: null, cold_eviction: null });
    r.unmeasured = { cold_accept_s: why, cold_first_query_s: why, disk_stopped_bytes: why };
  }
  if (kind === 'remote') {
    const why = 'the engine is a server the user runs (--connect): vecbench did not start it and does not measure its memory, disk or cold start';
    for (const f of [
      'disk_bytes',
      'disk_stopped_bytes',
      'mem_baseline_anon_bytes',
      'mem_baseline_file_bytes',
      'mem_build_peak_bytes',
      'mem_build_peak_anon_bytes',
      'mem_build_peak_file_bytes',
      'mem_serving_anon_bytes',
      'mem_serving_file_bytes',
      'mem_serving_shmem_bytes',
      'mem_serving_peak_bytes',
      'cold_accept_s',
      'cold_first_query_s',
    ] as const) {
      (r as Record<string, unknown>)[f] = null;
      r.unmeasured[f] = why;
    }
    r.cold_eviction = null;
  }
  if (kind === 'probe-error')
    r.probe = {
      queries: 20,
      answered: false,
      knobs: { nprobes: 8 },
      recall: null,
      short_results: null,
      latency_ms_p50: null,
      error: 'the index cannot be searched before it is built (LanceDB builds IVF partitions in createIndex)',
    };
  return r;
}

/** Participants with the names real runs have (and long imported ones), on one dataset. */
export const MANY_NAMES = [
  'chroma',
  'exact',
  'hnswlib',
  'lancedb',
  'pgvector',
  'pgvector-pglite',
  'redis',
  'redis-q8',
  'usearch',
  'weaviate-hnsw-pq-compressed',
  'qdrant-default@vectorbench',
  'milvus-ivf-flat-nlist-1024@vectorbench',
];
export const MANY_DATASET = 'many-fixture';

/**
 * Twelve participants (two of them imported, with long names) on one dataset, each with
 * resources; pgvector-pglite also measures an exact scan (its own column), one participant ran
 * without vmtouch, one against a server it did not start, one whose probe failed.
 */
export function manyParticipantsFixture(): ResultFile[] {
  return MANY_NAMES.map((name, i) => {
    const s = 1 + i / 10;
    const knob = name === 'pgvector-pglite' ? 'ef_search' : 'ef';
    const r = base(name, `${name}-engine`, `${1 + i}.0.0`, [
      stableGroup(
        'none/10',
        [
          { knobs: { [knob]: 10 }, recall: 0.89 + i / 1000, qps: 9000 * s },
          { knobs: { [knob]: 20 }, recall: 0.91, qps: 7600 * s },
          { knobs: { [knob]: 30 }, recall: 0.94, qps: 6100 * s },
          { knobs: { [knob]: 40 }, recall: 0.955, qps: 4100 * s },
          { knobs: { [knob]: 80 }, recall: 0.975, qps: 2600 * s },
          { knobs: { [knob]: 160 }, recall: 0.978 + i / 2000, qps: 1600 * s },
          ...(name === 'pgvector-pglite' ? [{ knobs: { [knob]: 'exact' }, recall: 1, qps: 310 }] : []),
        ],
        { driven: i % 3 === 0 ? '1 at a time' : i % 3 === 1 ? '32 in flight' : '2 threads', spread: 0.03 },
      ),
      stableGroup(
        'cat10/10',
        [
          { knobs: { [knob]: 10 }, recall: 0.91, qps: 2600 * s },
          { knobs: { [knob]: 40 }, recall: 0.97, qps: 1200 * s },
        ],
        { driven: '32 in flight', spread: 0.02 },
      ),
      status('cat1000/10', 'not_asked', 'the filter keeps 3 rows (median), fewer than 10 x k = 100'),
    ]);
    r.dataset.name = MANY_DATASET;
    if (name.includes('@')) {
      r.origin = 'imported';
      r.resources = null;
    } else {
      r.resources = resourcesFor(i, name === 'usearch' ? 'no-cold' : name === 'redis' ? 'remote' : name === 'lancedb' ? 'probe-error' : 'full');
    }
    if (name === 'pgvector-pglite') r.settings.exact_search = { ef_search: 'exact' };
    if (name === 'pgvector')
      r.resources!.group_evictions = ['none/10', 'cat10/10'].map((group) => ({
        group,
        resident_before_bytes: 190 * 2 ** 20,
        resident_after_bytes: 4096,
        drop_caches: true,
      }));
    return r;
  });
}

export const GRID_DATASET = 'grid-fixture';
export const GRID_SELS = [1, 5, 20, 50];

/**
 * Two participants over the selectivity x correlation grid at k 10 (every cell) and k 100
 * (sel20, sel50): gridA's plan shows its strategy (pre-filter below 20 %, graph walk above),
 * gridB's adapter declares one; gridB never reaches 0.95 on sel1-clustered/10 (max 0.8) and
 * gridA's sel1-scattered/100 is not asked.
 */
export function gridFixtureResults(): ResultFile[] {
  const grid = (name: string, speed: number, strategy: (sel: number) => NonNullable<ResultPoint['strategy']>) => {
    const groups: ResultGroup[] = [];
    for (const k of [10, 100])
      for (const sel of k === 10 ? GRID_SELS : [20, 50])
        for (const corr of ['scattered', 'clustered']) {
          const key = `sel${sel}-${corr}/${k}`;
          const qps = speed * (corr === 'clustered' ? 1.5 : 1) * (1 + sel / 10);
          // Close points around 0.95 so the cell is read there (a wide bracket reads no value).
          const recalls = name === 'gridB' && key === 'sel1-clustered/10' ? [0.7, 0.75, 0.78, 0.8] : [0.9, 0.945, 0.955, 0.97];
          const g = measured(
            key,
            recalls.map((recall, i) => [{ ef: 10 * 2 ** i }, recall, qps * (4 - i)]),
          );
          for (const p of g.points) p.strategy = strategy(sel);
          groups.push(g);
        }
    groups.push(status('sel1-scattered/100', 'not_asked', 'the filter keeps 30 rows (median), fewer than 10 x k = 1000'));
    const r = base(name, `${name}-engine`, '1.0.0', name === 'gridA' ? groups : groups.filter((g) => g.key !== 'sel1-scattered/100'));
    r.dataset.name = GRID_DATASET;
    return r;
  };
  return [
    grid('gridA', 2000, (sel) => ({ label: sel < 20 ? 'pre-filter' : 'graph walk', observed: true })),
    grid('gridB', 1000, () => ({ label: 'post-filter', observed: false })),
  ];
}

export const DISK_DATASET = 'disk-fixture';
export const DISK_GROUPS = ['none/10', 'none/100', 'none/1000', 'cat10/10'];

/**
 * The disk tier's view: two participants measured as --tier disk on DISK_DATASET, every
 * throughput point carrying bytes read per query (diskB rereads more, more so as k grows), beside
 * the in-RAM fixture results (fixtureResults), whose points carry none.
 */
export function diskFixtureResults(): ResultFile[] {
  const disk = (name: string, perQuery: number) => {
    const groups = DISK_GROUPS.map((key) => {
      const k = Number(key.split('/')[1]);
      const g = measured(
        key,
        [0.86, 0.91, 0.955, 0.99].map((recall, i) => [{ ef: k * 2 ** i }, recall, 800 / (i + 1)]),
      );
      for (const p of g.points) {
        // KiB-scale figures that are not round in MiB, read back from the tooltips.
        if (p.view === 'throughput') p.io = { read_bytes_per_query: perQuery * (p.ladder_index + 1) * Math.sqrt(k) * 1013, major_faults_per_query: 2 };
      }
      return g;
    });
    const r = base(name, `${name}-engine`, '2.0.0', groups);
    r.dataset.name = DISK_DATASET;
    r.run.tier = 'disk';
    r.run.memory_limit_bytes = 2 ** 30;
    return r;
  };
  return [...fixtureResults(), disk('diskA', 40), disk('diskB', 130)];
}
