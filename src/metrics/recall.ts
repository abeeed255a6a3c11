// Recall of one query's answer, and the summary over a group of queries (docs/method.md §3).
// Pure: no I/O, no engine code. Everything is computed by the harness from the ids the
// engine returned; nothing the engine says about its own quality is used.
//
// Definitions (scoreQuery):
// - kt = min(k, matches), where matches is the number of rows that pass the query's
//   filter (all rows when unfiltered). When kt = 0 there is nothing to find, and all
//   three recalls are 1.
// - Only the first k returned ids are considered; anything after them is ignored.
// - Each considered id is classified, in this order:
//     unknown    — not an integer, or not a known (live) id. Every such occurrence counts,
//                  repeats included.
//     duplicate  — a known id already returned earlier in the list.
//     violation  — a known, first-seen id that fails the query's filter.
//     valid      — everything else.
//   Unknown, duplicate and violating ids never add to any recall.
// - strict    = |valid returned ids ∩ first kt true ids| / kt.
// - tieAware  = min(kt, #valid returned ids with distanceOf(id) <= trueDists[kt-1] + 1e-6) / kt
//               (the big-ann rule: an id at the same distance as the kt-th true neighbour
//               counts even when it is a different id).
// - threshold = the same with epsilon 1e-3 (the ann-benchmarks distance-threshold rule).
// - returned  = returned.length (all ids, before dropping anything).
// - short     = returned.length < kt (the engine gave fewer ids than it could have).
// - leaked    = the violating ids that also lie outside the query's access boundary (another
//               tenant's rows, when the filter names a tenant): a security finding.
// Distances are "lower is closer"; a NaN distance never counts.
//
// summarize: every reading src/results/readings.ts declares, computed by READ below (means of
// the three recalls over the queries, recall = mean tie-aware; the short and empty answers;
// the share of queries whose tie-aware recall is < 0.5; the totals of unknown / duplicate /
// violating ids), the leaked ids' total and the first leak named (the caller attaches it to
// the query's score).
// With no queries the means and the share are NaN (there is nothing to average).

import { READING_NAMES, type ReadingName, type Readings } from '../results/readings.ts';

const TIE_EPSILON = 1e-6;
const THRESHOLD_EPSILON = 1e-3;
const LOW_RECALL = 0.5;

export interface QueryScore {
  strict: number;
  tieAware: number;
  threshold: number;
  returned: number;
  short: boolean;
  unknown: number;
  duplicates: number;
  violations: number;
  /** Returned ids outside the query's access boundary (another tenant's rows). */
  leaked: number[];
  /** The first leak named, when the caller knows the query and the tenants. */
  leak?: TenantLeak;
}

/** A cross-tenant row: the query, the tenant it was confined to, the row and its tenant. */
export interface TenantLeak {
  query: number;
  query_tenant: number;
  row: number;
  row_tenant: number;
}

/** A leak in words: which query, confined to which tenant, got which row of which tenant. */
export function leakText(l: TenantLeak): string {
  return `query ${l.query} (tenant ${l.query_tenant}) got row ${l.row} of tenant ${l.row_tenant}`;
}

export interface ScoreQueryArgs {
  /** ids the engine returned, best first */
  returned: ArrayLike<number>;
  k: number;
  /** exact top ids for this query (best first); at least min(k, matches) valid entries; -1 = padding */
  trueIds: Int32Array;
  /** their distances (lower is closer), aligned with trueIds */
  trueDists: ArrayLike<number>;
  /** rows that pass the query's filter (all rows when unfiltered) */
  matches: number;
  /** id exists (in the live set) */
  isKnownId: (id: number) => boolean;
  /** id satisfies the filter */
  passes: (id: number) => boolean;
  /** harness-recomputed distance of a returned id to the query */
  distanceOf: (id: number) => number;
  /** id lies outside the query's access boundary (another tenant's row); absent: no boundary */
  outside?: (id: number) => boolean;
}

export function scoreQuery(args: ScoreQueryArgs): QueryScore {
  const { returned, k, trueIds, trueDists, matches, isKnownId, passes, distanceOf, outside } = args;
  if (!Number.isInteger(k) || k < 0) throw new RangeError(`scoreQuery: k must be a non-negative integer, got ${k}`);
  if (!(matches >= 0)) throw new RangeError(`scoreQuery: matches must be >= 0, got ${matches}`);
  const kt = Math.min(k, Math.floor(matches));

  // Classify the first k returned ids.
  const considered = Math.min(returned.length, k);
  const seen = new Set<number>();
  const valid: number[] = [];
  let unknown = 0;
  let duplicates = 0;
  let violations = 0;
  const leaked: number[] = [];
  for (let i = 0; i < considered; i++) {
    const id = returned[i];
    if (typeof id !== 'number' || !Number.isInteger(id) || !isKnownId(id)) {
      unknown++;
      continue;
    }
    if (seen.has(id)) {
      duplicates++;
      continue;
    }
    seen.add(id);
    if (!passes(id)) {
      violations++;
      if (outside?.(id)) leaked.push(id);
      continue;
    }
    valid.push(id);
  }

  const base = {
    returned: returned.length,
    short: returned.length < kt,
    unknown,
    duplicates,
    violations,
    leaked,
  };
  if (kt === 0) return { strict: 1, tieAware: 1, threshold: 1, ...base };

  if (trueIds.length < kt || trueDists.length < kt) {
    throw new RangeError(`scoreQuery: ground truth has ${Math.min(trueIds.length, trueDists.length)} entries, need ${kt}`);
  }
  const truth = new Set<number>();
  for (let i = 0; i < kt; i++) {
    const id = trueIds[i];
    if (id < 0) throw new RangeError(`scoreQuery: ground truth entry ${i} is padding but ${kt} valid entries are needed`);
    truth.add(id);
  }
  const kthDist = trueDists[kt - 1];
  if (!Number.isFinite(kthDist)) throw new RangeError(`scoreQuery: ground-truth distance ${kt - 1} is not finite`);

  let hits = 0;
  let withinTie = 0;
  let withinThreshold = 0;
  for (const id of valid) {
    if (truth.has(id)) hits++;
    const d = distanceOf(id);
    if (d <= kthDist + TIE_EPSILON) withinTie++;
    if (d <= kthDist + THRESHOLD_EPSILON) withinThreshold++;
  }
  return {
    strict: hits / kt,
    tieAware: Math.min(kt, withinTie) / kt,
    threshold: Math.min(kt, withinThreshold) / kt,
    ...base,
  };
}

interface RecallSummary {
  queries: number;
  /** Every declared reading of the point (src/results/readings.ts), as it is stored. */
  readings: Readings;
  /** mean tie-aware recall */
  recall: number;
  recallStrict: number;
  recallThreshold: number;
  /** number of queries that returned fewer than min(k, matches) ids */
  shortResults: number;
  /** share of queries whose tie-aware recall is < 0.5 */
  lowRecallShare: number;
  unknownIds: number;
  duplicateIds: number;
  filterViolations: number;
  /** ids returned across an access boundary (another tenant's rows), and the first named */
  tenantLeaks: number;
  firstLeak: TenantLeak | null;
}

const mean = (scores: QueryScore[], of: (s: QueryScore) => number) => (scores.length === 0 ? NaN : scores.reduce((a, s) => a + of(s), 0) / scores.length);
const count = (scores: QueryScore[], of: (s: QueryScore) => number) => scores.reduce((a, s) => a + of(s), 0);

/** How each declared reading is computed from the point's per-query scores: the other half of
 * a reading's declaration in src/results/readings.ts (a reading without one fails tsc). */
const READ: { [K in ReadingName]-?: (scores: QueryScore[]) => number } = {
  recall: (q) => mean(q, (s) => s.tieAware),
  recall_strict: (q) => mean(q, (s) => s.strict),
  recall_threshold: (q) => mean(q, (s) => s.threshold),
  short_results: (q) => count(q, (s) => (s.short ? 1 : 0)),
  empty_results: (q) => count(q, (s) => (s.short && s.returned === 0 ? 1 : 0)),
  low_recall_share: (q) => mean(q, (s) => (s.tieAware < LOW_RECALL ? 1 : 0)),
  unknown_ids: (q) => count(q, (s) => s.unknown),
  duplicate_ids: (q) => count(q, (s) => s.duplicates),
  filter_violations: (q) => count(q, (s) => s.violations),
};

/** Whether a summary kept by an earlier process (the progress journal) holds every reading this
 * version computes, so a point stored from it lacks none. */
export function hasReadings<T extends { readings?: Record<string, number> }>(s: T): s is T & { readings: Readings } {
  return s.readings !== undefined && READING_NAMES.every((name) => typeof s.readings![name] === 'number');
}

/** A summary as a stored point names its fields (src/results/schema.ts): measured points and
 * imported ones alike. */
export function pointReadings(s: RecallSummary) {
  return {
    ...s.readings,
    // Only where there is a leak: a point without one reads as it always did.
    ...(s.tenantLeaks > 0 ? { tenant_leaks: s.tenantLeaks, ...(s.firstLeak ? { tenant_leak: s.firstLeak } : {}) } : {}),
  };
}

export function summarize(scores: QueryScore[]): RecallSummary {
  const readings = Object.fromEntries(READING_NAMES.map((name) => [name, READ[name](scores)])) as Readings;
  let tenantLeaks = 0;
  let firstLeak: TenantLeak | null = null;
  for (const s of scores) {
    tenantLeaks += s.leaked.length;
    firstLeak ??= s.leak ?? null;
  }
  return {
    queries: scores.length,
    readings,
    recall: readings.recall,
    recallStrict: readings.recall_strict,
    recallThreshold: readings.recall_threshold,
    shortResults: readings.short_results,
    lowRecallShare: readings.low_recall_share,
    unknownIds: readings.unknown_ids,
    duplicateIds: readings.duplicate_ids,
    filterViolations: readings.filter_violations,
    tenantLeaks,
    firstLeak,
  };
}
