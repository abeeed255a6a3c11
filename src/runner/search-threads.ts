// Search threads for synchronous in-process engines (Participant.reopenInThreads): T worker
// threads inside the participant host, each with its own copy of the index reopened from the
// work directory the host's session saved, answer one pass's queries together, so such an
// engine gets every core a user would give it, as servers get requests in flight.
//
// The query vectors cross once, in shared memory: the threads need nothing else of the dataset
// (reopen reads the index, never the prepared rows), so no thread holds a dataset copy.
//
// An engine whose open data directory cannot be opened a second time (PGlite) declares
// reopenInThreads 'copy': each thread then reopens its own copy of the work directory, made
// here before the threads start and removed when they close.
import { cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { DatasetInfo, FilterExpr, Knobs } from '../contracts.ts';
import { loadDataset, type Dataset } from '../datasets/layout.ts';
import { besideSource, threadEntry } from '../util/code-paths.ts';
import { UserError } from '../util/errors.ts';

const ENTRY = threadEntry(besideSource(import.meta.url, 'search-thread.ts'), new URL('./search-thread-entry.mjs', import.meta.url));
/** Under the work directory: thread i's copy of it is <workDir>/search-threads/<i>. */
const THREAD_COPIES = 'search-threads';

/** The pass's control block (one SharedArrayBuffer): three int32 cells and the release time. */
export const CONTROL = { next: 0, arrived: 1, go: 2, releaseByte: 16, bytes: 24 } as const;
export const GO_WAIT = 0;
export const GO_RUN = 1;
export const GO_ABORT = 2;

export type ThreadRequest =
  | {
      type: 'open';
      index: number;
      participant: string;
      settingsPath?: string;
      dataset: DatasetInfo;
      workDir: string;
      maxConcurrency: number;
      queries: Float32Array;
    }
  | { type: 'knobs'; knobs: Knobs }
  /** queries: indices into the shared vectors; control: the pass's CONTROL block; latencies:
   * a shared Float64Array(queries.length) each thread writes its queries' latencies into. */
  | { type: 'pass'; k: number; queries: Int32Array; filters: (FilterExpr | null)[]; threads: number; control: SharedArrayBuffer; latencies: SharedArrayBuffer }
  | { type: 'close' };

/** One thread's share of a pass: the requests it answered (indices into the pass), their ids
 * packed (query j owns ids[offsets[j]..offsets[j+1])), the errors by request, and when it
 * finished (performance.timeOrigin + performance.now(), one clock for every thread). */
export interface PassResult {
  indices: Int32Array;
  ids: Int32Array;
  offsets: Int32Array;
  errors: [number, string][];
  endMs: number;
}

/** userError: the thread's error was a UserError (a bad knob), which stays one in the host. */
export type ThreadReply = { ok: true; result?: PassResult } | { ok: false; error: string; userError: boolean };

export interface SearchThreadsOptions {
  participant: string;
  settingsPath?: string;
  dataDir: string;
  dataset: string;
  /** The work directory the open session saved its index in (read, never written). */
  workDir: string;
  /** Each thread reopens its own copy of workDir (Participant.reopenInThreads 'copy'). */
  copyWorkDir?: boolean;
  threads: number;
  maxConcurrency: number;
  /** The dataset already in memory (the host's): its queries are shared, nothing is read. */
  loaded?: Pick<Dataset, 'name' | 'n' | 'd' | 'metric' | 'queries' | 'text'>;
}

interface ThreadsPass {
  results: ArrayLike<number>[];
  latenciesMs: Float64Array;
  errors: (string | null)[];
  wallS: number;
  /** Queries each thread answered. */
  perThread: number[];
}

/** Every call's outcome, then the first failure thrown: no thread is left busy with a call
 * nobody waits for (Promise.all would reject while others still run). */
async function all<T>(calls: Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(calls);
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}

class SearchThread {
  private readonly w: Worker;
  private pending: { resolve: (r: PassResult | undefined) => void; reject: (e: Error) => void } | null = null;
  /** Why the thread is gone, once it is. */
  dead: string | null = null;
  private readonly exited: Promise<void>;

  constructor(
    readonly index: number,
    private readonly onDeath: () => void,
  ) {
    this.w = new Worker(ENTRY);
    this.w.on('message', (m: ThreadReply) => {
      const p = this.pending;
      this.pending = null;
      if (!p) return;
      if (m.ok) p.resolve(m.result);
      else p.reject(m.userError ? new UserError(m.error) : new Error(m.error));
    });
    this.w.on('error', (e) => this.fail(`search thread ${index} failed: ${e.message}`));
    this.exited = new Promise((resolve) =>
      this.w.on('exit', (code) => {
        this.fail(`search thread ${index} exited (code ${code})`);
        resolve();
      }),
    );
  }

  private fail(why: string): void {
    if (this.dead) return;
    this.dead = why;
    const p = this.pending;
    this.pending = null;
    p?.reject(new Error(why));
    this.onDeath();
  }

  call(m: ThreadRequest): Promise<PassResult | undefined> {
    if (this.dead) return Promise.reject(new Error(this.dead));
    if (this.pending) return Promise.reject(new Error(`search thread ${this.index} is busy`));
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.w.postMessage(m);
    });
  }

  /** Resolves when the thread has exited. */
  async stop(): Promise<void> {
    if (!this.dead) {
      try {
        // A session that does not close in time is not waited for: terminate ends it.
        await Promise.race([this.call({ type: 'close' }), new Promise((r) => setTimeout(r, 10_000).unref())]);
      } catch {
        /* already gone */
      }
    }
    this.dead ??= 'closed';
    await this.w.terminate();
    await this.exited;
  }
}

export class SearchThreads {
  /** The control block of the pass running now, so a dying thread can release the others. */
  private control: Int32Array | null = null;
  private closed = false;

  private constructor(
    private readonly threads: SearchThread[],
    /** The directory holding the threads' copies of the work directory, or null. */
    private readonly copies: string | null,
  ) {}

  get size(): number {
    return this.threads.length;
  }

  /** Why a thread is gone (these threads can run no more passes), or null. */
  get failed(): string | null {
    return this.threads.find((t) => t.dead)?.dead ?? (this.closed ? 'the search threads are closed' : null);
  }

  /** Removes the threads' copies a host that died left in workDir (they would count as the
   * engine's data on disk). */
  static removeCopies(workDir: string): void {
    rmSync(join(workDir, THREAD_COPIES), { recursive: true, force: true });
  }

  /** Starts `threads` threads, each reopening the index in opts.workDir; rejects (with every
   * thread stopped) when any reopen fails. */
  static async open(opts: SearchThreadsOptions): Promise<SearchThreads> {
    const ds = opts.loaded ?? (await loadDataset(opts.dataDir, opts.dataset, { verify: false }));
    const info: DatasetInfo = { name: ds.name, n: ds.n, d: ds.d, metric: ds.metric, hasText: ds.text !== undefined };
    const queries = new Float32Array(new SharedArrayBuffer(ds.queries.byteLength));
    queries.set(ds.queries);
    const count = Math.max(1, Math.floor(opts.threads));
    const copies = opts.copyWorkDir ? join(opts.workDir, THREAD_COPIES) : null;
    let st: SearchThreads | null = null;
    const threads = Array.from({ length: count }, (_, i) => new SearchThread(i, () => st?.abort()));
    st = new SearchThreads(threads, copies);
    try {
      const dirs = copies ? copyWorkDir(opts.workDir, copies, count) : threads.map(() => opts.workDir);
      await all(
        threads.map((t) =>
          t.call({
            type: 'open',
            index: t.index,
            participant: opts.participant,
            settingsPath: opts.settingsPath,
            dataset: info,
            workDir: dirs[t.index],
            maxConcurrency: opts.maxConcurrency,
            queries,
          }),
        ),
      );
    } catch (e) {
      await st.close();
      throw e;
    }
    return st;
  }

  /** A thread failed or died mid-pass: the others stop taking queries and leave the barrier. */
  private abort(): void {
    const c = this.control;
    if (!c) return;
    Atomics.store(c, CONTROL.next, 0x7fffffff);
    Atomics.store(c, CONTROL.go, GO_ABORT);
    Atomics.notify(c, CONTROL.go);
  }

  /** One pass: the knobs in every thread, then all threads start together and share the
   * queries (each takes the next from one counter); latencies are timed in the threads. */
  async pass(req: { knobs: Knobs; k: number; queries: number[]; filters: (FilterExpr | null)[] }): Promise<ThreadsPass> {
    const failed = this.failed;
    if (failed) throw new Error(failed);
    await all(this.threads.map((t) => t.call({ type: 'knobs', knobs: req.knobs })));
    const n = req.queries.length;
    const control = new SharedArrayBuffer(CONTROL.bytes);
    const latencies = new SharedArrayBuffer(n * Float64Array.BYTES_PER_ELEMENT);
    const queries = Int32Array.from(req.queries);
    this.control = new Int32Array(control, 0, 4);
    let parts: PassResult[];
    try {
      // A thread that fails or dies releases the others at once (abort): the pass settles.
      const calls = this.threads.map((t) =>
        t.call({ type: 'pass', k: req.k, queries, filters: req.filters, threads: this.threads.length, control, latencies }).catch((e: unknown) => {
          this.abort();
          throw e;
        }),
      );
      parts = (await all(calls)) as PassResult[];
    } finally {
      this.control = null;
    }
    const results: ArrayLike<number>[] = new Array(n);
    const errors: (string | null)[] = new Array(n).fill(null);
    let endMs = -Infinity;
    for (const p of parts) {
      for (let j = 0; j < p.indices.length; j++) results[p.indices[j]] = p.ids.subarray(p.offsets[j], p.offsets[j + 1]);
      for (const [i, message] of p.errors) errors[i] = message;
      endMs = Math.max(endMs, p.endMs);
    }
    const releaseMs = new Float64Array(control, CONTROL.releaseByte, 1)[0];
    // slice: a copy in an ordinary buffer (a shared one cannot cross to the runner's process).
    return {
      results,
      latenciesMs: new Float64Array(latencies).slice(),
      errors,
      wallS: (endMs - releaseMs) / 1000,
      perThread: parts.map((p) => p.indices.length),
    };
  }

  /** Closes every thread's session and waits until every thread has exited (then removes
   * their copies of the work directory). */
  async close(): Promise<void> {
    this.closed = true;
    this.abort();
    await Promise.all(this.threads.map((t) => t.stop()));
    if (this.copies) rmSync(this.copies, { recursive: true, force: true });
  }
}

/** Copies workDir's entries (all but the copies' own directory) into <copies>/<i> for each
 * thread; one left by a host that died is replaced. Synchronous: an engine running in this
 * thread writes nothing while it copies, so each copy is one consistent state of the data. */
function copyWorkDir(workDir: string, copies: string, count: number): string[] {
  rmSync(copies, { recursive: true, force: true });
  const entries = readdirSync(workDir).filter((e) => e !== THREAD_COPIES);
  if (entries.length === 0) throw new Error(`search threads: ${workDir} is empty; there is no saved index to copy`);
  return Array.from({ length: count }, (_, i) => {
    const dir = join(copies, String(i));
    mkdirSync(dir, { recursive: true });
    for (const e of entries) cpSync(join(workDir, e), join(dir, e), { recursive: true });
    return dir;
  });
}
