// One participant's part of `vecbench run`, in the stages the run takes them in (src/runner/run.ts):
// open (result file, resume), start (load the engine), prepare a build's groups (first query,
// plan check, recall, calibration; the cold protocol measures its groups here), finish a build's
// groups once the run has timed them, the extras (answer quality, concurrency sweep, open loop),
// close (cold start, stop). Between prepare and finish the run times the prepared groups, of this
// participant alone or of every participant together (interleaved).
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Dataset } from '../datasets/layout.ts';
import { RESULT_FORMAT, type ResultFile, type ResultGroup } from '../results/schema.ts';
import { readResult, resultPath } from '../results/store.ts';
import { ResultWriter, foldJournal, journalPath } from '../results/journal.ts';
import { ProgressJournal, progressPath } from '../results/progress-journal.ts';
import { provenance, provenanceMismatch } from '../results/provenance.ts';
import { hardware } from '../results/hardware.ts';
import { UserError } from '../util/errors.ts';
import { Progress, log } from '../util/progress.ts';
import { redactValue } from '../util/redact.ts';
import { VECBENCH_VERSION } from '../version.ts';
import { HostError } from './client.ts';
import { foundNotToFit } from './engine-budget.ts';
import { EngineHandle } from './engine-handle.ts';
import { discardHome, readMarker } from './engine-home.ts';
import { BUSY_OTHER_CORES } from './machine-load.ts';
import type { GroupRun } from './group-run.ts';
import { resumeProgress } from './kept-passes.ts';
import { finishWarmGroup, measureColdGroup, prepareWarmGroup, type PreparedGroup } from './measure-group.ts';
import { DEFAULT_BUSY_CORES, DEFAULT_HOST_SLOW, DEFAULT_QUERY_SET, DEFAULT_TIMING } from './timing-defaults.ts';
import { sharedHostSpeed } from './host-speed.ts';
import type { LoadedParticipant } from './participants.ts';
import { ASK_FACTOR, supportReason, type AskedGroup } from './points.ts';
import { QUERY_SEED, queryOrder } from './query-order.ts';
import { remoteRecord } from './remote-server.ts';
import { oneThreadBecause, threadsFor, threadsOf, type RunOptions } from './run-options.ts';
import type { Timing } from './timed-rounds.ts';

/** The warm query set as results record it: a seeded subset of the shuffled order, or all. */
function querySetRecord(nq: number, asked: number | 'all' | undefined): NonNullable<ResultFile['run']['query_set']> {
  const size = asked === 'all' ? nq : Math.min(nq, asked ?? DEFAULT_QUERY_SET);
  return { mode: size >= nq ? 'all' : 'subset', size, seed: QUERY_SEED };
}

function timingRecord(t: Timing | undefined, busyCores: number | undefined, hostSlow: number | undefined): NonNullable<ResultFile['run']['timing']> {
  const x = t ?? DEFAULT_TIMING;
  return {
    min_passes: x.minPasses,
    min_seconds: x.minSeconds,
    max_passes: x.maxPasses,
    busy_cores: busyCores ?? DEFAULT_BUSY_CORES ?? BUSY_OTHER_CORES,
    host_slow: hostSlow ?? DEFAULT_HOST_SLOW,
    // In the schema's order: a resume compares the stored record with this one as JSON.
    ...((x.cellHalfWidth ?? 0) > 0
      ? {
          cell_half_width: x.cellHalfWidth,
          ...(x.cellSeconds !== undefined ? { cell_seconds: x.cellSeconds } : {}),
          ...(x.cellMaxPasses !== undefined ? { cell_max_passes: x.cellMaxPasses } : {}),
          ...((x.leadHalfWidth ?? 0) > 0 ? { lead_half_width: x.leadHalfWidth } : {}),
        }
      : {}),
  };
}

/** A stored result can be resumed when it measured the same dataset with the same settings
 * and protocol; anything else starts afresh. */
function resumable(prev: ResultFile, next: ResultFile): boolean {
  return (
    prev.dataset.hash === next.dataset.hash &&
    prev.run.query_seed === next.run.query_seed &&
    prev.run.clients === next.run.clients &&
    (prev.run.protocol ?? 'warm') === (next.run.protocol ?? 'warm') &&
    JSON.stringify(prev.extra.connection ?? null) === JSON.stringify(next.extra.connection ?? null) &&
    JSON.stringify(prev.settings) === JSON.stringify(next.settings) &&
    JSON.stringify(prev.run.query_set ?? null) === JSON.stringify(next.run.query_set ?? null) &&
    JSON.stringify(prev.run.timing ?? null) === JSON.stringify(next.run.timing ?? null) &&
    (prev.run.builds ?? 1) === (next.run.builds ?? 1) &&
    (prev.run.threads ?? null) === (next.run.threads ?? null) &&
    (prev.run.memory_limit_bytes ?? null) === (next.run.memory_limit_bytes ?? null)
  );
}

/** The new, empty result of a participant on a dataset. */
function freshResult(p: LoadedParticipant, ds: Dataset, opts: RunOptions): ResultFile {
  const started = new Date().toISOString();
  const result: ResultFile = {
    format: RESULT_FORMAT,
    participant: p.name,
    engine: p.adapter.engine,
    engine_version: 'unknown',
    origin: 'measured',
    dataset: { name: ds.name, n: ds.n, d: ds.d, nq: ds.nq, metric: ds.metric, hash: ds.hash },
    settings: {
      index: p.index,
      ladders: p.settings.ladders,
      batch_size: p.settings.batch_size,
      notes: p.settings.notes,
      ...(p.settings.calibration ? { calibration: p.settings.calibration } : {}),
      ...(p.settings.exact_search ? { exact_search: p.settings.exact_search } : {}),
    },
    filter_strategy: p.adapter.filterStrategy,
    hardware: hardware(),
    run: {
      vecbench_version: VECBENCH_VERSION,
      started,
      updated: started,
      query_seed: QUERY_SEED,
      clients: opts.clients,
      complete: false,
      resumed: 0,
      protocol: opts.cold ? 'cold' : 'warm',
      query_set: opts.cold ? { mode: 'slices', size: ds.nq, seed: QUERY_SEED } : querySetRecord(ds.nq, opts.querySet),
      ...(opts.cold ? {} : { timing: timingRecord(opts.timing, opts.busyCores, opts.hostSlow) }),
      builds: opts.builds ?? 1,
      threads: threadsFor(p, opts),
      ...(opts.memoryLimit !== undefined ? { memory_limit_bytes: opts.memoryLimit } : {}),
      ...(opts.tier !== undefined ? { tier: opts.tier } : {}),
    },
    load: null,
    groups: [],
    // Where the engine was, when it is a server the user runs (its URL's password masked).
    extra: opts.connect?.[p.name] ? { connection: remoteRecord(opts.connect[p.name]) } : {},
  };
  result.provenance = provenance(result.settings, opts.outDir);
  return result;
}

export class ParticipantRun {
  result: ResultFile;
  /** True when a stored complete result was found: nothing is measured. */
  readonly already: boolean;
  private readonly writer: ResultWriter;
  /** Probes and passes of unfinished groups, for a resume (src/results/progress-journal.ts). */
  private readonly kept: ProgressJournal;
  private readonly engine: EngineHandle;
  private readonly order: Int32Array;
  private readonly warmSet: number[];
  private readonly progress: Progress;
  private done = 0;
  /** Where progress of the timing goes: this participant's progress line, or the run's while it
   * times several participants together. */
  onTiming: ((what: string) => void) | null = null;

  constructor(
    readonly p: LoadedParticipant,
    private readonly ds: Dataset,
    private readonly groups: AskedGroup[],
    private readonly opts: RunOptions,
  ) {
    let result = freshResult(p, ds, opts);
    const path = resultPath(opts.outDir, ds.name, p.name);
    let already = false;
    if (!opts.fresh && existsSync(path)) {
      const prev = readResult(path);
      // Settings go through JSON in the file: compare like with like, and credentials masked as
      // they are in the file.
      const normalized = redactValue(JSON.parse(JSON.stringify(result)) as ResultFile);
      if (resumable(prev, normalized)) {
        // A complete result still lacking the section of an asked step (answer quality on a
        // labelled dataset, a concurrency sweep) is resumed for that step alone (its groups are
        // complete and kept).
        const stepMissing = (opts.steps ?? []).some((s) => s.pending(prev, ds));
        const notFit = foundNotToFit(prev, opts.memoryLimit);
        if (notFit !== null) {
          log(`${p.name}: ${ds.name} already found not to fit (${path}: ${notFit}); pass --fresh to try again`);
          result = prev;
          already = true;
        } else if (prev.run.complete && !stepMissing) {
          log(`${p.name}: ${ds.name} already measured (${path}); pass --fresh to measure again`);
          result = prev;
          already = true;
        } else {
          // One file never mixes the figures of two vecbench programs.
          const mixed = provenanceMismatch(prev, { provenance: result.provenance! });
          if (mixed) throw new UserError(`${path} cannot be resumed: ${mixed}; pass --fresh to measure it again, or --out another directory`);
          result = prev;
          result.run.resumed += 1;
          // Points a killed run appended to the journal after its last whole write.
          const folded = foldJournal(journalPath(opts.outDir, ds.name, p.name), result);
          log(`${p.name}: resuming ${path}${folded > 0 ? ` (${folded} points from its journal)` : ''}`);
        }
      } else {
        log(`${p.name}: ${path} was measured with other settings or data; measuring afresh`);
      }
    }
    this.result = result;
    this.already = already;
    const oneThread = oneThreadBecause(p, opts);
    if (oneThread && threadsOf(opts) > 1 && !already) log(`${p.name}: the throughput view runs 1 search thread, not ${threadsOf(opts)}: ${oneThread}`);
    this.writer = new ResultWriter(opts.outDir, () => this.result);
    this.kept = new ProgressJournal(progressPath(opts.outDir, ds.name, p.name));
    this.engine = new EngineHandle(p, ds, opts, result, () => this.save());
    this.order = queryOrder(ds.nq);
    this.warmSet = Array.from(this.order.subarray(0, result.run.query_set!.size));
    const measurable = groups.filter((g) => g.asked && supportReason(p, g) === null);
    this.progress = new Progress(`${p.name}: measuring`, measurable.length * (opts.builds ?? 1));
    this.done = result.groups.filter((g) => g.complete && g.status === 'measured').length;
  }

  save(): void {
    this.writer.save();
  }

  /** Loads the engine (or reopens the index a resumed run's predecessor built). */
  async start(): Promise<void> {
    const { p, opts, result } = this;
    // A result measured afresh starts with no journal; a resumed one has folded its journal.
    if (result.run.resumed === 0) this.writer.discardJournal();
    resumeProgress(this.kept, p.name, result.run.resumed > 0);
    // Work directories of the layout before engine homes (<out>/.work) are of no use.
    const workRoot = join(opts.outDir, '.work');
    if (existsSync(workRoot))
      for (const f of readdirSync(workRoot)) if (f.startsWith(`${p.name}-`)) rmSync(join(workRoot, f), { recursive: true, force: true });
    // A resumed result whose index a previous run built may reopen it instead of loading again.
    this.engine.reuseOnStart = result.load !== null;
    await this.engine.ready(result.load === null ? 'first load' : 'resumed run');
  }

  private groupRun(g: AskedGroup, group: ResultGroup, build: number): GroupRun {
    const { opts } = this;
    const hostSlow = opts.hostSlow ?? DEFAULT_HOST_SLOW;
    return {
      engine: this.engine,
      p: this.p,
      ds: this.ds,
      g,
      group,
      queries: opts.cold ? Array.from(this.order) : this.warmSet,
      clients: opts.clients,
      threads: threadsFor(this.p, opts),
      pointTimeoutS: opts.pointTimeoutS,
      timing: opts.timing ?? DEFAULT_TIMING,
      build,
      busyCores: opts.busyCores ?? DEFAULT_BUSY_CORES ?? BUSY_OTHER_CORES,
      hostSlow,
      // Always probed: with --host-slow 0 the probe records the host's speed and judges nothing.
      hostSpeed: sharedHostSpeed(),
      onProgress: (what) => (this.onTiming ? this.onTiming(what) : this.progress.update(this.done, what)),
      save: () => this.save(),
      append: (entry) => this.writer.append(entry),
      kept:
        this.engine.indexBuilt && !opts.cold ? { journal: this.kept, group: g.key, build, queries: this.warmSet, index: this.engine.indexBuilt } : undefined,
    };
  }

  /** A group that failed outside a point (explain, first query, reload): lost with the reason;
   * the next group gets a fresh engine. Other errors stop the participant. */
  private groupFailed(group: ResultGroup, what: string, e: unknown): void {
    if (!(e instanceof HostError) || e.userError) throw e;
    group.status = 'failed';
    group.reason = e.message;
    group.complete = true;
    log(`${this.p.name}: ${what} failed: ${e.message}`);
  }

  /**
   * The groups of a build, prepared for timing: build 0 walks every group (unasked and
   * unsupported ones are recorded; the cold protocol measures its groups here and returns none);
   * a later build (--builds) loads a fresh index and prepares the complete groups again.
   */
  async prepareBuild(build: number): Promise<PreparedGroup[]> {
    const { p, opts, result, groups } = this;
    const out: PreparedGroup[] = [];
    if (build > 0) {
      const todo = result.groups.filter((x) => x.status === 'measured' && x.complete && !x.points.some((pt) => pt.build === build && pt.view === 'throughput'));
      if (todo.length === 0) return out;
      await this.engine.rebuild(`build ${build + 1} of ${opts.builds ?? 1}`);
      for (const group of todo) {
        const g = groups.find((x) => x.key === group.key);
        if (!g) continue;
        group.points = group.points.filter((pt) => (pt.build ?? 0) !== build);
        try {
          const prepared = await prepareWarmGroup(this.groupRun(g, group, build));
          if (prepared) out.push(prepared);
        } catch (e) {
          if (!(e instanceof HostError) || e.userError) throw e;
          log(`${p.name}: group ${g.key}, build ${build + 1}: ${e.message}`);
        }
      }
      return out;
    }
    for (const g of groups) {
      let group = result.groups.find((x) => x.key === g.key);
      if (group?.complete) continue;
      const reason = g.asked ? supportReason(p, g) : `the filter keeps ${g.medianMatches} rows (median), fewer than ${ASK_FACTOR} x k = ${ASK_FACTOR * g.k}`;
      if (!g.asked || reason !== null) {
        result.groups.push({
          key: g.key,
          filter: g.filter,
          k: g.k,
          status: g.asked ? 'unsupported' : 'not_asked',
          reason: reason ?? undefined,
          median_matches: g.medianMatches,
          points: [],
          complete: true,
          skipped: [],
        });
        continue;
      }
      if (!group) {
        group = { key: g.key, filter: g.filter, k: g.k, status: 'measured', median_matches: g.medianMatches, points: [], complete: false, skipped: [] };
        result.groups.push(group);
      } else if (!opts.cold) {
        // A warm group is measured whole (its points share rounds of passes): an interrupted one
        // starts again, keeping its first query.
        group.points = [];
        group.skipped = [];
        delete group.calibration;
      }
      // A prepared warm group is saved with its points (an interrupted one starts again); a cold
      // group, a failed one and one whose plan check failed are saved now.
      try {
        if (opts.cold) {
          await measureColdGroup(this.groupRun(g, group, 0));
        } else {
          const prepared = await prepareWarmGroup(this.groupRun(g, group, 0));
          if (prepared) {
            out.push(prepared);
            continue;
          }
        }
      } catch (e) {
        this.groupFailed(group, `group ${g.key}`, e);
      }
      this.progress.update(++this.done, g.key);
      this.save();
    }
    return out;
  }

  /** The points of a build's timed groups, stored. */
  async finishBuild(build: number, prepared: PreparedGroup[]): Promise<void> {
    for (const pg of prepared) {
      const key = pg.run.g.key;
      try {
        await finishWarmGroup(pg);
      } catch (e) {
        if (build === 0) this.groupFailed(pg.run.group, `group ${key}`, e);
        else if (!(e instanceof HostError) || e.userError) throw e;
        else log(`${this.p.name}: group ${key}, build ${build + 1}: ${e.message}`);
      }
      this.progress.update(++this.done, build === 0 ? key : `${key} (build ${build + 1})`);
      this.save();
    }
  }

  /** The steps the run was given (features: answer quality, the concurrency sweep, ...), in
   * order, each where its section is still missing. */
  async extras(): Promise<void> {
    const { p, ds, opts, result, groups } = this;
    this.progress.done();
    for (const step of opts.steps ?? []) {
      if (!step.pending(result, ds)) continue;
      await step.run({ engine: this.engine, p, ds, groups, result, pointTimeoutS: opts.pointTimeoutS, clients: opts.clients, save: () => this.save() });
    }
  }

  /** The cold start, then the result marked complete. */
  async complete(): Promise<void> {
    await this.engine.finish();
    this.result.run.complete = true;
    this.kept.discard();
    this.save();
  }

  /** Stops the engine (also after a failure). Engine data of no use to a resume is removed: a
   * load cut short (no finished-build marker), and finished work unless --keep-engines. */
  async stop(): Promise<void> {
    await this.engine.stop();
    // The budget's figures cover every start of the engine; its cgroup goes with the engine.
    const budget = this.engine.budgetReading();
    if (budget && this.result.resources) {
      this.result.resources.memory_budget = budget;
      this.save();
    }
    this.engine.disposeBudget();
    if (typeof readMarker(this.engine.home) === 'string') discardHome(this.engine.home);
    else if (this.result.run.complete && !this.opts.keepEngines) discardHome(this.engine.home);
  }
}
