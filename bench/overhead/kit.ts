// What bench/harness-overhead.ts gives each engine's module in bench/overhead/: the sides it
// can set up (a participant through vecbench's host, or a plain loop in a process of its own
// over the engine's native interface) and the shared files. An engine's module sets up its
// sides and names its pairs: [the side measured, the native loop it is measured against].
import { spawn } from 'node:child_process';
import type { Dataset } from '../../src/datasets/layout.ts';

/** One side's passes at one knob value. */
export interface Pass {
  qps: number[];
  cpuQps: number[];
  meanMs: number[];
  recall: number;
  /** A side timed query by query in turn with a plain loop in the same process: per pass, the
   * plain call's time over the side's (the side's QPS relative to the loop's). */
  interleavedRatio?: number[];
}

export interface Side {
  name: string;
  /** `n` passes at this knob value (every side of an engine reads the same value). */
  run(ef: number, n: number): Promise<Pass>;
  /** Null-engine overhead per query (ms), and the host thread's CPU ms per query over the
   * whole request (IPC and packing too); null when the host has no 'null-pass'. */
  overhead?(): Promise<{ wallMs: number; cpuMs: number } | null>;
  close(): Promise<void>;
}

interface HostSideOptions {
  /** The participant's knob that the bench's values set (its ef or the like); null for an
   * engine without one (a scan), whose sides then repeat the same point at every value. */
  knob: string | null;
  /** The work directory of a side already built, whose files this participant reads (the same
   * index searched through another binding); no load then. */
  reopen?: string;
  /** Whose CPU time the side's CPU QPS counts: 'thread' (default), the host's main thread,
   * where the engine searches; 'process', the whole host process, for an engine that searches
   * on threads of its own runtime; 'none' for an engine in a host process of its own language,
   * whose CPU the Node host does not hold (its CPU figures read n/a). */
  cpu?: 'thread' | 'process' | 'none';
  /** Another vecbench checkout whose host runs this side (--baseline). */
  root?: string;
}

export interface BenchContext {
  ds: Dataset;
  /** Queries per pass (the first nq of the set). */
  nq: number;
  k: number;
  /** Where the bench keeps its files: base.f32, queries.f32 (nq x d) and gt.i32 (nq x k, the
   * exact ids), raw little-endian, which the native loops read. */
  tmp: string;
  /** bench/native: the loops' sources. */
  native: string;
  /** VECBENCH_CACHE (default /var/cache/vecbench): where setup put virtual environments and jars. */
  cache: string;
  /** --baseline: another checkout's host as one more side, where an engine offers it. */
  baseline?: string;
  /** A participant through vecbench's host, built (or reopened) and ready. */
  hostSide(name: string, participant: string, o: HostSideOptions): Promise<Side & { workDir: string }>;
  /** A plain loop in a process of its own: one stdin line "KNOB PASSES" per measurement, one
   * JSON line back (bench/native/loop_common.h); its first line reports its build. */
  loopSide(name: string, command: string, args: string[], adapter?: AdapterInLoop): Promise<Side>;
  /** A prerequisite that is missing: one line naming it and the fix, exit 2. */
  fail(message: string): never;
  /** The interpreter of the virtual environment `name` that `provision` (run by setup) makes
   * under the cache; a missing one fails naming both. */
  venvPython(name: string, provision: string): string;
}

/** A JavaScript engine's participant timed inside its own loop's process (bench/native/loop-common.ts,
 * adapterMode) as one more side: the two modes share the heap and compiled code, so their ratio
 * is the adapter's own path, which a ratio between two processes cannot isolate. */
interface AdapterInLoop {
  /** The side's name. */
  side: string;
  participant: string;
  /** A copy of the participant's files for it to reopen (its own: the loop's engine holds its). */
  workDir: string;
  /** The participant's knob the bench's values set, or null (a scan). */
  knob: string | null;
}

/** What one engine adds to the bench. */
export interface OverheadEngine {
  /** Sets up the engine's sides through the context and returns its pairs, the participant's
   * side first and its native loop second, in the order the report prints them. */
  setup(ctx: BenchContext): Promise<[string, string][]>;
}

/** Runs a compiler; a failure is one line naming what is missing, and exit 2. */
export function compile(what: string, command: string, args: string[]): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (b: Buffer) => {
      err += b.toString();
    });
    child.on('error', (e) => {
      err += String(e);
    });
    child.on('close', (code) => {
      if (code === 0) return resolve();
      console.error(`bench:overhead: ${what} did not compile (${command}): ${err.trim().split('\n')[0]}`);
      process.exit(2);
    });
  });
}
