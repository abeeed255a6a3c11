// Messages between the runner and the participant host (a child process per participant).
// The host times every query next to the engine, so IPC costs never enter a latency.
import type { FilterExpr, Knobs } from '../contracts.ts';
import type { QualityHostReply, QualityHostRequest } from '../hybrid/protocol.ts';

export type HostRequest =
  | { type: 'open'; participant: string; settingsPath?: string; dataDir: string; dataset: string; workDir: string; maxConcurrency: number }
  | { type: 'load'; batchSize: number }
  | { type: 'point'; knobs: Knobs; k: number; queries: number[]; filters: (FilterExpr | null)[]; clients: number }
  | { type: 'explain'; knobs: Knobs; query: number; k: number; filter: FilterExpr | null }
  | { type: 'disk' }
  | QualityHostRequest
  | { type: 'close' };

export interface PointReply {
  /** Concatenated ids of every query; query i owns ids[offsets[i]..offsets[i+1]). */
  ids: Int32Array;
  offsets: Int32Array;
  latenciesMs: Float64Array;
  wallS: number;
  /** Per query: the engine threw (message) or null. */
  errors: (string | null)[];
}

export type HostReply =
  | { type: 'opened'; engineVersion: string }
  | { type: 'loaded'; ingestS: number; indexS: number; rows: number }
  | { type: 'point'; reply: PointReply }
  | { type: 'explained'; plan: string | null; planError: string | null }
  | { type: 'disk'; bytes: number | null }
  | QualityHostReply
  | { type: 'closed' };

export type HostMessage =
  | { id: number; ok: true; reply: HostReply }
  | { id: number; ok: false; error: string; userError: boolean }
  | { id: -1; progress: { what: string; done: number; total: number } };
