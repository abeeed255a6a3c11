// The result format (docs/contracts.md, "Result file"): one JSON file per participant per
// dataset holding only measured points plus the facts needed to read them (hardware,
// engine version, settings). Tables and leads are never stored: they are derived.
import { z } from 'zod';
import { READINGS, type Reading, type ReadingName } from './readings.ts';

export const RESULT_FORMAT = 'vecbench-result/1';

/** The two views every point is measured in: one request at a time (latency), and requests in
 * flight (throughput). The one list runner, metrics and report read; the report shows
 * throughput first (REPORT_VIEWS, src/report/cells.ts). */
export const VIEWS = ['latency', 'throughput'] as const;
export type View = (typeof VIEWS)[number];

export const latencySchema = z.object({
  mean: z.number(),
  p50: z.number(),
  p95: z.number(),
  p99: z.number(),
  p999: z.number(),
  max: z.number(),
});

/** A 95 % percentile-bootstrap interval [low, high] (src/metrics/intervals.ts). */
const intervalSchema = z.tuple([z.number(), z.number()]);
export type Interval = z.infer<typeof intervalSchema>;

const latencyIntervalSchema = z.object({ mean: intervalSchema, p50: intervalSchema, p95: intervalSchema, p99: intervalSchema, p999: intervalSchema });

/** The per-pass figures a warm point's estimates and intervals come from (docs/measurement.md,
 * "Stable points"). */
const passFiguresSchema = z.object({
  qps: z.array(z.number()),
  wall_s: z.array(z.number()),
  latency_ms: z.object({ mean: z.array(z.number()), p50: z.array(z.number()), p95: z.array(z.number()), p99: z.array(z.number()), p999: z.array(z.number()) }),
  /** Per pass: the cores other processes used meanwhile, and the steal share (null: unreadable). */
  other_cores: z.array(z.number().nullable()).optional(),
  steal: z.array(z.number().nullable()).optional(),
  /** Per pass: the host-speed probe that judged its round, ms (src/runner/host-speed.ts). */
  host_ms: z.array(z.number().nullable()).optional(),
  /** Per pass: when it started (Unix seconds), so a point's passes can be laid out in time beside
   * the run's other points (docs/measurement.md, "Interleaved timing"). */
  at_unix_s: z.array(z.number()).optional(),
  /** Per pass taken: when the shared round it was taken in began (Unix seconds), the round's
   * identity: passes of two points with the same value shared a round, whatever the seconds
   * between them (src/metrics/paired.ts); null: a pass an earlier run kept (resume). */
  round_at_unix_s: z.array(z.number().nullable()).optional(),
  /** Per pass taken: whether its round was busy. qps, wall_s and latency_ms hold the quiet passes
   * only (all of them when too few were quiet), the other per-pass arrays every pass taken; this
   * lines them up (docs/contracts.md, "Paired leads"). */
  busy: z.array(z.boolean()).optional(),
  /** Per pass: bytes the engine's processes read from storage (/proc/PID/io read_bytes) and their
   * major page faults, summed over the engine's process tree; null: unreadable. */
  read_bytes: z.array(z.number().nullable()).optional(),
  major_faults: z.array(z.number().nullable()).optional(),
});

type ReadingValue<R, Nullable extends boolean> = Nullable extends true ? (R extends { kind: 'count' } ? z.ZodNumber : z.ZodNullable<z.ZodNumber>) : z.ZodNumber;
type ReadingSchema<R, Nullable extends boolean> = R extends { optional: true } ? z.ZodOptional<ReadingValue<R, Nullable>> : ReadingValue<R, Nullable>;
/** Each declared reading's schema: a count is a whole number >= 0, a share or fraction any
 * number; `nullable`: a mean over no queries is stored as null (a churn step whose queries all
 * failed), where a point with no queries is never stored. */
export function readingsShape<N extends boolean>(nullable: N): { [K in ReadingName]: ReadingSchema<(typeof READINGS)[K], N> } {
  return Object.fromEntries(
    Object.entries(READINGS).map(([name, r]: [string, Reading]) => {
      const value = r.kind === 'count' ? z.number().int().nonnegative() : nullable ? z.number().nullable() : z.number();
      return [name, r.optional ? value.optional() : value];
    }),
  ) as { [K in ReadingName]: ReadingSchema<(typeof READINGS)[K], N> };
}

export const pointSchema = z.object({
  /** Index into the group's ladder; a calibrated point (calibrated_for) is numbered after the
   * ladder (ladder length + its place in the group's calibration list). */
  ladder_index: z.number().int().nonnegative(),
  knobs: z.record(z.string(), z.union([z.number(), z.string()])),
  /** latency: one request at a time; throughput: `clients` requests in flight. */
  view: z.enum(VIEWS),
  clients: z.number().int().positive(),
  queries: z.number().int().positive(),
  /** Indices (into the dataset's query set) of the first and last query of the slice. */
  query_slice: z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()]),
  /** What the point read of its answers: recall (tie-aware recall@k, the headline reading) and
   * every other reading src/results/readings.ts declares. */
  ...readingsShape(false),
  /** Rows of another tenant than the query was confined to (a security finding), and the first
   * named; absent where there are none. */
  tenant_leaks: z.number().int().positive().optional(),
  tenant_leak: z.object({ query: z.number().int(), query_tenant: z.number().int(), row: z.number().int(), row_tenant: z.number().int() }).optional(),
  qps: z.number(),
  duration_s: z.number(),
  latency_ms: latencySchema,
  /** Conditions a reader must know, e.g. "client-limited". */
  flags: z.array(z.string()).default([]),
  // ---- Stable points (absent in results measured before them) ----
  /** Timed passes over the point's query set (warm protocol); 1 under the cold protocol. */
  passes: z.number().int().positive().optional(),
  /** Passes left out: beyond 3 x IQR of the pass QPS (trimmed), or taken while the machine was busy (busy). */
  passes_trimmed: z.number().int().nonnegative().optional(),
  passes_busy: z.number().int().nonnegative().optional(),
  /** The raw per-pass figures (warm protocol). */
  pass: passFiguresSchema.optional(),
  /** 95 % bootstrap intervals: qps and latency over passes (per query under the cold protocol),
   * recall over the queries. */
  ci: z.object({ qps: intervalSchema, recall: intervalSchema, latency_ms: latencyIntervalSchema }).optional(),
  /** Queries whose ids differed between passes (a nondeterministic engine, or a cache). */
  answers_varied: z.number().int().nonnegative().optional(),
  /** Set on a point measured at knobs found by calibration for this target recall. */
  calibrated_for: z.number().optional(),
  /** Timed to the cells' precision (run.timing.cell_half_width): a table cell was expected to
   * read this point when its timing began. */
  for_cell: z.boolean().optional(),
  /** Which build of the index (--builds N), from 0. */
  build: z.number().int().nonnegative().optional(),
  /** How the participant was driven: "1 at a time", "32 in flight", "2 threads". */
  driven: z.string().optional(),
  /** Mean cores other processes used during the point's passes, the mean steal share, and the
   * mean host-speed probe in ms (a fixed workload: two runs' probes compare on one machine). */
  machine: z.object({ other_cores: z.number().nullable(), steal: z.number().nullable(), host_ms: z.number().nullable().optional() }).optional(),
  /** The host's own cost per query (null-engine loop), ms, and its share of the mean latency. */
  harness_ms: z.number().optional(),
  /** How the engine answered at this point's knobs (docs/measurement.md, "Plans"): a short label,
   * observed in the engine's plan or declared by the adapter; asked after the point's passes. */
  strategy: z.object({ label: z.string(), observed: z.boolean() }).optional(),
  /** Storage the engine read per query over the point's kept passes, or its slice under the cold
   * protocol (docs/measurement.md, "Bytes read per query"): bytes and major page faults; absent
   * where /proc could not tell. */
  io: z.object({ read_bytes_per_query: z.number().nonnegative(), major_faults_per_query: z.number().nonnegative() }).optional(),
});
export type ResultPoint = z.infer<typeof pointSchema>;

/** A ladder point the group could not measure, and why. */
export const skippedSchema = z.object({ ladder_index: z.number().int(), knobs: z.record(z.string(), z.union([z.number(), z.string()])), reason: z.string() });

const groupSchema = z.object({
  key: z.string(),
  filter: z.string(),
  k: z.number().int().positive(),
  status: z.enum(['measured', 'not_asked', 'unsupported', 'failed']),
  reason: z.string().optional(),
  /** Median number of rows the group's filter keeps per query. */
  median_matches: z.number().nonnegative(),
  /** The engine's plan for the group's first query, where it can explain one. */
  plan: z.string().optional(),
  /** The group's first query, timed on its own (an engine can stall on it). */
  first_query_ms: z.number().optional(),
  points: z.array(pointSchema),
  /** False while the group is being measured: a resumed run measures only missing points. */
  complete: z.boolean().default(true),
  /** Calibration to the table's target recalls (docs/measurement.md, "Calibration"). */
  calibration: z
    .array(
      z.object({
        target: z.number(),
        knob: z.string(),
        /** found: a point within the tolerance; adjacent: two neighbouring integer values
         * straddle the target; not_reached: the knob's range tops out below it; below_range:
         * the lowest value is already above it; failed: a probe failed (reason). */
        status: z.enum(['found', 'adjacent', 'not_reached', 'below_range', 'failed', 'no_knob']),
        /** The knobs chosen (found / adjacent: the lower-recall side first). */
        knobs: z.array(z.record(z.string(), z.union([z.number(), z.string()]))).default([]),
        /** Recall-only probes, in the order asked. */
        probes: z.array(z.object({ knobs: z.record(z.string(), z.union([z.number(), z.string()])), recall: z.number() })).default([]),
        reason: z.string().optional(),
      }),
    )
    .optional(),
  /** Ladder points left out, with the reason (e.g. over the time limit). */
  skipped: z.array(skippedSchema).default([]),
});
export type ResultGroup = z.infer<typeof groupSchema>;

/** Load, size, memory and cold start of the engine (docs/method.md §6; docs/runs.md, "Resources").
 * Every figure is measured or null; `unmeasured` says why a null is null. */
const resourcesSchema = z.object({
  /** Which process tree was measured: the participant's server, or its host process (an
   * in-process engine, together with the harness's copy of the dataset: see baseline). */
  measured_process: z.enum(['server', 'host']),
  /** Bytes allocated on disk by the engine's data directory after load (harness-measured). */
  disk_bytes: z.number().nullable(),
  /** Bytes of the same directory after the cold start's clean stop: what the engine keeps on
   * disk (e.g. a server that writes its snapshot only on shutdown has disk_bytes 0 while serving).
   * Absent in results measured before it was recorded. */
  disk_stopped_bytes: z.number().nullable().optional(),
  /** Memory of the measured process before any row was loaded (server idle; host with the
   * dataset loaded and the engine opened). */
  mem_baseline_anon_bytes: z.number().nullable(),
  mem_baseline_file_bytes: z.number().nullable(),
  /** Sampled during ingest and index build: highest anon + file, highest anon, highest file. */
  mem_build_peak_bytes: z.number().nullable(),
  mem_build_peak_anon_bytes: z.number().nullable(),
  mem_build_peak_file_bytes: z.number().nullable(),
  /** Medians of the samples taken while the query points ran. anon includes shared anonymous
   * memory (shmem, e.g. PostgreSQL's shared_buffers), also given alone. */
  mem_serving_anon_bytes: z.number().nullable(),
  mem_serving_file_bytes: z.number().nullable(),
  mem_serving_shmem_bytes: z.number().nullable(),
  mem_serving_peak_bytes: z.number().nullable(),
  mem_sample_interval_ms: z.object({ build: z.number(), serving: z.number() }),
  mem_samples: z.object({ build: z.number().int(), serving: z.number().int() }),
  /** Cold start: stop, evict the data files from the page cache, start; seconds from the start
   * until the health check passes and until the first vector query returns. */
  cold_accept_s: z.number().nullable(),
  cold_first_query_s: z.number().nullable(),
  cold_eviction: z.object({ method: z.string(), resident_before_bytes: z.number(), resident_after_bytes: z.number(), drop_caches: z.boolean() }).nullable(),
  /** A few unfiltered k=10 queries between ingest and index build: does the engine answer? */
  probe: z
    .object({
      queries: z.number().int(),
      answered: z.boolean(),
      knobs: z.record(z.string(), z.union([z.number(), z.string()])),
      recall: z.number().nullable(),
      short_results: z.number().int().nullable(),
      latency_ms_p50: z.number().nullable(),
      error: z.string().nullable(),
    })
    .nullable(),
  /** --cold protocol: the eviction before each group, measured. */
  group_evictions: z
    .array(z.object({ group: z.string(), resident_before_bytes: z.number(), resident_after_bytes: z.number(), drop_caches: z.boolean() }))
    .default([]),
  /** Why a null field is null, by field name. */
  unmeasured: z.record(z.string(), z.string()).default({}),
  /** The engine's memory budget (--memory-limit; docs/runs.md, "Memory budget"): the limit
   * asked, the harness's allowance added for an in-process engine's host, the cgroup's limit,
   * peak use (page cache included), limit hits and OOM kills. Absent without a budget. */
  memory_budget: z
    .object({
      cgroup: z.enum(['v1', 'v2']),
      asked_bytes: z.number(),
      harness_allowance_bytes: z.number(),
      limit_bytes: z.number(),
      peak_bytes: z.number().nullable(),
      limit_hits: z.number(),
      oom_kills: z.number(),
      /** serving: built outside the budget, then restarted within it from its files; every start:
       * held from its first start (an engine that cannot reopen its files). Absent before it was
       * recorded (every start). */
      holds: z.enum(['serving', 'every start']).optional(),
    })
    .optional(),
});
export type Resources = z.infer<typeof resourcesSchema>;

export const resultSchema = z.object({
  format: z.literal(RESULT_FORMAT),
  participant: z.string(),
  engine: z.string(),
  engine_version: z.string(),
  /** Where the figures came from: measured here, or imported from another harness. */
  origin: z.enum(['measured', 'imported']).default('measured'),
  dataset: z.object({ name: z.string(), n: z.number().int(), d: z.number().int(), nq: z.number().int(), metric: z.string(), hash: z.string() }),
  settings: z.object({
    index: z.unknown(),
    ladders: z.array(z.unknown()),
    batch_size: z.number().int().optional(),
    notes: z.string().optional(),
    calibration: z.unknown().optional(),
    /** Knob values that select an exact scan (settings.json `exact_search`): points holding them
     * are read as the participant's exact row (docs/contracts.md, "Exact-search points"). */
    exact_search: z.record(z.string(), z.union([z.number(), z.string()])).optional(),
  }),
  filter_strategy: z.string(),
  hardware: z.object({ cpu: z.string(), cores: z.number().int(), memory_bytes: z.number(), os: z.string(), node: z.string() }),
  run: z.object({
    vecbench_version: z.string(),
    started: z.string(),
    updated: z.string(),
    query_seed: z.number().int(),
    clients: z.number().int().positive(),
    complete: z.boolean(),
    /** How many times an interrupted run of this file was resumed. */
    resumed: z.number().int().nonnegative().default(0),
    /** warm (also when absent): data files stay in the page cache; cold: evicted before every
     * group (docs/method.md §5). */
    protocol: z.enum(['warm', 'cold']).optional(),
    /** Warm protocol: every point of a group answers the same queries: all of them, or a seeded
     * subset of `size` (docs/measurement.md, "Stable points"). Cold: slices, every query once. */
    query_set: z.object({ mode: z.enum(['all', 'subset', 'slices']), size: z.number().int().positive(), seed: z.number().int() }).optional(),
    /** Timing of warm points: passes until both min_passes and min_seconds are reached, at most max_passes. */
    timing: z
      .object({
        min_passes: z.number().int().positive(),
        min_seconds: z.number().nonnegative(),
        max_passes: z.number().int().positive(),
        busy_cores: z.number().nonnegative().optional(),
        host_slow: z.number().nonnegative().optional(),
        /** The points cells read (throughput view): passes until the QPS interval's relative
         * half-width is at most cell_half_width, at most cell_seconds and cell_max_passes. */
        cell_half_width: z.number().nonnegative().optional(),
        cell_seconds: z.number().nonnegative().optional(),
        cell_max_passes: z.number().int().positive().optional(),
        /** ... and, where the row's participants share rounds (interleaved_with), until the
         * paired intervals of their leads are within lead_half_width instead. */
        lead_half_width: z.number().nonnegative().optional(),
      })
      .optional(),
    /** Index builds measured (--builds). */
    builds: z.number().int().positive().optional(),
    /** Throughput view: in-flight requests (servers, async engines) and threads (synchronous in-process engines). */
    threads: z.number().int().positive().optional(),
    /** Warm protocol: the other participants whose timed passes shared this one's rounds
     * (docs/measurement.md, "Interleaved timing"); empty or absent: timed on its own. */
    interleaved_with: z.array(z.string()).optional(),
    /** --memory-limit: the bytes each engine may use, page cache included (absent: no budget). */
    memory_limit_bytes: z.number().optional(),
    /** --tier: the named tier the run measured (its dataset, budget, protocol and groups). */
    tier: z.string().optional(),
  }),
  load: z
    .object({
      rows: z.number().int(),
      ingest_s: z.number(),
      index_s: z.number(),
      disk_bytes: z.number().nullable(),
      /** Loads after the first (a resumed run or a restarted engine), each timed again. */
      reloads: z.array(z.object({ reason: z.string(), ingest_s: z.number(), index_s: z.number() })).default([]),
      /** Starts of a resumed run that reopened the index a previous run built instead of loading
       * it again (docs/runs.md, "Resume and index reuse"): when that build finished, the
       * seconds reopen() took, and how many check queries answered as after the build. */
      reused: z.array(z.object({ reason: z.string(), built: z.string(), open_s: z.number().nullable(), check_queries: z.number().int() })).default([]),
    })
    .nullable(),
  groups: z.array(groupSchema),
  /** Load, size, memory and cold start (docs/method.md §6); absent or null where not measured. */
  resources: resourcesSchema.nullable().optional(),
  /** Where the figures were measured: vecbench commit, settings hash, machine facts
   * (docs/contracts.md, "Provenance"). Absent in results measured before it. */
  provenance: z
    .object({
      vecbench_commit: z.string().nullable(),
      vecbench_dirty: z.boolean().nullable(),
      settings_hash: z.string(),
      cpu_model: z.string(),
      cpu_flags: z.array(z.string()),
      kernel: z.string(),
      thp: z.string().nullable(),
      governor: z.string().nullable(),
      /** The block device under --out, where the engines keep their data (absent in results
       * measured before it was recorded; null where not a block device). */
      storage: z
        .object({ device: z.string(), read_ahead_kb: z.number(), rotational: z.boolean().nullable(), scheduler: z.string().nullable() })
        .nullable()
        .optional(),
    })
    .optional(),
  /** Sections added by later features (resources, concurrency, churn, quality) live here. */
  extra: z.record(z.string(), z.unknown()).default({}),
});
export type ResultFile = z.infer<typeof resultSchema>;
