// How far a cold group's points scatter around their own curve (docs/method.md, "Cold
// protocol"). Under the cold protocol each point is one pass over queries of its own, so its
// interval (bootstrapped over those queries) says how precisely that pass was measured, not what
// another pass at the same knobs would read: on the disk tier, points a few hundredths of recall
// apart differ by 10 to 30 % in QPS where each pass's interval is ±2 % (what the page cache held
// when each ran, and the machine meanwhile). That scatter is measured from the points themselves:
// each inner point against the log-linear line through its two neighbours in recall.
import type { CurvePoint } from './frontier.ts';
import { quantileSorted, Z975 } from './stats.ts';

/** Fewest residuals a spread is estimated from (both views of a group pooled). */
const MIN_RESIDUALS = 4;
/** The median absolute deviation of a normal is this share of its standard deviation. */
const MAD_OF_NORMAL = 0.6744898;

const usable = (p: CurvePoint) => Number.isFinite(p.value) && p.value > 0 && Number.isFinite(p.recall);

/** A point's own standard error in log scale, from its 95 % interval; null without one. */
function ownSe(p: CurvePoint): number | null {
  if (!(p.low !== undefined && p.high !== undefined && p.low > 0 && p.high > 0)) return null;
  return Math.log(p.high / p.low) / (2 * Z975);
}

const median = (xs: number[]) =>
  quantileSorted(
    [...xs].sort((a, b) => a - b),
    0.5,
  );

/**
 * The standard deviation (log scale) of a point's figure around its group's curve beyond the
 * point's own interval, from the curves given (each one view's points; pooled): each inner point's
 * residual from the line through its neighbours, scaled to one point's deviation, then a median
 * (so that one outlier, such as the first pass after an eviction, does not set it), less the
 * points' own variance. Null with fewer than MIN_RESIDUALS residuals.
 */
export function curveSpread(curves: CurvePoint[][]): number | null {
  const residuals: number[] = [];
  const own: number[] = [];
  for (const curve of curves) {
    const pts = curve.filter(usable).sort((a, b) => a.recall - b.recall);
    for (const p of pts) {
      const se = ownSe(p);
      if (se !== null) own.push(se * se);
    }
    for (let i = 1; i + 1 < pts.length; i++) {
      const [a, p, b] = [pts[i - 1], pts[i], pts[i + 1]];
      const span = b.recall - a.recall;
      if (!(span > 1e-9)) continue;
      const w = (p.recall - a.recall) / span;
      const predicted = (1 - w) * Math.log(a.value) + w * Math.log(b.value);
      // The residual's variance is the point's plus its weighted neighbours'.
      residuals.push(Math.abs(Math.log(p.value) - predicted) / Math.sqrt(1 + w * w + (1 - w) * (1 - w)));
    }
  }
  if (residuals.length < MIN_RESIDUALS) return null;
  const total = median(residuals) / MAD_OF_NORMAL;
  const passes = own.length > 0 ? median(own) : 0;
  return Math.sqrt(Math.max(0, total * total - passes));
}

/** A point whose interval also spans the group's spread (log scale, a standard deviation): each
 * side's log half-width and the spread's 95 % half-width added in quadrature. */
export function withSpread(p: CurvePoint, sd: number): CurvePoint {
  if (!(sd > 0) || !(p.value > 0)) return p;
  const extra = Z975 * sd;
  const side = (bound: number | undefined, sign: 1 | -1) => {
    const own = bound !== undefined && bound > 0 ? Math.abs(Math.log(bound / p.value)) : 0;
    return p.value * Math.exp(sign * Math.sqrt(own * own + extra * extra));
  };
  return { ...p, low: side(p.low, -1), high: side(p.high, 1) };
}
