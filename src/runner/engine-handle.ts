// A participant's engine: its host process and, for a server participant, its server; started,
// loaded (or reopened), restarted after a crash, rebuilt, cold-started and stopped here. Its memory
// budget is in engine-budget.ts, its server in engine-server.ts, its host process started by
// engine-host.ts, the check queries in build-check.ts.
import type { Dataset } from '../datasets/layout.ts';
import type { ResultFile, Resources } from '../results/schema.ts';
import { engineLogPath, resultPath } from '../results/store.ts';
import { UserError } from '../util/errors.ts';
import { Heartbeat, Progress, fmtSeconds, log } from '../util/progress.ts';
import { type HostClient, HostError } from './client.ts';
import { startEngineHost } from './engine-host.ts';
import { VMTOUCH_MISSING, evictPageCache, haveVmtouch } from './page-cache.ts';
import { ResourceRecorder, diskUsage, emptyResources } from './resources.ts';
import { REMOTE_UNMEASURED, markRemoteUnmeasured } from './remote-server.ts';
import type { StartedServer } from './server.ts';
import { ladderFor, type LoadedParticipant } from './participants.ts';
import type { HostReply, HostRequest } from './protocol.ts';
import { ReuseRefused, checkDiffers, engineHome, engineWorkDir, markerMismatch, readMarker, startFreshBuild } from './engine-home.ts';
import { scoreProbe } from './points.ts';
import { queryOrder } from './query-order.ts';
import { RunStopped } from './stop.ts';
import type { RunOptions } from './run-options.ts';
import { askCheck, markBuilt, probeRequest, wantedBuild } from './build-check.ts';
import { EngineBudget } from './engine-budget.ts';
import { EngineServer } from './engine-server.ts';

/** The participant's engine process, (re)started and loaded on demand: after a crash or a
 * time-out the next group gets a fresh engine, and the reload is recorded. */
export class EngineHandle {
  host: HostClient | null = null;
  private workDir: string | null = null;
  /** The participant's server, when it has one: started before the host, stopped after it. */
  private readonly server: EngineServer;
  private recorder: ResourceRecorder | null = null;
  /** Set by a resumed run: the next start first tries to reopen the index a previous run
   * built (src/runner/engine-home.ts) instead of loading it again. */
  reuseOnStart = false;
  /** The build time of the index being measured (its reuse marker), null when it has none. */
  indexBuilt: string | null = null;
  /** The engine's memory budget (--memory-limit). */
  private readonly budget: EngineBudget;
  constructor(
    private readonly p: LoadedParticipant,
    private readonly ds: Dataset,
    private readonly opts: RunOptions,
    private readonly result: ResultFile,
    private readonly save: () => void,
  ) {
    this.budget = new EngineBudget(p, ds, opts);
    this.server = new EngineServer(p, ds, opts, this.budget, (why, stop) => this.host?.kill(why, stop));
  }

  /** The URL of the server the user runs for this participant (--connect), if any. */
  private get remote(): string | undefined {
    return this.opts.connect?.[this.p.name];
  }

  /** Where the engine processes' stdout and stderr go, named on the terminal once. */
  get logFile(): string {
    return engineLogPath(this.opts.outDir, this.ds.name, this.p.name);
  }
  private logNamed = false;

  /** A new engine process, its output appended to the participant's log file. */
  private newHost(onProgress?: (p: { what: string; done: number; total: number }) => void): HostClient {
    if (!this.logNamed) {
      this.logNamed = true;
      log(`${this.p.name}: engine output goes to ${this.logFile}`);
    }
    const host = startEngineHost(this.p.name, this.logFile, onProgress);
    // An in-process engine lives in its host: the host goes into the budget (one that holds
    // serving only: once the harness's copy of the dataset is loaded, servingHost).
    if (!this.p.adapter.server && host.pid !== undefined && !this.budget.servingOnly) this.budget.get()?.add(host.pid);
    return host;
  }

  /** A host for a reopened engine: the dataset loaded first, then, for an in-process engine
   * under a budget that holds serving, moved into it, so the budget is charged with what the
   * engine brings in (its memory, the page cache of its files), not the harness's copy of the
   * dataset, which stays charged where it was loaded. */
  private async servingHost(): Promise<HostClient> {
    const { p, ds, opts } = this;
    const host = this.newHost();
    this.host = host;
    await host.request<'dataset'>(
      { type: 'dataset', participant: p.name, settingsPath: p.settingsPath, dataDir: opts.dataDir, dataset: ds.name },
      opts.loadTimeoutS,
    );
    if (!p.adapter.server && host.pid !== undefined && this.budget.servingOnly) this.budget.get()?.add(host.pid);
    return host;
  }

  /** What the budget recorded, for the result (null without --memory-limit). */
  budgetReading = (): ReturnType<EngineBudget['reading']> => this.budget.reading();

  /** Removes the budget's cgroup (after the engine stopped for good). */
  disposeBudget(): void {
    this.budget.dispose();
  }

  /** Where this participant's engine data lives across runs (<out>/.engines/<dataset>/<name>). */
  get home(): string {
    return engineHome(this.opts.outDir, this.ds.name, this.p.name);
  }

  /**
   * A resumed run: reopens the index a previous run built when its marker matches (same data,
   * same settings, same engine version) and the reopened engine answers the check queries with
   * the ids recorded after the build; records the reuse. Returns the host, or why the index
   * cannot be reused (the caller then loads it again and records that reason with the reload).
   */
  private async tryReuse(reason: string): Promise<HostClient | string> {
    const { p, result } = this;
    if (this.remote) return "the server is the user's (--connect)";
    if (!p.adapter.reopen) return `the ${p.name} adapter cannot reopen its data (no reopen())`;
    const marker = readMarker(this.home);
    if (typeof marker === 'string') return marker;
    const mismatch = markerMismatch(marker, wantedBuild(this.p, this.ds));
    if (mismatch) return mismatch;
    this.workDir = engineWorkDir(this.home);
    const res = result.resources ?? (result.resources = emptyResources(p.adapter.server ? 'server' : 'host'));
    this.recorder = new ResourceRecorder(res, () => this.server.handle?.pid ?? this.host?.pid);
    try {
      const started = await this.server.start(this.workDir!, true);
      const host = await this.servingHost();
      const opened = await this.open(host, true, started);
      if (opened.engineVersion !== marker.engine_version)
        throw new ReuseRefused(`it was built by ${marker.engine_version}, the engine is ${opened.engineVersion} now`);
      const check = await askCheck(host, this.p, this.ds, this.opts.pointTimeoutS);
      const differs = typeof check === 'string' ? check : checkDiffers(marker.check.ids, check.ids);
      if (differs) throw new ReuseRefused(differs);
      result.engine_version = opened.engineVersion;
      this.recorder.startServing();
      this.indexBuilt = marker.built;
      result.load!.reused.push({ reason, built: marker.built, open_s: opened.openS ?? null, check_queries: marker.check.queries.length });
      log(`${p.name}: reopened the index built ${marker.built} (${marker.rows} rows) in ${fmtSeconds(opened.openS ?? 0)}: no reload`);
      this.save();
      return host;
    } catch (e) {
      if (e instanceof UserError || e instanceof RunStopped || (e instanceof HostError && e.userError)) throw e;
      await this.stop();
      return e instanceof ReuseRefused ? e.message : `reopening it failed: ${(e as Error).message}`;
    }
  }

  /** Opens the session in the host on the work directory: afresh, or reopening what is there. */
  private open(host: HostClient, reopen: boolean, server: StartedServer | null) {
    const { p, ds, opts } = this;
    return host.request<'opened'>(
      {
        type: 'open',
        ...(reopen ? { reopen: true } : {}),
        participant: p.name,
        settingsPath: p.settingsPath,
        dataDir: opts.dataDir,
        dataset: ds.name,
        workDir: this.workDir!,
        maxConcurrency: opts.clients,
        server: server?.handle.connection,
      },
      opts.loadTimeoutS,
    );
  }

  /** A live, loaded engine. A load that dies (not one that times out) is tried once more. */
  async ready(reason: string): Promise<HostClient> {
    if (this.host?.alive) return this.host;
    // Killed at its budget while no request was under way (between groups, on the disk tier): it
    // does not fit, and a load again would only end the same way.
    const killed = this.host ? this.budget.killedAtBudget() : null;
    if (killed) throw killed;
    try {
      return await this.start(reason);
    } catch (raw) {
      const e = this.budget.overBudget(raw);
      // An engine that does not fit would not fit the second time either.
      if (e !== raw) throw e;
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
      } catch (raw) {
        const e = this.budget.overBudget(raw);
        if (e !== raw) throw e;
        if (!(e instanceof HostError) || e.userError || e.timedOut || attempt > 0) throw e;
        onRetry?.(e);
      }
    }
  }

  /** A fresh build of the index (--builds): the engine is stopped and loaded again. */
  async rebuild(reason: string): Promise<HostClient> {
    await this.stop();
    this.reuseOnStart = false;
    return this.start(reason);
  }

  private async start(reason: string): Promise<HostClient> {
    // Why the last engine process is gone (say, a point that timed out): said and recorded.
    // A server's death already names itself (server.death): not said twice.
    const end = this.host && !this.host.alive ? this.host.end : null;
    const causes = [end !== null && end !== this.server.death ? `the last engine process ${end}` : null, this.server.death].filter((x) => x !== null);
    // An engine stopped for a slow request left its built index whole: reopened, not built
    // again (on the disk tier a build is half an hour). A crash is built afresh.
    const slowNotBroken = this.host?.timedOut === true && this.server.death === null && this.indexBuilt !== null;
    await this.stop();
    const { p, ds, opts, result } = this;
    let notReused: string | null = null;
    if (this.reuseOnStart || slowNotBroken) {
      this.reuseOnStart = false;
      const reused = await this.tryReuse(causes.length > 0 ? `${reason} (${causes.join('; ')})` : reason);
      if (typeof reused !== 'string') return reused;
      notReused = reused;
    }
    this.workDir = startFreshBuild(this.home);
    // Under a budget that holds serving only, the build runs outside it; serving starts below.
    this.budget.building = this.budget.servingOnly;
    // Resources are measured on the first load of a result; reloads only time their load.
    const firstLoad = result.load === null;
    const res = firstLoad || !result.resources ? (result.resources = emptyResources(p.adapter.server ? 'server' : 'host')) : result.resources;
    // A server the user runs (--connect) is not ours to sample: its figures are left unmeasured.
    if (this.remote) markRemoteUnmeasured(res);
    this.recorder = this.remote ? null : new ResourceRecorder(res, () => this.server.handle?.pid ?? this.host?.pid);
    const server = await this.server.start(this.workDir!, false);
    if (!firstLoad) log(`${p.name}: loading the engine again (${[reason, ...causes].join('; ')})`);
    const ingestProgress = new Progress(`${p.name}: ingest ${ds.name}`, ds.n);
    // The engine reports nothing while it builds: its elapsed time is shown instead.
    const building = new Heartbeat(`${p.name}: building the index (the engine reports no progress)`);
    const host = this.newHost((pr) => {
      ingestProgress.update(pr.done);
      if (pr.done >= pr.total) building.begin();
    });
    this.host = host;
    const opened = await this.open(host, false, server);
    // One file never mixes two engine versions' points (a resumed run after an upgrade).
    if (result.engine_version !== 'unknown' && result.engine_version !== opened.engineVersion && result.groups.some((g) => g.points.length > 0)) {
      throw new UserError(
        `${resultPath(opts.outDir, ds.name, p.name)} holds points measured with ${p.adapter.engine} ${result.engine_version}, the engine is ${opened.engineVersion} now; pass --fresh to measure it again, or --out another directory`,
      );
    }
    result.engine_version = opened.engineVersion;
    if (firstLoad) {
      this.recorder?.baseline();
      this.recorder?.startBuild();
    }
    const probe = firstLoad ? probeRequest(this.p, this.ds) : undefined;
    const loaded = await host.request<'loaded'>({ type: 'load', batchSize: p.settings.batch_size, probe }, opts.loadTimeoutS).finally(() => building.end());
    const disk = await host.request<'disk'>({ type: 'disk' }, opts.loadTimeoutS);
    if (firstLoad) {
      this.recorder?.endBuild(this.dataDir());
      if (probe) res.probe = scoreProbe(ds, probe, loaded.probe);
    }
    this.recorder?.startServing();
    if (result.load === null) {
      result.load = { rows: loaded.rows, ingest_s: loaded.ingestS, index_s: loaded.indexS, disk_bytes: disk.bytes, reloads: [], reused: [] };
    } else {
      const why = notReused === null ? causes : [...causes, `index not reused: ${notReused}`];
      result.load.reloads.push({ reason: why.length > 0 ? `${reason} (${why.join('; ')})` : reason, ingest_s: loaded.ingestS, index_s: loaded.indexS });
      this.server.death = null;
    }
    const at = { home: this.home, engineVersion: result.engine_version, rows: loaded.rows, pointTimeoutS: opts.pointTimeoutS };
    this.indexBuilt = this.remote ? null : await markBuilt(host, p, ds, at);
    log(`${p.name}: loaded ${loaded.rows} rows, ingest ${fmtSeconds(loaded.ingestS)}, index ${fmtSeconds(loaded.indexS)} (${result.engine_version})`);
    this.save();
    if (!this.budget.building) return host;
    // Serving within the budget: stopped, evicted and started again from its files, inside it
    // (a cold start under the budget, recorded as one).
    this.budget.building = false;
    await this.coldStart(res, 'within its memory budget');
    if (this.host === host) throw new UserError(`${p.name}: serving within --memory-limit needs a cold start: ${res.unmeasured.cold_first_query_s}`);
    return this.host!;
  }

  /** For the load generator's CPU figures: the engine's process (its server's tree, or the host
   * of an in-process engine) and the host (the client). */
  loadPids(): { engine: number | undefined; engineTree: boolean; host: number | undefined } {
    return { engine: this.remote ? undefined : (this.server.handle?.pid ?? this.host?.pid), engineTree: this.server.handle !== null, host: this.host?.pid };
  }

  /** The directory holding the engine's data: the server's, or the host's work directory. */
  private dataDir(): string | null {
    return this.server.dir ?? this.workDir;
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
    res.group_evictions.push({
      group: key,
      resident_before_bytes: ev.resident_before_bytes,
      resident_after_bytes: ev.resident_after_bytes,
      drop_caches: ev.drop_caches,
    });
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
        if (e instanceof UserError || e instanceof RunStopped || (e instanceof HostError && e.userError)) throw e;
        const why = `cold start failed: ${(e as Error).message}`;
        res.unmeasured.cold_accept_s = res.unmeasured.cold_first_query_s = why;
        log(`${this.p.name}: ${why}`);
      }
    }
    this.save();
  }

  /**
   * Cold start (docs/method.md §6): stop the engine (its data stays), evict its data files from the page
   * cache, start it again and time until it accepts a health check and until the first vector
   * query returns, both from the start. A server is timed from its spawn (the host, with the
   * dataset loaded, waits ready); an in-process engine from its reopen() in a fresh host.
   */
  private async coldStart(res: Resources, within = ''): Promise<void> {
    const { p, ds, opts } = this;
    const why = this.remote
      ? REMOTE_UNMEASURED
      : !p.adapter.reopen
        ? `the ${p.name} adapter cannot reopen its data without ingest (no reopen())`
        : !haveVmtouch()
          ? VMTOUCH_MISSING
          : null;
    if (why) {
      res.unmeasured.cold_accept_s = res.unmeasured.cold_first_query_s = res.unmeasured.disk_stopped_bytes = why;
      return;
    }
    await this.ready('engine restarted');
    const dir = this.dataDir()!;
    await this.host?.close();
    this.host = null;
    await this.server.stop();
    // What the engine keeps on disk once stopped cleanly (a memory engine saves only now).
    res.disk_stopped_bytes = diskUsage(dir);
    res.cold_eviction = evictPageCache(dir);
    const host = await this.servingHost();
    const order = queryOrder(ds.nq);
    const query = order[order.length - 1];
    const knobs = ladderFor(p.settings, 'none', 10)[0] ?? {};
    const t0 = performance.now();
    const started = await this.server.start(this.workDir!, true);
    const opened = await this.open(host, true, started);
    const t1 = performance.now();
    const first = await host.request<'point'>({ type: 'point', knobs, k: 10, queries: [query], filters: [null], clients: 1 }, opts.pointTimeoutS);
    const t2 = performance.now();
    if (first.reply.errors[0]) throw new Error(`the first query after the restart failed: ${first.reply.errors[0]}`);
    if (first.reply.ids.length === 0) throw new Error('the first query after the restart returned no rows');
    const openS = opened.openS ?? (t1 - t0) / 1000;
    res.cold_accept_s = started ? started.acceptS : openS;
    res.cold_first_query_s = started ? (t2 - t0) / 1000 : openS + (t2 - t1) / 1000;
    log(
      `${p.name}: cold start${within && ` ${within}`}: accepts after ${fmtSeconds(res.cold_accept_s)}, first query after ${fmtSeconds(res.cold_first_query_s)} (page cache: ${res.cold_eviction.resident_after_bytes} bytes of the data left resident)`,
    );
  }

  async stop(): Promise<void> {
    this.budget.building = false;
    this.recorder?.dispose();
    await this.host?.close();
    this.host = null;
    await this.server.stop();
    this.server.dir = null;
    // The work directory stays in the engine's home: a resumed run may reopen it.
    this.workDir = null;
  }
}
