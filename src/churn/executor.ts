// Runs one runbook against one engine (a participant host, or an in-process session in tests).
// The harness keeps its own record of the live rows (LiveStore), so every read is scored
// against the exact top-k of the rows live when it started, filters included, and every
// returned id that was deleted before the read started is a tombstone leak, listed with the
// step. Steps run in order; the first failed step ends the runbook (the engine's state is then
// unknown), keeping the steps before it. The load, write, search, wait and disk steps are here;
// the freshness and mixed steps are in freshness-step.ts and mixed-step.ts.
import type { FilterExpr, Participant, RowBatch } from '../contracts.ts';
import { filterFields, filterKind, filterOps, groupKey, parseGroupKey, type GroupKey } from '../datasets/groups.ts';
import type { Dataset } from '../datasets/layout.ts';
import { summarize, type QueryScore } from '../metrics/recall.ts';
import { ladderFor, type SettingsFile } from '../runner/participants.ts';
import { latencySummary } from '../metrics/latency.ts';
import { queryOrder } from '../runner/query-order.ts';
import { makeRng } from '../util/hash.ts';
import { freshnessStep } from './freshness-step.ts';
import { LiveStore } from './live.ts';
import { mixedStep } from './mixed-step.ts';
import type { ChurnCaps, WireRows } from './protocol.ts';
import type { DeleteStep, InsertStep, PointSpec, Runbook, SearchStep, Step, UpsertStep } from './runbook.ts';
import type { Leak, RunbookResult, SearchResult, StepResult } from './schema.ts';
import { type ChurnTarget, type ExecOptions, type PointChoice, type StepContext, Unsupported, finiteOrNull } from './step-kit.ts';
import { liveTruth, scoreRead } from './truth.ts';

interface ExecParticipant {
  name: string;
  settings: Pick<SettingsFile, 'ladders' | 'batch_size'>;
  filters: Participant['filters'];
  concurrentSearch: boolean;
}

const LEAKS_LISTED = 100;
/** Queries a recall-target point is chosen on (the first of the shuffled order). */
const CALIBRATION_QUERIES = 100;

export class RunbookExecutor implements StepContext {
  readonly store: LiveStore;
  private readonly order: Int32Array;
  private readonly calibration: number;
  private cursor: number;
  /** The step (1-based) that made each write version; version 0 is the load. */
  readonly versionStep: number[] = [1];
  private readonly points = new Map<string, PointChoice>();
  private readonly t0 = performance.now();

  constructor(
    private readonly rb: Runbook,
    readonly ds: Dataset,
    private readonly p: ExecParticipant,
    readonly target: ChurnTarget,
    readonly caps: ChurnCaps,
    private readonly result: RunbookResult,
    private readonly save: () => void,
    readonly opts: ExecOptions,
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

  rng(stepIndex: number) {
    return makeRng((Math.imul(this.rb.seed, 1_000_003) + stepIndex * 7919 + 1) >>> 0);
  }

  addLeak(leak: Leak): void {
    this.result.leaks.total++;
    if (this.result.leaks.listed.length < LEAKS_LISTED) this.result.leaks.listed.push(leak);
  }

  /** Next `count` queries of the shuffled order (after the calibration queries), wrapping. */
  takeQueries(count: number): number[] {
    const span = Math.max(1, this.ds.nq - this.calibration);
    const out: number[] = [];
    for (let i = 0; i < count; i++) {
      out.push(this.order[this.calibration + ((this.cursor - this.calibration) % span)] ?? this.order[0]);
      this.cursor++;
    }
    return out;
  }

  queryVectors(queries: number[]): Float32Array {
    const d = this.ds.d;
    const out = new Float32Array(queries.length * d);
    queries.forEach((q, i) => out.set(this.ds.queries.subarray(q * d, (q + 1) * d), i * d));
    return out;
  }

  supportReason(g: GroupKey, filters: (FilterExpr | null)[]): string | null {
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

  filtersFor(g: GroupKey, queries: number[]): (FilterExpr | null)[] {
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
  async choosePoint(g: GroupKey, spec: PointSpec, stepIndex: number): Promise<PointChoice> {
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
        rec.freshness = await freshnessStep(this, step, i);
        return;
      case 'mixed':
        rec.mixed = await mixedStep(this, step, i);
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
      // A count stays a number; a mean over no answered query is null.
      ...(Object.fromEntries(Object.entries(s.readings).map(([name, v]) => [name, finiteOrNull(v)])) as Record<keyof typeof s.readings, number>),
      errors: failed.length,
      ...(failed.length > 0 ? { first_error: failed[0]! } : {}),
      qps: reply.wallS > 0 ? queries.length / reply.wallS : 0,
      latency_ms: ok.length > 0 ? latencySummary(ok) : null,
      leaks,
    };
  }
}
