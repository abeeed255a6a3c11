// The participant contract and the shared value types. docs/contracts.md describes the same
// things in prose; the two change together.
import type { ZodType } from 'zod';

/** ip: inner product (higher is closer); cosine: vectors are unit length after prepare, so
 * cosine equals ip and engines are configured for ip; l2: Euclidean. */
export type Metric = 'ip' | 'cosine' | 'l2';

/** The integer attribute columns every prepared row carries (docs/method.md §1). `label` and
 * `measure` are real attributes a dataset may carry (a class, a section; a size): 0 where it has
 * none. */
export const ATTRIBUTES = ['cat10', 'cat100', 'cat1000', 'num', 'cluster', 'lang', 'region', 'tenant', 'label', 'measure'] as const;
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
/** The search knobs a participant takes: each name with the schema of its values (the SDK's
 * intKnob, choiceKnob, knobWith). The harness checks ladders and every setKnobs against it. */
export type KnobSpec = Readonly<Record<string, ZodType<number | string>>>;

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
  /** Where the participant's server listens, for participants with a `server` lifecycle (the
   * runner started it before open and stops it after close). */
  server?: ServerConnection;
}

// ---- Server lifecycle (participants whose engine is a server: a database, a key-value store, an HTTP service) ----

/** How to reach a started server. Plain data: it crosses from the runner to the host process. */
export interface ServerConnection {
  host: string;
  port: number;
  /** The server's data directory (owned by the run). */
  dataDir: string;
  /** Anything else open() needs (a user, a database name, a socket path). */
  params: Record<string, string | number>;
}

export interface ServerStartContext<S> {
  dataset: DatasetInfo;
  settings: S;
  /** A directory owned by the run for the server's data: empty on a fresh start, holding the
   * previous start's data when `existing` (cold start). */
  dataDir: string;
  /** true: start on the data a previous start left in dataDir (cold start); do not initialise. */
  existing: boolean;
  /** A free 127.0.0.1 port. Servers listen on 127.0.0.1 only. */
  port: number;
  /** The server's stdout and stderr go here. */
  logFile: string;
  log: (message: string) => void;
}

/** A running server, started by the runner (the parent process: a killed participant host
 * never orphans it). src/runner/server.ts has the process helpers (spawnServer). */
export interface ServerHandle {
  /** PID of the server process: stop and memory sampling use it (its children included). NaN
   * for a server the user runs (--connect): nothing of it is sampled or stopped. */
  readonly pid: number;
  readonly connection: ServerConnection;
  /** False once the process has exited. */
  readonly alive: boolean;
  /** Why it exited, for the message when it died mid-run; null while alive. */
  readonly exitReason: string | null;
  /** One real request (not just an open port): true when the server answers it. */
  healthy(): Promise<boolean>;
  /** Stops it by PID with a clean shutdown that keeps its data (a cold start reopens it). */
  stop(): Promise<void>;
  /** Resolves when the process has exited (asked to or not): the runner detects a death. */
  waitExit(): Promise<void>;
}

export interface ServerLifecycle<S> {
  /** The idempotent provisioning script, relative to the participant directory: installs the
   * server (apt packages, source builds into a cache directory reused when present). */
  provision: string;
  /** Spawns the server on ctx.port with ctx.dataDir; the runner then polls healthy(). Throws a
   * UserError naming the provisioning script when the server is not installed. */
  start(ctx: ServerStartContext<S>): Promise<ServerHandle>;
  /** The system user the server runs as when it is not this process's (PostgreSQL started by
   * root runs as postgres), or null. The runner then gives it a data directory that user can
   * reach (src/runner/server-data.ts), whatever --out's ancestors allow. */
  runsAs?(): { name: string; uid: number; gid: number } | null;
  /** Present when the participant can use a server the user runs, given by URL
   * (`vecbench run --connect NAME=URL`): the runner then neither starts nor stops one. */
  remote?: RemoteServer;
}

/** A server the user runs, reached by URL (docs/servers.md, "Server lifecycle"). */
export interface RemoteServer {
  /** URL schemes taken, e.g. ['postgres', 'postgresql']; the first is shown in messages. */
  schemes: readonly string[];
  /** The port when the URL names none. */
  defaultPort: number;
  /** The connection open() receives for the URL: host, port, and in params whatever logging in
   * needs (user, password, database...). dataDir is '' (the data is the server's own). */
  connection(url: URL): ServerConnection;
  /** One real request on that connection (log in, then SELECT 1 / PING / heartbeat); throws
   * with the engine's reason when it fails (a wrong password, a missing database). */
  check(connection: ServerConnection): Promise<void>;
}

// ---- Load generator clients (network engines driven from worker threads) ----

/** A lightweight description of a client that each load-generator worker thread instantiates
 * on its own. Plain data: it crosses into worker threads by structured clone. */
export interface LoadClientSpec {
  /** Absolute path (or file: URL) of an ES module exporting `createLoadClient` (CreateLoadClient). */
  module: string;
  /** Structured-cloneable options for it: where the server is, the statement or collection to
   * use, the dimension... never a live object. */
  options: unknown;
}

/** A client of one worker thread. Its search is timed by the load generator; it should parse only
 * what the ids need (e.g. ids from raw bytes rather than a whole JSON body). */
export interface LoadClient {
  /** Applies a ladder point's knobs (e.g. SET on every pooled connection), as the session does. */
  setKnobs(knobs: Knobs): Promise<void>;
  /** Optional: encodes a request once, before the timed loop (e.g. its JSON body: printing 128
   * floats costs ~100 us, more than the request itself), as a reference tool sends ready bodies.
   * The worker prepares each distinct query of a point and hands the result to search. */
  prepare?(request: SearchRequest): unknown;
  /** Row ids, best first, like EngineSession.search. The vector may be a view into shared
   * memory: copy it if the client needs it to start at offset 0. `prepared`: what prepare gave. */
  search(request: SearchRequest, prepared?: unknown): Promise<ArrayLike<number>>;
  close(): Promise<void>;
}

/** `maxInFlight`: the most requests this worker's client will have outstanding (size pools to it). */
export type CreateLoadClient = (options: unknown, ctx: { maxInFlight: number }) => Promise<LoadClient>;

/** How a request was answered (EngineSession.strategy). */
export interface Strategy {
  label: string;
  /** True: read from the engine's own plan; false: declared by the adapter. */
  observed: boolean;
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
  /** The search strategy that answers this request at the knobs set, as a short label
   * (`graph walk + filter`, `iterative scan`, `exact scan of matches`, `pre-filter`,
   * `post-filter`...): read from `plan` (explain's text, null without explain) where the plan
   * shows it (`observed: true`), otherwise what the adapter chooses or the engine's docs state
   * (`observed: false`). Asked after every point, outside its timed passes. */
  strategy?(request: SearchRequest, plan: string | null): Strategy;
  /** Bytes the engine's data occupies on disk (or in memory for in-memory engines). */
  diskBytes?(): Promise<number>;
  /** The path to the engine without the engine: searches that cross what lies between the
   * participant host and the engine (a host process in another language, its protocol) and are
   * answered at once. The harness-overhead null pass runs through it, so that crossing counts as
   * the harness's cost. Absent: the null engine answers inside the participant host. */
  nullPath?(): Pick<EngineSession, 'setKnobs' | 'search' | 'timedPass'>;
  /** The timed loop run next to the engine, in its own process (a host in another language) or
   * in its native code (an addon's own loop): the requests with `clients` in flight, each search
   * timed there, so the crossing into that process or that code is paid once per pass, not per
   * query. The participant host uses it in place of its own loop when present
   * (docs/protocol.md, "The participant protocol"). */
  timedPass?(requests: SearchRequest[], clients: number): Promise<TimedPass>;

  // Writes, for live churn (docs/method.md §7).
  insert?(batch: RowBatch): Promise<void>;
  upsert?(batch: RowBatch): Promise<void>;
  delete?(ids: Int32Array): Promise<void>;
  /** Waits for the engine's flush / compaction / optimize, where it has one. */
  compact?(): Promise<void>;

  /** For the load generator (docs/loadgen.md, "Load generator"): how a worker thread builds a
   * client of its own for this engine (a network engine: the module connects to the server the
   * session talks to). Called after setKnobs; absent: the engine is driven inside its host. */
  loadClient?(): LoadClientSpec;

  // Keyword search, for hybrid (docs/method.md §8).
  keywordSearch?(text: string, k: number, filter: FilterExpr | null): Promise<ArrayLike<number>>;
  /** Dense and keyword arms fused inside the engine in one call (e.g. its RRF), best first. */
  hybridSearch?(request: SearchRequest, text: string): Promise<ArrayLike<number>>;

  close(): Promise<void>;
}

/** What a timed loop gives back: each request's ids (empty on error), its latency, its error,
 * and the loop's wall time. */
export interface TimedPass {
  results: ArrayLike<number>[];
  latenciesMs: Float64Array;
  errors: (string | null)[];
  wallS: number;
}

/** The default export of participants/<name>/adapter.ts. */
export interface Participant<S = unknown> {
  /** Human name of the engine, e.g. its npm package's name. */
  engine: string;
  /** Version of the engine actually loaded (read from the package or server, never typed in). */
  engineVersion(): Promise<string>;
  /** Validates settings.json's `index` object; error paths name the bad field. */
  settingsSchema: ZodType<S>;
  /** The search knobs it takes (a function when they depend on the index settings): ladders
   * and setKnobs are checked against them before the adapter sees any (src/adapters/knobs.ts). */
  knobs: KnobSpec | ((settings: S) => KnobSpec);
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
  /** Opens the data a previous session left (in ctx.workDir, or on ctx.server) after close(),
   * without ingest: the cold-start measurement uses it. Absent: cold start is not measured. */
  reopen?(ctx: OpenContext<S>): Promise<EngineSession>;
  /** reopen() may run in worker threads while the session is open: the data it reads is not
   * written by searches; the throughput view then searches with that many threads, each with
   * its own reopened copy (docs/contracts.md, "Threads for synchronous engines"). Only for
   * engines with concurrentSearch false; the host reopens after buildIndex and never after a
   * write. 'copy': the open data cannot be opened twice (PGlite), so each thread reopens its
   * own copy of workDir, made after buildIndex and removed when the threads close. */
  reopenInThreads?: boolean | 'copy';
  /** For an engine that spreads one search over threads of its own (neither concurrentSearch nor
   * reopenInThreads): how, e.g. "each search on 2 threads (native addon)", or null when it does
   * not in this installation. Results and tables say it beside "1 at a time". */
  searchParallelism?(): string | null;
  /** Present when the engine is a server the runner must start and stop. */
  server?: ServerLifecycle<S>;
  /** Optional: why these settings cannot run on this dataset (e.g. PQ sub-vectors that do not
   * divide its dimension), as one line naming the setting and the fix; null when they can. The
   * runner asks before any work, so a mismatch costs nothing. */
  checkDataset?(settings: S, dataset: DatasetInfo): string | null;
}
