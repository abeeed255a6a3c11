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
// - Pairs: passes taken in the same shared round pair first (the round's start time is stored
//   with each pass), however many seconds apart the round's other work put them; the rest pair
//   by time: each pass of the shorter series takes the nearest unused pass of the other within a
//   window: PAIR_WINDOW_S, or a round when rounds are longer (the median time between the denser
//   series' consecutive passes: an entry timed every round). Too few pairs (under MIN_PAIRS over
//   the builds, under MIN_BUILD_PAIRS in a build of several, or under half of the shorter series:
//   rounds that do not line up, cells measured apart) and the lead is not paired; the caller
//   says so.
// - The estimate: the mean over builds of each build's mean log ratio (beyond 3 x IQR trimmed from
//   8 pairs on, as a point's passes are), as a ratio. Its 95 % interval: the percentile bootstrap
//   that resamples builds, then pairs within each (1,000 resamples, seeded), widened by the
//   small-sample factor t(n-1) / z * sqrt(n / (n - 1)) so a handful of pairs does not read narrow.
import { mean, mulberry32, quantileSorted, trimOutliers, Z975 } from './stats.ts';

/** One timed pass: when it started (Unix seconds), its figure (QPS or latency) and the shared
 * round it was taken in (the round's start time; null or absent: not known). */
export interface Sample {
  t: number;
  v: number;
  r?: number | null;
}

/** Pairs of indices (short, long) of passes taken in the same round, one-to-one in order. */
function sameRound(short: Sample[], long: Sample[]): { i: number; j: number }[] {
  const byRound = new Map<number, number[]>();
  long.forEach((s, j) => {
    if (s.r == null) return;
    const js = byRound.get(s.r);
    if (js) js.push(j);
    else byRound.set(s.r, [j]);
  });
  const out: { i: number; j: number }[] = [];
  short.forEach((s, i) => {
    const js = s.r == null ? undefined : byRound.get(s.r);
    if (js && js.length > 0) out.push({ i, j: js.shift()! });
  });
  return out;
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
 * slow point gets a few passes in each of several builds, one of which may lose its pair to a
 * busy round: its builds' pairs together make the lead, the small-sample widening below covering
 * so few; test/unit/paired-leads.test.ts). */
export const MIN_PAIRS = 5;
const MIN_BUILD_PAIRS = 2;
const RESAMPLES = 1000;
/** Pairs of this many or more are trimmed of outliers (3 x IQR), as a point's passes are. */
export const TRIM_FROM = 8;

/** Pairs passes one-to-one: those of the same round first, then nearest in time first within
 * windowS; [index in a, index in b] each, in a's order. */
function pairIndices(a: Sample[], b: Sample[], windowS: number): [number, number][] {
  const swap = a.length > b.length;
  const [short, long] = swap ? [b, a] : [a, b];
  // Same-round pairs sort before any pair by time (gap -1).
  const candidates: { i: number; j: number; gap: number }[] = sameRound(short, long).map((c) => ({ ...c, gap: -1 }));
  for (let i = 0; i < short.length; i++) {
    for (let j = 0; j < long.length; j++) {
      const gap = Math.abs(short[i].t - long[j].t);
      if (gap <= windowS) candidates.push({ i, j, gap });
    }
  }
  candidates.sort((x, y) => x.gap - y.gap || x.i - y.i || x.j - y.j);
  const usedShort = new Set<number>();
  const usedLong = new Set<number>();
  const pairs: [number, number][] = [];
  for (const c of candidates) {
    if (usedShort.has(c.i) || usedLong.has(c.j)) continue;
    usedShort.add(c.i);
    usedLong.add(c.j);
    pairs.push(swap ? [c.j, c.i] : [c.i, c.j]);
  }
  return pairs.sort((x, y) => x[0] - y[0]);
}

/** Pairs passes one-to-one (pairIndices); [a value, b value] each. */
export function pairSamples(a: Sample[], b: Sample[], windowS = PAIR_WINDOW_S): [number, number][] {
  return pairIndices(a, b, windowS).map(([i, j]) => [a[i].v, b[j].v]);
}

/** The series of a cell read between two points: their passes paired (pairIndices), each pair
 * log-interpolated with weight w (0: lo, 1: hi), as the cell's value is. */
export function interpolateSamples(lo: Sample[], hi: Sample[], w: number, windowS = pairWindow(lo, hi)): Sample[] {
  return pairIndices(lo, hi, windowS).map(([i, j]) => {
    const [l, h] = [lo[i], hi[j]];
    return { t: (l.t + h.t) / 2, v: Math.exp((1 - w) * Math.log(l.v) + w * Math.log(h.v)), r: l.r != null && l.r === h.r ? l.r : null };
  });
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
      const byRound = [...a[k], ...b[k]].some((x) => x.r != null) ? 'in a shared round or ' : '';
      return { reason: `rounds do not line up (${pairs.length} of ${shorter} passes paired ${byRound}within ${window.toFixed(0)} s${where})` };
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
