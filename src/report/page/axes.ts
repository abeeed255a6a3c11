/// <reference lib="dom" />
// The page script's axes (bundled with app.ts): what a chart's curve selector draws on the
// value axis, and the recall axis, linear or in nines.
import type * as Plot from '@observablehq/plot';
import type { Better } from '../../metrics/frontier.ts';
import type { PagePoint } from './types.ts';

export type Curve = 'qps' | 'p50' | 'p99';
export type RecallAxis = 'linear' | 'nines';

/** Recall 1.0 has no finite nines; it is drawn at this recall, the axis's right edge. */
const NINES_CAP = 1 - 1e-5;
const NINES_TICKS = [0.5, 0.9, 0.99, 0.999, 0.9999];

interface CurveSpec {
  view: 'throughput' | 'latency';
  better: Better;
  label: string;
  value: (p: PagePoint) => number;
  /** The 95 % interval of value, where the point carries one. */
  interval: (p: PagePoint) => [number, number] | undefined;
}

/** latencyDriven: how the latency view was driven, from the points ("1 at a time"). */
export function curveSpec(curve: Curve, latencyDriven: string): CurveSpec {
  if (curve === 'qps') return { view: 'throughput', better: 'higher', label: '↑ QPS (throughput view, log)', value: (p) => p.qps, interval: (p) => p.ci?.qps };
  if (curve === 'p50')
    return {
      view: 'latency',
      better: 'lower',
      label: `↓ p50 latency, ms (${latencyDriven}, log)`,
      value: (p) => p.latency_ms.p50,
      interval: (p) => p.ci?.latency_ms.p50,
    };
  return {
    view: 'latency',
    better: 'lower',
    label: `↓ p99 latency, ms (${latencyDriven}, log)`,
    value: (p) => p.latency_ms.p99,
    interval: (p) => p.ci?.latency_ms.p99,
  };
}

const nines = (recall: number) => -Math.log10(1 - Math.min(Math.max(recall, 0), NINES_CAP));

/** The recall axis: where a recall is drawn, and the x scale's options. */
export function recallAxis(axis: RecallAxis, recalls: number[]): { at: (recall: number) => number; scale: Plot.ScaleOptions } {
  const lo = Math.max(0, Math.min(0.85, ...recalls) - 0.01);
  if (axis === 'linear') return { at: (r) => r, scale: { label: 'recall@k (tie-aware) →', domain: [lo, 1.005], grid: true } };
  // At least up to 0.999, so every chart shows the same nines; further where points go.
  const hi = Math.max(nines(0.999), ...recalls.map(nines)) + 0.15;
  const ticks = NINES_TICKS.filter((t) => nines(t) >= nines(lo) && nines(t) <= hi);
  const labels = new Map(ticks.map((t) => [nines(t), String(t)]));
  return {
    at: nines,
    scale: {
      label: 'recall@k (tie-aware), nines: −log10(1 − recall) →',
      domain: [nines(lo), hi],
      ticks: ticks.map(nines),
      tickFormat: (v: number) => labels.get(v) ?? '',
      grid: true,
    },
  };
}
