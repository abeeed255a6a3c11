// The mixed step: a writer at a set rate beside concurrent readers for a fixed time. The host
// runs both; this side plans the writer's ops up front, then replays them into the live record
// and scores every read against the rows live while it ran, window by window. The longest
// step, so in its own file.
import type { RowAttributes } from '../contracts.ts';
import { ATTRIBUTES } from '../contracts.ts';
import { groupKey, parseGroupKey } from '../datasets/groups.ts';
import { latencySummary } from '../metrics/latency.ts';
import { summarize, type QueryScore } from '../metrics/recall.ts';
import { mean, percentile } from '../metrics/stats.ts';
import type { makeRng } from '../util/hash.ts';
import type { WirePlan, WriteOp } from './protocol.ts';
import type { MixedStep } from './runbook.ts';
import type { MixedResult, WindowResult } from './schema.ts';
import { type StepContext, Unsupported, finiteOrNull, sliceAttrs, spread } from './step-kit.ts';
import { SnapshotTruth, scoreRead } from './truth.ts';

const OP_CODE: Record<WriteOp, number> = { insert: 0, upsert: 1, delete: 2 };

/** The writer's ops, drawn up front over a running copy of the live ids. */
function planMixed(ctx: StepContext, step: MixedStep, count: number, rng: ReturnType<typeof makeRng>): { plan: WirePlan; counts: Record<WriteOp, number> } {
  const store = ctx.store;
  const d = ctx.ds.d;
  const live = Array.from(store.liveIds());
  const total = step.mix.insert + step.mix.upsert + step.mix.delete;
  const ops = new Uint8Array(count);
  const ids = new Int32Array(count);
  const vectors = new Float32Array(count * d);
  const attrs = Object.fromEntries(ATTRIBUTES.map((a) => [a, new Int32Array(count)])) as RowAttributes;
  const counts: Record<WriteOp, number> = { insert: 0, upsert: 0, delete: 0 };
  for (let w = 0; w < count; w++) {
    const u = rng.uniform() * total;
    let op: WriteOp = u < step.mix.insert ? 'insert' : u < step.mix.insert + step.mix.upsert ? 'upsert' : 'delete';
    if (op !== 'insert' && live.length === 0) op = 'insert';
    let id: number;
    if (op === 'insert') {
      id = store.takeNewIds(1)[0];
      live.push(id);
    } else {
      const j = Math.floor(rng.uniform() * live.length);
      id = live[j];
      if (op === 'delete') {
        live[j] = live[live.length - 1];
        live.pop();
      }
    }
    ops[w] = OP_CODE[op];
    ids[w] = id;
    counts[op]++;
  }
  // One draw of new vectors for every insert and upsert (it runs an exact neighbour search).
  const writes = Int32Array.from({ length: count }, (_, w) => w).filter((w) => ops[w] !== OP_CODE.delete);
  const rows = store.movedRows(
    Int32Array.from(writes, (w) => ids[w]),
    rng,
  );
  writes.forEach((w, j) => {
    vectors.set(rows.vectors.subarray(j * d, (j + 1) * d), w * d);
    for (const a of ATTRIBUTES) attrs[a][w] = rows.attrs[a][j];
  });
  return { plan: { ops, ids, vectors, attrs }, counts };
}

export async function mixedStep(ctx: StepContext, step: MixedStep, i: number): Promise<MixedResult> {
  for (const op of ['insert', 'upsert', 'delete'] as const) {
    if (step.mix[op] > 0 && !ctx.caps[op]) throw new Unsupported(`the write mix has ${op} but the participant has no ${op}()`);
  }
  const g = parseGroupKey(step.group);
  const queries = ctx.takeQueries(step.queries);
  const filters = ctx.filtersFor(g, queries);
  const why = ctx.supportReason(g, filters);
  if (why) throw new Unsupported(why);
  const choice = await ctx.choosePoint(g, step.point, i);
  const store = ctx.store;
  const d = ctx.ds.d;
  const planned = Math.ceil(step.duration_s * step.write_rate) + 1;
  const { plan } = planMixed(ctx, step, planned, ctx.rng(i));
  const liveBefore = store.liveCount;
  const limit = ctx.opts.stepTimeoutS + step.duration_s * 2;
  const r = (
    await ctx.target.request<'churn-mixed'>(
      { type: 'churn-mixed', knobs: choice.knobs, k: g.k, queries, filters, readers: step.readers, durationS: step.duration_s, rate: step.write_rate, plan },
      limit,
    )
  ).reply;

  // The truth at the start, kept deep enough to follow the writes (built before they are
  // recorded); then replay the issued ops into the live record: op w is version v0 + w + 1.
  const allVectors = ctx.queryVectors(queries);
  const v0 = store.version;
  const truthFrom = new SnapshotTruth(store, v0, allVectors, filters, g.k);
  const liveAfter = new Int32Array(r.issued + 1);
  liveAfter[0] = store.liveCount;
  const done: Record<WriteOp, number> = { insert: 0, upsert: 0, delete: 0 };
  let failedWrites = 0;
  let firstWriteError: string | undefined;
  for (let w = 0; w < r.issued; w++) {
    const v = store.nextVersion();
    ctx.versionStep[v] = i + 1;
    const op = (['insert', 'upsert', 'delete'] as const)[plan.ops[w]];
    if (r.writeErrors[w] !== null) {
      failedWrites++;
      firstWriteError ??= r.writeErrors[w]!;
    } else if (op === 'delete') {
      store.remove(plan.ids.subarray(w, w + 1), v);
      done.delete++;
    } else {
      store.put({ ids: plan.ids.slice(w, w + 1), vectors: plan.vectors.slice(w * d, (w + 1) * d), attrs: sliceAttrs(plan.attrs, w, w + 1) }, v);
      done[op]++;
    }
    liveAfter[w + 1] = store.liveCount;
  }

  // Leaks over every read; recall over a sample of each window.
  const reads = r.reads;
  const R = reads.pos.length;
  const durationMs = step.duration_s * 1000;
  const widthMs = step.window_s * 1000;
  const windows = Math.max(1, Math.ceil(durationMs / widthMs - 1e-9));
  const windowOf = (ms: number) => Math.min(windows - 1, Math.max(0, Math.floor(ms / widthMs)));
  const leaksIn = new Int32Array(windows);
  let leaks = 0;
  for (let x = 0; x < R; x++) {
    const s = v0 + reads.acked[x];
    const e = v0 + reads.issuedAtEnd[x];
    for (let j = reads.offsets[x]; j < reads.offsets[x + 1]; j++) {
      const id = reads.ids[j];
      const v = store.leakVersion(id, s, e);
      if (v > 0) {
        leaks++;
        leaksIn[windowOf(reads.startMs[x])]++;
        ctx.addLeak({ id, step: i + 1, op: 'mixed', deleted_in_step: ctx.versionStep[v] ?? 0, query: queries[reads.pos[x]] });
      }
    }
  }
  const byWindow: number[][] = Array.from({ length: windows }, () => []);
  for (let x = 0; x < R; x++) byWindow[windowOf(reads.startMs[x])].push(x);
  const sampled: number[] = [];
  for (const list of byWindow) {
    const ok = list.filter((x) => reads.failed[x] === 0);
    const m = Math.min(step.recall_samples, ok.length);
    for (let j = 0; j < m; j++) sampled.push(ok[Math.floor((j * ok.length) / m)]);
  }
  const recallOf = new Map<number, QueryScore>();
  for (const x of sampled) {
    const s = v0 + reads.acked[x];
    const p = reads.pos[x];
    const truth = truthFrom.at(p, s);
    recallOf.set(
      x,
      scoreRead({
        store,
        truth,
        qi: 0,
        query: allVectors.subarray(p * d, (p + 1) * d),
        filter: filters[p],
        returned: reads.ids.subarray(reads.offsets[x], reads.offsets[x + 1]),
        k: g.k,
        s,
        e: v0 + reads.issuedAtEnd[x],
      }),
    );
  }

  const ackTimes = Array.from(r.writeAckMs).filter((t, w) => r.writeErrors[w] === null && Number.isFinite(t));
  const timeline: WindowResult[] = [];
  let minRecall: number | null = null;
  for (let w = 0; w < windows; w++) {
    const from = w * widthMs;
    const to = Math.min(durationMs, (w + 1) * widthMs);
    const width = (to - from) / 1000;
    const list = byWindow[w];
    const lat = list.map((x) => reads.endMs[x] - reads.startMs[x]).sort((a, b) => a - b);
    const completed = Array.from(reads.endMs).filter((t) => t >= from && t < to).length;
    const scores = list.map((x) => recallOf.get(x)).filter((s): s is QueryScore => s !== undefined);
    const recall = scores.length > 0 ? mean(scores.map((s) => s.tieAware)) : null;
    if (recall !== null) minRecall = minRecall === null ? recall : Math.min(minRecall, recall);
    const ackedBy = Array.from(r.writeAckMs).filter((t) => t < to).length;
    timeline.push({
      t_s: from / 1000,
      width_s: width,
      write_rate: ackTimes.filter((t) => t >= from && t < to).length / width,
      read_qps: completed / width,
      latency_ms: lat.length > 0 ? { p50: percentile(lat, 50), p95: percentile(lat, 95), p99: percentile(lat, 99) } : null,
      recall,
      samples: scores.length,
      live_rows: liveAfter[Math.min(ackedBy, r.issued)],
      leaks: leaksIn[w],
    });
  }
  const allScores = [...recallOf.values()];
  const sum = summarize(allScores);
  const readLat = Float64Array.from({ length: R }, (_, x) => reads.endMs[x] - reads.startMs[x]).filter((_, x) => reads.failed[x] === 0);
  let lastEnd = 0;
  for (let x = 0; x < R; x++) lastEnd = Math.max(lastEnd, reads.endMs[x]);
  const readErrors = reads.failed.reduce((a, b) => a + b, 0);
  return {
    ...choice,
    group: groupKey(g),
    k: g.k,
    duration_s: step.duration_s,
    wall_s: r.wallS,
    target_rate: step.write_rate,
    achieved_write_rate: ackTimes.filter((t) => t <= durationMs).length / step.duration_s,
    writes: {
      issued: r.issued,
      acked_in_time: ackTimes.filter((t) => t <= durationMs).length,
      failed: failedWrites,
      ...(firstWriteError !== undefined ? { first_error: firstWriteError } : {}),
      ...done,
    },
    write_ack_ms: spread(Array.from(r.writeAckMs).map((t, w) => t - r.writeStartMs[w])),
    readers: r.readersUsed,
    readers_asked: step.readers,
    reads: R,
    read_errors: readErrors,
    ...(r.firstReadError !== null ? { first_read_error: r.firstReadError } : {}),
    read_qps: lastEnd > 0 ? R / (lastEnd / 1000) : 0,
    latency_ms: readLat.length > 0 ? latencySummary(readLat) : null,
    recall: finiteOrNull(sum.recall),
    min_recall: minRecall,
    recall_samples: allScores.length,
    unknown_ids: sum.unknownIds,
    filter_violations: sum.filterViolations,
    live_rows_before: liveBefore,
    live_rows_after: store.liveCount,
    timeline,
    leaks,
  };
}
