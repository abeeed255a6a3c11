// The partial top-k lists of out-of-core ground truth (outofcore.ts) and the shard that makes
// them: a shard walks its row range block by block, merges each block's exact top-depth into
// its queries' lists and checkpoints them atomically; lists of disjoint ranges merge exactly.
// Apart from outofcore.ts (which plans the shards and runs them) because the worker threads
// (outofcore-shard.ts) and the sharded plans (plan.ts) run a shard without the planner.
import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { AttrName, FilterExpr, Metric, RowAttributes } from '../contracts.ts';
import { ATTRIBUTES } from '../contracts.ts';
import { filterFields, filterKey, filterKind, matchingRows } from '../datasets/groups.ts';
import { fileNames, type QueryAttrName } from '../datasets/layout.ts';
import { REAL_ROW_ATTRIBUTES } from '../datasets/real-attributes.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { UserError } from '../util/errors.ts';
import { exactTopK, type Backend } from './exact.ts';

export const CKPT_FORMAT = 'vecbench-gt-partial/1';

/** What out-of-core ground truth needs of a prepared dataset: files on disk plus the queries. */
export interface GtSource {
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

export function groupQueries(src: Pick<GtSource, 'nq' | 'queryAttrs'>, filterName: string): QueryGroup[] {
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

export function readInto(fd: number, buf: Uint8Array, position: number, what: string): void {
  let off = 0;
  while (off < buf.length) {
    const got = readSync(fd, buf, off, buf.length - off, position + off);
    if (got === 0) throw new UserError(`${what} ends early at byte ${position + off} (truncated); re-prepare the dataset (vecbench prepare <name> --force)`);
    off += got;
  }
}

export const bytesOf = (a: Int32Array | Float32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

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
  // A set without real attributes has no label / measure files: its rows carry 0 (layout.ts).
  const absent = fields.filter((f) => REAL_ROW_ATTRIBUTES.has(f) && !existsSync(join(dir, fileNames.attr(f))));
  const attrFds = new Map(fields.filter((f) => !absent.includes(f)).map((f) => [f, openSync(join(dir, fileNames.attr(f)), 'r')]));
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
      for (const f of absent) attrs[f] = new Int32Array(count);
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
