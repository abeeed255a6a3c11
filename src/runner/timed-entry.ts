// What the timing keeps per knob setting (Item) and per (setting, view) being timed (Entry):
// apart from timed-rounds.ts so that what reads and writes entries (kept-passes.ts, the stored
// point) names them without importing the timing.
import type { Knobs } from '../contracts.ts';
import type { PassFigures } from '../metrics/intervals.ts';
import type { summarize } from '../metrics/recall.ts';
import type { PointReply } from './point-reply.ts';
import type { View } from '../results/schema.ts';

/** A knob setting of a group, with its recall pass once measured. */
export interface Item {
  li: number;
  knobs: Knobs;
  calibratedFor?: number;
  /** A table cell is expected to read this point (from the recalls, before timing): its
   * throughput view is timed to the cells' precision. */
  readsCell?: boolean;
  /** The target recalls the cells reading this point are for (its lead is paired at those). */
  cellTargets?: number[];
  recall?: { digests: PointReply['digests']; summary: ReturnType<typeof summarize>; perQuery: number[]; wallS?: number };
}

/** One (item, view) being timed: its passes so far. */
export interface Entry {
  item: Item;
  view: View;
  /** How the view drives the participant (timed-rounds.ts' drivenBy). */
  drive: { clients: number; threads: number; text: string };
  pass: PassFigures & {
    other_cores: (number | null)[];
    steal: (number | null)[];
    host_ms: (number | null)[];
    at_unix_s: number[];
    round_at_unix_s: (number | null)[];
    /** Per pass: bytes the engine's processes read from storage, and their major page faults. */
    read_bytes: (number | null)[];
    major_faults: (number | null)[];
  };
  busy: boolean[];
  /** Per pass: the shared timing's round it was taken in (-1: kept by an earlier run). */
  rounds?: number[];
  quietSeconds: number;
  maxLatency: number;
  varied: Set<number>;
  demand: { weighted: number; wall: number };
  /** Threads the host really used in a pass (1 when it could not open them). */
  threadsUsed: number;
  done: boolean;
  skipped?: string;
  /** quietHalfWidth's value at a pass count. */
  halfWidth?: { passes: number; value: number };
}
