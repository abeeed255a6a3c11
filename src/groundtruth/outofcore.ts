// Ground truth at scale (docs/contracts.md, "Ground truth at scale"): exact top-depth of every
// query with the base set read from base.f32 in blocks, so memory is bounded by a setting
// (VECBENCH_GT_MEMORY), not by n. The rows are split into shards (contiguous row ranges);
// each shard walks its blocks, keeps a partial top-depth per query and checkpoints it
// atomically, so an interrupted run resumes where its shards stopped. Shards are independent
// and their partial lists merge exactly: the same plan spreads a 247M-row set over machines.
//
// Both cores: with the native addon, one shard runs in-process and the addon's threads share
// each block; with the JavaScript fallback, one worker thread per core runs a shard each. The
// call stays synchronous (like computeGroundTruth): the main thread waits on shared memory
// and prints progress while the workers run.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { AttrName, FilterExpr, Metric, RowAttributes } from '../contracts.ts';
import { ATTRIBUTES } from '../contracts.ts';
import { filterFields, filterKey, filterKind, matchingRows } from '../datasets/groups.ts';
import { fileNames, type QueryAttrName } from '../datasets/layout.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { UserError } from '../util/errors.ts';
import { sha256 } from '../util/hash.ts';
import { Progress, fmtSeconds, log } from '../util/progress.ts';
import { exactTopK, pickBackend, type Backend } from './exact.ts';

const DEFAULT_GT_MEMORY = 2 * 2 ** 30;
const CKPT_FORMAT = 'vecbench-gt-partial/1';

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

/** What out-of-core ground truth needs of a prepared dataset: files on disk plus the queries. */
interface GtSource {
  name: string;
  dir: string;
  /** sha256 over the manifest's file hashes (keys the checkpoints). */
  hash: string;
  n: number;
  d: number;
  nq: number;
  metric: Metric;
  queries: Float32Array;
  queryAttrs: Record<QueryAttrName, Int32Array>;
}

export interface PartialTopK {
  depth: number;
  nq: number;
  /** nq x depth, sorted by (distance, id); -1 / +Inf padding. */
  ids: Int32Array;
  dists: Float32Array;
  /** Valid entries per query. */
  counts: Int32Array;
  /** Rows passing each query's filter in the range covered. */
  matches: Int32Array;
}

function emptyPartial(nq: number, depth: number): PartialTopK {
  return {
    depth,
    nq,
    ids: new Int32Array(nq * depth).fill(-1),
    dists: new Float32Array(nq * depth).fill(Infinity),
    counts: new Int32Array(nq),
    matches: new Int32Array(nq),
  };
}

/** Merges candidates (sorted by (distance, id)) into query q's sorted list, keeping depth. */
function mergeInto(
  p: PartialTopK,
  q: number,
  ids: ArrayLike<number>,
  dists: ArrayLike<number>,
  from: number,
  count: number,
  scratchI: Int32Array,
  scratchD: Float32Array,
): void {
  const depth = p.depth;
  const o = q * depth;
  const have = p.counts[q];
  let a = 0;
  let b = 0;
  let m = 0;
  while (m < depth && (a < have || b < count)) {
    const takeA = b >= count || (a < have && (p.dists[o + a] < dists[from + b] || (p.dists[o + a] === dists[from + b] && p.ids[o + a] < ids[from + b])));
    if (takeA) {
      scratchI[m] = p.ids[o + a];
      scratchD[m] = p.dists[o + a];
      a++;
    } else {
      scratchI[m] = ids[from + b];
      scratchD[m] = dists[from + b];
      b++;
    }
    m++;
  }
  p.ids.set(scratchI.subarray(0, m), o);
  p.dists.set(scratchD.subarray(0, m), o);
  p.counts[q] = m;
}

/** Merges partial top-k lists of disjoint row ranges (shards, machines) into one. */
export function mergePartials(parts: PartialTopK[]): PartialTopK {
  if (parts.length === 0) throw new Error('mergePartials: nothing to merge');
  const { nq, depth } = parts[0];
  const out = emptyPartial(nq, depth);
  const si = new Int32Array(depth);
  const sd = new Float32Array(depth);
  for (const p of parts) {
    if (p.nq !== nq || p.depth !== depth) throw new Error('mergePartials: shapes differ');
    for (let q = 0; q < nq; q++) {
      mergeInto(out, q, p.ids, p.dists, q * depth, p.counts[q], si, sd);
      out.matches[q] += p.matches[q];
    }
  }
  return out;
}

/** Queries sharing one concrete filter (they go through one matrix product). */
interface QueryGroup {
  filter: FilterExpr | null;
  queries: Int32Array;
}

function groupQueries(src: Pick<GtSource, 'nq' | 'queryAttrs'>, filterName: string): QueryGroup[] {
  const kind = filterKind(filterName);
  const byKey = new Map<string, { filter: FilterExpr | null; queries: number[] }>();
  for (let q = 0; q < src.nq; q++) {
    const f = kind.forQuery(q, src.queryAttrs);
    const key = filterKey(f);
    let g = byKey.get(key);
    if (!g) byKey.set(key, (g = { filter: f, queries: [] }));
    g.queries.push(q);
  }
  return [...byKey.values()].map((g) => ({ filter: g.filter, queries: Int32Array.from(g.queries) }));
}

/** Everything a shard needs; plain data, so it can be handed to a worker thread. */
export interface ShardSpec {
  dir: string;
  n: number;
  d: number;
  metric: Metric;
  depth: number;
  nq: number;
  queries: Float32Array;
  groups: QueryGroup[];
  range: [number, number];
  blockRows: number;
  backend: Backend;
  threads: number;
  /** Checkpoint file; header identifies dataset, filter, depth and range. */
  checkpoint: string;
  header: string;
  /** Minimum time between checkpoints (the last block is always checkpointed). */
  checkpointEveryMs: number;
}

function readInto(fd: number, buf: Uint8Array, position: number, what: string): void {
  let off = 0;
  while (off < buf.length) {
    const got = readSync(fd, buf, off, buf.length - off, position + off);
    if (got === 0) throw new UserError(`${what} ends early at byte ${position + off} (truncated); re-prepare the dataset (vecbench prepare <name> --force)`);
    off += got;
  }
}

const bytesOf = (a: Int32Array | Float32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

function saveCheckpoint(spec: ShardSpec, next: number, p: PartialTopK): void {
  const head = Buffer.from(JSON.stringify({ header: spec.header, next }));
  const len = new Uint8Array(4);
  new DataView(len.buffer).setUint32(0, head.length, true);
  const parts = [len, head, bytesOf(p.ids), bytesOf(p.dists), bytesOf(p.counts), bytesOf(p.matches)];
  const total = parts.reduce((a, b) => a + b.length, 0);
  const all = new Uint8Array(total);
  let o = 0;
  for (const x of parts) {
    all.set(x, o);
    o += x.length;
  }
  writeFileAtomic(spec.checkpoint, all);
}

/** The partial list and next row of a checkpoint that matches this shard, or null. */
export function loadCheckpoint(spec: Pick<ShardSpec, 'checkpoint' | 'header' | 'nq' | 'depth'>): { next: number; partial: PartialTopK } | null {
  if (!existsSync(spec.checkpoint)) return null;
  try {
    const buf = readFileSync(spec.checkpoint);
    const len = buf.readUInt32LE(0);
    const meta = JSON.parse(buf.subarray(4, 4 + len).toString('utf8')) as { header: string; next: number };
    if (meta.header !== spec.header) return null;
    const { nq, depth } = spec;
    const want = 4 + len + nq * depth * 8 + nq * 8;
    if (buf.length !== want) return null;
    const body = new Uint8Array(buf.length - 4 - len);
    body.set(buf.subarray(4 + len));
    const ab = body.buffer;
    return {
      next: meta.next,
      partial: {
        nq,
        depth,
        ids: new Int32Array(ab, 0, nq * depth),
        dists: new Float32Array(ab, nq * depth * 4, nq * depth),
        counts: new Int32Array(ab, nq * depth * 8, nq),
        matches: new Int32Array(ab, nq * depth * 8 + nq * 4, nq),
      },
    };
  } catch {
    return null;
  }
}

/** Reads a finished (or partly finished) checkpoint file of another run or machine: its row
 * range, the next row it would have read, and its partial lists (for mergePartials). */
export function readPartialFile(path: string, nq: number, depth: number): { range: [number, number]; next: number; partial: PartialTopK } {
  const buf = readFileSync(path);
  const len = buf.readUInt32LE(0);
  const meta = JSON.parse(buf.subarray(4, 4 + len).toString('utf8')) as { header: string };
  const header = JSON.parse(meta.header) as { format: string; range: [number, number]; depth: number };
  if (header.format !== CKPT_FORMAT || header.depth !== depth) throw new UserError(`${path}: not a ${CKPT_FORMAT} file of depth ${depth}`);
  const ck = loadCheckpoint({ checkpoint: path, header: meta.header, nq, depth });
  if (!ck) throw new UserError(`${path}: its size does not fit ${nq} queries at depth ${depth} (truncated?); compute that range again`);
  return { range: header.range, next: ck.next, partial: ck.partial };
}

/** Runs one shard: its row range block by block, checkpointing the partial lists. Calls
 * `onRows` with the rows done so far (including rows done before a resume). */
export function runShard(spec: ShardSpec, onRows: (rowsDone: number) => void = () => {}): PartialTopK {
  const { dir, d, metric, depth, nq, groups, range, blockRows } = spec;
  const [r0, r1] = range;
  const resumed = loadCheckpoint(spec);
  const p = resumed?.partial ?? emptyPartial(nq, depth);
  let next = resumed ? resumed.next : r0;
  onRows(next - r0);
  const fields = [...new Set(groups.flatMap((g) => filterFields(g.filter)))] as AttrName[];
  const baseFd = openSync(join(dir, fileNames.base), 'r');
  const attrFds = new Map(fields.map((f) => [f, openSync(join(dir, fileNames.attr(f)), 'r')]));
  const si = new Int32Array(depth);
  const sd = new Float32Array(depth);
  // Each group's queries, gathered once.
  const groupQueries = groups.map((g) => {
    const m = new Float32Array(g.queries.length * d);
    g.queries.forEach((q, i) => m.set(spec.queries.subarray(q * d, q * d + d), i * d));
    return m;
  });
  const empty = new Int32Array(0);
  let lastSave = performance.now();
  try {
    while (next < r1) {
      const count = Math.min(blockRows, r1 - next);
      const block = new Float32Array(count * d);
      readInto(baseFd, bytesOf(block), next * d * 4, join(dir, fileNames.base));
      const attrs = Object.fromEntries(ATTRIBUTES.map((a) => [a, empty])) as RowAttributes;
      for (const [f, fd] of attrFds) {
        const col = new Int32Array(count);
        readInto(fd, bytesOf(col), next * 4, join(dir, fileNames.attr(f)));
        attrs[f] = col;
      }
      groups.forEach((g, gi) => {
        const rows = g.filter === null ? undefined : matchingRows(g.filter, attrs, count);
        const matched = rows ? rows.length : count;
        for (const q of g.queries) p.matches[q] += matched;
        if (matched === 0) return;
        const r = exactTopK({
          base: block,
          n: count,
          d,
          queries: groupQueries[gi],
          nq: g.queries.length,
          metric,
          k: depth,
          rows,
          backend: spec.backend,
          threads: spec.threads,
        });
        for (let i = 0; i < g.queries.length; i++) {
          // Block-local ids to row ids.
          const o = i * depth;
          for (let e = 0; e < r.counts[i]; e++) r.ids[o + e] += next;
          mergeInto(p, g.queries[i], r.ids, r.dists, o, r.counts[i], si, sd);
        }
      });
      next += count;
      const now = performance.now();
      if (next >= r1 || now - lastSave >= spec.checkpointEveryMs) {
        saveCheckpoint(spec, next, p);
        lastSave = now;
      }
      onRows(next - r0);
    }
  } finally {
    closeSync(baseFd);
    for (const fd of attrFds.values()) closeSync(fd);
  }
  return p;
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
      new Worker(new URL('./outofcore-worker.mjs', import.meta.url), {
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
