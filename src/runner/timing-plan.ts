// The timing's plan, said before it starts: how many points and passes the prepared groups are
// expected to take and about how long, so a run that would not fit the time a user has can be
// stopped before it spends it. Each point's pass time is its recall pass's (the same queries at
// the same knobs, driven as the throughput view is); the latency view, one request at a time, is
// taken as that many times slower as the throughput view runs requests at once (at most the
// cores). A point that a
// cell reads goes on until its interval is narrow enough, within its caps: hence a range.
import { availableParallelism } from 'node:os';
import { fmtSeconds } from '../util/progress.ts';
import { cellCaps, drivenBy, forCell, MIN_CELL_PASSES, type Entry, type GroupTiming } from './timed-rounds.ts';

export interface TimingPlan {
  participants: number;
  groups: number;
  points: number;
  /** Points a table cell is expected to read (timed to the cells' precision). */
  cellPoints: number;
  passes: [number, number];
  seconds: [number, number];
}

/** One entry's expected pass time, s: its passes so far, else its recall pass's, which ran
 * `parallel` requests at once (the throughput view's drive). */
function passSeconds(e: Entry, parallel: number): number | null {
  if (e.pass.wall_s.length > 0) return e.pass.wall_s.reduce((a, b) => a + b, 0) / e.pass.wall_s.length;
  const probe = e.item.recall?.wallS;
  if (probe === undefined || !(probe > 0)) return null;
  return e.view === 'throughput' ? probe : probe * parallel;
}

export function timingPlan(timings: GroupTiming[]): TimingPlan {
  const plan: TimingPlan = {
    participants: new Set(timings.map((t) => t.spec.engine)).size,
    groups: timings.length,
    points: 0,
    cellPoints: 0,
    passes: [0, 0],
    seconds: [0, 0],
  };
  for (const t of timings) {
    const timing = t.spec.timing;
    const drive = drivenBy(t.spec.p, 'throughput', t.spec.clients, t.spec.threads);
    // Requests at once beyond the cores do not add speed to a CPU-bound engine.
    const parallel = Math.max(1, Math.min(drive.clients * drive.threads, availableParallelism()));
    for (const e of t.entries) {
      if (e.done || e.skipped) continue;
      plan.points++;
      const wall = passSeconds(e, parallel) ?? 0;
      const have = e.busy.filter((b) => !b).length;
      const base = Math.min(timing.maxPasses, Math.max(timing.minPasses, wall > 0 ? Math.ceil(timing.minSeconds / wall) : timing.minPasses));
      let [low, high] = [base, base];
      if (forCell(e, timing)) {
        plan.cellPoints++;
        const caps = cellCaps(timing);
        const cap = Math.min(caps.passes, wall > 0 && Number.isFinite(caps.seconds) ? Math.max(1, Math.ceil(caps.seconds / wall)) : caps.passes);
        low = Math.max(base, Math.min(cap, MIN_CELL_PASSES));
        high = Math.max(low, cap);
      }
      [low, high] = [Math.max(0, low - have), Math.max(0, high - have)];
      plan.passes[0] += low;
      plan.passes[1] += high;
      plan.seconds[0] += low * wall;
      plan.seconds[1] += high * wall;
    }
  }
  return plan;
}

/** The plan in one line, as the run prints it before timing starts. */
export function planText(p: TimingPlan): string {
  const range = ([a, b]: [number, number], f: (x: number) => string) => (f(a) === f(b) ? f(a) : `${f(a)}-${f(b)}`);
  const who = p.participants > 1 ? ` of ${p.participants} participants` : '';
  return `timing plan: ${p.points} points (${p.cellPoints} read by table cells) in ${p.groups} group${p.groups === 1 ? '' : 's'}${who}, ${range(p.passes, String)} passes, about ${range(p.seconds, fmtSeconds)} of passes (each point's pass time from its recall pass; warm-ups, busy retakes and the host-speed probes come on top)`;
}
