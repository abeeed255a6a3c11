// The result format (docs/contracts.md, "Result file"): one JSON file per participant per
// dataset holding only measured points plus the facts needed to read them (hardware,
// engine version, settings). Tables and leads are never stored: they are derived.
import { z } from 'zod';

export const RESULT_FORMAT = 'vecbench-result/1';

export const latencySchema = z.object({
  mean: z.number(),
  p50: z.number(),
  p95: z.number(),
  p99: z.number(),
  p999: z.number(),
  max: z.number(),
});

export const pointSchema = z.object({
  ladder_index: z.number().int().nonnegative(),
  knobs: z.record(z.string(), z.union([z.number(), z.string()])),
  /** latency: one request at a time; throughput: `clients` requests in flight. */
  view: z.enum(['latency', 'throughput']),
  clients: z.number().int().positive(),
  queries: z.number().int().positive(),
  /** Indices (into the dataset's query set) of the first and last query of the slice. */
  query_slice: z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()]),
  /** Tie-aware recall@k (the headline reading). */
  recall: z.number(),
  recall_strict: z.number(),
  recall_threshold: z.number(),
  short_results: z.number().int().nonnegative(),
  low_recall_share: z.number(),
  unknown_ids: z.number().int().nonnegative(),
  duplicate_ids: z.number().int().nonnegative(),
  filter_violations: z.number().int().nonnegative(),
  qps: z.number(),
  duration_s: z.number(),
  latency_ms: latencySchema,
  /** Conditions a reader must know, e.g. "client-limited". */
  flags: z.array(z.string()).default([]),
});
export type ResultPoint = z.infer<typeof pointSchema>;

export const groupSchema = z.object({
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
  /** Ladder points left out, with the reason (e.g. over the time limit). */
  skipped: z.array(z.object({ ladder_index: z.number().int(), knobs: z.record(z.string(), z.union([z.number(), z.string()])), reason: z.string() })).default([]),
});
export type ResultGroup = z.infer<typeof groupSchema>;

export const resultSchema = z.object({
  format: z.literal(RESULT_FORMAT),
  participant: z.string(),
  engine: z.string(),
  engine_version: z.string(),
  /** Where the figures came from: measured here, or imported from another harness. */
  origin: z.enum(['measured', 'imported']).default('measured'),
  dataset: z.object({ name: z.string(), n: z.number().int(), d: z.number().int(), nq: z.number().int(), metric: z.string(), hash: z.string() }),
  settings: z.object({ index: z.unknown(), ladders: z.array(z.unknown()), batch_size: z.number().int().optional(), notes: z.string().optional() }),
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
  }),
  load: z
    .object({
      rows: z.number().int(),
      ingest_s: z.number(),
      index_s: z.number(),
      disk_bytes: z.number().nullable(),
      /** Loads after the first (a resumed run or a restarted engine), each timed again. */
      reloads: z.array(z.object({ reason: z.string(), ingest_s: z.number(), index_s: z.number() })).default([]),
    })
    .nullable(),
  groups: z.array(groupSchema),
  /** Sections added by later features (resources, concurrency, churn, quality) live here. */
  extra: z.record(z.string(), z.unknown()).default({}),
});
export type ResultFile = z.infer<typeof resultSchema>;
