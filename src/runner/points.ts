// The pieces of a measurement that every kind of run shares (sweep, churn, quality, load):
// the query order, slices, groups with their ground truth, and scoring a point's answers
// against it (docs/method.md §4, §5). Recall is computed here from the returned ids, never taken from the
// engine.
import { cpus, totalmem, type as osType, release } from 'node:os';
import type { FilterExpr, Knobs } from '../contracts.ts';
import { allGroups, filterFields, filterKind, filterOps, groupKey, passes, type GroupKey } from '../datasets/groups.ts';
import type { Dataset } from '../datasets/layout.ts';
import { groundTruthFor, scoringDists, type GroundTruth } from '../groundtruth/cache.ts';
import { exactDistance } from '../groundtruth/exact.ts';
import { scoreQuery, summarize, type QueryScore } from '../metrics/recall.ts';
import { mean, percentile } from '../metrics/stats.ts';
import type { ResultFile, ResultPoint, Resources } from '../results/schema.ts';
import { makeRng } from '../util/hash.ts';
import { ladderFor, type LoadedParticipant } from './participants.ts';
import type { PointReply } from './protocol.ts';

export const VECBENCH_VERSION = '0.1.0';
export const QUERY_SEED = 20251129;
/** Queries per point at each k (docs/method.md §5). */
export const SLICE_CAP: Record<number, number> = { 10: 1000, 100: 500, 1000: 200 };
/** A group is asked only when its filter keeps at least this many times k rows. */
export const ASK_FACTOR = 10;

export interface AskedGroup extends GroupKey {
  key: string;
  asked: boolean;
  medianMatches: number;
  gt: GroundTruth;
  filters: (FilterExpr | null)[];
}

/** The shuffled query order every participant and group uses (fixed seed). */
export function queryOrder(nq: number, seed = QUERY_SEED): Int32Array {
  const order = new Int32Array(nq);
  for (let i = 0; i < nq; i++) order[i] = i;
  const rng = makeRng(seed);
  for (let i = nq - 1; i > 0; i--) {
    const j = Math.floor(rng.uniform() * (i + 1));
    const t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  return order;
}

/** Slices for a group: one query of its own for the first-query timing, then the next
 * slice for each (ladder point, view). No query runs twice within a group while the query
 * set lasts; all participants get the same slices for the same ladder length. */
export function planSlices(nq: number, k: number, slots: number): { first: number; slices: [number, number][] } {
  const per = Math.max(1, Math.min(SLICE_CAP[k] ?? 200, Math.floor((nq - 1) / Math.max(1, slots))));
  const slices: [number, number][] = [];
  for (let s = 0; s < slots; s++) {
    const from = (1 + s * per) % nq;
    slices.push([from, from + per]);
  }
  return { first: 0, slices };
}

export function hardware(): ResultFile['hardware'] {
  return { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memory_bytes: totalmem(), os: `${osType()} ${release()}`, node: process.version };
}

export function prepareGroups(ds: Dataset, only?: GroupKey[]): AskedGroup[] {
  const wanted = only ?? allGroups();
  const gts = new Map<string, GroundTruth>();
  const out: AskedGroup[] = [];
  for (const g of wanted) {
    const kind = filterKind(g.filter);
    let gt = gts.get(g.filter);
    if (!gt) gts.set(g.filter, (gt = groundTruthFor(ds, g.filter)));
    const sorted = Array.from(gt.matches).sort((a, b) => a - b);
    const medianMatches = sorted[Math.floor(sorted.length / 2)];
    const filters = Array.from({ length: ds.nq }, (_, q) => kind.forQuery(q, ds.queryAttrs));
    out.push({ ...g, key: groupKey(g), asked: medianMatches >= ASK_FACTOR * g.k, medianMatches, gt, filters });
  }
  return out;
}

export function supportReason(p: LoadedParticipant, g: AskedGroup): string | null {
  const sample = g.filters.find((f) => f !== null) ?? null;
  if (sample !== null) {
    const f = p.adapter.filters;
    if (!f) return `${p.adapter.engine} has no filter support in this participant`;
    const missingField = filterFields(sample).find((x) => !f.fields.includes(x));
    if (missingField) return `filter field ${missingField} is not supported`;
    const missingOp = filterOps(sample).find((x) => !f.ops.includes(x));
    if (missingOp) return `filter operator ${missingOp} is not supported`;
  }
  if (ladderFor(p.settings, g.filter, g.k).length === 0) return `settings.json has no ladder rule for ${g.key}`;
  return null;
}

/** Scores one point's answers against the ground truth. */
export function scorePoint(ds: Dataset, g: AskedGroup, queries: number[], reply: PointReply): QueryScore[] {
  const { d, metric } = ds;
  const depth = g.gt.depth;
  return queries.map((q, i) => {
    const returned = reply.ids.subarray(reply.offsets[i], reply.offsets[i + 1]);
    const filter = g.filters[q];
    return scoreQuery({
      returned,
      k: g.k,
      trueIds: g.gt.ids.subarray(q * depth, (q + 1) * depth),
      // The kt-th true distance in float64 (the cache's float32 would swamp the 1e-6 tie rule).
      trueDists: scoringDists(ds, g.gt, q, g.k),
      matches: g.gt.matches[q],
      isKnownId: (id) => id >= 0 && id < ds.n,
      passes: (id) => passes(filter, ds.attrs, id),
      distanceOf: (id) => exactDistance(metric, ds.queries, q * d, ds.base, id * d, d),
    });
  });
}

export function latencySummary(ms: Float64Array): ResultPoint['latency_ms'] {
  const sorted = Float64Array.from(ms).sort();
  return {
    mean: mean(sorted),
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    p999: percentile(sorted, 99.9),
    max: sorted[sorted.length - 1],
  };
}

export const VIEWS = ['latency', 'throughput'] as const;

/** Queries in the between-load probe (docs/method.md §6: does the engine answer before its index?). */
export const PROBE_QUERIES = 20;

/** Scores the between-load probe against the exact unfiltered top 10. */
export function scoreProbe(ds: Dataset, probe: { knobs: Knobs; k: number; queries: number[] }, got: { reply: PointReply | null; error: string | null } | undefined): NonNullable<Resources['probe']> {
  const base = { queries: probe.queries.length, knobs: probe.knobs };
  if (!got || got.reply === null || got.error !== null) {
    return { ...base, answered: false, recall: null, short_results: null, latency_ms_p50: null, error: got?.error ?? 'no probe reply' };
  }
  const [g] = prepareGroups(ds, [{ filter: 'none', k: probe.k }]);
  const s = summarize(scorePoint(ds, g, probe.queries, got.reply));
  const lat = Float64Array.from(got.reply.latenciesMs).sort();
  return { ...base, answered: true, recall: s.recall, short_results: s.shortResults, latency_ms_p50: percentile(lat, 50), error: null };
}

