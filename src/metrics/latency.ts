// A point's latency summary (ResultPoint.latency_ms) from its per-query milliseconds.
import type { ResultPoint } from '../results/schema.ts';
import { mean, percentile } from './stats.ts';

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
