// The client worker pool: W worker threads, each holding one instance of the participant's
// load client, driven together. A closed-loop point splits its in-flight requests over the
// workers (they share one request counter); an open-loop point deals the arrivals round robin
// (the union of the workers' arrivals is the whole schedule).
import { availableParallelism } from 'node:os';
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { FilterExpr, Knobs, LoadClientSpec } from '../contracts.ts';
import { besideSource, importable, threadEntry } from '../util/code-paths.ts';
import { nowMs } from './clock.ts';
import type { DriveResult } from './driver.ts';
import { LatencyHistogram } from './histogram.ts';
import type { LoadReply, WorkerReply, WorkerRequest } from './protocol.ts';

const WORKER = threadEntry(besideSource(import.meta.url, 'worker.ts'), new URL('./worker-entry.mjs', import.meta.url));

/** Default worker count: the cores the engine does not use. An in-process engine has no worker
 * pool; a server is assumed to be able to use every core but one, so the client gets one core
 * on a 2-core machine and half the cores on a larger one. */
export function defaultWorkers(cores = availableParallelism()): number {
  return Math.max(1, cores <= 2 ? 1 : Math.floor(cores / 2));
}

/** The protocol a load client module speaks (its `protocol` export: 'http', or one a
 * participant declares the ceiling of in settings.json registry.ceiling), or null when it names
 * none (no null ceiling to hold its points against). */
export async function loadClientProtocol(spec: LoadClientSpec): Promise<string | null> {
  const url = isAbsolute(spec.module) ? pathToFileURL(await importable(spec.module)).href : spec.module;
  const mod = (await import(url)) as { protocol?: unknown };
  return typeof mod.protocol === 'string' ? mod.protocol : null;
}

class PoolWorker {
  private readonly w: Worker;
  private pending: { resolve: (r: DriveResult | undefined) => void; reject: (e: Error) => void } | null = null;
  private dead: string | null = null;

  constructor() {
    this.w = new Worker(WORKER);
    this.w.on('message', (m: WorkerReply) => {
      const p = this.pending;
      this.pending = null;
      if (!p) return;
      if (m.ok) p.resolve(m.result);
      else p.reject(new Error(m.error));
    });
    this.w.on('error', (e) => this.fail(`client worker failed: ${e.message}`));
    this.w.on('exit', (code) => this.fail(`client worker exited (code ${code})`));
  }

  private fail(why: string): void {
    this.dead ??= why;
    const p = this.pending;
    this.pending = null;
    p?.reject(new Error(why));
  }

  call(m: WorkerRequest): Promise<DriveResult | undefined> {
    if (this.dead) return Promise.reject(new Error(this.dead));
    if (this.pending) return Promise.reject(new Error('client worker is busy'));
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.w.postMessage(m);
    });
  }

  terminate(): Promise<number> {
    this.dead ??= 'terminated';
    return this.w.terminate();
  }
}

/** Merges per-worker loop results into one reply in request order. */
export function mergeResults(n: number, parts: DriveResult[]): LoadReply {
  const latenciesMs = new Float64Array(n);
  const sendLagMs = new Float64Array(n);
  const status = new Uint8Array(n);
  const lists: (Int32Array | null)[] = new Array(n).fill(null);
  const hist = new LatencyHistogram();
  let errors = 0;
  let timeouts = 0;
  let firstError: string | null = null;
  let start = Infinity;
  let end = -Infinity;
  for (const r of parts) {
    for (let j = 0; j < r.indices.length; j++) {
      const i = r.indices[j];
      latenciesMs[i] = r.latenciesMs[j];
      sendLagMs[i] = r.sendLagMs[j];
      status[i] = r.status[j];
      lists[i] = r.ids.subarray(r.offsets[j], r.offsets[j + 1]);
    }
    errors += r.errors;
    timeouts += r.timeouts;
    firstError ??= r.firstError;
    hist.add(LatencyHistogram.decode(r.histogram));
    if (r.indices.length > 0) {
      start = Math.min(start, r.startMs);
      end = Math.max(end, r.endMs);
    }
  }
  const offsets = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i] + (lists[i]?.length ?? 0);
  const ids = new Int32Array(offsets[n]);
  for (let i = 0; i < n; i++) if (lists[i]) ids.set(lists[i]!, offsets[i]);
  return {
    latenciesMs,
    sendLagMs,
    status,
    ids,
    offsets,
    errors,
    timeouts,
    firstError,
    histogram: hist.encode(),
    wallS: Number.isFinite(start) ? (end - start) / 1000 : 0,
  };
}

export class WorkerPool {
  private constructor(private readonly workers: PoolWorker[]) {}

  get size(): number {
    return this.workers.length;
  }

  /** Starts `count` workers, each building the client from `spec`; queries (nq x d) are shared. */
  static async start(spec: LoadClientSpec, count: number, maxInFlight: number, queries: Float32Array, d: number): Promise<WorkerPool> {
    const shared = new Float32Array(new SharedArrayBuffer(queries.byteLength));
    shared.set(queries);
    const workers = Array.from({ length: Math.max(1, count) }, () => new PoolWorker());
    const pool = new WorkerPool(workers);
    try {
      // Each worker's client holds up to its share of the in-flight requests (rounded up).
      const per = Math.ceil(maxInFlight / workers.length);
      await Promise.all(workers.map((w) => w.call({ type: 'init', spec, maxInFlight: per, queries: shared, d })));
    } catch (e) {
      await pool.close();
      throw e;
    }
    return pool;
  }

  async setKnobs(knobs: Knobs): Promise<void> {
    await Promise.all(this.workers.map((w) => w.call({ type: 'knobs', knobs })));
  }

  /** `inFlight` requests outstanding in total, split as evenly as the workers allow. */
  async closed(k: number, queries: number[], filters: (FilterExpr | null)[], inFlight: number, timeoutMs: number): Promise<LoadReply> {
    const n = queries.length;
    const q = Int32Array.from(queries);
    const counter = new SharedArrayBuffer(4);
    const active = Math.min(this.workers.length, Math.max(1, inFlight));
    const calls = this.workers.slice(0, active).map((w, i) => {
      const share = Math.floor(inFlight / active) + (i < inFlight % active ? 1 : 0);
      return w.call({ type: 'closed', k, queries: q, filters, inFlight: share, timeoutMs, counter });
    });
    return mergeResults(n, (await Promise.all(calls)) as DriveResult[]);
  }

  /** Arrivals at intendedMs (ms after a common start a little in the future). */
  async open(
    k: number,
    queries: number[],
    filters: (FilterExpr | null)[],
    intendedMs: Float64Array,
    maxInFlight: number,
    timeoutMs: number,
  ): Promise<LoadReply> {
    const n = queries.length;
    const q = Int32Array.from(queries);
    const W = this.workers.length;
    // Far enough ahead that every worker has its schedule before the first arrival.
    const startAtMs = nowMs() + 50;
    const calls = this.workers.map((w, wi) => {
      const mine: number[] = [];
      for (let i = wi; i < n; i += W) mine.push(i);
      const indices = Int32Array.from(mine);
      const times = Float64Array.from(mine, (i) => intendedMs[i]);
      return w.call({
        type: 'open',
        k,
        queries: q,
        filters,
        indices,
        intendedMs: times,
        startAtMs,
        maxInFlight: Math.max(1, Math.ceil(maxInFlight / W)),
        timeoutMs,
      });
    });
    return mergeResults(n, (await Promise.all(calls)) as DriveResult[]);
  }

  async close(): Promise<void> {
    await Promise.all(
      this.workers.map(async (w) => {
        try {
          await Promise.race([w.call({ type: 'close' }), new Promise((r) => setTimeout(r, 5000))]);
        } catch {
          /* already gone */
        }
        await w.terminate();
      }),
    );
  }
}
