// Timed passes and recall probes kept as they complete (src/results/progress-journal.ts), and
// given back to the same measurement when a stopped run is resumed: a group's timing then
// continues from the passes it had instead of starting over.
import type { Knobs } from '../contracts.ts';
import { progressKey, type PassRecord, type ProgressJournal } from '../results/progress-journal.ts';
import { log } from '../util/progress.ts';
import type { Entry } from './timed-entry.ts';

/** Where one group's progress is kept: the journal, and what identifies its measurements. */
export interface KeptProgress {
  journal: ProgressJournal;
  group: string;
  build: number;
  queries: number[];
  /** The built index the measurements were taken on (its marker's build time): a resumed run
   * that loads the data again measures a new index, and keeps nothing of the old one's. */
  index: string;
}

/** A result measured afresh keeps no progress of an earlier one; a resumed one reads it. */
export function resumeProgress(journal: ProgressJournal, participant: string, resumed: boolean): void {
  if (!resumed) journal.discard();
  else if (journal.load())
    log(`${participant}: ${journal.restored.probes} recall probes and ${journal.restored.passes} timed passes kept from the stopped run`);
}

export function keyOf(kept: KeptProgress, knobs: Knobs): string {
  return progressKey(kept.group, kept.build, kept.queries, { ...knobs, '\u0000index': kept.index });
}

/** One pass of an entry, as the journal keeps it: the entry's last pass and what the round
 * found (busy, the varied answers, the busiest thread's share). */
export function passRecord(e: Entry, extra: { maxLatencyMs: number; varied: number[]; demand: number | null }): PassRecord {
  const last = <T>(xs: T[]) => xs[xs.length - 1];
  const lat = e.pass.latency_ms;
  return {
    view: e.view,
    qps: last(e.pass.qps),
    wall_s: last(e.pass.wall_s),
    at_unix_s: last(e.pass.at_unix_s),
    latency_ms: { mean: last(lat.mean), p50: last(lat.p50), p95: last(lat.p95), p99: last(lat.p99), p999: last(lat.p999), max: extra.maxLatencyMs },
    other_cores: last(e.pass.other_cores),
    steal: last(e.pass.steal),
    host_ms: last(e.pass.host_ms),
    read_bytes: last(e.pass.read_bytes),
    major_faults: last(e.pass.major_faults),
    busy: last(e.busy),
    varied: extra.varied,
    demand: extra.demand,
    threads_used: e.threadsUsed,
  };
}

/** Puts kept passes back into a fresh entry, in the order they were taken. */
export function replayPasses(e: Entry, recs: PassRecord[]): void {
  for (const r of recs) {
    e.pass.qps.push(r.qps);
    e.pass.wall_s.push(r.wall_s);
    e.pass.at_unix_s.push(r.at_unix_s);
    e.pass.round_at_unix_s.push(null);
    for (const k of ['mean', 'p50', 'p95', 'p99', 'p999'] as const) e.pass.latency_ms[k].push(r.latency_ms[k]);
    e.pass.other_cores.push(r.other_cores);
    e.pass.steal.push(r.steal);
    e.pass.host_ms.push(r.host_ms);
    e.pass.read_bytes.push(r.read_bytes);
    e.pass.major_faults.push(r.major_faults);
    e.busy.push(r.busy);
    // Rounds of an earlier run do not line up with this one's: such passes pair with none.
    (e.rounds ??= []).push(-1);
    if (!r.busy) e.quietSeconds += r.wall_s;
    e.maxLatency = Math.max(e.maxLatency, r.latency_ms.max);
    for (const q of r.varied) e.varied.add(q);
    if (r.demand !== null) {
      e.demand.weighted += r.demand * r.wall_s;
      e.demand.wall += r.wall_s;
    }
    e.threadsUsed = Math.max(e.threadsUsed, r.threads_used);
  }
}
