// What the load measurement is given: the engine it drives (the runner's engine handle, or a
// test's stand-in) and the options of `vecbench run --concurrency/--open-loop`. Apart from
// sweep.ts so the point measurer (measurer.ts) and the runner's options read them without
// importing the sweep.
import type { HostReply, HostRequest } from '../runner/protocol.ts';

/** What the sweep needs of the runner's engine handle (src/runner/run.ts EngineHandle). */
export interface LoadEngine {
  request<T extends HostReply['type']>(req: HostRequest, timeoutS: number): Promise<Extract<HostReply, { type: T }>>;
  /** The engine's process (its server, or the host of an in-process engine) and the host's. */
  loadPids(): { engine: number | undefined; engineTree: boolean; host: number | undefined };
}

export interface LoadOptions {
  /** Closed-loop in-flight levels, e.g. [1, 2, 4, ..., 64]. */
  concurrency?: number[];
  /** Open-loop offered rates (requests/s), or 'auto': a ramp over the closed-loop peak. */
  openLoop?: number[] | 'auto';
  /** The open loop's latency budget: the highest rate whose p99 stays within it is reported. */
  budgetMs?: number;
  /** Client worker threads for network engines (default: defaultWorkers()), per client host
   * with clientHosts (default: each host's own default). */
  workers?: number;
  /** HOST:PORT of `vecbench load-worker`s that run the closed-loop sweep's clients (remote.ts). */
  clientHosts?: string[];
  /** Requests per closed-loop point (default 1000). */
  requestsPerPoint?: number;
  /** Seconds per open-loop step (default 3). */
  openStepS?: number;
  /** A request slower than this counts as a time-out (default 10 s). */
  requestTimeoutMs?: number;
  /** The knob setting: the first ladder point reaching this recall (default 0.95). */
  recallTarget?: number;
  /** Time limit of one point (seconds). */
  pointTimeoutS: number;
}
