// Messages of the churn runbooks between the runner and a participant host (they join
// src/runner/protocol.ts's unions through FeatureMessages, below). The freshness and mixed routines run inside the host, so
// the write-to-visible and read latencies are timed beside the engine, never across IPC.
import type { FilterExpr, Knobs, RowAttributes } from '../contracts.ts';
import type { PointReply } from '../runner/point-reply.ts';

export type WriteOp = 'insert' | 'upsert' | 'delete';

/** The write capabilities of an open session (absent methods = unsupported). */
export interface ChurnCaps {
  insert: boolean;
  upsert: boolean;
  delete: boolean;
  compact: boolean;
  disk: boolean;
}

/** Rows sent to the host. Without vectors the ids are base rows the host takes from its own
 * copy of the dataset (or, for a delete, just ids). */
export interface WireRows {
  ids: Int32Array;
  vectors?: Float32Array;
  attrs?: RowAttributes;
}

/** The mixed writer's ops in issue order: op i writes row i of ids / vectors / attrs
 * (vectors and attrs are ignored for a delete). */
export interface WirePlan {
  /** 0 insert, 1 upsert, 2 delete */
  ops: Uint8Array;
  ids: Int32Array;
  vectors: Float32Array;
  attrs: RowAttributes;
}

export type ChurnHostRequest =
  | { type: 'churn-caps' }
  | { type: 'churn-load'; from: number; to: number; batchSize: number }
  | { type: 'churn-write'; op: WriteOp; rows: WireRows; batchSize: number }
  | { type: 'churn-compact' }
  | { type: 'churn-disk' }
  | { type: 'churn-search'; knobs: Knobs; k: number; queries: number[]; filters: (FilterExpr | null)[]; clients: number }
  | {
      type: 'churn-freshness';
      knobs: Knobs;
      rows: Required<WireRows>;
      k: number;
      timeoutMs: number;
      giveUpAfter: number;
      /** Ids deleted and not live: any search returning one of them is a leak. */
      tombstones: Int32Array;
    }
  | {
      type: 'churn-mixed';
      knobs: Knobs;
      k: number;
      /** Query indices the readers cycle through, with their filters. */
      queries: number[];
      filters: (FilterExpr | null)[];
      readers: number;
      durationS: number;
      rate: number;
      plan: WirePlan;
    };

export interface FreshnessReply {
  /** Writes issued (fewer than asked when the routine gave up). */
  applied: number;
  /** Per issued write: insert call to resolve, and resolve to the end of the first search that
   * returned the id (NaN: never within the timeout, or the write failed). */
  ackMs: Float64Array;
  visibleMs: Float64Array;
  /** Searches issued per write. */
  polls: Int32Array;
  errors: (string | null)[];
  leaks: { id: number; write: number }[];
  gaveUp: boolean;
}

export interface MixedReply {
  /** Wall time of the whole routine. */
  wallS: number;
  /** Write ops issued, in plan order; times are ms from the start. */
  issued: number;
  writeStartMs: Float64Array;
  writeAckMs: Float64Array;
  writeErrors: (string | null)[];
  readersUsed: number;
  reads: {
    /** Position in the request's query list. */
    pos: Int32Array;
    startMs: Float64Array;
    endMs: Float64Array;
    /** Write ops acknowledged when the read started, and issued when it ended. */
    acked: Int32Array;
    issuedAtEnd: Int32Array;
    ids: Int32Array;
    offsets: Int32Array;
    failed: Uint8Array;
  };
  firstReadError: string | null;
}

export type ChurnHostReply =
  | { type: 'churn-caps'; caps: ChurnCaps }
  | { type: 'churn-loaded'; ingestS: number; indexS: number; rows: number }
  | { type: 'churn-written'; durationS: number; batches: number }
  | { type: 'churn-compacted'; durationS: number | null }
  | { type: 'churn-disk'; bytes: number | null }
  | { type: 'churn-searched'; reply: PointReply }
  | { type: 'churn-freshness'; reply: FreshnessReply }
  | { type: 'churn-mixed'; reply: MixedReply };

declare module '../runner/protocol.ts' {
  interface FeatureMessages {
    churn: { request: ChurnHostRequest; reply: ChurnHostReply };
  }
}
