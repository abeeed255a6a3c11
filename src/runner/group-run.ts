// What measuring one query group is given (GroupRun): the engine it asks, the participant,
// dataset and group, the query set, the timing and the callbacks that store the result. Apart
// from measure-group.ts so the stored-point builder and the tests name it without the protocol.
import type { Dataset } from '../datasets/layout.ts';
import type { ResultGroup } from '../results/schema.ts';
import type { JournalEntry } from '../results/journal.ts';
import type { KeptProgress } from './kept-passes.ts';
import type { HostError } from './client.ts';
import type { HostSpeedMeter } from './host-speed.ts';
import type { LoadedParticipant } from './participants.ts';
import type { AskedGroup } from './points.ts';
import type { Timing } from './timed-rounds.ts';
import type { HostReply, HostRequest } from './protocol.ts';
export interface GroupEngine {
  request<T extends HostReply['type']>(req: HostRequest, timeoutS: number, onRetry?: (e: HostError) => void): Promise<Extract<HostReply, { type: T }>>;
  beforeGroup(key: string): Promise<void>;
  loadPids(): { engine: number | undefined; engineTree: boolean; host: number | undefined };
}

export interface GroupRun {
  engine: GroupEngine;
  p: LoadedParticipant;
  ds: Dataset;
  g: AskedGroup;
  group: ResultGroup;
  /** Warm: the query set (indices into the dataset's queries); cold: the shuffled order. */
  queries: number[];
  clients: number;
  threads: number;
  pointTimeoutS: number;
  timing: Timing;
  /** Which build of the index this is (0: the first; later builds time the calibrated knobs). */
  build: number;
  /** Cores other processes may use before a round of passes counts as busy (--busy-cores). */
  busyCores: number;
  /** A round whose host probe took more than this many times the run's fastest is retaken like
   * a busy one (0: no probes). */
  hostSlow?: number;
  /** The host-speed meter (src/runner/host-speed.ts); without it the host is not probed. */
  hostSpeed?: HostSpeedMeter;
  /** The busy-machine meter (tests give one of their own). */
  loadMeter?: { start(): void; stop(): { otherCores: number | null; steal: number | null } };
  onProgress: (what: string) => void;
  /** The whole result, written atomically (group ends, first queries, failures). */
  save: () => void;
  /** One point (or skipped point) of a group already saved, appended to the result's journal
   * (src/results/journal.ts); without it, the whole result is saved. */
  append?: (entry: JournalEntry) => void;
  /** Where probes and passes are kept as they complete, for a resumed run (warm groups). */
  kept?: KeptProgress;
}
