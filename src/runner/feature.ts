// The seam features plug into. A feature (churn, answer quality, the load generator) adds to
// the runner what it needs, and the runner imports none of them:
// - host messages: a HostFeature handles its own message types inside the participant host,
//   which routes by type (host.ts); its request and reply types join the host protocol through
//   FeatureMessages (protocol.ts, by declaration merging), so the runner's unions name no feature;
// - run steps: a RunStep measures after a participant's groups (quality, the concurrency sweep),
//   given to the runner by the command that runs it (RunOptions.steps).
// The list of features is src/features.ts, above the runner.
import type { EngineSession } from '../contracts.ts';
import type { Dataset } from '../datasets/layout.ts';
import type { ResultFile } from '../results/schema.ts';
import type { AskedGroup } from './points.ts';
import type { FeatureReply, FeatureRequest, HostReply, HostRequest } from './protocol.ts';
import type { HostClient, HostError } from './client.ts';
import type { LoadedParticipant } from './participants.ts';

/** What the host lends a feature's handler: the open session and dataset, and the means to say
 * a write is coming (the search threads' copies and the saved index go stale). */
export interface HostState {
  readonly session: EngineSession | null;
  readonly dataset: Dataset | null;
  /** The session's searches overlap (Participant.concurrentSearch). */
  readonly concurrent: boolean;
  progress(p: { what: string; done: number; total: number }): void;
  /** Called before a request that changes the index: closes the search threads, and a resumed
   * run no longer takes the work directory for what the session holds. */
  indexChanging(): Promise<void>;
}

export interface HostFeature {
  name: string;
  /** The message types it handles: no two features share one, nor with the host's own. */
  types: readonly string[];
  handle(state: HostState, req: FeatureRequest): Promise<FeatureReply>;
}

/** What a step may ask of the participant's engine (the runner's engine handle). */
interface StepEngine {
  request<T extends HostReply['type']>(req: HostRequest, timeoutS: number, onRetry?: (e: HostError) => void): Promise<Extract<HostReply, { type: T }>>;
  /** The engine's host, started again (and loaded) after a crash. */
  ready(why: string): Promise<HostClient>;
  /** The engine's process (its server, or the host of an in-process engine) and the host's. */
  loadPids(): { engine: number | undefined; engineTree: boolean; host: number | undefined };
}

interface StepContext {
  engine: StepEngine;
  p: LoadedParticipant;
  ds: Dataset;
  groups: AskedGroup[];
  /** The participant's result: the step writes its own section into it. */
  result: ResultFile;
  pointTimeoutS: number;
  /** Requests in flight of the throughput view (--clients). */
  clients: number;
  /** Writes the result atomically (after each unit of the step's work). */
  save(): void;
}

/** A measurement after a participant's groups. */
export interface RunStep {
  name: string;
  /** The step is asked and `result` (complete or resumed) lacks its section. */
  pending(result: ResultFile, ds: Dataset): boolean;
  /** Measures into ctx.result. A HostError that is not the user's is the engine failing: the
   * step records it in its section (`failed`) and returns; anything else stops the run. */
  run(ctx: StepContext): Promise<void>;
}

/** A HostFeature over one feature's own request union: `types` must name each of its
 * message types (a missing one does not compile). */
export function hostFeature<R extends FeatureRequest>(
  name: string,
  types: Record<R['type'], true>,
  handle: (state: HostState, req: R) => Promise<FeatureReply>,
): HostFeature {
  return { name, types: Object.keys(types), handle: (state, req) => handle(state, req as R) };
}
