// The participant contract and the shared value types. docs/contracts.md describes the same
// things in prose; the two change together.
import type { ZodType } from 'zod';

/** ip: inner product (higher is closer); cosine: vectors are unit length after prepare, so
 * cosine equals ip and engines are configured for ip; l2: Euclidean. */
export type Metric = 'ip' | 'cosine' | 'l2';

/** The integer attribute columns every prepared row carries (METHOD 1). */
export const ATTRIBUTES = ['cat10', 'cat100', 'cat1000', 'num', 'cluster', 'lang'] as const;
export type AttrName = (typeof ATTRIBUTES)[number];
export type RowAttributes = Record<AttrName, Int32Array>;

/** A filter in the small typed language every participant translates into its own dialect. */
export type FilterExpr =
  | { op: 'eq'; field: AttrName; value: number }
  /** gte <= value < lt */
  | { op: 'range'; field: AttrName; gte: number; lt: number }
  | { op: 'and'; args: FilterExpr[] };

/** A block of rows handed to an engine. ids are row ids (0..n-1 for the base set). */
export interface RowBatch {
  ids: Int32Array;
  /** ids.length x d, row-major */
  vectors: Float32Array;
  attrs: RowAttributes;
  /** Text of each row, when the dataset has it (hybrid search). */
  text?: string[];
}

export interface DatasetInfo {
  name: string;
  n: number;
  d: number;
  metric: Metric;
  hasText: boolean;
}

/** Knob values of one ladder point, e.g. { ef: 64 } or { nprobes: 20, refine: 2 }. */
export type Knobs = Record<string, number | string>;

export interface SearchRequest {
  vector: Float32Array;
  k: number;
  filter: FilterExpr | null;
}

export interface OpenContext<S> {
  dataset: DatasetInfo;
  /** The participant's `index` settings, already validated by its settingsSchema. */
  settings: S;
  /** A directory owned by this run for the engine's data; empty at open. */
  workDir: string;
  /** The most concurrent searches the runner will issue (size pools to it). */
  maxConcurrency: number;
  log: (message: string) => void;
}

/** One loaded engine. Optional members are capabilities: absent means unsupported. */
export interface EngineSession {
  /** Called repeatedly with consecutive batches of base rows (timed as ingest). */
  ingest(batch: RowBatch): Promise<void>;
  /** Builds the index after ingest (timed as index build). May be a no-op. */
  buildIndex(): Promise<void>;
  /** Applies one ladder point's knobs before its queries run. */
  setKnobs(knobs: Knobs): Promise<void>;
  /** Returns row ids, best first. Must never return ids that violate the filter. */
  search(request: SearchRequest): Promise<ArrayLike<number>>;
  /** The plan the engine will use for this request, recorded per group. */
  explain?(request: SearchRequest): Promise<string>;
  /** Throws when the plan text contradicts what the settings promise (e.g. a seq scan). */
  checkPlan?(plan: string, request: SearchRequest): void;
  /** Bytes the engine's data occupies on disk (or in memory for in-memory engines). */
  diskBytes?(): Promise<number>;

  // Writes, for live churn (METHOD 7).
  insert?(batch: RowBatch): Promise<void>;
  upsert?(batch: RowBatch): Promise<void>;
  delete?(ids: Int32Array): Promise<void>;
  /** Waits for the engine's flush / compaction / optimize, where it has one. */
  compact?(): Promise<void>;

  // Keyword search, for hybrid (METHOD 8).
  keywordSearch?(text: string, k: number, filter: FilterExpr | null): Promise<ArrayLike<number>>;
  /** Dense and keyword arms fused inside the engine in one call (e.g. its RRF), best first. */
  hybridSearch?(request: SearchRequest, text: string): Promise<ArrayLike<number>>;

  close(): Promise<void>;
}

/** The default export of participants/<name>/adapter.ts. */
export interface Participant<S = unknown> {
  /** Human name of the engine, e.g. "hnswlib-node". */
  engine: string;
  /** Version of the engine actually loaded (read from the package or server, never typed in). */
  engineVersion(): Promise<string>;
  /** Validates settings.json's `index` object; error paths name the bad field. */
  settingsSchema: ZodType<S>;
  /** Which filter fields and operators it can apply; null: no filters at all. */
  filters: { fields: readonly AttrName[]; ops: readonly FilterExpr['op'][] } | null;
  /** How the engine applies filters, for the report (e.g. "during graph walk"). */
  filterStrategy: string;
  /** Whether searches can overlap: false means the runner issues one at a time. */
  concurrentSearch: boolean;
  /** With keywordSearch: how it ranks, said plainly (e.g. "BM25 (Tantivy)", "ts_rank: not
   * BM25, no IDF"). Shown beside the keyword arm's figures. */
  keywordScoring?: string;
  /** With hybridSearch: how the engine fuses (e.g. "RRF, k = 60"). */
  fusionMethod?: string;
  open(ctx: OpenContext<S>): Promise<EngineSession>;
}
