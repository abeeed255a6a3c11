// Messages between the runner and the participant host (a child process per participant).
// The host times every query next to the engine, so IPC costs never enter a latency.
import type { FilterExpr, Knobs, ServerConnection, Strategy } from '../contracts.ts';
import type { PointReply } from './point-reply.ts';

/** The features' messages (feature.ts): each feature adds `name: { request; reply }` from its
 * own protocol file, `declare module '../runner/protocol.ts' { interface FeatureMessages {...} }`,
 * so these unions name no feature. */
/** @public (merged into, never imported) */
// biome-ignore lint/suspicious/noEmptyInterface: filled by the features' declarations
export interface FeatureMessages {}
export type FeatureRequest = FeatureMessages[keyof FeatureMessages]['request'];
export type FeatureReply = FeatureMessages[keyof FeatureMessages]['reply'];

export type HostRequest =
  | {
      type: 'open';
      participant: string;
      settingsPath?: string;
      dataDir: string;
      dataset: string;
      workDir: string;
      maxConcurrency: number;
      /** The participant's server, started by the runner. */
      server?: ServerConnection;
      /** Open the data a previous session left (Participant.reopen), for a cold start. */
      reopen?: boolean;
    }
  /** Loads the dataset only, so a later open's timing does not include it (cold start). */
  | { type: 'dataset'; participant: string; settingsPath?: string; dataDir: string; dataset: string }
  /** Between ingest and index build: a few queries to see whether the engine answers. */
  | { type: 'load'; batchSize: number; probe?: { knobs: Knobs; k: number; queries: number[] } }
  /** One pass over `queries`. clients: requests in flight (engines that can overlap searches);
   * threads: worker threads each with the index reopened read-only (synchronous in-process
   * engines that support it); ids: false for a timed pass whose answers only need checking
   * against an earlier pass (the digests). */
  | { type: 'point'; knobs: Knobs; k: number; queries: number[]; filters: (FilterExpr | null)[]; clients: number; threads?: number; ids?: boolean }
  | { type: 'explain'; knobs: Knobs; query: number; k: number; filter: FilterExpr | null }
  /** A point's pass against a null engine (answers at once with k fixed ids): the harness's
   * own cost per query (harness-overhead.ts). Needs the dataset ('dataset' or 'open'). */
  | { type: 'null-pass'; k: number; queries: number[]; clients: number }
  | { type: 'disk' }
  | { type: 'close' }
  | FeatureRequest;

export type HostReply =
  /** openS: seconds the adapter's open (or reopen) took. */
  | { type: 'opened'; engineVersion: string; openS?: number }
  | { type: 'dataset' }
  /** probe: the between-load queries' answers, or the error that stopped them. */
  | { type: 'loaded'; ingestS: number; indexS: number; rows: number; probe?: { reply: PointReply | null; error: string | null } }
  | { type: 'point'; reply: PointReply }
  | { type: 'null-pass'; reply: PointReply }
  | { type: 'explained'; plan: string | null; planError: string | null; strategy: Strategy | null }
  | { type: 'disk'; bytes: number | null }
  | { type: 'closed' }
  | FeatureReply;

export type HostMessage =
  | { id: number; ok: true; reply: HostReply }
  | { id: number; ok: false; error: string; userError: boolean }
  | { id: -1; progress: { what: string; done: number; total: number } };
