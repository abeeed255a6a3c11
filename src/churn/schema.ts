// The `extra.churn` section of a result file (docs/churn.md, "Live churn"): per runbook,
// what was run and every step's measured figures. Report rows are derived from it.
import { z } from 'zod';
import { latencySchema, readingsShape } from '../results/schema.ts';
import { UserError } from '../util/errors.ts';

export const CHURN_FORMAT = 'vecbench-churn/1';

const knobsSchema = z.record(z.string(), z.union([z.number(), z.string()]));
/** p50 / p95 / max / mean of a set of durations in ms. */
const spreadSchema = z.object({ p50: z.number(), p95: z.number(), max: z.number(), mean: z.number() });
export type Spread = z.infer<typeof spreadSchema>;

const pointChoice = z.object({
  ladder_index: z.number().int().nonnegative(),
  knobs: knobsSchema,
  /** How the point was chosen: "first", "last", "index 3", or "first with recall >= 0.95". */
  rule: z.string(),
  /** For a recall target: each point tried (in ladder order) and its recall on the live set. */
  calibration: z.array(z.object({ ladder_index: z.number().int(), recall: z.number() })).optional(),
});

const searchResult = pointChoice.extend({
  group: z.string(),
  filter: z.string(),
  k: z.number().int().positive(),
  queries: z.number().int().nonnegative(),
  clients: z.number().int().positive(),
  /** Every reading (src/results/readings.ts) against the rows live at the step; a mean over no
   * answered query is null. */
  ...readingsShape(true),
  errors: z.number().int().nonnegative(),
  first_error: z.string().optional(),
  qps: z.number(),
  latency_ms: latencySchema.nullable(),
  leaks: z.number().int().nonnegative(),
});

const writeResult = z.object({
  /** Rows sent to the engine, and rows the step named that were skipped (a delete of a row not
   * live, an insert of a live row). */
  rows: z.number().int().nonnegative(),
  skipped: z.number().int().nonnegative(),
  batch: z.number().int().positive(),
  batches: z.number().int().nonnegative(),
  duration_s: z.number(),
  rows_per_s: z.number().nullable(),
});

const freshnessResult = pointChoice.extend({
  writes: z.number().int().nonnegative(),
  issued: z.number().int().nonnegative(),
  k: z.number().int().positive(),
  timeout_ms: z.number(),
  visible: z.number().int().nonnegative(),
  /** Writes acknowledged but not among the top k within the timeout. */
  never_visible: z.number().int().nonnegative(),
  failed_writes: z.number().int().nonnegative(),
  first_error: z.string().optional(),
  gave_up: z.boolean(),
  /** Write acknowledged -> first search that returned it. */
  visible_ms: spreadSchema.nullable(),
  /** The insert call itself. */
  ack_ms: spreadSchema.nullable(),
  polls: z.number().int().nonnegative(),
  leaks: z.number().int().nonnegative(),
});

const windowSchema = z.object({
  /** Start of the window, seconds from the start of the step. */
  t_s: z.number(),
  width_s: z.number(),
  write_rate: z.number(),
  read_qps: z.number(),
  latency_ms: z.object({ p50: z.number(), p95: z.number(), p99: z.number() }).nullable(),
  /** Mean tie-aware recall of the sampled reads, each against the rows live when it started. */
  recall: z.number().nullable(),
  samples: z.number().int().nonnegative(),
  live_rows: z.number().int().nonnegative(),
  leaks: z.number().int().nonnegative(),
});

const mixedResult = pointChoice.extend({
  group: z.string(),
  k: z.number().int().positive(),
  duration_s: z.number(),
  wall_s: z.number(),
  target_rate: z.number(),
  /** Writes acknowledged within the duration / duration. */
  achieved_write_rate: z.number(),
  writes: z.object({
    issued: z.number().int().nonnegative(),
    acked_in_time: z.number().int().nonnegative(),
    failed: z.number().int().nonnegative(),
    first_error: z.string().optional(),
    insert: z.number().int().nonnegative(),
    upsert: z.number().int().nonnegative(),
    delete: z.number().int().nonnegative(),
  }),
  write_ack_ms: spreadSchema.nullable(),
  readers: z.number().int().positive(),
  readers_asked: z.number().int().positive(),
  reads: z.number().int().nonnegative(),
  read_errors: z.number().int().nonnegative(),
  first_read_error: z.string().optional(),
  read_qps: z.number(),
  latency_ms: latencySchema.nullable(),
  recall: z.number().nullable(),
  /** The lowest window recall: the headline "min recall under writes". */
  min_recall: z.number().nullable(),
  recall_samples: z.number().int().nonnegative(),
  unknown_ids: z.number().int().nonnegative(),
  filter_violations: z.number().int().nonnegative(),
  live_rows_before: z.number().int().nonnegative(),
  live_rows_after: z.number().int().nonnegative(),
  timeline: z.array(windowSchema),
  leaks: z.number().int().nonnegative(),
});

const stepResultSchema = z.object({
  /** 1-based position in the runbook. */
  index: z.number().int().positive(),
  op: z.enum(['load', 'insert', 'upsert', 'delete', 'search', 'wait', 'disk', 'freshness', 'mixed']),
  label: z.string().optional(),
  status: z.enum(['done', 'unsupported', 'failed']),
  reason: z.string().optional(),
  /** Seconds from the start of the runbook (engine open) to the start of the step. */
  at_s: z.number(),
  /** Rows the harness holds live after the step. */
  live_rows: z.number().int().nonnegative(),
  load: z.object({ rows: z.number().int(), ingest_s: z.number(), index_s: z.number() }).optional(),
  write: writeResult.optional(),
  search: searchResult.optional(),
  /** wait: the engine's compact() (flush / compaction / optimize / vacuum), timed. */
  wait: z.object({ duration_s: z.number() }).optional(),
  /** disk: `bytes` is the engine's own diskBytes() (null: it has none; in-memory engines report
   * memory), `dir_bytes` the bytes allocated by its data directories (the host's work directory,
   * the server's data directory), measured by the harness; absent in older files. */
  disk: z.object({ bytes: z.number().nullable(), dir_bytes: z.number().nullable().optional() }).optional(),
  freshness: freshnessResult.optional(),
  mixed: mixedResult.optional(),
});
export type StepResult = z.infer<typeof stepResultSchema>;
export type SearchResult = z.infer<typeof searchResult>;
export type FreshnessResult = z.infer<typeof freshnessResult>;
export type MixedResult = z.infer<typeof mixedResult>;
export type WindowResult = z.infer<typeof windowSchema>;

const leakSchema = z.object({
  id: z.number().int(),
  /** The step whose read returned it, and the step that deleted it. */
  step: z.number().int().positive(),
  op: z.string(),
  deleted_in_step: z.number().int().nonnegative(),
  /** The query (dataset query index) or freshness write that returned it, where known. */
  query: z.number().int().optional(),
});
export type Leak = z.infer<typeof leakSchema>;

const runbookResultSchema = z.object({
  runbook: z.string(),
  description: z.string().optional(),
  /** The runbook as run (defaults filled in), and its sha256: a changed runbook runs again. */
  definition: z.unknown(),
  definition_hash: z.string(),
  /** The participant's settings the runbook ran with (the result file's own may be older). */
  settings: z.object({ index: z.unknown(), ladders: z.array(z.unknown()), batch_size: z.number().int().optional() }).optional(),
  status: z.enum(['measured', 'incomplete', 'unsupported', 'failed']),
  reason: z.string().optional(),
  started: z.string(),
  finished: z.string().optional(),
  engine_version: z.string(),
  caps: z.object({ insert: z.boolean(), upsert: z.boolean(), delete: z.boolean(), compact: z.boolean(), disk: z.boolean() }).nullable(),
  steps: z.array(stepResultSchema),
  /** Tombstone leaks: deleted ids a read returned after the delete was acknowledged. Every
   * leak counts; the first 100 are listed. */
  leaks: z.object({ total: z.number().int().nonnegative(), listed: z.array(leakSchema) }),
});
export type RunbookResult = z.infer<typeof runbookResultSchema>;

const churnSectionSchema = z.object({
  format: z.literal(CHURN_FORMAT),
  runbooks: z.record(z.string(), runbookResultSchema),
});
export type ChurnSection = z.infer<typeof churnSectionSchema>;

/** Reads `extra.churn`: undefined when absent, a one-line error when malformed. */
export function readChurnSection(extra: Record<string, unknown>, where: string): ChurnSection | undefined {
  if (extra.churn === undefined) return undefined;
  const parsed = churnSectionSchema.safeParse(extra.churn);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(
      `${where}: extra.churn does not validate at ${issue.path.join('.')}: ${issue.message}; run vecbench churn --fresh for this participant`,
    );
  }
  return parsed.data;
}
