// How much two participants' speeds drift apart over a run, beyond their passes' noise
// (docs/method.md, "Paired leads"): each pass's log figure is centred on its own point's mean, the
// passes are cut into windows of time, and the two participants' window means are differenced.
// Pairing cancels a drift that falls on both alike; what this measures is the part it cannot.
import type { Sample } from './paired.ts';
import { mean, sampleVariance as variance } from './stats.ts';

/** A pass's time and its log figure less the mean log figure of its point. */
export interface CentredPass {
  t: number;
  v: number;
}

/** The passes of several points (each a list of passes, figures > 0), each centred on its own
 * point's mean log figure: what is left is how the participant ran at that time. */
export function centredPasses(points: Sample[][]): CentredPass[] {
  const out: CentredPass[] = [];
  for (const passes of points) {
    const logs = passes.filter((s) => s.v > 0).map((s) => ({ t: s.t, v: Math.log(s.v) }));
    if (logs.length < 2) continue;
    const centre = mean(logs.map((s) => s.v));
    for (const s of logs) out.push({ t: s.t, v: s.v - centre });
  }
  return out;
}

export interface PairDrift {
  /** Windows where both had at least the minimum of passes. */
  windows: number;
  /** Standard deviation of the two window means' difference, between windows. */
  sd: number;
  /** What the passes within the windows explain of it (root mean square standard error). */
  se: number;
  /** The drift beyond the passes' noise: sqrt(max(0, sd^2 - se^2)). */
  excess: number;
}

/** The drift of `a` against `b` over windows of `windowS` seconds, counting the windows where
 * each has at least `minPasses` passes; null with fewer than 3 such windows. */
export function windowDrift(a: CentredPass[], b: CentredPass[], windowS: number, minPasses = 4): PairDrift | null {
  if (!(windowS > 0)) throw new RangeError(`windowDrift: windowS must be > 0, got ${windowS}`);
  if (a.length === 0 || b.length === 0) return null;
  const t0 = Math.min(...a.map((s) => s.t), ...b.map((s) => s.t));
  const bins = (xs: CentredPass[]) => {
    const m = new Map<number, number[]>();
    for (const s of xs) {
      const w = Math.floor((s.t - t0) / windowS);
      const vs = m.get(w);
      if (vs) vs.push(s.v);
      else m.set(w, [s.v]);
    }
    return m;
  };
  const ba = bins(a);
  const bb = bins(b);
  const diffs: number[] = [];
  const se2: number[] = [];
  for (const [w, va] of ba) {
    const vb = bb.get(w);
    if (!vb || va.length < minPasses || vb.length < minPasses) continue;
    diffs.push(mean(va) - mean(vb));
    se2.push(variance(va) / va.length + variance(vb) / vb.length);
  }
  if (diffs.length < 3) return null;
  const sd2 = variance(diffs);
  const noise = mean(se2);
  return { windows: diffs.length, sd: Math.sqrt(sd2), se: Math.sqrt(noise), excess: Math.sqrt(Math.max(0, sd2 - noise)) };
}
