// Paired leads (docs/method.md, "Paired leads"). Pure and browser-safe (no Node imports).
//
// On a shared machine every engine speeds up and slows down together over tens of seconds. The
// runner interleaves the participants' timed passes in shared rounds so that such drift falls on
// all alike; a lead read from two cells' own intervals (each spanning the drift) carries the
// drift twice. Here the lead is read from pairs of passes taken close together in time, whose
// ratio the common drift cancels out of:
//
// - A cell's series: per build, its kept passes as (start time, value). A cell read between two
//   points (interpolated) pairs the two points' passes nearest in time and interpolates each
//   pair with the cell's own weight.
// - Pairs: each pass of the shorter series takes the nearest unused pass of the other within a
//   window: PAIR_WINDOW_S, or a round when rounds are longer (the median time between the denser
//   series' consecutive passes: an entry timed every round). Too few pairs (under MIN_PAIRS over
//   the builds, under MIN_BUILD_PAIRS in a build of several, or under half of the shorter series:
//   rounds that do not line up, cells measured apart) and the lead is not paired; the caller
//   says so.
// - The estimate: the mean over builds of each build's mean log ratio (beyond 3 x IQR trimmed from
//   8 pairs on, as a point's passes are), as a ratio. Its 95 % interval: the percentile bootstrap
//   that resamples builds, then pairs within each (1,000 resamples, seeded), widened by the
//   small-sample factor t(n-1) / z * sqrt(n / (n - 1)) so a handful of pairs does not read narrow.
import { mean, mulberry32, quantileSorted, trimOutliers } from './stats.ts';

/** One timed pass: when it started (Unix seconds) and its figure (QPS or latency). */
export interface Sample {
  t: number;
  v: number;
}

/** A cell's passes, one list per build. */
export type Series = Sample[][];

/** Passes further apart than this are not a pair, unless rounds take longer: the machine's speed
 * moves over tens of seconds. */
const PAIR_WINDOW_S = 10;

/** The pairing window of two series: PAIR_WINDOW_S, or the denser series' median spacing (about
 * one round) when that is longer, so the passes of one round pair up even on a slow machine. */
export function pairWindow(a: Sample[], b: Sample[]): number {
  const dense = a.length >= b.length ? a : b;
  const t = dense.map((x) => x.t).sort((x, y) => x - y);
  const gaps = t
    .slice(1)
    .map((x, i) => x - t[i])
    .sort((x, y) => x - y);
  return gaps.length === 0 ? PAIR_WINDOW_S : Math.max(PAIR_WINDOW_S, gaps[gaps.length >> 1]);
}
/** The fewest pairs a paired lead is read from, over its builds; and the fewest of one build (a
 * slow point gets a few passes in each of several builds: its builds' pairs together make the
 * lead, the small-sample widening below covering so few; test/unit/paired-leads.test.ts). */
export const MIN_PAIRS = 5;
const MIN_BUILD_PAIRS = 3;
const RESAMPLES = 1000;
/** Pairs of this many or more are trimmed of outliers (3 x IQR), as a point's passes are. */
export const TRIM_FROM = 8;
const Z975 = 1.959964;

/** Pairs passes one-to-one, nearest in time first, within windowS; [a value, b value] each. */
export function pairSamples(a: Sample[], b: Sample[], windowS = PAIR_WINDOW_S): [number, number][] {
  const swap = a.length > b.length;
  const [short, long] = swap ? [b, a] : [a, b];
  const candidates: { i: number; j: number; gap: number }[] = [];
  for (let i = 0; i < short.length; i++) {
    for (let j = 0; j < long.length; j++) {
      const gap = Math.abs(short[i].t - long[j].t);
      if (gap <= windowS) candidates.push({ i, j, gap });
    }
  }
  candidates.sort((x, y) => x.gap - y.gap || x.i - y.i || x.j - y.j);
  const usedShort = new Set<number>();
  const usedLong = new Set<number>();
  const pairs: { i: number; pair: [number, number] }[] = [];
  for (const c of candidates) {
    if (usedShort.has(c.i) || usedLong.has(c.j)) continue;
    usedShort.add(c.i);
    usedLong.add(c.j);
    const [s, l] = [short[c.i].v, long[c.j].v];
    pairs.push({ i: c.i, pair: swap ? [l, s] : [s, l] });
  }
  return pairs.sort((x, y) => x.i - y.i).map((p) => p.pair);
}

/** The series of a cell read between two points: their passes paired in time, each pair
 * log-interpolated with weight w (0: lo, 1: hi), as the cell's value is. */
export function interpolateSamples(lo: Sample[], hi: Sample[], w: number, windowS = pairWindow(lo, hi)): Sample[] {
  const out: Sample[] = [];
  const swap = lo.length > hi.length;
  const [short, long] = swap ? [hi, lo] : [lo, hi];
  const used = new Set<number>();
  for (const s of short) {
    let best = -1;
    for (let j = 0; j < long.length; j++) {
      if (used.has(j) || Math.abs(long[j].t - s.t) > windowS) continue;
      if (best < 0 || Math.abs(long[j].t - s.t) < Math.abs(long[best].t - s.t)) best = j;
    }
    if (best < 0) continue;
    used.add(best);
    const [l, h] = swap ? [long[best], s] : [s, long[best]];
    out.push({ t: (l.t + h.t) / 2, v: Math.exp((1 - w) * Math.log(l.v) + w * Math.log(h.v)) });
  }
  return out;
}

/** Student's t 97.5 % quantile (Cornish-Fisher expansion around the normal; within 0.01 of the
 * table from 4 degrees of freedom on). */
export function t975(df: number): number {
  const z = Z975;
  const [z3, z5, z7] = [z ** 3, z ** 5, z ** 7];
  return z + (z3 + z) / (4 * df) + (5 * z5 + 16 * z3 + 3 * z) / (96 * df ** 2) + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * df ** 3);
}

export type PairedLead = { lead: number; ci: [number, number]; pairs: number } | { reason: string };

/** The lead of `a` over `b` (a / b) from their paired passes, or why it cannot be paired. */
export function pairedLead(a: Series, b: Series, seed = 0x5eed): PairedLead {
  const builds = Math.min(a.length, b.length);
  if (builds === 0 || a.length !== b.length) return { reason: 'the cells were measured on different builds' };
  const logs: number[][] = [];
  // One build needs MIN_PAIRS; with several, each needs MIN_BUILD_PAIRS and all MIN_PAIRS.
  const perBuild = builds > 1 ? MIN_BUILD_PAIRS : MIN_PAIRS;
  const shortest = a.reduce((n, s, k) => n + Math.min(s.length, b[k].length), 0);
  if (shortest < MIN_PAIRS) return { reason: `too few passes to pair (${shortest}; at least ${MIN_PAIRS}${builds > 1 ? ' over the builds' : ''})` };
  for (let k = 0; k < builds; k++) {
    const shorter = Math.min(a[k].length, b[k].length);
    const window = pairWindow(a[k], b[k]);
    const pairs = pairSamples(a[k], b[k], window);
    const where = builds > 1 ? `, build ${k}` : '';
    if (shorter < perBuild) return { reason: `too few passes to pair (${shorter}; at least ${perBuild}${where})` };
    if (pairs.length < Math.max(perBuild, shorter / 2)) {
      return { reason: `rounds do not line up (${pairs.length} of ${shorter} passes paired within ${window.toFixed(0)} s${where})` };
    }
    const l = pairs.map(([x, y]) => Math.log(x / y)).filter(Number.isFinite);
    logs.push(l.length >= TRIM_FROM ? trimOutliers(l, 3) : l);
  }
  const stat = (sets: number[][]) => mean(sets.map((s) => mean(s)));
  const estimate = stat(logs);
  const rand = mulberry32(seed);
  const draws = new Float64Array(RESAMPLES);
  for (let r = 0; r < RESAMPLES; r++) {
    const sets: number[][] = [];
    for (let k = 0; k < builds; k++) {
      const set = logs[builds === 1 ? 0 : Math.floor(rand() * builds)];
      sets.push(Array.from({ length: set.length }, () => set[Math.floor(rand() * set.length)]));
    }
    draws[r] = stat(sets);
  }
  draws.sort();
  const n = logs.reduce((s, l) => s + l.length, 0);
  const widen = (t975(n - 1) / Z975) * Math.sqrt(n / (n - 1));
  const low = estimate - (estimate - quantileSorted(draws, 0.025)) * widen;
  const high = estimate + (quantileSorted(draws, 0.975) - estimate) * widen;
  return { lead: Math.exp(estimate), ci: [Math.exp(low), Math.exp(high)], pairs: n };
}
