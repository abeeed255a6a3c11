// Ground truth at scale (docs/datasets.md, "Ground truth at scale"): exact top-depth of every
// query with the base set read from base.f32 in blocks, so memory is bounded by a setting
// (VECBENCH_GT_MEMORY), not by n. The rows are split into shards (contiguous row ranges);
// each shard walks its blocks, keeps a partial top-depth per query and checkpoints it
// atomically, so an interrupted run resumes where its shards stopped. Shards are independent
// and their partial lists merge exactly: the same plan spreads a 247M-row set over machines.
//
// Both cores: with the native addon, one shard runs in-process and the addon's threads share
// each block; with the JavaScript fallback, one worker thread per core runs a shard each. The
// call stays synchronous (like computeGroundTruth): the main thread waits on shared memory
// and prints progress while the workers run. The shard and its partial lists are in partial-topk.ts.
import { closeSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { filterKind } from '../datasets/groups.ts';
import { fileNames } from '../datasets/layout.ts';
import { besideSource, threadEntry } from '../util/code-paths.ts';
import { UserError } from '../util/errors.ts';
import { sha256 } from '../util/hash.ts';
import { Progress, fmtSeconds, log } from '../util/progress.ts';
import { exactTopK, pickBackend, type Backend } from './exact.ts';
import {
  CKPT_FORMAT,
  mergePartials,
  runShard,
  type GtSource,
  type PartialTopK,
  type ShardSpec,
  bytesOf,
  groupQueries,
  loadCheckpoint,
  readInto,
} from './partial-topk.ts';

const DEFAULT_GT_MEMORY = 2 * 2 ** 30;

/** VECBENCH_GT_MEMORY: bytes of base rows ground truth may hold at once ("512m", "4g", bytes). */
export function gtMemoryBytes(value = process.env.VECBENCH_GT_MEMORY): number {
  if (value === undefined || value === '') return DEFAULT_GT_MEMORY;
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?$/i.exec(value.trim());
  if (!m) throw new UserError(`VECBENCH_GT_MEMORY="${value}" is not a size; write it like 512m, 4g or a number of bytes`);
  const unit = { '': 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40 }[m[2].toLowerCase() as '' | 'k' | 'm' | 'g' | 't'];
  const bytes = Math.floor(Number(m[1]) * unit);
  if (bytes < 2 ** 20) throw new UserError(`VECBENCH_GT_MEMORY="${value}" is below 1 MB; give ground truth at least 64m`);
  return bytes;
}

interface OutOfCoreOptions {
  /** Bytes of base rows held at once, all shards together (default: VECBENCH_GT_MEMORY). */
  memoryBytes?: number;
  backend?: 'auto' | Backend;
  /** Cores to use (default: all). */
  threads?: number;
  quiet?: boolean;
  /** Minimum seconds between checkpoints of a shard (default 30; the last block always). */
  checkpointEveryS?: number;
  /** Compute only these rows (one machine's share of a sharded job). Default: all. */
  rowRange?: [number, number];
  /** Skip the calibration estimate. */
  noEstimate?: boolean;
}

interface OutOfCoreResult extends PartialTopK {
  backend: Backend;
  seconds: number;
  /** queries per second over the whole run (all shards). */
  qps: number;
  /** Rows skipped because checkpoints of an interrupted run covered them. */
  resumedRows: number;
}

/** Where a filter's shard checkpoints live. */
export function partialDir(src: Pick<GtSource, 'dir'>, filterName: string): string {
  return join(src.dir, 'groundtruth', 'partial', filterName.replace(/[^A-Za-z0-9_.+-]/g, '_'));
}

/** Times a small slice of the real work and prints the estimated total. */
function calibrate(src: GtSource, filterName: string, depth: number, backend: Backend, shards: number, threads: number, rows: number, blockRows: number): void {
  // One real block (the per-row cost of selecting the top 1000 falls as blocks grow, so a
  // small sample overestimates), with a sample of the queries.
  const calRows = Math.min(rows, blockRows);
  // The addon gives each thread groups of 256 queries; fewer would time a split of the rows that
  // the real run (all queries at once) does not do.
  const calQueries = Math.min(src.nq, backend === 'native' ? 256 * threads : 128);
  const fd = openSync(join(src.dir, fileNames.base), 'r');
  const block = new Float32Array(calRows * src.d);
  try {
    readInto(fd, bytesOf(block), 0, join(src.dir, fileNames.base));
  } finally {
    closeSync(fd);
  }
  // Queries spread over the whole set: a set's order may follow the cost (GloVe's first held-out
  // words, common ones, admit a third as many candidates per query as the average).
  const q = new Float32Array(calQueries * src.d);
  for (let i = 0; i < calQueries; i++) {
    const from = Math.floor((i * src.nq) / calQueries) * src.d;
    q.set(src.queries.subarray(from, from + src.d), i * src.d);
  }
  const t0 = performance.now();
  exactTopK({ base: block, n: calRows, d: src.d, queries: q, nq: calQueries, metric: src.metric, k: Math.min(depth, calRows), backend, threads });
  const s = (performance.now() - t0) / 1000;
  // Work scales with rows x queries; a filter keeps a share of the rows (nominal, or all when
  // the share varies by query: then the estimate is an upper bound).
  const kind = filterKind(filterName);
  const share = kind.nominal ?? 1;
  const perPair = s / (calRows * calQueries);
  const parallel = backend === 'js' ? shards : 1;
  const est = (perPair * rows * src.nq * share) / parallel;
  log(
    `ground truth ${src.name} ${filterName}: estimated ${kind.nominal === null ? 'at most ' : ''}${fmtSeconds(est)} for ${src.nq} queries x ${rows.toLocaleString('en-US')} rows ` +
      `(${backend}, ${backend === 'js' ? `${shards} workers, plus a few seconds to start them` : `${threads} threads`}; calibrated on ${calRows} rows x ${calQueries} queries: ${((calRows * calQueries) / s / 1e6).toFixed(1)}M pairs/s)`,
  );
}

interface ShardPlan {
  backend: Backend;
  cores: number;
  rows: number;
  blockRows: number;
  specs: ShardSpec[];
}

/** Splits the rows into shards and blocks within the memory setting. */
export function planShards(src: GtSource, filterName: string, depth: number, opts: OutOfCoreOptions = {}): ShardPlan {
  const backend = pickBackend(opts.backend ?? 'auto');
  const cores = Math.max(1, opts.threads ?? availableParallelism());
  const memory = opts.memoryBytes ?? gtMemoryBytes();
  const [r0, r1] = opts.rowRange ?? [0, src.n];
  if (!(r0 >= 0 && r1 <= src.n && r0 < r1)) throw new UserError(`row range ${r0}..${r1} is not inside 0..${src.n}`);
  const rows = r1 - r0;
  const groups = groupQueries(src, filterName);
  // Native: one shard, the addon's threads share each block. JS: one worker per core.
  const shards = backend === 'native' ? 1 : Math.min(cores, Math.max(1, Math.floor(rows / 1024)));
  const blockRows = Math.max(256, Math.min(Math.ceil(rows / shards), Math.floor(memory / shards / (src.d * 4))));
  const bounds: [number, number][] = [];
  for (let s = 0; s < shards; s++) bounds.push([r0 + Math.floor((rows * s) / shards), r0 + Math.floor((rows * (s + 1)) / shards)]);
  const pdir = partialDir(src, filterName);
  mkdirSync(pdir, { recursive: true });
  const headerOf = (range: [number, number]) =>
    JSON.stringify({
      format: CKPT_FORMAT,
      dataset: src.hash,
      filter: filterName,
      depth,
      range,
      blockRows,
      groups: sha256(JSON.stringify(groups.map((g) => [g.filter, Array.from(g.queries)]))),
    });
  const specs: ShardSpec[] = bounds.map((range) => ({
    dir: src.dir,
    n: src.n,
    d: src.d,
    metric: src.metric,
    depth,
    nq: src.nq,
    queries: src.queries,
    groups,
    range,
    blockRows,
    backend,
    threads: backend === 'native' ? cores : 1,
    checkpoint: join(pdir, `shard-${range[0]}-${range[1]}.ckpt`),
    header: headerOf(range),
    checkpointEveryMs: (opts.checkpointEveryS ?? 30) * 1000,
  }));
  return { backend, cores, rows, blockRows, specs };
}

/** Exact top-depth for one filter kind, out of core. Synchronous; resumable. */
export function outOfCoreGroundTruth(src: GtSource, filterName: string, depth: number, opts: OutOfCoreOptions = {}): OutOfCoreResult {
  const t0 = performance.now();
  const { backend, cores, rows, blockRows, specs } = planShards(src, filterName, depth, opts);
  const shards = specs.length;
  const pdir = partialDir(src, filterName);
  const resumedRows = specs.reduce((a, s) => a + ((loadCheckpoint(s)?.next ?? s.range[0]) - s.range[0]), 0);
  const resuming = resumedRows > 0;
  if (!opts.noEstimate && !opts.quiet && !resuming) calibrate(src, filterName, depth, backend, shards, cores, rows, blockRows);
  if (resuming && !opts.quiet) log(`ground truth ${src.name} ${filterName}: resuming from checkpoints in ${pdir}`);
  const progress = new Progress(`ground truth ${src.name} ${filterName} (out of core, ${shards} shard${shards > 1 ? 's' : ''})`, rows, opts.quiet);
  let parts: PartialTopK[];
  if (shards === 1) {
    parts = [runShard(specs[0], (done) => progress.update(done, 'rows'))];
  } else {
    parts = runShardsInWorkers(specs, (done) => progress.update(done, 'rows'));
  }
  const merged = mergePartials(parts);
  const seconds = (performance.now() - t0) / 1000;
  return { ...merged, backend, seconds, qps: src.nq / seconds, resumedRows };
}

/** Runs shards in worker threads while the main thread waits on shared memory (so the call
 * stays synchronous) and reports their progress. */
function runShardsInWorkers(specs: ShardSpec[], onRows: (rowsDone: number) => void): PartialTopK[] {
  const W = specs.length;
  // Per worker: [state (0 running, 1 done, 2 failed), rows done]; then an error text area.
  const control = new Int32Array(new SharedArrayBuffer(8 * W));
  const errorText = new Uint8Array(new SharedArrayBuffer(4096 * W));
  const { nq, depth } = specs[0];
  const results = specs.map(() => ({
    ids: new SharedArrayBuffer(nq * depth * 4),
    dists: new SharedArrayBuffer(nq * depth * 4),
    counts: new SharedArrayBuffer(nq * 4),
    matches: new SharedArrayBuffer(nq * 4),
  }));
  const workers = specs.map(
    (spec, i) =>
      new Worker(threadEntry(besideSource(import.meta.url, 'outofcore-thread.ts'), new URL('./outofcore-worker.mjs', import.meta.url)), {
        workerData: { spec, index: i, control: control.buffer, errorText: errorText.buffer, result: results[i] },
      }),
  );
  const startupErrors: string[] = [];
  workers.forEach((w, i) =>
    w.on('error', (e) => {
      startupErrors.push(e.message);
      control[2 * i] = 2;
    }),
  );
  try {
    for (;;) {
      let running = 0;
      let done = 0;
      for (let i = 0; i < W; i++) {
        const state = Atomics.load(control, 2 * i);
        if (state === 0) running++;
        if (state === 2) {
          const text = Buffer.from(errorText.subarray(4096 * i, 4096 * (i + 1)))
            .toString('utf8')
            .replace(/\0+$/, '');
          throw text.startsWith('UserError: ')
            ? new UserError(text.slice(11))
            : new Error(`ground truth worker ${i} failed: ${text || startupErrors.join('; ') || 'unknown error'}`);
        }
        done += Atomics.load(control, 2 * i + 1);
      }
      onRows(done);
      if (running === 0) break;
      // Wake at least every second to report progress; a worker's notify wakes us earlier.
      for (let i = 0; i < W; i++) {
        if (Atomics.load(control, 2 * i) === 0) {
          Atomics.wait(control, 2 * i, 0, 1000);
          break;
        }
      }
    }
  } finally {
    for (const w of workers) void w.terminate();
  }
  return results.map((r) => ({
    nq,
    depth,
    ids: new Int32Array(r.ids),
    dists: new Float32Array(r.dists),
    counts: new Int32Array(r.counts),
    matches: new Int32Array(r.matches),
  }));
}

/** Removes a filter's checkpoints once its ground truth is stored. */
export function clearPartials(src: Pick<GtSource, 'dir'>, filterName: string): void {
  rmSync(partialDir(src, filterName), { recursive: true, force: true });
}
