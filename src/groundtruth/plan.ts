// Sharded ground truth (docs/cluster.md): a plan splits the exact ground truth of every
// standard filter kind into shards that any scheduler runs independently (Slurm array tasks,
// Kubernetes Indexed Job pods, a shell loop), then a merge writes the dataset's cache. A shard
// is a list of whole work units of computeGroundTruth (queries sharing a filter, in the chunks
// it uses), so every query's list comes out of the same call as on one machine and the merged
// files are byte-identical to what `vecbench prepare` writes.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { FilterExpr } from '../contracts.ts';
import { STANDARD_KINDS, filterKind } from '../datasets/groups.ts';
import { fileNames, loadDataset, type Dataset } from '../datasets/layout.ts';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic.ts';
import { UserError } from '../util/errors.ts';
import { sha256, sha256File } from '../util/hash.ts';
import { Progress, log } from '../util/progress.ts';
import { cacheDepth, computeUnit, groundTruthUnits, storeGroundTruth } from './cache.ts';

const PLAN_FORMAT = 'vecbench-gt-plan/1';
const SHARD_FORMAT = 'vecbench-gt-shard/1';
const PLAN_FILE = 'plan.json';

const unitSchema = z.object({ filter: z.string(), queries: z.array(z.number().int().nonnegative()).min(1) });
const planSchema = z.object({
  format: z.literal(PLAN_FORMAT),
  dataset: z.object({
    name: z.string().min(1),
    data_dir: z.string().min(1),
    hash: z.string(),
    n: z.number().int().positive(),
    d: z.number().int().positive(),
    nq: z.number().int().positive(),
  }),
  depth: z.number().int().positive(),
  /** Every file a shard reads, with its size and sha256 (from the dataset's manifest). */
  inputs: z.array(z.object({ file: z.string(), bytes: z.number().int().nonnegative(), sha256: z.string().regex(/^[0-9a-f]{64}$/) })),
  filters: z.array(z.string()).min(1),
  shards: z
    .array(
      z.object({
        index: z.number().int().nonnegative(),
        /** Relative to the plan directory. */
        output: z.string(),
        rows: z.tuple([z.number().int().nonnegative(), z.number().int().positive()]),
        units: z.array(unitSchema).min(1),
      }),
    )
    .min(1),
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
export async function writePlan(dataDir: string, name: string, shards: number, outDir: string): Promise<GtPlan> {
  if (!(Number.isInteger(shards) && shards >= 1)) throw new UserError(`--shards ${shards} is not a positive whole number; give e.g. --shards 4`);
  const ds = await loadDataset(dataDir, name);
  const units = STANDARD_KINDS.flatMap((k) =>
    groundTruthUnits(ds, k.name).map((u) => ({ filter: k.name, queries: u.queries, cost: u.queries.length * (1 + (k.nominal ?? 1)) })),
  );
  if (shards > units.length)
    throw new UserError(`--shards ${shards} exceeds the ${units.length} work units of ${name}; give --shards ${units.length} or fewer`);
  const total = units.reduce((a, u) => a + u.cost, 0);
  const plan: GtPlan['shards'] = [];
  let i = 0;
  let spent = 0;
  for (let s = 0; s < shards; s++) {
    const goal = (total * (s + 1)) / shards;
    const mine: { filter: string; queries: number[] }[] = [];
    const last = s === shards - 1;
    while (i < units.length) {
      // Stop at this shard's share, or when every later shard needs one of the units left.
      const needed = units.length - i <= shards - s - 1;
      if (mine.length > 0 && !last && (needed || spent + units[i].cost / 2 > goal)) break;
      spent += units[i].cost;
      mine.push({ filter: units[i].filter, queries: units[i].queries });
      i++;
    }
    plan.push({ index: s, output: `shard-${s}.bin`, rows: [0, ds.n], units: mine });
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
async function planDataset(plan: GtPlan, hashFiles: boolean): Promise<Dataset> {
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
function validShard(planDir: string, plan: GtPlan, index: number): ShardFile | null {
  const s = plan.shards[index];
  const f = readShardFile(join(planDir, s.output));
  const queries = s.units.reduce((a, u) => a + u.queries.length, 0);
  if (!f || f.header.plan !== planId(plan) || f.header.index !== index || f.header.queries !== queries || f.header.depth !== plan.depth) return null;
  if (f.body.length !== queries * (plan.depth * 8 + 4)) return null;
  return f;
}

const shardFix = (planDir: string, index: number) => `vecbench groundtruth shard ${planDir} --index ${index}`;

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
  const ds = await planDataset(plan, true);
  const shard = plan.shards[index];
  const depth = plan.depth;
  const queries = shard.units.reduce((a, u) => a + u.queries.length, 0);
  const ids = new Int32Array(queries * depth).fill(-1);
  const dists = new Float32Array(queries * depth).fill(Infinity);
  const matches = new Int32Array(queries);
  const progress = new Progress(`ground truth shard ${index} of ${plan.shards.length} (${ds.name})`, queries, opts.quiet);
  let base = 0;
  for (const u of shard.units) {
    const kind = filterKind(u.filter);
    const filter: FilterExpr | null = kind.forQuery(u.queries[0], ds.queryAttrs);
    const slots = new Map(u.queries.map((q, j) => [q, base + j]));
    computeUnit(ds, { filter, queries: u.queries }, depth, { ids, dists, matches }, { slot: (q) => slots.get(q)! });
    base += u.queries.length;
    progress.update(base, 'queries');
  }
  progress.done();
  const body = Buffer.concat([bytesOf(ids), bytesOf(dists), bytesOf(matches)]);
  const head = Buffer.from(JSON.stringify({ format: SHARD_FORMAT, plan: planId(plan), index, body_sha256: sha256(body), queries, depth }));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(head.length, 0);
  writeFileAtomic(join(planDir, shard.output), Buffer.concat([len, head, body]));
  return true;
}

const bytesOf = (a: Int32Array | Float32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** Checks every shard, assembles each filter kind's lists and stores them in the dataset's
 * cache, the same files `vecbench prepare` writes. */
export async function mergePlan(planDir: string): Promise<Dataset> {
  const plan = readPlan(planDir);
  const files = plan.shards.map((s, i) => {
    const f = validShard(planDir, plan, i);
    if (!f)
      throw new UserError(`shard ${i} of ${join(planDir, PLAN_FILE)} is missing or corrupt (${join(planDir, s.output)}); compute it: ${shardFix(planDir, i)}`);
    return f;
  });
  const ds = await planDataset(plan, false);
  const { nq } = ds;
  const depth = plan.depth;
  const out = new Map(
    plan.filters.map((f) => [
      f,
      { filter: f, ids: new Int32Array(nq * depth).fill(-1), dists: new Float32Array(nq * depth).fill(Infinity), matches: new Int32Array(nq), seen: 0 },
    ]),
  );
  plan.shards.forEach((s, i) => {
    const body = files[i].body;
    const queries = files[i].header.queries;
    // Copy into aligned buffers: the body starts at an arbitrary offset of the file.
    const all = new Uint8Array(body.length);
    all.set(body);
    const ids = new Int32Array(all.buffer, 0, queries * depth);
    const dists = new Float32Array(all.buffer, queries * depth * 4, queries * depth);
    const matches = new Int32Array(all.buffer, queries * depth * 8, queries);
    let slot = 0;
    for (const u of s.units) {
      const o = out.get(u.filter);
      if (!o) throw new UserError(`${join(planDir, PLAN_FILE)}: shard ${i} names filter ${u.filter} the plan does not list; write the plan again`);
      for (const q of u.queries) {
        o.ids.set(ids.subarray(slot * depth, (slot + 1) * depth), q * depth);
        o.dists.set(dists.subarray(slot * depth, (slot + 1) * depth), q * depth);
        o.matches[q] = matches[slot];
        o.seen++;
        slot++;
      }
    }
  });
  for (const o of out.values()) {
    if (o.seen !== nq) throw new UserError(`${join(planDir, PLAN_FILE)}: filter ${o.filter} covers ${o.seen} of ${nq} queries; write the plan again`);
    storeGroundTruth(ds, o);
  }
  return ds;
}
