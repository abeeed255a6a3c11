// Estimates and 95 % intervals of a point's figures (docs/measurement.md, "Stable points"). Pure
// and seeded, so the same passes always give the same intervals.
//
// - Warm points (several timed passes over one query set): each figure (QPS, mean latency, each
//   latency percentile) is taken per pass; passes whose QPS lies beyond 3.0 x IQR are trimmed
//   (all their figures with them; only from MIN_PASSES_TO_TRIM passes on); the estimate is the mean over the kept passes and its interval
//   the percentile bootstrap of that mean (1,000 resamples).
// - Cold points (one pass, every query once): the latency figures' intervals are bootstrapped
//   over the queries; QPS's interval scales the point's QPS by the mean-latency interval (the
//   same queries answered more slowly or quickly on average).
// - Recall: the mean of the per-query tie-aware recalls, bootstrapped over the queries.
import type { Interval, ResultPoint } from '../results/schema.ts';
import { bootstrapCI, mean, mulberry32, percentile, trimOutliers } from './stats.ts';

const RESAMPLES = 1000;
const TRIM_IQR = 3.0;
/** Fewer passes than this are not trimmed: the quartiles of a handful of passes can sit close
 * together by chance, and trimming then drops honest spread and narrows the interval. */
const MIN_PASSES_TO_TRIM = 8;
const LATENCY_KEYS = ['mean', 'p50', 'p95', 'p99', 'p999'] as const;
type LatencyKey = (typeof LATENCY_KEYS)[number];

export interface PassFigures {
  qps: number[];
  wall_s: number[];
  latency_ms: Record<LatencyKey, number[]>;
}

interface PassSummary {
  qps: number;
  latency_ms: ResultPoint['latency_ms'];
  ci: { qps: Interval; latency_ms: Record<LatencyKey, Interval> };
  trimmed: number;
}

const interval = (c: { low: number; high: number }): Interval => [c.low, c.high];

/** One pass's latency figures from its per-query latencies (ms). */
export function passLatency(latenciesMs: ArrayLike<number>): Record<LatencyKey, number> & { max: number } {
  const sorted = Float64Array.from(latenciesMs).sort();
  return {
    mean: mean(sorted),
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    p999: percentile(sorted, 99.9),
    max: sorted[sorted.length - 1],
  };
}

/** The passes' QPS that the estimate keeps: outliers beyond 3.0 x IQR trimmed (from
 * MIN_PASSES_TO_TRIM passes on). */
function keptQps(qps: number[]): number[] {
  return qps.length >= MIN_PASSES_TO_TRIM ? trimOutliers(qps, TRIM_IQR) : qps;
}

/** Relative half-width of the QPS interval summarizePasses gives these passes (NaN under 2
 * passes): the timing's stopping rule for the points cells read uses the very interval stored. */
export function qpsHalfWidth(qps: number[]): number {
  const kept = keptQps(qps);
  if (kept.length < 2) return NaN;
  const c = bootstrapCI(kept, mean, { resamples: RESAMPLES });
  return (c.high - c.low) / 2 / c.estimate;
}

/** Estimates and intervals over a warm point's passes; maxLatencyMs is the worst query seen. */
export function summarizePasses(p: PassFigures, maxLatencyMs: number): PassSummary {
  const kept = keptQps(p.qps);
  const keep = p.qps.map((q) => kept.includes(q));
  const pick = (xs: number[]) => xs.filter((_, i) => keep[i]);
  const qps = pick(p.qps);
  const latency = Object.fromEntries(LATENCY_KEYS.map((k) => [k, pick(p.latency_ms[k])])) as Record<LatencyKey, number[]>;
  const ci = (xs: number[]) => interval(bootstrapCI(xs, mean, { resamples: RESAMPLES }));
  return {
    qps: mean(qps),
    latency_ms: {
      mean: mean(latency.mean),
      p50: mean(latency.p50),
      p95: mean(latency.p95),
      p99: mean(latency.p99),
      p999: mean(latency.p999),
      max: maxLatencyMs,
    },
    ci: { qps: ci(qps), latency_ms: Object.fromEntries(LATENCY_KEYS.map((k) => [k, ci(latency[k])])) as Record<LatencyKey, Interval> },
    trimmed: p.qps.length - qps.length,
  };
}

/** Intervals of a one-pass point, bootstrapped over its queries' latencies. */
export function singlePassIntervals(latenciesMs: ArrayLike<number>, qps: number, seed = 0x5eed): { qps: Interval; latency_ms: Record<LatencyKey, Interval> } {
  const xs = Array.from(latenciesMs);
  const n = xs.length;
  const stats: Record<LatencyKey, number[]> = { mean: [], p50: [], p95: [], p99: [], p999: [] };
  if (n === 0) {
    const nan: Interval = [NaN, NaN];
    return { qps: nan, latency_ms: { mean: nan, p50: nan, p95: nan, p99: nan, p999: nan } };
  }
  // One resample gives every figure, so the percentiles share the sorting.
  const rand = mulberry32(seed);
  const sample = new Float64Array(n);
  for (let r = 0; r < RESAMPLES; r++) {
    for (let i = 0; i < n; i++) sample[i] = xs[Math.floor(rand() * n)];
    sample.sort();
    stats.mean.push(mean(sample));
    stats.p50.push(percentile(sample, 50));
    stats.p95.push(percentile(sample, 95));
    stats.p99.push(percentile(sample, 99));
    stats.p999.push(percentile(sample, 99.9));
  }
  const q = (arr: number[]): Interval => {
    const s = Float64Array.from(arr).sort();
    return [s[Math.floor(0.025 * (s.length - 1))], s[Math.ceil(0.975 * (s.length - 1))]];
  };
  const lat = Object.fromEntries(LATENCY_KEYS.map((k) => [k, q(stats[k])])) as Record<LatencyKey, Interval>;
  const m = mean(xs);
  return { qps: [(qps * m) / lat.mean[1], (qps * m) / lat.mean[0]], latency_ms: lat };
}

/** Interval of a mean recall, bootstrapped over the per-query recalls. */
export function recallInterval(perQuery: number[]): Interval {
  return interval(bootstrapCI(perQuery, mean, { resamples: RESAMPLES }));
}
