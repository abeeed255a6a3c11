// Precision where the table is read: a row ranks its participants by their leads over the row's
// best, so a cell's point is timed until its lead is precise, not only its own QPS
// (docs/measurement.md, "Stable points"). On a shared machine every engine speeds up and slows
// down together; passes of two participants taken in the same round of a shared timing share
// that drift, and their ratio cancels it. So the paired interval of a lead narrows in a handful
// of passes where a cell's own interval would need a hundred.
//
// Which leads: for each target recall a point is read for, the row's best participant (the
// highest QPS so far among the points read for that target) against every other one. A point of
// the best is done when every other participant's lead over it is precise; another's point when
// its lead over the best is. The passes pair as the report pairs them (src/metrics/paired.ts);
// the interval is Student's t on the mean log ratio, what the report's bootstrap approaches for
// the pass counts used here.
import { mean, trimOutliers } from '../metrics/stats.ts';
import { MIN_PAIRS, pairSamples, pairWindow, type Sample, t975, TRIM_FROM } from '../metrics/paired.ts';
import type { Entry } from './timed-entry.ts';

/** An entry's quiet passes as the report pairs them: start time, QPS and shared round. */
function quietSamples(x: Entry): Sample[] {
  const out: Sample[] = [];
  x.pass.qps.forEach((v, i) => {
    if (!x.busy[i]) out.push({ t: x.pass.at_unix_s[i], v, r: x.pass.round_at_unix_s[i] });
  });
  return out;
}

/** Log ratios (e / f) of the two entries' quiet passes, paired by the report's own rule
 * (src/metrics/paired.ts: the same shared round first, then nearest in time), so the runner stops
 * a point on the interval the table will print. */
export function roundPairs(e: Entry, f: Entry): number[] {
  const a = quietSamples(e);
  const b = quietSamples(f);
  return pairSamples(a, b, pairWindow(a, b))
    .map(([x, y]) => Math.log(x / y))
    .filter(Number.isFinite);
}

/** The relative half-width of a lead's 95 % interval from its pairs' log ratios (Infinity
 * below MIN_PAIRS pairs: too few to judge). */
export function pairedHalfWidth(logs: number[]): number {
  if (logs.length < MIN_PAIRS) return Infinity;
  const l = logs.length >= TRIM_FROM ? trimOutliers(logs, 3) : logs;
  const n = l.length;
  if (n < 2) return Infinity;
  const m = mean(l);
  const sd = Math.sqrt(l.reduce((s, x) => s + (x - m) ** 2, 0) / (n - 1));
  return Math.expm1((t975(n - 1) * sd) / Math.sqrt(n));
}

/** A participant's side of a row at one target: its points read for that target. */
export interface LeadSide {
  owner: unknown;
  entries: Entry[];
}

/** Mean QPS over an entry's quiet passes (0 before any). */
function quietQps(e: Entry): number {
  const q = e.pass.qps.filter((_, i) => !e.busy[i]);
  return q.length === 0 ? 0 : mean(q);
}

/** The entries whose leads with `e` must be precise before `e` is done, or null when `e` is read
 * for no target another participant is also read for (then its own interval is the rule).
 * `sidesAt(target)`: every participant's points read for that target, `e`'s own side included. */
export function leadCounterparts(e: Entry, own: unknown, sidesAt: (target: number) => LeadSide[]): Entry[] | null {
  const out = new Set<Entry>();
  let paired = false;
  for (const target of e.item.cellTargets ?? []) {
    const sides = sidesAt(target).filter((s) => s.entries.length > 0);
    if (sides.length < 2 || !sides.some((s) => s.owner === own)) continue;
    paired = true;
    // A side's value: the geometric mean of its points' QPS (a cell read between two points lies
    // between them).
    const value = (s: LeadSide) => Math.exp(mean(s.entries.map((x) => Math.log(Math.max(quietQps(x), 1e-300)))));
    const best = sides.reduce((a, b) => (value(b) > value(a) ? b : a));
    const others = best.owner === own ? sides.filter((s) => s.owner !== own) : [best];
    for (const s of others) for (const x of s.entries) out.add(x);
  }
  return paired ? [...out] : null;
}

/** A lead to be made precise: the other side's point, the paired half-width so far and pairs. */
export interface LeadWidth {
  other: Entry;
  hw: number;
  pairs: number;
}

/** A cell point's leads that must be precise before it is done, or null when no other
 * participant's point in its row (`peers`: the same group's other timings) is read for its
 * targets. */
export function leadWidths(e: Entry, own: { entries: Entry[] }, peers: { entries: Entry[] }[]): LeadWidth[] | null {
  if (peers.length === 0) return null;
  const sidesAt = (target: number): LeadSide[] =>
    [own, ...peers].map((t) => ({
      owner: t,
      entries: t.entries.filter((x) => x.view === 'throughput' && !x.skipped && x.item.readsCell && x.item.cellTargets?.includes(target)),
    }));
  const others = leadCounterparts(e, own, sidesAt);
  if (!others) return null;
  return others.map((other) => {
    const logs = roundPairs(e, other);
    return { other, hw: pairedHalfWidth(logs), pairs: logs.length };
  });
}
