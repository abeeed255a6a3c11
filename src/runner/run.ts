// `vecbench run`: load each participant, sweep its ladder over every asked query group and
// store only measured points (METHOD 4-5). Recall is computed here from the returned ids,
// never taken from the engine.
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { cpus, totalmem, type as osType, release } from 'node:os';
import { join, resolve } from 'node:path';
import type { FilterExpr, Knobs } from '../contracts.ts';
import { allGroups, filterFields, filterKind, filterOps, groupKey, passes, type GroupKey } from '../datasets/groups.ts';
import type { Dataset } from '../datasets/layout.ts';
import { prepareDataset } from '../datasets/registry.ts';
import { groundTruthFor, scoringDists, type GroundTruth } from '../groundtruth/cache.ts';
import { exactDistance } from '../groundtruth/exact.ts';
import { scoreQuery, summarize, type QueryScore } from '../metrics/recall.ts';
import { mean, percentile } from '../metrics/stats.ts';
import { RESULT_FORMAT, type ResultFile, type ResultGroup, type ResultPoint } from '../results/schema.ts';
import { readResult, resultPath, writeResult } from '../results/store.ts';
import { UserError } from '../util/errors.ts';
import { makeRng } from '../util/hash.ts';
import { Progress, fmtSeconds, log } from '../util/progress.ts';
import { HostClient, HostError } from './client.ts';
import type { ServerHandle } from '../contracts.ts';
import type { Resources } from '../results/schema.ts';
import { ResourceRecorder, VMTOUCH_MISSING, diskUsage, emptyResources, evictPageCache, haveVmtouch } from './resources.ts';
import { REMOTE_UNMEASURED, attachServer, markRemoteUnmeasured, reapOrphans, remoteRecord, startServer, type StartedServer } from './server.ts';
import { redactUrl, redactValue } from '../util/redact.ts';
import { measureQuality } from '../hybrid/quality-run.ts';
import { ladderFor, loadParticipant, type LoadedParticipant } from './participants.ts';
import type { HostReply, HostRequest, PointReply } from './protocol.ts';
import { measureLoad, type LoadOptions } from '../loadgen/sweep.ts';
import { pointClientFlags, startPointMeter } from '../loadgen/points.ts';
import { ReuseRefused, buildSettingsHash, checkDiffers, discardHome, engineHome, engineWorkDir, idsPerQuery, markerMismatch, readMarker, startFreshBuild, writeMarker, type BuiltMarker } from './engine-home.ts';

export const VECBENCH_VERSION = '0.1.0';
export const QUERY_SEED = 20251129;
/** Queries per point at each k (METHOD 5). */
export const SLICE_CAP: Record<number, number> = { 10: 1000, 100: 500, 1000: 200 };
/** A group is asked only when its filter keeps at least this many times k rows. */
export const ASK_FACTOR = 10;

export interface RunOptions {
  dataset: string;
  participants: string[];
  outDir: string;
  dataDir: string;
  /** In-flight requests of the throughput view. */
  clients: number;
  /** Restrict to these groups (FILTER/K keys). */
  groups?: GroupKey[];
  pointTimeoutS: number;
  loadTimeoutS: number;
  /** Per participant: a settings file to use instead of participants/<name>/settings.json. */
  settingsFiles?: Record<string, string>;
  /** Measure again even where a complete result exists (default: resume / skip). */
  fresh?: boolean;
  /** Cold protocol (METHOD 5): evict the engine's data files from the page cache before every
   * group. */
  cold?: boolean;
  /** On a dataset with relevance labels, measure answer quality (dense, keyword, hybrid) after the groups (default true). */
  quality?: boolean;
  /** Results asked of each quality arm (default 100). */
  qualityK?: number;
  /** Concurrency sweep and / or open loop after the groups (src/loadgen). */
  load?: Omit<LoadOptions, 'pointTimeoutS'>;
  /** Keep each participant's engine data (<out>/.engines/...) after its result is complete. */
  keepEngines?: boolean;
  /** Per server participant: the URL of a server the user runs (--connect); none is started. */
  connect?: Record<string, string>;
  /** Per server participant: the 127.0.0.1 port to start its server on (--server-port). */
  serverPorts?: Record<string, number>;
}

export interface AskedGroup extends GroupKey {
  key: string;
  asked: boolean;
  medianMatches: number;
  gt: GroundTruth;
  filters: (FilterExpr | null)[];
}

/** The shuffled query order every participant and group uses (fixed seed). */
export function queryOrder(nq: number, seed = QUERY_SEED): Int32Array {
  const order = new Int32Array(nq);
  for (let i = 0; i < nq; i++) order[i] = i;
  const rng = makeRng(seed);
  for (let i = nq - 1; i > 0; i--) {
    const j = Math.floor(rng.uniform() * (i + 1));
    const t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  return order;
}

/** Slices for a group: one query of its own for the first-query timing, then the next
 * slice for each (ladder point, view). No query runs twice within a group while the query
 * set lasts; all participants get the same slices for the same ladder length. */
export function planSlices(nq: number, k: number, slots: number): { first: number; slices: [number, number][] } {
  const per = Math.max(1, Math.min(SLICE_CAP[k] ?? 200, Math.floor((nq - 1) / Math.max(1, slots))));
  const slices: [number, number][] = [];
  for (let s = 0; s < slots; s++) {
    const from = (1 + s * per) % nq;
    slices.push([from, from + per]);
  }
  return { first: 0, slices };
}

export function hardware(): ResultFile['hardware'] {
  return { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memory_bytes: totalmem(), os: `${osType()} ${release()}`, node: process.version };
}

export function prepareGroups(ds: Dataset, only?: GroupKey[]): AskedGroup[] {
  const wanted = only ?? allGroups();
  const gts = new Map<string, GroundTruth>();
  const out: AskedGroup[] = [];
  for (const g of wanted) {
    const kind = filterKind(g.filter);
    let gt = gts.get(g.filter);
    if (!gt) gts.set(g.filter, (gt = groundTruthFor(ds, g.filter)));
    const sorted = Array.from(gt.matches).sort((a, b) => a - b);
    const medianMatches = sorted[Math.floor(sorted.length / 2)];
    const filters = Array.from({ length: ds.nq }, (_, q) => kind.forQuery(q, ds.queryAttrs));
    out.push({ ...g, key: groupKey(g), asked: medianMatches >= ASK_FACTOR * g.k, medianMatches, gt, filters });
  }
  return out;
}

function supportReason(p: LoadedParticipant, g: AskedGroup): string | null {
  const sample = g.filters.find((f) => f !== null) ?? null;
  if (sample !== null) {
    const f = p.adapter.filters;
    if (!f) return `${p.adapter.engine} has no filter support in this participant`;
    const missingField = filterFields(sample).find((x) => !f.fields.includes(x));
    if (missingField) return `filter field ${missingField} is not supported`;
    const missingOp = filterOps(sample).find((x) => !f.ops.includes(x));
    if (missingOp) return `filter operator ${missingOp} is not supported`;
  }
  if (ladderFor(p.settings, g.filter, g.k).length === 0) return `settings.json has no ladder rule for ${g.key}`;
  return null;
}

/** Scores one point's answers against the ground truth. */
export function scorePoint(ds: Dataset, g: AskedGroup, queries: number[], reply: PointReply): QueryScore[] {
  const { d, metric } = ds;
  const depth = g.gt.depth;
  return queries.map((q, i) => {
    const returned = reply.ids.subarray(reply.offsets[i], reply.offsets[i + 1]);
    const filter = g.filters[q];
    return scoreQuery({
      returned,
      k: g.k,
      trueIds: g.gt.ids.subarray(q * depth, (q + 1) * depth),
      // The kt-th true distance in float64 (the cache's float32 would swamp the 1e-6 tie rule).
      trueDists: scoringDists(ds, g.gt, q, g.k),
      matches: g.gt.matches[q],
      isKnownId: (id) => id >= 0 && id < ds.n,
      passes: (id) => passes(filter, ds.attrs, id),
      distanceOf: (id) => exactDistance(metric, ds.queries, q * d, ds.base, id * d, d),
    });
  });
}

export function latencySummary(ms: Float64Array): ResultPoint['latency_ms'] {
  const sorted = Float64Array.from(ms).sort();
  return {
    mean: mean(sorted),
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    p999: percentile(sorted, 99.9),
    max: sorted[sorted.length - 1],
  };
}

const VIEWS = ['latency', 'throughput'] as const;

/** Queries in the between-load probe (METHOD 6: does the engine answer before its index?). */
export const PROBE_QUERIES = 20;

/** Scores the between-load probe against the exact unfiltered top 10. */
export function scoreProbe(ds: Dataset, probe: { knobs: Knobs; k: number; queries: number[] }, got: { reply: PointReply | null; error: string | null } | undefined): NonNullable<Resources['probe']> {
  const base = { queries: probe.queries.length, knobs: probe.knobs };
  if (!got || got.reply === null || got.error !== null) {
    return { ...base, answered: false, recall: null, short_results: null, latency_ms_p50: null, error: got?.error ?? 'no probe reply' };
  }
  const [g] = prepareGroups(ds, [{ filter: 'none', k: probe.k }]);
  const s = summarize(scorePoint(ds, g, probe.queries, got.reply));
  const lat = Float64Array.from(got.reply.latenciesMs).sort();
  return { ...base, answered: true, recall: s.recall, short_results: s.shortResults, latency_ms_p50: percentile(lat, 50), error: null };
}

/** The participant's engine process, (re)started and loaded on demand: after a crash or a
 * time-out the next group gets a fresh engine, and the reload is recorded. */
class EngineHandle {
  host: HostClient | null = null;
  private workDir: string | null = null;
  /** The participant's server, when it has one: started before the host, stopped after it. */
  private server: ServerHandle | null = null;
  private serverDir: string | null = null;
  private recorder: ResourceRecorder | null = null;
  /** Why the last server died mid-run, recorded with the reload it causes. */
  private serverDeath: string | null = null;
  /** Set by a resumed run: the next start first tries to reopen the index a previous run
   * built (src/runner/engine-home.ts) instead of loading it again. */
  reuseOnStart = false;
  constructor(
    private readonly p: LoadedParticipant,
    private readonly ds: Dataset,
    private readonly opts: RunOptions,
    private readonly result: ResultFile,
    private readonly save: () => void,
  ) {}

  /** The URL of the server the user runs for this participant (--connect), if any. */
  private get remote(): string | undefined {
    return this.opts.connect?.[this.p.name];
  }

  /** Where this participant's engine data lives across runs (<out>/.engines/<dataset>/<name>). */
  get home(): string {
    return engineHome(this.opts.outDir, this.ds.name, this.p.name);
  }

  private wantedBuild() {
    return { participant: this.p.name, datasetHash: this.ds.hash, settingsHash: buildSettingsHash(this.p.index, this.p.settings.batch_size) };
  }

  /** The check queries: the between-load probe's queries and knobs, asked after the build. */
  private async askCheck(host: HostClient): Promise<{ knobs: Knobs; k: number; queries: number[]; ids: number[][] } | string> {
    const check = this.probeRequest();
    const r = await host.request<'point'>({ type: 'point', knobs: check.knobs, k: check.k, queries: check.queries, filters: check.queries.map(() => null), clients: 1 }, this.opts.pointTimeoutS);
    const failed = r.reply.errors.find((e) => e !== null);
    return failed ? `a check query failed: ${failed}` : { ...check, ids: idsPerQuery(r.reply) };
  }

  /** After a finished load: asks the check queries and writes the marker that lets a resumed
   * run reopen this build. An engine that cannot answer them gets no marker (no reuse). */
  private async markBuilt(host: HostClient, rows: number): Promise<void> {
    if (this.remote) return;
    const check = await this.askCheck(host);
    if (typeof check === 'string') {
      log(`${this.p.name}: the built index is not marked for reuse: ${check}`);
      return;
    }
    const want = this.wantedBuild();
    const marker: BuiltMarker = { format: 'vecbench-engine/1', participant: want.participant, dataset: this.ds.name, dataset_hash: want.datasetHash, settings_hash: want.settingsHash, engine_version: this.result.engine_version, built: new Date().toISOString(), rows, check };
    writeMarker(this.home, marker);
  }

  /**
   * A resumed run: reopens the index a previous run built when its marker matches (same data,
   * same settings, same engine version) and the reopened engine answers the check queries with
   * the ids recorded after the build; records the reuse. Returns the host, or why the index
   * cannot be reused (the caller then loads it again and records that reason with the reload).
   */
  private async tryReuse(reason: string): Promise<HostClient | string> {
    const { p, ds, opts, result } = this;
    if (this.remote) return 'the server is the user\'s (--connect)';
    if (!p.adapter.reopen) return `the ${p.name} adapter cannot reopen its data (no reopen())`;
    const marker = readMarker(this.home);
    if (typeof marker === 'string') return marker;
    const mismatch = markerMismatch(marker, this.wantedBuild());
    if (mismatch) return mismatch;
    this.workDir = engineWorkDir(this.home);
    const res = result.resources ?? (result.resources = emptyResources(p.adapter.server ? 'server' : 'host'));
    this.recorder = new ResourceRecorder(res, () => this.server?.pid ?? this.host?.pid);
    try {
      const started = await this.startServer(true);
      const host = new HostClient(p.name);
      this.host = host;
      const opened = await host.request<'opened'>({ type: 'open', reopen: true, participant: p.name, settingsPath: p.settingsPath, dataDir: opts.dataDir, dataset: ds.name, workDir: this.workDir, maxConcurrency: opts.clients, server: started?.handle.connection }, opts.loadTimeoutS);
      if (opened.engineVersion !== marker.engine_version) throw new ReuseRefused(`it was built by ${marker.engine_version}, the engine is ${opened.engineVersion} now`);
      const check = await this.askCheck(host);
      const differs = typeof check === 'string' ? check : checkDiffers(marker.check.ids, check.ids);
      if (differs) throw new ReuseRefused(differs);
      result.engine_version = opened.engineVersion;
      this.recorder.startServing();
      result.load!.reused.push({ reason, built: marker.built, open_s: opened.openS ?? null, check_queries: marker.check.queries.length });
      log(`${p.name}: reopened the index built ${marker.built} (${marker.rows} rows) in ${fmtSeconds(opened.openS ?? 0)}: no reload`);
      this.save();
      return host;
    } catch (e) {
      if (e instanceof UserError || (e instanceof HostError && e.userError)) throw e;
      await this.stop();
      return e instanceof ReuseRefused ? e.message : `reopening it failed: ${(e as Error).message}`;
    }
  }

  /** A live, loaded engine. A load that dies (not one that times out) is tried once more. */
  async ready(reason: string): Promise<HostClient> {
    if (this.host && this.host.alive) return this.host;
    try {
      return await this.start(reason);
    } catch (e) {
      if (!(e instanceof HostError) || e.userError || e.timedOut) throw e;
      log(`${this.p.name}: ${e.message}; starting the engine again`);
      return this.start(`${reason} (after: ${e.message})`);
    }
  }

  /** Sends a request to a ready engine; when the engine dies under it, restarts it once and
   * sends the request again (a crash that repeats, or a time-out, is thrown). */
  async request<T extends HostReply['type']>(req: HostRequest, timeoutS: number, onRetry?: (e: HostError) => void): Promise<Extract<HostReply, { type: T }>> {
    for (let attempt = 0; ; attempt++) {
      const host = await this.ready('engine restarted');
      try {
        return await host.request<T>(req, timeoutS);
      } catch (e) {
        if (!(e instanceof HostError) || e.userError || e.timedOut || attempt > 0) throw e;
        onRetry?.(e);
      }
    }
  }

  private async start(reason: string): Promise<HostClient> {
    await this.stop();
    const { p, ds, opts, result } = this;
    let notReused: string | null = null;
    if (this.reuseOnStart) {
      this.reuseOnStart = false;
      const reused = await this.tryReuse(reason);
      if (typeof reused !== 'string') return reused;
      notReused = reused;
    }
    this.workDir = startFreshBuild(this.home);
    // Resources are measured on the first load of a result; reloads only time their load.
    const firstLoad = result.load === null;
    const res = firstLoad || !result.resources ? (result.resources = emptyResources(p.adapter.server ? 'server' : 'host')) : result.resources;
    // A server the user runs (--connect) is not ours to sample: its figures are left unmeasured.
    if (this.remote) markRemoteUnmeasured(res);
    this.recorder = this.remote ? null : new ResourceRecorder(res, () => this.server?.pid ?? this.host?.pid);
    const server = await this.startServer(false);
    const ingestProgress = new Progress(`${p.name}: ingest ${ds.name}`, ds.n);
    const host = new HostClient(p.name, (pr) => ingestProgress.update(pr.done));
    this.host = host;
    const opened = await host.request<'opened'>({ type: 'open', participant: p.name, settingsPath: p.settingsPath, dataDir: opts.dataDir, dataset: ds.name, workDir: this.workDir, maxConcurrency: opts.clients, server: server?.handle.connection }, opts.loadTimeoutS);
    result.engine_version = opened.engineVersion;
    if (firstLoad) {
      this.recorder?.baseline();
      this.recorder?.startBuild();
    }
    const probe = firstLoad ? this.probeRequest() : undefined;
    const loaded = await host.request<'loaded'>({ type: 'load', batchSize: p.settings.batch_size, probe }, opts.loadTimeoutS);
    const disk = await host.request<'disk'>({ type: 'disk' }, opts.loadTimeoutS);
    if (firstLoad) {
      this.recorder?.endBuild(this.dataDir());
      if (probe) res.probe = scoreProbe(ds, probe, loaded.probe);
    }
    this.recorder?.startServing();
    if (result.load === null) {
      result.load = { rows: loaded.rows, ingest_s: loaded.ingestS, index_s: loaded.indexS, disk_bytes: disk.bytes, reloads: [], reused: [] };
    } else {
      const why = [this.serverDeath, notReused === null ? null : `index not reused: ${notReused}`].filter((x) => x !== null);
      result.load.reloads.push({ reason: why.length > 0 ? `${reason} (${why.join('; ')})` : reason, ingest_s: loaded.ingestS, index_s: loaded.indexS });
      this.serverDeath = null;
    }
    await this.markBuilt(host, loaded.rows);
    log(`${p.name}: loaded ${loaded.rows} rows, ingest ${fmtSeconds(loaded.ingestS)}, index ${fmtSeconds(loaded.indexS)} (${result.engine_version})`);
    this.save();
    return host;
  }

  /** For the load generator's CPU figures: the engine's process (its server's tree, or the host
   * of an in-process engine) and the host (the client). */
  loadPids(): { engine: number | undefined; engineTree: boolean; host: number | undefined } {
    return { engine: this.remote ? undefined : (this.server?.pid ?? this.host?.pid), engineTree: this.server !== null, host: this.host?.pid };
  }

  /** The directory holding the engine's data: the server's, or the host's work directory. */
  private dataDir(): string | null {
    return this.serverDir ?? this.workDir;
  }

  /** A few unfiltered k=10 queries asked between ingest and index build (the last queries of
   * the shuffled order, with the first knobs of the none/10 ladder). */
  private probeRequest(): { knobs: Knobs; k: number; queries: number[] } {
    const order = queryOrder(this.ds.nq);
    const n = Math.min(PROBE_QUERIES, this.ds.nq);
    return { knobs: ladderFor(this.p.settings, 'none', 10)[0] ?? {}, k: 10, queries: Array.from(order.subarray(order.length - n)) };
  }

  /** Starts the participant's server (null for an in-process engine). A server that dies while
   * it is the current one kills the host with the reason, so the request under way fails with it
   * and the engine is started again. */
  private async startServer(existing: boolean): Promise<StartedServer | null> {
    const { p, ds, opts } = this;
    const life = p.adapter.server;
    if (!life) return null;
    if (this.remote) {
      const attached = await attachServer(p.name, life, this.remote);
      log(`${p.name}: using the server given by URL, ${redactUrl(this.remote)} (not started or stopped by vecbench)`);
      this.server = attached.handle;
      return attached;
    }
    this.serverDir = join(this.workDir!, 'server');
    mkdirSync(this.serverDir, { recursive: true });
    // mkdtemp made the work directory 0700; a server running as its own user must reach its dir.
    chmodSync(this.workDir!, 0o755);
    const started = await startServer(
      // A server that cannot start or answer is an engine failure (the group or participant fails
      // with the reason); a missing install stays a UserError naming the provision script.
      (ctx) => life.start(ctx),
      {
        dataset: { name: ds.name, n: ds.n, d: ds.d, metric: ds.metric, hasText: ds.text !== undefined },
        settings: p.index,
        dataDir: this.serverDir,
        existing,
        logFile: join(this.workDir!, 'server.log'),
        log: (m) => log(`${p.name}: ${m}`),
      },
      opts.loadTimeoutS,
      opts.serverPorts?.[p.name] === undefined ? undefined : { port: opts.serverPorts[p.name], participant: p.name },
    ).catch((e: unknown) => {
      if (e instanceof UserError) throw e;
      throw new HostError(`participant ${p.name}: ${(e as Error).message}`);
    });
    const server = started.handle;
    this.server = server;
    void server.waitExit().then(() => {
      if (this.server !== server) return; // stopped on purpose
      const why = `${p.name} server (pid ${server.pid}) died mid-run: ${server.exitReason}`;
      log(why);
      this.server = null;
      this.serverDeath = why;
      this.host?.kill(why);
    });
    return started;
  }

  private async stopServer(): Promise<void> {
    const server = this.server;
    this.server = null;
    await server?.stop();
  }

  /** Before a group's first query: the serving memory so far is recorded, and under the cold
   * protocol the engine's data files are evicted from the page cache. */
  async beforeGroup(key: string): Promise<void> {
    this.recorder?.recordServing();
    if (!this.opts.cold) return;
    if (!haveVmtouch()) throw new UserError(`--cold needs ${VMTOUCH_MISSING}`);
    await this.ready('engine restarted');
    const dir = this.dataDir();
    const res = this.result.resources;
    if (!dir || !res) return;
    const ev = evictPageCache(dir);
    res.group_evictions.push({ group: key, resident_before_bytes: ev.resident_before_bytes, resident_after_bytes: ev.resident_after_bytes, drop_caches: ev.drop_caches });
  }

  /** After the measurements: records the serving memory, then measures a cold start. */
  async finish(): Promise<void> {
    const res = this.result.resources;
    if (!res) return;
    this.recorder?.stopServing();
    if (res.cold_first_query_s === null && res.unmeasured.cold_first_query_s === undefined) {
      try {
        await this.coldStart(res);
      } catch (e) {
        if (e instanceof UserError || (e instanceof HostError && e.userError)) throw e;
        const why = `cold start failed: ${(e as Error).message}`;
        res.unmeasured.cold_accept_s = res.unmeasured.cold_first_query_s = why;
        log(`${this.p.name}: ${why}`);
      }
    }
    this.save();
  }

  /**
   * Cold start (METHOD 6): stop the engine (its data stays), evict its data files from the page
   * cache, start it again and time until it accepts a health check and until the first vector
   * query returns, both from the start. A server is timed from its spawn (the host, with the
   * dataset loaded, waits ready); an in-process engine from its reopen() in a fresh host.
   */
  private async coldStart(res: Resources): Promise<void> {
    const { p, ds, opts } = this;
    const why = this.remote ? REMOTE_UNMEASURED : !p.adapter.reopen ? `the ${p.name} adapter cannot reopen its data without ingest (no reopen())` : !haveVmtouch() ? VMTOUCH_MISSING : null;
    if (why) {
      res.unmeasured.cold_accept_s = res.unmeasured.cold_first_query_s = res.unmeasured.disk_stopped_bytes = why;
      return;
    }
    await this.ready('engine restarted');
    const dir = this.dataDir()!;
    await this.host?.close();
    this.host = null;
    await this.stopServer();
    // What the engine keeps on disk once stopped cleanly (a memory engine saves only now).
    res.disk_stopped_bytes = diskUsage(dir);
    res.cold_eviction = evictPageCache(dir);
    const host = new HostClient(p.name);
    this.host = host;
    await host.request<'dataset'>({ type: 'dataset', participant: p.name, settingsPath: p.settingsPath, dataDir: opts.dataDir, dataset: ds.name }, opts.loadTimeoutS);
    const order = queryOrder(ds.nq);
    const query = order[order.length - 1];
    const knobs = ladderFor(p.settings, 'none', 10)[0] ?? {};
    const t0 = performance.now();
    const started = await this.startServer(true);
    const opened = await host.request<'opened'>({ type: 'open', reopen: true, participant: p.name, settingsPath: p.settingsPath, dataDir: opts.dataDir, dataset: ds.name, workDir: this.workDir!, maxConcurrency: opts.clients, server: started?.handle.connection }, opts.loadTimeoutS);
    const t1 = performance.now();
    const first = await host.request<'point'>({ type: 'point', knobs, k: 10, queries: [query], filters: [null], clients: 1 }, opts.pointTimeoutS);
    const t2 = performance.now();
    if (first.reply.errors[0]) throw new Error(`the first query after the restart failed: ${first.reply.errors[0]}`);
    if (first.reply.ids.length === 0) throw new Error('the first query after the restart returned no rows');
    const openS = opened.openS ?? (t1 - t0) / 1000;
    res.cold_accept_s = started ? started.acceptS : openS;
    res.cold_first_query_s = started ? (t2 - t0) / 1000 : openS + (t2 - t1) / 1000;
    log(`${p.name}: cold start: accepts after ${fmtSeconds(res.cold_accept_s)}, first query after ${fmtSeconds(res.cold_first_query_s)} (page cache: ${res.cold_eviction.resident_after_bytes} bytes of the data left resident)`);
  }

  async stop(): Promise<void> {
    this.recorder?.dispose();
    await this.host?.close();
    this.host = null;
    await this.stopServer();
    this.serverDir = null;
    // The work directory stays in the engine's home: a resumed run may reopen it.
    this.workDir = null;
  }
}

/** Measures the missing points of one group, saving the result file after every point. */
async function measureGroup(engine: EngineHandle, p: LoadedParticipant, ds: Dataset, g: AskedGroup, group: ResultGroup, order: Int32Array, opts: RunOptions, onPoint: () => void, save: () => void): Promise<void> {
  const ladder = ladderFor(p.settings, g.filter, g.k);
  const plan = planSlices(ds.nq, g.k, ladder.length * VIEWS.length);
  const firstQ = order[plan.first];
  const have = new Set(group.points.map((pt) => `${pt.ladder_index}/${pt.view}`));
  for (const s of group.skipped) for (const v of VIEWS) have.add(`${s.ladder_index}/${v}`);
  if (group.first_query_ms === undefined) {
    await engine.beforeGroup(g.key);
    const explained = await engine.request<'explained'>({ type: 'explain', knobs: ladder[0], query: firstQ, k: g.k, filter: g.filters[firstQ] }, opts.pointTimeoutS);
    if (explained.plan !== null) group.plan = explained.plan;
    if (explained.planError) {
      group.status = 'failed';
      group.reason = `plan check: ${explained.planError}`;
      group.complete = true;
      return;
    }
    const first = await engine.request<'point'>({ type: 'point', knobs: ladder[0], k: g.k, queries: [firstQ], filters: [g.filters[firstQ]], clients: 1 }, opts.pointTimeoutS);
    group.first_query_ms = first.reply.latenciesMs[0];
    save();
  }
  let slot = 0;
  for (let li = 0; li < ladder.length; li++) {
    const knobs: Knobs = ladder[li];
    for (const view of VIEWS) {
      const [from, to] = plan.slices[slot++];
      if (have.has(`${li}/${view}`)) continue;
      const queries = Array.from({ length: to - from }, (_, i) => order[(from + i) % ds.nq]);
      const clients = view === 'latency' ? 1 : p.adapter.concurrentSearch ? opts.clients : 1;
      let reply: PointReply;
      const clientMeter = startPointMeter(engine);
      try {
        const retry = (e: HostError) => log(`${p.name}: ${g.key} point ${li} (${view}): ${e.message}; restarting the engine and measuring the point again`);
        reply = (await engine.request<'point'>({ type: 'point', knobs, k: g.k, queries, filters: queries.map((q) => g.filters[q]), clients }, opts.pointTimeoutS, retry)).reply;
      } catch (e) {
        if (!(e instanceof HostError) || e.userError) throw e;
        // A point over the time limit, or one whose engine crashed twice, is left out and
        // listed; higher ladder points would not fare better, so the group ends here.
        group.skipped.push({ ladder_index: li, knobs, reason: e.message });
        group.complete = true;
        save();
        return;
      }
      const failed = reply.errors.filter((x) => x !== null);
      if (failed.length > 0) {
        group.skipped.push({ ladder_index: li, knobs, reason: `${failed.length} of ${queries.length} queries failed: ${failed[0]}` });
        save();
        onPoint();
        continue;
      }
      const s = summarize(scorePoint(ds, g, queries, reply));
      const clientFlags = await pointClientFlags(engine, p.adapter.server !== undefined, clientMeter, queries.length / reply.wallS, clients, g.k, opts.pointTimeoutS);
      group.points.push({
        ladder_index: li,
        knobs,
        view,
        clients,
        queries: queries.length,
        query_slice: [from % ds.nq, (to - 1) % ds.nq],
        recall: s.recall,
        recall_strict: s.recallStrict,
        recall_threshold: s.recallThreshold,
        short_results: s.shortResults,
        low_recall_share: s.lowRecallShare,
        unknown_ids: s.unknownIds,
        duplicate_ids: s.duplicateIds,
        filter_violations: s.filterViolations,
        qps: queries.length / reply.wallS,
        duration_s: reply.wallS,
        latency_ms: latencySummary(reply.latenciesMs),
        flags: [...(s.unknownIds + s.duplicateIds + s.filterViolations > 0 ? ['invalid-results'] : []), ...clientFlags],
      });
      save();
      onPoint();
    }
  }
  group.complete = true;
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
    JSON.stringify(prev.settings) === JSON.stringify(next.settings)
  );
}

export async function runParticipant(p: LoadedParticipant, ds: Dataset, groups: AskedGroup[], opts: RunOptions): Promise<ResultFile> {
  const started = new Date().toISOString();
  let result: ResultFile = {
    format: RESULT_FORMAT,
    participant: p.name,
    engine: p.adapter.engine,
    engine_version: 'unknown',
    origin: 'measured',
    dataset: { name: ds.name, n: ds.n, d: ds.d, nq: ds.nq, metric: ds.metric, hash: ds.hash },
    settings: { index: p.index, ladders: p.settings.ladders, batch_size: p.settings.batch_size, notes: p.settings.notes },
    filter_strategy: p.adapter.filterStrategy,
    hardware: hardware(),
    run: { vecbench_version: VECBENCH_VERSION, started, updated: started, query_seed: QUERY_SEED, clients: opts.clients, complete: false, resumed: 0, protocol: opts.cold ? 'cold' : 'warm' },
    load: null,
    groups: [],
    // Where the engine was, when it is a server the user runs (its URL's password masked).
    extra: opts.connect?.[p.name] ? { connection: remoteRecord(opts.connect[p.name]) } : {},
  };
  const path = resultPath(opts.outDir, ds.name, p.name);
  if (!opts.fresh && existsSync(path)) {
    const prev = readResult(path);
    // Settings go through JSON in the file: compare like with like.
    // and credentials masked as they are in the file.
    const normalized = redactValue(JSON.parse(JSON.stringify(result)) as ResultFile);
    if (resumable(prev, normalized)) {
      // A complete result still lacking the answer-quality section of a labelled dataset is
      // resumed for that section alone (its groups are complete and kept).
      const qualityMissing = ds.labels !== undefined && opts.quality !== false && prev.extra.quality === undefined;
      // Likewise a complete result still lacking an asked concurrency sweep or open loop.
      const loadMissing = (opts.load?.concurrency !== undefined && prev.extra.concurrency === undefined) || (opts.load?.openLoop !== undefined && prev.extra.open_loop === undefined);
      if (prev.run.complete && !qualityMissing && !loadMissing) {
        log(`${p.name}: ${ds.name} already measured (${path}); pass --fresh to measure again`);
        return prev;
      }
      result = prev;
      result.run.resumed += 1;
      log(`${p.name}: resuming ${path}`);
    } else {
      log(`${p.name}: ${path} was measured with other settings or data; measuring afresh`);
    }
  }
  const save = () => {
    result.run.updated = new Date().toISOString();
    writeResult(opts.outDir, result);
  };
  // Work directories of the layout before engine homes (<out>/.work) are of no use.
  const workRoot = join(opts.outDir, '.work');
  if (existsSync(workRoot)) for (const f of readdirSync(workRoot)) if (f.startsWith(`${p.name}-`)) rmSync(join(workRoot, f), { recursive: true, force: true });
  const engine = new EngineHandle(p, ds, opts, result, save);
  // A resumed result whose index a previous run built may reopen it instead of loading again.
  engine.reuseOnStart = result.load !== null;
  const order = queryOrder(ds.nq);
  try {
    await engine.ready(result.load === null ? 'first load' : 'resumed run');
    const measurable = groups.filter((g) => g.asked && supportReason(p, g) === null);
    const totalPoints = measurable.reduce((a, g) => a + ladderFor(p.settings, g.filter, g.k).length * VIEWS.length, 0);
    const progress = new Progress(`${p.name}: measuring`, totalPoints);
    let done = result.groups.reduce((a, g) => a + g.points.length, 0);
    for (const g of groups) {
      let group = result.groups.find((x) => x.key === g.key);
      if (group?.complete) continue;
      const reason = g.asked ? supportReason(p, g) : `the filter keeps ${g.medianMatches} rows (median), fewer than ${ASK_FACTOR} x k = ${ASK_FACTOR * g.k}`;
      if (!g.asked || reason !== null) {
        result.groups.push({ key: g.key, filter: g.filter, k: g.k, status: g.asked ? 'unsupported' : 'not_asked', reason: reason ?? undefined, median_matches: g.medianMatches, points: [], complete: true, skipped: [] });
        continue;
      }
      if (!group) {
        group = { key: g.key, filter: g.filter, k: g.k, status: 'measured', median_matches: g.medianMatches, points: [], complete: false, skipped: [] };
        result.groups.push(group);
      }
      try {
        await measureGroup(engine, p, ds, g, group, order, opts, () => progress.update(++done, g.key), save);
      } catch (e) {
        if (!(e instanceof HostError) || e.userError) throw e;
        // The engine crashed or hung outside a point (explain, first query, reload): this
        // group is lost with the reason; the next group gets a fresh engine.
        group.status = 'failed';
        group.reason = e.message;
        group.complete = true;
        log(`${p.name}: group ${g.key} failed: ${e.message}`);
      }
      save();
    }
    progress.done();
    if (ds.labels && opts.quality !== false && result.extra.quality === undefined) {
      try {
        result.extra.quality = await measureQuality(() => engine.ready('engine restarted'), p, ds, opts);
      } catch (e) {
        if (!(e instanceof HostError) || e.userError) throw e;
        result.extra.quality = { format: 'vecbench-quality/1', status: 'failed', reason: e.message, k: opts.qualityK ?? 100, queries: 0, labels: '', keyword: null, fusion: null, oracle: null, points: [], unsupported: [] };
        log(`${p.name}: answer quality failed: ${e.message}`);
      }
      save();
    }
    if (opts.load) {
      try {
        await measureLoad(engine, p, ds, groups, result, { ...opts.load, pointTimeoutS: opts.pointTimeoutS }, save);
      } catch (e) {
        if (!(e instanceof HostError) || e.userError) throw e;
        result.extra.load_error = e.message;
        log(`${p.name}: concurrency sweep / open loop failed: ${e.message}`);
      }
      save();
    }
    await engine.finish();
    result.run.complete = true;
    save();
  } finally {
    await engine.stop();
    // A load cut short (by a full disk, a failure) has no finished-build marker and is of no use
    // to a resume: it leaves nothing behind.
    if (typeof readMarker(engine.home) === 'string') discardHome(engine.home);
  }
  // Finished work needs no engine data; an unfinished result keeps it for its resume.
  if (result.run.complete && !opts.keepEngines) discardHome(engine.home);
  return result;
}

export async function run(opts: RunOptions): Promise<ResultFile[]> {
  // Servers left by a run that was killed before it could stop them.
  for (const r of reapOrphans()) log(`stopped ${r.name} server (pid ${r.pid}) left by a killed run`);
  const participants: LoadedParticipant[] = [];
  for (const name of opts.participants) participants.push(await loadParticipant(name, opts.settingsFiles?.[name], opts.dataset));
  const ds = await prepareDataset(opts.dataDir, opts.dataset);
  // Settings that cannot suit this dataset (e.g. its dimension) stop the run before any work.
  const info = { name: ds.name, n: ds.n, d: ds.d, metric: ds.metric, hasText: ds.text !== undefined };
  for (const p of participants) {
    const why = p.adapter.checkDataset?.(p.index, info);
    if (why) throw new UserError(`participant ${p.name}: ${why}`);
  }
  const groups = prepareGroups(ds, opts.groups);
  const out: ResultFile[] = [];
  const failures: string[] = [];
  for (const p of participants) {
    try {
      out.push(await runParticipant(p, ds, groups, opts));
    } catch (e) {
      if (e instanceof HostError && e.userError) throw new UserError(e.message);
      if (!(e instanceof HostError)) throw e;
      failures.push(`${p.name}: ${e.message}`);
      log(`${p.name}: stopped: ${e.message} (finished groups are kept in ${resolve(opts.outDir)})`);
    }
  }
  if (failures.length > 0) process.exitCode = 1;
  return out;
}
