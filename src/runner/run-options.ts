// The options of `vecbench run`, as the command line gives them.
import { availableParallelism } from 'node:os';
import type { GroupKey } from '../datasets/groups.ts';
import type { RunStep } from './feature.ts';
import type { Timing } from './timed-rounds.ts';

export interface RunOptions {
  dataset: string;
  participants: string[];
  outDir: string;
  dataDir: string;
  /** In-flight requests of the throughput view. */
  clients: number;
  /** Restrict to these groups (FILTER/K keys). */
  groups?: GroupKey[];
  pointTimeoutS: number;
  loadTimeoutS: number;
  /** Per participant: a settings file to use instead of participants/<name>/settings.json. */
  settingsFiles?: Record<string, string>;
  /** Measure again even where a complete result exists (default: resume / skip). */
  fresh?: boolean;
  /** Cold protocol (docs/method.md §5): evict the engine's data files from the page cache before every
   * group. */
  cold?: boolean;
  /** What the features measure after each participant's groups (src/features.ts runSteps:
   * answer quality on a labelled dataset, the concurrency sweep, the open loop), in order. */
  steps?: RunStep[];
  /** Keep each participant's engine data (<out>/.engines/...) after its result is complete. */
  keepEngines?: boolean;
  /** Per server participant: the URL of a server the user runs (--connect); none is started. */
  connect?: Record<string, string>;
  /** Per server participant: the 127.0.0.1 port to start its server on (--server-port). */
  serverPorts?: Record<string, number>;
  /** Warm protocol: queries every point answers (a seeded subset), or 'all' (default 1,000). */
  querySet?: number | 'all';
  /** Warm protocol: passes per point (default DEFAULT_TIMING). */
  timing?: Timing;
  /** Threads of the throughput view for synchronous in-process engines (default: the cores). */
  threads?: number;
  /** Index builds measured (--builds, default 1): later builds time the calibrated knobs. */
  builds?: number;
  /** Cores other processes may use before passes count as busy (default BUSY_OTHER_CORES). */
  busyCores?: number;
  /** A round whose host-speed probe took more than this many times the run's fastest is
   * retaken (default 0: no probes; src/runner/host-speed.ts says why). */
  hostSlow?: number;
  /** Warm protocol: time every participant's points in the same rounds, all engines loaded at
   * once (default true; false: one participant after another, one engine loaded at a time). */
  interleave?: boolean;
  /** Bytes of memory (page cache included) each engine may use (--memory-limit): its processes
   * run in a memory cgroup of their own (src/runner/memory-budget.ts). */
  memoryLimit?: number;
  /** --tier: the named tier these options make up, recorded with each result (run.tier). */
  tier?: string;
  /** The run's time bound, s (--max-time): curve points no cell reads are left out of the timing
   * to fit it (src/runner/thin-to-fit.ts). */
  maxTimeS?: number;
}

/** Threads of the throughput view for synchronous in-process engines. */
export function threadsOf(opts: Pick<RunOptions, 'threads'>): number {
  return opts.threads ?? availableParallelism();
}

/** Why a participant's throughput view gets one search thread whatever --threads says, or null.
 * A participant whose search threads each reopen a copy of its work directory (reopenInThreads
 * 'copy') would, under the cold protocol or a memory budget, search copies just written (hot in
 * the page cache, not the evicted files) and count them in its budget: gigabytes per thread on
 * the disk tier. */
export function oneThreadBecause(p: { adapter: { reopenInThreads?: boolean | 'copy' } }, opts: Pick<RunOptions, 'cold' | 'memoryLimit'>): string | null {
  if (p.adapter.reopenInThreads !== 'copy') return null;
  if (opts.cold) return 'under the cold protocol its search threads would read copies of its files just written, not the evicted files';
  if (opts.memoryLimit !== undefined) return 'under a memory budget each search thread would hold a copy of its files';
  return null;
}

/** Threads of this participant's throughput view (threadsOf, or 1: oneThreadBecause). */
export function threadsFor(p: { adapter: { reopenInThreads?: boolean | 'copy' } }, opts: Pick<RunOptions, 'threads' | 'cold' | 'memoryLimit'>): number {
  return oneThreadBecause(p, opts) === null ? threadsOf(opts) : 1;
}
