// The groups a run asks, with their ground truth, and scoring a point's answers against it
// (docs/method.md §4, §5). Recall is computed here from the returned ids, never taken from the
// engine.
import type { FilterExpr, Knobs } from '../contracts.ts';
import { datasetGroups, filterFields, filterKind, filterOps, groupKey, passes, tenantBoundary, type GroupKey } from '../datasets/groups.ts';
import type { Dataset } from '../datasets/layout.ts';
import { groundTruthFor, scoringDists, type GroundTruth } from '../groundtruth/cache.ts';
import { exactDistance } from '../groundtruth/exact.ts';
import { leakText, scoreQuery, summarize, type QueryScore, type TenantLeak } from '../metrics/recall.ts';
import { percentile } from '../metrics/stats.ts';
import type { Resources } from '../results/schema.ts';
import { log } from '../util/progress.ts';
import { ladderFor, type LoadedParticipant } from './participants.ts';
import type { PointReply } from './point-reply.ts';

/** A group is asked only when its filter keeps at least this many times k rows. */
export const ASK_FACTOR = 10;

export interface AskedGroup extends GroupKey {
  key: string;
  asked: boolean;
  medianMatches: number;
  gt: GroundTruth;
  filters: (FilterExpr | null)[];
}

export function prepareGroups(ds: Dataset, only?: GroupKey[]): AskedGroup[] {
  const wanted = only ?? datasetGroups((field) => ds.attrs[field]?.length === ds.n);
  const gts = new Map<string, GroundTruth>();
  const out: AskedGroup[] = [];
  for (const g of wanted) {
    const kind = filterKind(g.filter);
    let gt = gts.get(g.filter);
    if (!gt) gts.set(g.filter, (gt = groundTruthFor(ds, g.filter)));
    const sorted = Array.from(gt.matches).sort((a, b) => a - b);
    const medianMatches = sorted[Math.floor(sorted.length / 2)];
    const filters = Array.from({ length: ds.nq }, (_, q) => kind.forQuery(q, ds.queryAttrs));
    // An access boundary (a tenant) is asked at any size: small tenants are where it is tested.
    const asked = kind.askedAtAnySize !== undefined || medianMatches >= ASK_FACTOR * g.k;
    out.push({ ...g, key: groupKey(g), asked, medianMatches, gt, filters });
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

/** Scores one point's answers against the ground truth. A row of another tenant than the one
 * a query is confined to is a security finding: it is counted and named in the scores (the
 * point's `tenant_leaks`, `tenant_leak`; such a point never sets a cell, and its cells read
 * `leak`) and said on stderr at once. */
export function scorePoint(ds: Dataset, g: AskedGroup, queries: number[], reply: PointReply): QueryScore[] {
  const { d, metric } = ds;
  const depth = g.gt.depth;
  const tenants = ds.attrs.tenant;
  let leaks = 0;
  let first: TenantLeak | null = null;
  const scores = queries.map((q, i) => {
    const returned = reply.ids.subarray(reply.offsets[i], reply.offsets[i + 1]);
    const filter = g.filters[q];
    const tenant = tenantBoundary(filter);
    const score = scoreQuery({
      returned,
      k: g.k,
      trueIds: g.gt.ids.subarray(q * depth, (q + 1) * depth),
      // The kt-th true distance in float64 (the cache's float32 would swamp the 1e-6 tie rule).
      trueDists: scoringDists(ds, g.gt, q, g.k),
      matches: g.gt.matches[q],
      isKnownId: (id) => id >= 0 && id < ds.n,
      passes: (id) => passes(filter, ds.attrs, id),
      distanceOf: (id) => exactDistance(metric, ds.queries, q * d, ds.base, id * d, d),
      outside: tenant === null ? undefined : (id) => tenants[id] !== tenant,
    });
    if (tenant !== null && score.leaked.length > 0) {
      score.leak = { query: q, query_tenant: tenant, row: score.leaked[0], row_tenant: tenants[score.leaked[0]] };
      leaks += score.leaked.length;
      first ??= score.leak;
    }
    return score;
  });
  if (first) log(`SECURITY: ${g.key}: ${leaks} cross-tenant row(s) returned; first: ${leakText(first)}; the point fails`);
  return scores;
}

/** Queries in the between-load probe (docs/method.md §6: does the engine answer before its index?). */
export const PROBE_QUERIES = 20;

/** Scores the between-load probe against the exact unfiltered top 10. */
export function scoreProbe(
  ds: Dataset,
  probe: { knobs: Knobs; k: number; queries: number[] },
  got: { reply: PointReply | null; error: string | null } | undefined,
): NonNullable<Resources['probe']> {
  const base = { queries: probe.queries.length, knobs: probe.knobs };
  if (!got || got.reply === null || got.error !== null) {
    return { ...base, answered: false, recall: null, short_results: null, latency_ms_p50: null, error: got?.error ?? 'no probe reply' };
  }
  const [g] = prepareGroups(ds, [{ filter: 'none', k: probe.k }]);
  const s = summarize(scorePoint(ds, g, probe.queries, got.reply));
  const lat = Float64Array.from(got.reply.latenciesMs).sort();
  return { ...base, answered: true, recall: s.recall, short_results: s.shortResults, latency_ms_p50: percentile(lat, 50), error: null };
}
