// Messages of the load generator: between the runner and a participant host (they join
// src/runner/protocol.ts's unions through FeatureMessages, below), and between the host and its client worker threads.
import type { FilterExpr, Knobs, LoadClientSpec } from '../contracts.ts';

/** How the host drives the engine: in its own event loop (in-process engines), or from worker
 * threads that each build the participant's load client (network engines, loadClient()). */
export type LoadMode = 'in-process' | 'workers' | 'host-thread';

export type LoadgenHostRequest =
  /** Starts the client workers when the session has a loadClient (else nothing to start). */
  | { type: 'loadgen-init'; workers: number; maxInFlight: number }
  | { type: 'loadgen-closed'; knobs: Knobs; k: number; queries: number[]; filters: (FilterExpr | null)[]; inFlight: number; timeoutMs: number }
  | {
      type: 'loadgen-open';
      knobs: Knobs;
      k: number;
      queries: number[];
      filters: (FilterExpr | null)[];
      /** Intended send time of each request, ms after the start. */
      intendedMs: Float64Array;
      timeoutMs: number;
    }
  /** The in-process ceiling: the host's own loop against a null engine that answers at once. */
  | { type: 'loadgen-ceiling'; requests: number; inFlight: number; k: number }
  /** Client hosts elsewhere (remote.ts) send the point's requests: the engine only takes its knobs. */
  | { type: 'loadgen-knobs'; knobs: Knobs }
  | { type: 'loadgen-stop' };

export interface LoadReply {
  /** Per request of the point, in request order. */
  latenciesMs: Float64Array;
  sendLagMs: Float64Array;
  /** driver.ts OK / FAILED / TIMED_OUT */
  status: Uint8Array;
  ids: Int32Array;
  offsets: Int32Array;
  errors: number;
  timeouts: number;
  firstError: string | null;
  /** The workers' HDR histograms of successful latencies, added up and encoded. */
  histogram: string;
  wallS: number;
}

export type LoadgenHostReply =
  /** `protocol`: what the load client module speaks (its `protocol` export: http, or a
   * protocol a participant declares the ceiling of), naming the null ceiling its points are
   * held against; null in process. */
  | {
      type: 'loadgen-ready';
      mode: LoadMode;
      workers: number;
      client: string;
      concurrent: boolean;
      protocol: string | null;
      /** workers: the load client, for client hosts to build (its options may hold credentials:
       * they go to the client hosts only, never to a file or a log). */
      spec?: LoadClientSpec;
    }
  | { type: 'loadgen-result'; reply: LoadReply }
  | { type: 'loadgen-knobs-set' }
  | { type: 'loadgen-stopped' };

// ---- host <-> worker ----

export type WorkerRequest =
  | { type: 'init'; spec: LoadClientSpec; maxInFlight: number; queries: Float32Array; d: number }
  | { type: 'knobs'; knobs: Knobs }
  | { type: 'closed'; k: number; queries: Int32Array; filters: (FilterExpr | null)[]; inFlight: number; timeoutMs: number; counter: SharedArrayBuffer }
  | {
      type: 'open';
      k: number;
      queries: Int32Array;
      filters: (FilterExpr | null)[];
      indices: Int32Array;
      intendedMs: Float64Array;
      startAtMs: number;
      maxInFlight: number;
      timeoutMs: number;
    }
  | { type: 'close' };

export type WorkerReply = { ok: true; result?: import('./driver.ts').DriveResult } | { ok: false; error: string };

declare module '../runner/protocol.ts' {
  interface FeatureMessages {
    loadgen: { request: LoadgenHostRequest; reply: LoadgenHostReply };
  }
}
