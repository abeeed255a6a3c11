// The `extra.quality` section of a result file (docs/quality.md, "Answer quality"):
// measured arms only; lifts and deltas are computed at measurement time from per-query
// scores, which are not stored.
import { z } from 'zod';
import { latencySchema } from '../results/schema.ts';
import { UserError } from '../util/errors.ts';

export const QUALITY_FORMAT = 'vecbench-quality/1';

const knobsSchema = z.record(z.string(), z.union([z.number(), z.string()]));
const intervalSchema = z.object({ estimate: z.number(), low: z.number(), high: z.number() });

const qualityMetricsSchema = z.object({
  ndcg10: z.number(),
  mrr10: z.number(),
  hit10: z.number(),
  /** null when the run asked fewer than 100 results. */
  recall100: z.number().nullable(),
  /** Bootstrap 95 % CI of the mean nDCG@10 over queries (1,000 resamples). */
  ndcg10_ci: z.tuple([z.number(), z.number()]),
});
export type QualityMetrics = z.infer<typeof qualityMetricsSchema>;

const qualityViewSchema = z.object({
  view: z.enum(['latency', 'throughput']),
  clients: z.number().int().positive(),
  qps: z.number(),
  duration_s: z.number(),
  latency_ms: latencySchema,
});

const qualityPointSchema = z.object({
  arm: z.enum(['dense', 'keyword', 'hybrid']),
  /** The dense ladder point (null for the keyword arm, which has no knobs). */
  ladder_index: z.number().int().nonnegative().nullable(),
  knobs: knobsSchema.nullable(),
  /** Engine calls per query: 1 for one arm or native fusion, 2 for client-side fusion. */
  round_trips: z.number().int().positive(),
  queries: z.number().int().positive(),
  views: z.array(qualityViewSchema).min(1),
  metrics: qualityMetricsSchema,
  /** Oracle nDCG@10 (the same arm over exact kNN) minus this point's: the cost of the
   * approximation in answer quality. null for the keyword arm. */
  delta_ndcg10: z.number().nullable(),
  delta_ndcg10_ci: z.tuple([z.number(), z.number()]).nullable(),
  /** Hybrid only: paired lift of nDCG@10 over the dense arm at the same point and over the
   * keyword arm, with bootstrap 95 % CIs over queries. */
  lift_ndcg10: z.object({ over_dense: intervalSchema, over_keyword: intervalSchema }).nullable(),
  /** Queries answered with fewer than k ids, and ids that are duplicates or not rows. */
  short_results: z.number().int().nonnegative(),
  duplicate_ids: z.number().int().nonnegative(),
  unknown_ids: z.number().int().nonnegative(),
  errors: z.number().int().nonnegative(),
});
export type QualityPoint = z.infer<typeof qualityPointSchema>;

const qualitySectionSchema = z.object({
  format: z.literal(QUALITY_FORMAT),
  status: z.enum(['measured', 'failed']),
  reason: z.string().optional(),
  /** Results asked of every arm (fusion fuses two top-k lists). */
  k: z.number().int().positive(),
  /** Labelled queries scored at every point. */
  queries: z.number().int().nonnegative(),
  labels: z.string(),
  keyword: z.object({ where: z.enum(['native', 'client-side']), scoring: z.string(), build_s: z.number() }).nullable(),
  fusion: z.object({ where: z.enum(['native', 'client-side']), method: z.string() }).nullable(),
  /** The oracle: exact kNN for the dense arm, and its RRF with the keyword arm. */
  oracle: z.object({ dense: qualityMetricsSchema, hybrid: qualityMetricsSchema.nullable() }).nullable(),
  points: z.array(qualityPointSchema),
  /** Arms that could not be measured, with why. */
  unsupported: z.array(z.object({ arm: z.enum(['dense', 'keyword', 'hybrid']), reason: z.string() })),
});
export type QualitySection = z.infer<typeof qualitySectionSchema>;

/** Reads `extra.quality` of a result file: undefined when absent, an error when malformed. */
export function readQualitySection(extra: Record<string, unknown>, where: string): QualitySection | undefined {
  if (extra.quality === undefined) return undefined;
  const parsed = qualitySectionSchema.safeParse(extra.quality);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(`${where}: extra.quality does not validate at ${issue.path.join('.')}: ${issue.message}; delete the file and run again`);
  }
  return parsed.data;
}
