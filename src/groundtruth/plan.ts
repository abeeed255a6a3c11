// Sharded ground truth (docs/cluster.md): a plan splits the exact ground truth of every
// standard filter kind into shards that any scheduler runs independently (Slurm array tasks,
// Kubernetes Indexed Job pods, a shell loop), then a merge (plan-merge.ts) writes the dataset's cache. A shard
// is a list of whole work units of computeGroundTruth (queries sharing a filter, in the chunks
// it uses), so every query's list comes out of the same call as on one machine and the merged
// files are byte-identical to what `vecbench prepare` writes.
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { FilterExpr } from '../contracts.ts';
import { STANDARD_KINDS, filterKind } from '../datasets/groups.ts';
import { noRealQueries } from '../datasets/real-attributes.ts';
import { QUERY_ATTRIBUTES, datasetDir, fileNames, loadDataset, manifestSchema, type Dataset, type QueryAttrName } from '../datasets/layout.ts';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic.ts';
import { UserError } from '../util/errors.ts';
import { isSafeName, SAFE_NAME_RULE } from '../util/names.ts';
import { sha256, sha256File } from '../util/hash.ts';
import { Progress, log } from '../util/progress.ts';
import { cacheDepth, computeUnit, groundTruthUnits } from './cache.ts';
import { pickBackend } from './exact.ts';
import { gtMemoryBytes } from './outofcore.ts';
import { runShard } from './partial-topk.ts';

const PLAN_FORMAT = 'vecbench-gt-plan/1';
const SHARD_FORMAT = 'vecbench-gt-shard/1';
export const PLAN_FILE = 'plan.json';

// A plan is input like any file: its names become paths, shell lines and filter lookups, so each
// is held to what vecbench itself writes (the safe-name rule, the standard filter kinds, the
// shard output name, a bounded shard count) before anything is read, written or removed.
const KIND_NAMES = new Set(STANDARD_KINDS.map((k) => k.name));
const filterName = z.string().refine((f) => KIND_NAMES.has(f), { message: 'not a standard filter kind' });
/** More shards than this is no plan vecbench writes (a shard per query of a 10k-query set). */
export const MAX_SHARDS = 100_000;
const unitSchema = z.object({ filter: filterName, queries: z.array(z.number().int().nonnegative()).min(1) });
const planSchema = z.object({
  format: z.literal(PLAN_FORMAT),
  dataset: z.object({
    name: z.string().refine(isSafeName, { message: `not a dataset name (${SAFE_NAME_RULE})` }),
    data_dir: z.string().min(1),
    hash: z.string(),
    n: z.number().int().positive(),
    d: z.number().int().positive(),
    nq: z.number().int().positive(),
  }),
  depth: z.number().int().positive(),
  /** Every file a shard reads, with its size and sha256 (from the dataset's manifest). */
  inputs: z.array(
    z.object({
      file: z.string().refine(isSafeName, { message: `not a file name of the dataset (${SAFE_NAME_RULE})` }),
      bytes: z.number().int().nonnegative(),
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
    }),
  ),
  filters: z.array(filterName).min(1),
  shards: z
    .array(
      z.object({
        index: z.number().int().nonnegative(),
        /** Relative to the plan directory: shard-<index>.bin, nothing else. */
        output: z.string().regex(/^shard-\d{1,6}\.bin$/, 'not a shard output name (shard-<index>.bin)'),
        rows: z.tuple([z.number().int().nonnegative(), z.number().int().positive()]),
        units: z.array(unitSchema).min(1),
      }),
    )
    .min(1)
    .max(MAX_SHARDS)
    .refine((shards) => shards.every((s, i) => s.index === i && s.output === `shard-${i}.bin`), {
      message: 'shards must be numbered 0, 1, 2... in order, each writing shard-<index>.bin',
    }),
});
export type GtPlan = z.infer<typeof planSchema>;

/** Files a shard reads: vectors and every attribute the standard filters look at. */
function inputFiles(ds: Dataset): string[] {
  const attrFiles = Object.keys(ds.manifest.files).filter((f) => /^(base|queries)\.[a-z0-9_]+\.i32$/.test(f));
  return [fileNames.base, fileNames.queries, ...attrFiles.sort()];
}

/** Splits the standard kinds' work units into `shards` contiguous shards of about equal cost
 * (per query: selecting its top depth, about the cost of a scan, plus the
 * scan of the share of rows its filter keeps). */
export async function writePlan(dataDir: string, name: string, shards: number, outDir: string, rowRanges = 1): Promise<GtPlan> {
  if (!(Number.isInteger(shards) && shards >= 1)) throw new UserError(`--shards ${shards} is not a positive whole number; give e.g. --shards 4`);
  if (shards > MAX_SHARDS) throw new UserError(`--shards ${shards} is more than ${MAX_SHARDS}; give fewer shards`);
  if (!(Number.isInteger(rowRanges) && rowRanges >= 1 && shards % rowRanges === 0))
    throw new UserError(`--row-ranges ${rowRanges} does not divide --shards ${shards}; give a --shards that is a multiple of --row-ranges`);
  const blocks = shards / rowRanges;
  const ds = await loadDataset(dataDir, name);
  const units = STANDARD_KINDS.flatMap((k) =>
    groundTruthUnits(ds, k.name).map((u) => ({ filter: k.name, queries: u.queries, cost: u.queries.length * (1 + (k.nominal ?? 1)) })),
  );
  if (blocks > units.length)
    throw new UserError(
      `--shards ${shards} exceeds the ${units.length} work units of ${name} per row range; give --shards ${units.length * rowRanges} or fewer`,
    );
  const total = units.reduce((a, u) => a + u.cost, 0);
  const queryBlocks: { filter: string; queries: number[] }[][] = [];
  let i = 0;
  let spent = 0;
  for (let s = 0; s < blocks; s++) {
    const goal = (total * (s + 1)) / blocks;
    const mine: { filter: string; queries: number[] }[] = [];
    const last = s === blocks - 1;
    while (i < units.length) {
      // Stop at this shard's share, or when every later shard needs one of the units left.
      const needed = units.length - i <= blocks - s - 1;
      if (mine.length > 0 && !last && (needed || spent + units[i].cost / 2 > goal)) break;
      spent += units[i].cost;
      mine.push({ filter: units[i].filter, queries: units[i].queries });
      i++;
    }
    queryBlocks.push(mine);
  }
  // Row ranges x query blocks; shard r * blocks + b reads rows of range r for block b.
  const plan: GtPlan['shards'] = [];
  for (let r = 0; r < rowRanges; r++) {
    const rows: [number, number] = [Math.floor((ds.n * r) / rowRanges), Math.floor((ds.n * (r + 1)) / rowRanges)];
    queryBlocks.forEach((units, b) => {
      const index = r * blocks + b;
      plan.push({ index, output: `shard-${index}.bin`, rows, units });
    });
  }
  const inputs = [];
  for (const file of inputFiles(ds)) {
    const e = ds.manifest.files[file];
    if (!e) throw new UserError(`dataset ${name}: its manifest lists no ${file}; re-prepare it (vecbench prepare ${name} --force)`);
    inputs.push({ file, bytes: e.bytes, sha256: e.sha256 });
  }
  const out: GtPlan = {
    format: PLAN_FORMAT,
    dataset: { name, data_dir: resolve(dataDir), hash: ds.hash, n: ds.n, d: ds.d, nq: ds.nq },
    depth: cacheDepth(ds),
    inputs,
    filters: STANDARD_KINDS.map((k) => k.name),
    shards: plan,
  };
  writeJsonAtomic(join(outDir, PLAN_FILE), out);
  return out;
}

export function readPlan(planDir: string): GtPlan {
  const path = join(planDir, PLAN_FILE);
  if (!existsSync(path)) throw new UserError(`${path} does not exist; write a plan first (vecbench groundtruth plan NAME --shards N --out ${planDir})`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw new UserError(`${path} is not valid JSON (corrupt); write the plan again (vecbench groundtruth plan NAME --shards N --out ${planDir})`);
  }
  const parsed = planSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(
      `${path}: field ${issue.path.join('.') || '(root)'}: ${issue.message}; write the plan again (vecbench groundtruth plan NAME --shards N --out ${planDir})`,
    );
  }
  return parsed.data;
}

/** The plan's identity, written into each shard output so a shard of another plan is refused. */
const planId = (plan: GtPlan) => sha256(JSON.stringify(plan));

/** Loads the plan's dataset and checks that the files shards read are the planned ones. Sizes
 * always; contents by sha256 when `hashFiles` (each shard does, once, before computing). */
export async function planDataset(plan: GtPlan, hashFiles: boolean): Promise<Dataset> {
  const { name, data_dir } = plan.dataset;
  const ds = await loadDataset(data_dir, name);
  for (const input of plan.inputs) {
    const path = join(ds.dir, input.file);
    const bad = !existsSync(path) || statSync(path).size !== input.bytes || (hashFiles && (await sha256File(path)) !== input.sha256);
    if (bad)
      throw new UserError(
        `${path} is not the file the plan was written for (size or sha256 differ); write the plan again (vecbench groundtruth plan ${name} --shards N --out PLAN_DIR)`,
      );
  }
  if (ds.hash !== plan.dataset.hash)
    throw new UserError(
      `dataset ${name} changed since the plan was written; write the plan again (vecbench groundtruth plan ${name} --shards N --out PLAN_DIR)`,
    );
  return ds;
}

interface ShardFile {
  header: { format: string; plan: string; index: number; body_sha256: string; queries: number; depth: number };
  body: Buffer;
}

function readShardFile(path: string): ShardFile | null {
  if (!existsSync(path)) return null;
  try {
    const buf = readFileSync(path);
    const len = buf.readUInt32LE(0);
    const header = JSON.parse(buf.subarray(4, 4 + len).toString('utf8')) as ShardFile['header'];
    const body = buf.subarray(4 + len);
    if (header.format !== SHARD_FORMAT || sha256(body) !== header.body_sha256) return null;
    return { header, body };
  } catch {
    return null;
  }
}

/** Whether shard `index`'s output is there, whole, and of this plan. */
export function validShard(planDir: string, plan: GtPlan, index: number): ShardFile | null {
  const s = plan.shards[index];
  const f = readShardFile(join(planDir, s.output));
  const queries = s.units.reduce((a, u) => a + u.queries.length, 0);
  if (!f || f.header.plan !== planId(plan) || f.header.index !== index || f.header.queries !== queries || f.header.depth !== plan.depth) return null;
  if (f.body.length !== queries * (plan.depth * 8 + 4)) return null;
  return f;
}

/** The queries and their attributes (not the base) of the plan's dataset, after checking the
 * manifest still lists the planned files and their sizes (hashing a 1 TB base per shard would
 * cost more than the shard). */
function planQueries(plan: GtPlan): { dir: string; queries: Float32Array; queryAttrs: Record<QueryAttrName, Int32Array> } {
  const { name, data_dir, nq, d } = plan.dataset;
  const dir = datasetDir(data_dir, name);
  const again = `write the plan again (vecbench groundtruth plan ${name} --shards N --out PLAN_DIR)`;
  const parsed = manifestSchema.safeParse(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')));
  if (!parsed.success) throw new UserError(`dataset ${name}: ${join(dir, 'manifest.json')} does not parse; re-prepare it (vecbench prepare ${name} --force)`);
  for (const input of plan.inputs) {
    const e = parsed.data.files[input.file];
    const path = join(dir, input.file);
    if (!e || e.sha256 !== input.sha256 || !existsSync(path) || statSync(path).size !== input.bytes)
      throw new UserError(`${path} is not the file the plan was written for; ${again}`);
  }
  const read = (file: string, words: number) => {
    const buf = readFileSync(join(dir, file));
    if (buf.length !== words * 4)
      throw new UserError(`${join(dir, file)} has ${buf.length} bytes, not ${words * 4}; re-prepare the dataset (vecbench prepare ${name} --force)`);
    const ab = new ArrayBuffer(buf.length);
    new Uint8Array(ab).set(buf);
    return ab;
  };
  const queryAttrs = {} as Record<QueryAttrName, Int32Array>;
  // Only the attributes on disk: the derived ones (region) belong to no standard filter.
  for (const a of QUERY_ATTRIBUTES) if (parsed.data.files[fileNames.queryAttr(a)]) queryAttrs[a] = new Int32Array(read(fileNames.queryAttr(a), nq));
  // A set without real attributes: its queries carry -1, as loadDataset gives them.
  if (!parsed.data.real_attributes) Object.assign(queryAttrs, noRealQueries(nq));
  return { dir, queries: new Float32Array(read(fileNames.queries, nq * d)), queryAttrs };
}

/** A shard of part of the rows: the base read in blocks within VECBENCH_GT_MEMORY, each filter
 * kind's partial lists checkpointed beside the output (resumable), as outofcore.ts does. */
function rowRangeShard(
  planDir: string,
  plan: GtPlan,
  index: number,
  out: { ids: Int32Array; dists: Float32Array; matches: Int32Array },
  progress: Progress,
): void {
  const shard = plan.shards[index];
  const { n, d, nq } = plan.dataset;
  const depth = plan.depth;
  const src = planQueries(plan);
  const manifest = JSON.parse(readFileSync(join(src.dir, 'manifest.json'), 'utf8')) as { metric: 'ip' | 'cosine' | 'l2' };
  const backend = pickBackend('auto');
  const rows = shard.rows[1] - shard.rows[0];
  const blockRows = Math.max(256, Math.min(rows, Math.floor(gtMemoryBytes() / (d * 4))));
  let base = 0;
  for (const filterName of plan.filters) {
    const units = shard.units.filter((u) => u.filter === filterName);
    if (units.length === 0) continue;
    const groups = units.map((u) => ({ filter: filterKind(u.filter).forQuery(u.queries[0], src.queryAttrs), queries: Int32Array.from(u.queries) }));
    const checkpoint = join(planDir, `shard-${index}.${filterName}.ckpt`);
    const p = runShard({
      dir: src.dir,
      n,
      d,
      metric: manifest.metric,
      depth,
      nq,
      queries: src.queries,
      groups,
      range: shard.rows,
      blockRows,
      backend,
      threads: availableParallelism(),
      checkpoint,
      header: JSON.stringify({ plan: planId(plan), index, filter: filterName, blockRows }),
      checkpointEveryMs: 30_000,
    });
    for (const u of units) {
      for (const q of u.queries) {
        out.ids.set(p.ids.subarray(q * depth, (q + 1) * depth), base * depth);
        out.dists.set(p.dists.subarray(q * depth, (q + 1) * depth), base * depth);
        out.matches[base] = p.matches[q];
        base++;
      }
      progress.update(base, 'queries');
    }
  }
}

/** Removes a shard's checkpoints once its output is written. */
function clearCheckpoints(planDir: string, plan: GtPlan, index: number): void {
  for (const f of plan.filters) rmSync(join(planDir, `shard-${index}.${f}.ckpt`), { force: true });
}

export const shardFix = (planDir: string, index: number) => `vecbench groundtruth shard ${planDir} --index ${index}`;

/** Computes shard `index` of a plan and writes its output atomically; a shard whose output is
 * already there and valid is not computed again. Returns whether it computed. */
export async function runPlanShard(planDir: string, index: number, opts: { quiet?: boolean } = {}): Promise<boolean> {
  const plan = readPlan(planDir);
  if (!(Number.isInteger(index) && index >= 0 && index < plan.shards.length))
    throw new UserError(`--index ${index} is not a shard of ${join(planDir, PLAN_FILE)}; give --index 0..${plan.shards.length - 1}`);
  if (validShard(planDir, plan, index)) {
    if (!opts.quiet) log(`ground truth shard ${index}: already done (${join(planDir, plan.shards[index].output)})`);
    return false;
  }
  const shard = plan.shards[index];
  const depth = plan.depth;
  const queries = shard.units.reduce((a, u) => a + u.queries.length, 0);
  const ids = new Int32Array(queries * depth).fill(-1);
  const dists = new Float32Array(queries * depth).fill(Infinity);
  const matches = new Int32Array(queries);
  const out = { ids, dists, matches };
  const progress = new Progress(`ground truth shard ${index} of ${plan.shards.length} (${plan.dataset.name})`, queries, opts.quiet);
  if (shard.rows[0] === 0 && shard.rows[1] === plan.dataset.n) {
    // All rows: the same calls as prepare's, on the dataset in memory.
    const ds = await planDataset(plan, true);
    let base = 0;
    for (const u of shard.units) {
      const filter: FilterExpr | null = filterKind(u.filter).forQuery(u.queries[0], ds.queryAttrs);
      const slots = new Map(u.queries.map((q, j) => [q, base + j]));
      computeUnit(ds, { filter, queries: u.queries }, depth, out, { slot: (q) => slots.get(q)! });
      base += u.queries.length;
      progress.update(base, 'queries');
    }
  } else rowRangeShard(planDir, plan, index, out, progress);
  progress.done();
  const body = Buffer.concat([bytesOf(ids), bytesOf(dists), bytesOf(matches)]);
  const head = Buffer.from(JSON.stringify({ format: SHARD_FORMAT, plan: planId(plan), index, body_sha256: sha256(body), queries, depth }));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(head.length, 0);
  writeFileAtomic(join(planDir, shard.output), Buffer.concat([len, head, body]));
  clearCheckpoints(planDir, plan, index);
  return true;
}

const bytesOf = (a: Int32Array | Float32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
