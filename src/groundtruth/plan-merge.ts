// The merge of a sharded ground-truth plan (plan.ts): every shard's output checked, each filter
// kind's lists assembled (a query split over row ranges merged by (distance, id)) and stored in
// the dataset's cache, the same files `vecbench prepare` writes. Apart from plan.ts, which
// writes plans and runs shards.
import { join } from 'node:path';
import type { Dataset } from '../datasets/layout.ts';
import { UserError } from '../util/errors.ts';
import { storeGroundTruth } from './cache.ts';
import { PLAN_FILE, planDataset, readPlan, shardFix, validShard } from './plan.ts';

/** Merges the sorted list at ids/dists[from..] into query q's (both sorted by (distance, id),
 * -1 / +Inf padded), keeping depth: the lists of disjoint row ranges. */
function mergeLists(o: { ids: Int32Array; dists: Float32Array }, q: number, depth: number, ids: Int32Array, dists: Float32Array, from: number): void {
  const at = q * depth;
  const aI = o.ids.slice(at, at + depth);
  const aD = o.dists.slice(at, at + depth);
  let a = 0;
  let b = 0;
  for (let m = 0; m < depth; m++) {
    const bOk = b < depth && ids[from + b] >= 0;
    const aOk = a < depth && aI[a] >= 0;
    const takeA = aOk && (!bOk || aD[a] < dists[from + b] || (aD[a] === dists[from + b] && aI[a] < ids[from + b]));
    if (takeA) {
      o.ids[at + m] = aI[a];
      o.dists[at + m] = aD[a++];
    } else if (bOk) {
      o.ids[at + m] = ids[from + b];
      o.dists[at + m] = dists[from + b++];
    } else {
      o.ids[at + m] = -1;
      o.dists[at + m] = Infinity;
    }
  }
}

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
      {
        filter: f,
        ids: new Int32Array(nq * depth).fill(-1),
        dists: new Float32Array(nq * depth).fill(Infinity),
        matches: new Int32Array(nq),
        seen: new Int32Array(nq),
      },
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
        const from = slot * depth;
        if (o.seen[q] === 0) {
          o.ids.set(ids.subarray(from, from + depth), q * depth);
          o.dists.set(dists.subarray(from, from + depth), q * depth);
        } else mergeLists(o, q, depth, ids, dists, from);
        o.matches[q] += matches[slot];
        o.seen[q]++;
        slot++;
      }
    }
  });
  for (const o of out.values()) {
    const ranges = new Set(plan.shards.map((s) => s.rows.join('-'))).size;
    if (o.seen.some((c) => c !== ranges))
      throw new UserError(`${join(planDir, PLAN_FILE)}: filter ${o.filter} does not cover every query once per row range; write the plan again`);
    storeGroundTruth(ds, o);
  }
  return ds;
}
