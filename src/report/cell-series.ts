// The passes a derived cell was read from, laid out in time, for paired leads
// (src/metrics/paired.ts). Kept beside the cells rather than in them: `report --json` prints
// cells, and a cell's raw passes are in its result file already.
import type { CurvePoint } from '../metrics/frontier.ts';
import { interpolateSamples, type Sample, type Series } from '../metrics/paired.ts';
import type { ResultPoint } from '../results/schema.ts';
import type { DerivedCell, View } from './cell-types.ts';

const pointOfCurve = new WeakMap<CurvePoint, ResultPoint>();
const seriesOfCell = new WeakMap<DerivedCell, Series>();

/** Remembers which stored point a curve point was made from. */
export function rememberPoint(c: CurvePoint, p: ResultPoint): CurvePoint {
  pointOfCurve.set(c, p);
  return c;
}

/** A point's kept passes as (start time, figure), or null when they cannot be laid out in time
 * (imported results, cold points, results from before the per-pass times). */
export function passSamples(p: ResultPoint, view: View): Sample[] | null {
  const pass = p.pass;
  if (!pass?.at_unix_s) return null;
  const values = view === 'throughput' ? pass.qps : pass.latency_ms.p50;
  // qps and latency hold the quiet passes only when enough were quiet; at_unix_s and
  // round_at_unix_s every pass.
  let times = pass.at_unix_s;
  let rounds = pass.round_at_unix_s?.length === times.length ? pass.round_at_unix_s : undefined;
  if (times.length !== values.length && pass.busy?.length === times.length) {
    const quiet = (_: unknown, i: number) => !pass.busy![i];
    times = times.filter(quiet);
    rounds = rounds?.filter(quiet);
  }
  if (times.length !== values.length) return null;
  return values.map((v, i) => ({ t: times[i], v, r: rounds?.[i] ?? null }));
}

/** One build's samples of a cell read from `from` (one point, or the two it interpolates). */
export function buildSamples(from: CurvePoint[] | undefined, target: number, view: View): Sample[] | null {
  if (!from || from.length === 0 || from.length > 2) return null;
  const samples = from.map((c) => {
    const p = pointOfCurve.get(c);
    return p ? passSamples(p, view) : null;
  });
  if (samples.some((s) => s === null)) return null;
  if (samples.length === 1) return samples[0];
  const [lo, hi] = from;
  return interpolateSamples(samples[0]!, samples[1]!, (target - lo.recall) / (hi.recall - lo.recall));
}

/** Sets a cell's series (one sample list per build), unless a build's could not be laid out. */
export function rememberSeries(cell: DerivedCell, builds: (Sample[] | null)[]): void {
  if (builds.length > 0 && builds.every((b) => b !== null && b.length > 0)) seriesOfCell.set(cell, builds as Series);
}

export const seriesOf = (cell: DerivedCell): Series | null => seriesOfCell.get(cell) ?? null;
