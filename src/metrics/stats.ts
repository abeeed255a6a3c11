// Small statistics helpers for repeated measurements (docs/method.md §9). Pure, deterministic
// when seeded, no I/O.
//
// - percentile: nearest rank on an ascending array: the value at rank ceil(p/100 * n)
//   (1-based, at least 1), so p = 0 is the minimum and p = 100 the maximum. Empty → NaN.
// - mulberry32: a seeded 32-bit generator of uniform numbers in [0, 1).
// - trimOutliers: drops values outside [Q1 - k·IQR, Q3 + k·IQR] (fences themselves are
//   kept), quartiles by linear interpolation between order statistics; non-finite values
//   are dropped; the survivors keep their input order.
// - bootstrapCI: percentile bootstrap: `resamples` samples of size n drawn with
//   replacement, the statistic of each, and the (1 - level)/2 and (1 + level)/2 quantiles
//   of those (linear interpolation). estimate = the statistic of the sample itself. The
//   default seed is fixed, so results are reproducible. Empty sample → all NaN.
// - intervalsOverlap: closed intervals; touching counts as overlapping (no difference).
// - mean: arithmetic mean; empty → NaN. sampleVariance: with n - 1; fewer than 2 → NaN.

/** The standard normal's 97.5 % quantile: a 95 % interval's half-width in standard errors. */
export const Z975 = 1.959964;

export function mean(xs: ArrayLike<number>): number {
  const n = xs.length;
  if (n === 0) return NaN;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += xs[i];
  return sum / n;
}

/** The sample variance (divisor n - 1). */
export function sampleVariance(xs: ArrayLike<number>): number {
  const n = xs.length;
  if (n < 2) return NaN;
  const m = mean(xs);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += (xs[i] - m) ** 2;
  return sum / (n - 1);
}

/** Nearest-rank percentile of an ascending array, p in [0, 100]. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile: p must be in [0, 100], got ${p}`);
  const n = sorted.length;
  if (n === 0) return NaN;
  // p * n before dividing keeps integer ranks exact (0.07 * 100 would be 7.000000000000001);
  // the small slack absorbs the rounding of non-integer p such as 99.9.
  const rank = Math.max(1, Math.ceil((p * n) / 100 - 1e-9));
  return sorted[Math.min(rank, n) - 1];
}

/** Quantile q in [0, 1] of an ascending array, interpolating linearly between order statistics. */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  const pos = (n - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, n - 1);
  const frac = pos - lo;
  return frac === 0 ? sorted[lo] : sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

/** Seeded generator of uniform numbers in [0, 1) (mulberry32). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  };
}

/** Drops values beyond k x IQR outside Q1/Q3; keeps the input order of the rest. */
export function trimOutliers(xs: number[], k = 3.0): number[] {
  if (!(k >= 0)) throw new RangeError(`trimOutliers: k must be >= 0, got ${k}`);
  const finite = xs.filter((x) => Number.isFinite(x));
  if (finite.length === 0) return [];
  const sorted = [...finite].sort((a, b) => a - b);
  const q1 = quantileSorted(sorted, 0.25);
  const q3 = quantileSorted(sorted, 0.75);
  const iqr = q3 - q1;
  const lowFence = q1 - k * iqr;
  const highFence = q3 + k * iqr;
  return finite.filter((x) => x >= lowFence && x <= highFence);
}

const DEFAULT_BOOTSTRAP_SEED = 0x5eed;

/** Percentile bootstrap confidence interval of stat over xs. */
export function bootstrapCI(
  xs: number[],
  stat: (s: number[]) => number,
  opts: { resamples?: number; level?: number; seed?: number } = {},
): { low: number; high: number; estimate: number } {
  const resamples = opts.resamples ?? 1000;
  const level = opts.level ?? 0.95;
  const seed = opts.seed ?? DEFAULT_BOOTSTRAP_SEED;
  if (!Number.isInteger(resamples) || resamples < 1) {
    throw new RangeError(`bootstrapCI: resamples must be a positive integer, got ${resamples}`);
  }
  if (!(level > 0 && level < 1)) throw new RangeError(`bootstrapCI: level must be in (0, 1), got ${level}`);
  const n = xs.length;
  if (n === 0) return { low: NaN, high: NaN, estimate: NaN };

  const rand = mulberry32(seed);
  const stats = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    // A fresh array each time: stat may sort it in place or keep it.
    const sample = new Array<number>(n);
    for (let i = 0; i < n; i++) sample[i] = xs[Math.floor(rand() * n)];
    stats[r] = stat(sample);
  }
  stats.sort();
  const tail = (1 - level) / 2;
  return {
    low: quantileSorted(stats, tail),
    high: quantileSorted(stats, 1 - tail),
    estimate: stat(xs),
  };
}

export function intervalsOverlap(a: { low: number; high: number }, b: { low: number; high: number }): boolean {
  return a.low <= b.high && b.low <= a.high;
}
