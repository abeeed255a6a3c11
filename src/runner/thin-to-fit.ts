// --max-time: a run bounded by the time a user has. When the timing plan (timing-plan.ts) would
// take the run past its bound, curve points that no table cell reads are left out of the timing,
// every other one first and the ones at the ladder's two ends last, until the plan fits. The
// points the cells read keep all their passes: a bound costs the curve's detail, never the
// cells' precision. A point left out is recorded with the reason (the group's `skipped`).
import { log } from '../util/progress.ts';
import type { GroupTiming } from './timed-rounds.ts';
import { timingPlan, type TimingPlan } from './timing-plan.ts';

/** The timing takes more than its passes: warm-ups, the host-speed probes, the per-round load
 * readings and the point writes (about a third more on the 2-core test VM). */
export const TIMING_OVERHEAD = 1.35;

/** Points of one group that may be left out, in the order they go: every other point of the
 * ladder from the second, then the rest, the lowest and highest ladder points last. */
function thinnable(t: GroupTiming): number[] {
  const cells = new Set(t.entries.filter((e) => e.item.readsCell || e.item.calibratedFor !== undefined).map((e) => e.item.li));
  const lis = [...new Set(t.entries.filter((e) => !e.done).map((e) => e.item.li))].sort((a, b) => a - b).filter((li) => !cells.has(li));
  if (lis.length === 0) return [];
  const inner = lis.slice(1, -1);
  const ends = lis.length > 1 ? [lis[0], lis[lis.length - 1]] : [lis[0]];
  return [...inner.filter((_, i) => i % 2 === 0), ...inner.filter((_, i) => i % 2 === 1), ...ends];
}

/**
 * Leaves curve points out of the timing until its plan, with the overhead, fits `budgetS`
 * seconds; returns the plan it leaves and how many points it left out. Groups give up points
 * in turn, so every group keeps the same share of its curve.
 */
export function thinToFit(timings: GroupTiming[], budgetS: number, why: string): { plan: TimingPlan; thinned: number } {
  let plan = timingPlan(timings);
  const queues = timings.map((t) => ({ t, lis: thinnable(t) }));
  let thinned = 0;
  while (plan.seconds[1] * TIMING_OVERHEAD > budgetS && queues.some((q) => q.lis.length > 0)) {
    for (const q of queues) {
      const li = q.lis.shift();
      if (li === undefined) continue;
      for (const e of q.t.entries) {
        if (e.item.li !== li || e.done) continue;
        e.done = true;
        e.skipped = `left out of the timing by ${why}: a curve point no table cell reads`;
      }
      thinned++;
    }
    plan = timingPlan(timings);
  }
  if (thinned > 0) log(`${why}: ${thinned} curve points that no table cell reads are left out of the timing to fit it`);
  if (plan.seconds[1] * TIMING_OVERHEAD > budgetS)
    log(`${why}: the points the table's cells read alone are planned past the bound; they keep their precision and the run goes on`);
  return { plan, thinned };
}
