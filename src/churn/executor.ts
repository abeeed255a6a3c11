// Runs one runbook against one engine (a participant host, or an in-process session in tests).
// The harness keeps its own record of the live rows (LiveStore), so every read is scored
// against the exact top-k of the rows live when it started, filters included, and every
// returned id that was deleted before the read started is a tombstone leak, listed with the
// step. Steps run in order; the first failed step ends the runbook (the engine's state is then
// unknown), keeping the steps before it.
import type { FilterExpr, Knobs, Participant, RowAttributes, RowBatch } from '../contracts.ts';
import { ATTRIBUTES } from '../contracts.ts';
import { filterFields, filterKind, filterOps, groupKey, parseGroupKey, type GroupKey } from '../datasets/groups.ts';
import type { Dataset } from '../datasets/layout.ts';
import { summarize, type QueryScore } from '../metrics/recall.ts';
import { mean, percentile } from '../metrics/stats.ts';
import { ladderFor, type SettingsFile } from '../runner/participants.ts';
import { latencySummary } from '../metrics/latency.ts';
import { queryOrder } from '../runner/query-order.ts';
import { makeRng } from '../util/hash.ts';
import { LiveStore } from './live.ts';
import type { ChurnCaps, ChurnHostReply, ChurnHostRequest, WirePlan, WireRows, WriteOp } from './protocol.ts';
import type { DeleteStep, FreshnessStep, InsertStep, MixedStep, PointSpec, Runbook, SearchStep, Step, UpsertStep } from './runbook.ts';
import type { FreshnessResult, Leak, MixedResult, RunbookResult, SearchResult, Spread, StepResult, WindowResult } from './schema.ts';
import { SnapshotTruth, liveTruth, scoreRead } from './truth.ts';

/** Where the runbook's requests go: a participant host over IPC, or a session in this process. */
export interface ChurnTarget {
  request<T extends ChurnHostReply['type']>(req: ChurnHostRequest, timeoutS: number): Promise<Extract<ChurnHostReply, { type: T }>>;
  /** Bytes allocated by the engine's data directories, measured by the harness (null: no
   * directory known), beside the engine's own diskBytes(). */
  dirBytes?(): number | null;
}

interface ExecParticipant {
  name: string;
  settings: Pick<SettingsFile, 'ladders' | 'batch_size'>;
  filters: Participant['filters'];
  concurrentSearch: boolean;
}

export interface ExecOptions {
  loadTimeoutS: number;
  /** Time limit of one write, search, compaction or disk step; freshness and mixed get their
   * own length on top. */
  stepTimeoutS: number;
  onStep?: (index: number, total: number, what: string) => void;
}

const LEAKS_LISTED = 100;
/** Queries a recall-target point is chosen on (the first of the shuffled order). */
const CALIBRATION_QUERIES = 100;

/** A step the participant cannot do: recorded as unsupported with the reason. */
class Unsupported extends Error {}

const OP_CODE: Record<WriteOp, number> = { insert: 0, upsert: 1, delete: 2 };

function spread(values: number[]): Spread | null {
  const xs = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (xs.length === 0) return null;
  return { p50: percentile(xs, 50), p95: percentile(xs, 95), max: xs[xs.length - 1], mean: mean(xs) };
}

function finiteOrNull(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}

interface PointChoice {
  ladder_index: number;
  knobs: Knobs;
  rule: string;
  calibration?: { ladder_index: number; recall: number }[];
}

export class RunbookExecutor {
  readonly store: LiveStore;
  private readonly order: Int32Array;
  private readonly calibration: number;
  private cursor: number;
  /** The step (1-based) that made each write version; version 0 is the load. */
  private readonly versionStep: number[] = [1];
  private readonly points = new Map<string, PointChoice>();
  private readonly t0 = performance.now();

  constructor(
    private readonly rb: Runbook,
    private readonly ds: Dataset,
    private readonly p: ExecParticipant,
    private readonly target: ChurnTarget,
    private readonly caps: ChurnCaps,
    private readonly result: RunbookResult,
    private readonly save: () => void,
    private readonly opts: ExecOptions,
  ) {
    this.store = new LiveStore(ds);
    this.order = queryOrder(ds.nq);
    this.calibration = Math.min(CALIBRATION_QUERIES, Math.max(1, ds.nq - 1));
    this.cursor = this.calibration;
  }

  async run(): Promise<void> {
    const steps = this.rb.steps;
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i];
      this.opts.onStep?.(i, steps.length, `${step.op}${'label' in step && step.label ? ` (${step.label})` : ''}`);
      const rec: StepResult = { index: i + 1, op: step.op, status: 'done', at_s: (performance.now() - this.t0) / 1000, live_rows: 0 };
      if ('label' in step && step.label) rec.label = step.label;
      try {
        await this.runStep(step, i, rec);
      } catch (e) {
        if (e instanceof Unsupported) {
          rec.status = 'unsupported';
          rec.reason = e.message;
        } else {
          rec.status = 'failed';
          rec.reason = e instanceof Error ? e.message : String(e);
          rec.live_rows = this.store.liveCount;
          this.result.steps.push(rec);
          this.result.status = 'failed';
          this.result.reason = `step ${i + 1} (${step.op}) failed: ${rec.reason}`;
          this.save();
          return;
        }
      }
      rec.live_rows = this.store.liveCount;
      this.result.steps.push(rec);
      this.save();
    }
    this.opts.onStep?.(steps.length, steps.length, 'done');
    this.result.status = 'measured';
  }

  private rng(stepIndex: number) {
    return makeRng((Math.imul(this.rb.seed, 1_000_003) + stepIndex * 7919 + 1) >>> 0);
  }

  private addLeak(leak: Leak): void {
    this.result.leaks.total++;
    if (this.result.leaks.listed.length < LEAKS_LISTED) this.result.leaks.listed.push(leak);
  }

  /** Next `count` queries of the shuffled order (after the calibration queries), wrapping. */
  private takeQueries(count: number): number[] {
    const span = Math.max(1, this.ds.nq - this.calibration);
    const out: number[] = [];
    for (let i = 0; i < count; i++) {
      out.push(this.order[this.calibration + ((this.cursor - this.calibration) % span)] ?? this.order[0]);
      this.cursor++;
    }
    return out;
  }

  private queryVectors(queries: number[]): Float32Array {
    const d = this.ds.d;
    const out = new Float32Array(queries.length * d);
    queries.forEach((q, i) => out.set(this.ds.queries.subarray(q * d, (q + 1) * d), i * d));
    return out;
  }

  private supportReason(g: GroupKey, filters: (FilterExpr | null)[]): string | null {
    const sample = filters.find((f) => f !== null) ?? null;
    if (sample !== null) {
      const f = this.p.filters;
      if (!f) return `${this.p.name} has no filter support`;
      const field = filterFields(sample).find((x) => !f.fields.includes(x));
      if (field) return `filter field ${field} is not supported`;
      const op = filterOps(sample).find((x) => !f.ops.includes(x));
      if (op) return `filter operator ${op} is not supported`;
    }
    if (ladderFor(this.p.settings as SettingsFile, g.filter, g.k).length === 0) return `settings.json has no ladder rule for ${groupKey(g)}`;
    return null;
  }

  private filtersFor(g: GroupKey, queries: number[]): (FilterExpr | null)[] {
    const kind = filterKind(g.filter);
    return queries.map((q) => kind.forQuery(q, this.ds.queryAttrs));
  }

  /** Scores searches of dataset queries at the current snapshot; counts leaks. */
  private scoreSearches(
    queries: number[],
    filters: (FilterExpr | null)[],
    k: number,
    ids: Int32Array,
    offsets: Int32Array,
    errors: (string | null)[],
    stepIndex: number,
    op: string,
  ): { scores: QueryScore[]; leaks: number } {
    const s = this.store.version;
    const vectors = this.queryVectors(queries);
    const truth = liveTruth(this.store, s, vectors, filters, k);
    const scores: QueryScore[] = [];
    let leaks = 0;
    queries.forEach((q, i) => {
      const returned = ids.subarray(offsets[i], offsets[i + 1]);
      for (const id of returned) {
        const v = this.store.leakVersion(id, s, s);
        if (v > 0) {
          leaks++;
          this.addLeak({ id, step: stepIndex + 1, op, deleted_in_step: this.versionStep[v] ?? 0, query: q });
        }
      }
      if (errors[i] !== null) return;
      scores.push(
        scoreRead({ store: this.store, truth, qi: i, query: vectors.subarray(i * this.ds.d, (i + 1) * this.ds.d), filter: filters[i], returned, k, s, e: s }),
      );
    });
    return { scores, leaks };
  }

  /** The ladder point a step reads at; a recall target is measured once per group on the
   * calibration queries against the rows live then, and kept for the rest of the runbook so
   * every step of the group reads at the same setting. */
  private async choosePoint(g: GroupKey, spec: PointSpec, stepIndex: number): Promise<PointChoice> {
    const key = `${groupKey(g)} ${JSON.stringify(spec)}`;
    const known = this.points.get(key);
    if (known) return known;
    const ladder = ladderFor(this.p.settings as SettingsFile, g.filter, g.k);
    if (ladder.length === 0) throw new Unsupported(`settings.json has no ladder rule for ${groupKey(g)}`);
    let choice: PointChoice;
    if (spec === 'first') choice = { ladder_index: 0, knobs: ladder[0], rule: 'first' };
    else if (spec === 'last') choice = { ladder_index: ladder.length - 1, knobs: ladder[ladder.length - 1], rule: 'last' };
    else if (typeof spec === 'number') {
      if (spec >= ladder.length) throw new Unsupported(`point ${spec} is past the ${ladder.length} points of the ${groupKey(g)} ladder`);
      choice = { ladder_index: spec, knobs: ladder[spec], rule: `index ${spec}` };
    } else {
      const queries = Array.from(this.order.subarray(0, this.calibration));
      const filters = this.filtersFor(g, queries);
      const tried: { ladder_index: number; recall: number }[] = [];
      let pick = -1;
      for (let li = 0; li < ladder.length; li++) {
        const r = await this.target.request<'churn-searched'>(
          { type: 'churn-search', knobs: ladder[li], k: g.k, queries, filters, clients: 1 },
          this.opts.stepTimeoutS,
        );
        const { scores } = this.scoreSearches(queries, filters, g.k, r.reply.ids, r.reply.offsets, r.reply.errors, stepIndex, 'calibration');
        const recall = summarize(scores).recall;
        tried.push({ ladder_index: li, recall: Number.isFinite(recall) ? recall : 0 });
        if (recall >= spec.recall) {
          pick = li;
          break;
        }
      }
      const best = Math.max(...tried.map((t) => t.recall));
      const rule =
        pick >= 0 ? `first with recall >= ${spec.recall}` : `first with recall >= ${spec.recall} (not reached: max ${best.toFixed(3)}; the last point)`;
      if (pick < 0) pick = ladder.length - 1;
      choice = { ladder_index: pick, knobs: ladder[pick], rule, calibration: tried };
    }
    this.points.set(key, choice);
    return choice;
  }

  private async runStep(step: Step, i: number, rec: StepResult): Promise<void> {
    switch (step.op) {
      case 'load': {
        const [from, to] = step.rows ?? [0, this.ds.n];
        const r = await this.target.request<'churn-loaded'>(
          { type: 'churn-load', from, to, batchSize: step.batch ?? this.p.settings.batch_size ?? 10_000 },
          this.opts.loadTimeoutS,
        );
        this.store.load(from, to);
        rec.load = { rows: r.rows, ingest_s: r.ingestS, index_s: r.indexS };
        return;
      }
      case 'insert':
      case 'upsert':
      case 'delete':
        return this.write(step, i, rec);
      case 'search':
        rec.search = await this.search(step, i);
        return;
      case 'wait': {
        if (!this.caps.compact) throw new Unsupported('the participant has no compact(): no flush, compaction or optimize to wait for');
        const r = await this.target.request<'churn-compacted'>({ type: 'churn-compact' }, this.opts.stepTimeoutS);
        if (r.durationS === null) throw new Unsupported('the participant has no compact()');
        rec.wait = { duration_s: r.durationS };
        return;
      }
      case 'disk': {
        // The engine's own count where it has one, and the harness's measure of its data
        // directories (st_blocks, as resources.disk_bytes) where the harness knows them.
        const engine = this.caps.disk ? (await this.target.request<'churn-disk'>({ type: 'churn-disk' }, this.opts.stepTimeoutS)).bytes : null;
        const dir = this.target.dirBytes?.() ?? null;
        if (engine === null && dir === null) throw new Unsupported('the participant has no diskBytes() and the harness knows no data directory of it');
        rec.disk = { bytes: engine, dir_bytes: dir };
        return;
      }
      case 'freshness':
        rec.freshness = await this.freshness(step, i);
        return;
      case 'mixed':
        rec.mixed = await this.mixed(step, i);
        return;
    }
  }

  private async write(step: InsertStep | UpsertStep | DeleteStep, i: number, rec: StepResult): Promise<void> {
    const op = step.op;
    if (!this.caps[op]) throw new Unsupported(`the participant has no ${op}()`);
    const store = this.store;
    const rng = this.rng(i);
    const range = (r: [number, number]) => Int32Array.from({ length: r[1] - r[0] }, (_, j) => r[0] + j);
    let wire: WireRows;
    let rows: RowBatch | null = null;
    let fromBase = false;
    let skipped = 0;
    if (step.op === 'insert') {
      if (step.rows) {
        const all = range(step.rows);
        const ids = all.filter((id) => !store.isLive(id));
        skipped = all.length - ids.length;
        rows = store.baseRows(ids);
        fromBase = true;
        wire = { ids };
      } else {
        const count = step.new ?? Math.round((step.new_share ?? 0) * this.ds.n);
        rows = store.movedRows(store.takeNewIds(count), rng);
        wire = rows;
      }
    } else if (step.op === 'upsert') {
      const ids = step.rows ? range(step.rows) : store.drawLive(Math.round((step.share ?? 0) * store.liveCount), rng);
      rows = store.movedRows(ids, rng);
      wire = rows;
    } else {
      let ids: Int32Array;
      if (step.rows) {
        const all = range(step.rows);
        ids = all.filter((id) => store.isLive(id));
        skipped = all.length - ids.length;
      } else ids = store.drawLive(Math.round((step.share ?? 0) * store.liveCount), rng);
      wire = { ids };
    }
    const count = wire.ids.length;
    const r =
      count === 0
        ? { durationS: 0, batches: 0 }
        : await this.target.request<'churn-written'>({ type: 'churn-write', op, rows: wire, batchSize: step.batch }, this.opts.stepTimeoutS);
    const v = store.nextVersion();
    this.versionStep[v] = i + 1;
    if (op === 'delete') store.remove(wire.ids, v);
    else store.put(rows!, v, fromBase);
    rec.write = {
      rows: count,
      skipped,
      batch: step.batch,
      batches: r.batches,
      duration_s: r.durationS,
      rows_per_s: r.durationS > 0 ? count / r.durationS : null,
    };
  }

  private async search(step: SearchStep, i: number): Promise<SearchResult> {
    const g = parseGroupKey(step.group);
    const queries = this.takeQueries(step.queries);
    const filters = this.filtersFor(g, queries);
    const why = this.supportReason(g, filters);
    if (why) throw new Unsupported(why);
    const choice = await this.choosePoint(g, step.point, i);
    const r = await this.target.request<'churn-searched'>(
      { type: 'churn-search', knobs: choice.knobs, k: g.k, queries, filters, clients: step.clients },
      this.opts.stepTimeoutS,
    );
    const reply = r.reply;
    const { scores, leaks } = this.scoreSearches(queries, filters, g.k, reply.ids, reply.offsets, reply.errors, i, 'search');
    const s = summarize(scores);
    const failed = reply.errors.filter((e) => e !== null);
    const ok = Float64Array.from(reply.latenciesMs.filter((_, j) => reply.errors[j] === null));
    return {
      ...choice,
      group: groupKey(g),
      filter: g.filter,
      k: g.k,
      queries: queries.length,
      clients: this.p.concurrentSearch ? Math.min(step.clients, queries.length) : 1,
      recall: finiteOrNull(s.recall),
      recall_strict: finiteOrNull(s.recallStrict),
      recall_threshold: finiteOrNull(s.recallThreshold),
      short_results: s.shortResults,
      low_recall_share: finiteOrNull(s.lowRecallShare),
      unknown_ids: s.unknownIds,
      duplicate_ids: s.duplicateIds,
      filter_violations: s.filterViolations,
      errors: failed.length,
      ...(failed.length > 0 ? { first_error: failed[0]! } : {}),
      qps: reply.wallS > 0 ? queries.length / reply.wallS : 0,
      latency_ms: ok.length > 0 ? latencySummary(ok) : null,
      leaks,
    };
  }

  private async freshness(step: FreshnessStep, i: number): Promise<FreshnessResult> {
    if (!this.caps.insert) throw new Unsupported('the participant has no insert()');
    const g = { filter: 'none', k: step.k };
    const choice = await this.choosePoint(g, step.point, i);
    const store = this.store;
    const rows = store.movedRows(store.takeNewIds(step.writes), this.rng(i));
    const s0 = store.version;
    const limit = this.opts.stepTimeoutS + step.writes * (step.timeout_ms / 1000 + 1);
    const r = (
      await this.target.request<'churn-freshness'>(
        {
          type: 'churn-freshness',
          knobs: choice.knobs,
          rows: rows as Required<WireRows>,
          k: step.k,
          timeoutMs: step.timeout_ms,
          giveUpAfter: step.give_up_after,
          tombstones: store.deadIds(),
        },
        limit,
      )
    ).reply;
    const d = this.ds.d;
    let failed = 0;
    let firstError: string | undefined;
    for (let w = 0; w < r.applied; w++) {
      const v = store.nextVersion();
      this.versionStep[v] = i + 1;
      if (Number.isNaN(r.ackMs[w])) {
        failed++;
        firstError ??= r.errors[w] ?? 'insert failed';
        continue;
      }
      firstError ??= r.errors[w] ?? undefined;
      const one: RowBatch = { ids: rows.ids.slice(w, w + 1), vectors: rows.vectors.slice(w * d, (w + 1) * d), attrs: sliceAttrs(rows.attrs, w, w + 1) };
      store.put(one, v);
    }
    for (const leak of r.leaks) {
      const v = store.leakVersion(leak.id, s0, s0);
      this.addLeak({ id: leak.id, step: i + 1, op: 'freshness', deleted_in_step: this.versionStep[v] ?? 0, query: leak.write });
    }
    const visible = Array.from(r.visibleMs).filter((x) => Number.isFinite(x));
    return {
      ...choice,
      writes: step.writes,
      issued: r.applied,
      k: step.k,
      timeout_ms: step.timeout_ms,
      visible: visible.length,
      never_visible: r.applied - failed - visible.length,
      failed_writes: failed,
      ...(firstError !== undefined ? { first_error: firstError } : {}),
      gave_up: r.gaveUp,
      visible_ms: spread(visible),
      ack_ms: spread(Array.from(r.ackMs)),
      polls: r.polls.reduce((a, b) => a + b, 0),
      leaks: r.leaks.length,
    };
  }

  /** The writer's ops, drawn up front over a running copy of the live ids. */
  private planMixed(step: MixedStep, count: number, rng: ReturnType<typeof makeRng>): { plan: WirePlan; counts: Record<WriteOp, number> } {
    const store = this.store;
    const d = this.ds.d;
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

  private async mixed(step: MixedStep, i: number): Promise<MixedResult> {
    for (const op of ['insert', 'upsert', 'delete'] as const) {
      if (step.mix[op] > 0 && !this.caps[op]) throw new Unsupported(`the write mix has ${op} but the participant has no ${op}()`);
    }
    const g = parseGroupKey(step.group);
    const queries = this.takeQueries(step.queries);
    const filters = this.filtersFor(g, queries);
    const why = this.supportReason(g, filters);
    if (why) throw new Unsupported(why);
    const choice = await this.choosePoint(g, step.point, i);
    const store = this.store;
    const d = this.ds.d;
    const planned = Math.ceil(step.duration_s * step.write_rate) + 1;
    const { plan } = this.planMixed(step, planned, this.rng(i));
    const liveBefore = store.liveCount;
    const limit = this.opts.stepTimeoutS + step.duration_s * 2;
    const r = (
      await this.target.request<'churn-mixed'>(
        { type: 'churn-mixed', knobs: choice.knobs, k: g.k, queries, filters, readers: step.readers, durationS: step.duration_s, rate: step.write_rate, plan },
        limit,
      )
    ).reply;

    // The truth at the start, kept deep enough to follow the writes (built before they are
    // recorded); then replay the issued ops into the live record: op w is version v0 + w + 1.
    const allVectors = this.queryVectors(queries);
    const v0 = store.version;
    const truthFrom = new SnapshotTruth(store, v0, allVectors, filters, g.k);
    const liveAfter = new Int32Array(r.issued + 1);
    liveAfter[0] = store.liveCount;
    const done: Record<WriteOp, number> = { insert: 0, upsert: 0, delete: 0 };
    let failedWrites = 0;
    let firstWriteError: string | undefined;
    for (let w = 0; w < r.issued; w++) {
      const v = store.nextVersion();
      this.versionStep[v] = i + 1;
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
          this.addLeak({ id, step: i + 1, op: 'mixed', deleted_in_step: this.versionStep[v] ?? 0, query: queries[reads.pos[x]] });
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
}

function sliceAttrs(attrs: RowAttributes, from: number, to: number): RowAttributes {
  return Object.fromEntries(ATTRIBUTES.map((a) => [a, attrs[a].slice(from, to)])) as RowAttributes;
}
