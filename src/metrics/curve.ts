// A group's measured points as the curve the cell rule (frontier.ts) reads: the target recalls,
// the flags that keep a point off the frontier, and a view's value and interval per point. Pure
// (types only from the result format), shared by the report, which derives the cells, and the
// runner, which knows before timing which points the cells will read.
import type { ResultGroup, ResultPoint, View } from '../results/schema.ts';
import { CELL_SHARES, shareOf } from '../results/readings.ts';
import type { CurvePoint } from './frontier.ts';

/** Which figure a curve reads: throughput (QPS, higher is better) or latency (p50 ms, lower). */
export type { View };

/** The recalls the table reads each curve at. */
export const TARGETS = [0.9, 0.95, 0.99] as const;

/** Flags that keep a point off the frontier (the harness, not the engine, may have set its figure). */
export const EXCLUDING_FLAGS = ['invalid-results', 'client-limited', 'busy-machine', 'harness-overhead'] as const;

export const isExcluded = (flags: readonly string[]) => flags.some((f) => (EXCLUDING_FLAGS as readonly string[]).includes(f));

export function curvePoint(p: ResultPoint, view: View): CurvePoint {
  const ci = view === 'throughput' ? p.ci?.qps : p.ci?.latency_ms.p50;
  return {
    recall: p.recall,
    value: view === 'throughput' ? p.qps : p.latency_ms.p50,
    knobs: p.knobs,
    ladderIndex: p.ladder_index,
    calibratedFor: p.calibrated_for,
    low: ci?.[0],
    high: ci?.[1],
    shares: Object.fromEntries(
      CELL_SHARES.flatMap((s) => {
        const v = shareOf(p, s.reading);
        return v === undefined ? [] : [[s.name, v]];
      }),
    ),
    ...(p.io ? { readBytes: p.io.read_bytes_per_query } : {}),
  };
}

/** Points of one view that no flag excludes (build: only that build's points). */
export function viewPoints(g: ResultGroup, view: View, build?: number): ResultPoint[] {
  return g.points.filter((p) => p.view === view && !isExcluded(p.flags) && (build === undefined || (p.build ?? 0) === build));
}

/** The throughput curve of a group: the points measured in the throughput view that no flag
 * excludes (build: only that build's points). */
export function throughputCurve(g: ResultGroup, build?: number): CurvePoint[] {
  return viewPoints(g, 'throughput', build).map((p) => curvePoint(p, 'throughput'));
}
