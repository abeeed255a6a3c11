// `vecbench run`: load each participant, sweep its ladder over every asked query group and
// store only measured points (docs/method.md §4, §5). Recall is computed here from the returned ids,
// never taken from the engine.
import { appendFileSync, chmodSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Knobs, ServerHandle } from '../contracts.ts';
import type { GroupKey } from '../datasets/groups.ts';
import type { Dataset } from '../datasets/layout.ts';
import { prepareDataset } from '../datasets/registry.ts';
import { RESULT_FORMAT, type ResultFile, type ResultGroup, type Resources } from '../results/schema.ts';
import { engineLogPath, readResult, resultPath, resultPaths } from '../results/store.ts';
import { ResultWriter, foldJournal, journalPath } from '../results/journal.ts';
import { provenance, provenanceMismatch } from '../results/provenance.ts';
import { UserError, diskFullError } from '../util/errors.ts';
import { Progress, fmtSeconds, log } from '../util/progress.ts';
import { HostClient, HostError, SIGNAL_SETTLE_MS } from './client.ts';
import { ResourceRecorder, VMTOUCH_MISSING, diskUsage, emptyResources, evictPageCache, haveVmtouch } from './resources.ts';
import { existingServerDataDir, makeServerDataDir, reapServerData, serverDataBase } from './server-data.ts';
import { REMOTE_UNMEASURED, attachServer, markRemoteUnmeasured, reapOrphans, remoteRecord, startServer, type StartedServer } from './server.ts';
import { redactUrl, redactValue } from '../util/redact.ts';
import { measureQuality } from '../hybrid/quality-run.ts';
import { ladderFor, loadParticipant, type LoadedParticipant } from './participants.ts';
import type { HostReply, HostRequest } from './protocol.ts';
import { measureLoad, type LoadOptions } from '../loadgen/sweep.ts';
import {
  ReuseRefused,
  buildSettingsHash,
  checkDiffers,
  discardHome,
  engineHome,
  engineWorkDir,
  idsPerQuery,
  markerMismatch,
  readMarker,
  startFreshBuild,
  writeMarker,
  type BuiltMarker,
} from './engine-home.ts';
import { ASK_FACTOR, PROBE_QUERIES, prepareGroups, scoreProbe, supportReason, type AskedGroup } from './points.ts';
import { QUERY_SEED, queryOrder } from './query-order.ts';
import { hardware } from '../results/hardware.ts';
import { VECBENCH_VERSION } from '../version.ts';
import {
  DEFAULT_BUSY_CORES,
  DEFAULT_HOST_SLOW,
  DEFAULT_QUERY_SET,
  DEFAULT_TIMING,
  MIN_RUN_QUERIES,
  minPointQueries,
  measureColdGroup,
  measureWarmGroup,
  type GroupRun,
  type Timing,
} from './measure-group.ts';
import { BUSY_OTHER_CORES, busyWarning, checkQuiet } from './machine-load.ts';
import { sharedHostSpeed } from './host-speed.ts';
import { RunStopped, stopRequested, stopSignalOf } from './stop.ts';

interface RunOptions {
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
  /** Cold protocol (docs/method.md §5): evict the engine's data files from the page cache before every
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
  /** Warm protocol: queries every point answers (a seeded subset), or 'all' (default 1,000). */
  querySet?: number | 'all';
  /** Warm protocol: passes per point (default DEFAULT_TIMING). */
  timing?: Timing;
  /** Threads of the throughput view for synchronous in-process engines (default: the cores). */
  threads?: number;
  /** Index builds measured (--builds, default 1): later builds time the calibrated knobs. */
  builds?: number;
  /** Cores other processes may use before passes count as busy (default BUSY_OTHER_CORES). */
  busyCores?: number;
  /** A round whose host-speed probe took more than this many times the run's fastest is
   * retaken (default 0: no probes; src/runner/host-speed.ts says why). */
  hostSlow?: number;
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
    mkdirSync(dirname(this.logFile), { recursive: true });
    const existed = existsSync(this.logFile);
    try {
      appendFileSync(this.logFile, `--- engine process started ${new Date().toISOString()}\n`);
    } catch (e) {
      // A full disk: leave no empty log behind (a failed run writes no file).
      if (!existed && statSync(this.logFile, { throwIfNoEntry: false })?.size === 0) rmSync(this.logFile, { force: true });
      throw diskFullError(e, this.logFile) ?? e;
    }
    return new HostClient(this.p.name, onProgress, this.logFile);
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
    const r = await host.request<'point'>(
      { type: 'point', knobs: check.knobs, k: check.k, queries: check.queries, filters: check.queries.map(() => null), clients: 1 },
      this.opts.pointTimeoutS,
    );
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
    const marker: BuiltMarker = {
      format: 'vecbench-engine/1',
      participant: want.participant,
      dataset: this.ds.name,
      dataset_hash: want.datasetHash,
      settings_hash: want.settingsHash,
      engine_version: this.result.engine_version,
      built: new Date().toISOString(),
      rows,
      check,
    };
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
    if (this.remote) return "the server is the user's (--connect)";
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
      const host = this.newHost();
      this.host = host;
      const opened = await host.request<'opened'>(
        {
          type: 'open',
          reopen: true,
          participant: p.name,
          settingsPath: p.settingsPath,
          dataDir: opts.dataDir,
          dataset: ds.name,
          workDir: this.workDir,
          maxConcurrency: opts.clients,
          server: started?.handle.connection,
        },
        opts.loadTimeoutS,
      );
      if (opened.engineVersion !== marker.engine_version)
        throw new ReuseRefused(`it was built by ${marker.engine_version}, the engine is ${opened.engineVersion} now`);
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
      if (e instanceof UserError || e instanceof RunStopped || (e instanceof HostError && e.userError)) throw e;
      await this.stop();
      return e instanceof ReuseRefused ? e.message : `reopening it failed: ${(e as Error).message}`;
    }
  }

  /** A live, loaded engine. A load that dies (not one that times out) is tried once more. */
  async ready(reason: string): Promise<HostClient> {
    if (this.host?.alive) return this.host;
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

  /** A fresh build of the index (--builds): the engine is stopped and loaded again. */
  async rebuild(reason: string): Promise<HostClient> {
    await this.stop();
    this.reuseOnStart = false;
    return this.start(reason);
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
    const host = this.newHost((pr) => ingestProgress.update(pr.done));
    this.host = host;
    const opened = await host.request<'opened'>(
      {
        type: 'open',
        participant: p.name,
        settingsPath: p.settingsPath,
        dataDir: opts.dataDir,
        dataset: ds.name,
        workDir: this.workDir,
        maxConcurrency: opts.clients,
        server: server?.handle.connection,
      },
      opts.loadTimeoutS,
    );
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
    // A server running as its own user must reach its directory: the work directory is opened
    // to it, and where --out's ancestors are closed to it the data goes elsewhere (server-data.ts).
    chmodSync(this.workDir!, 0o755);
    const label = `${ds.name}-${p.name}`;
    const user = life.runsAs?.() ?? null;
    this.serverDir = existing ? existingServerDataDir(this.workDir!, user, label) : makeServerDataDir(this.workDir!, user, label);
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
    void server.waitExit().then(async () => {
      if (this.server !== server) return; // stopped on purpose
      // A group signal reaches the server and the runner at once: give the runner's own
      // handler a moment, so that a stop is not recorded as the server's death.
      await new Promise((r) => setTimeout(r, SIGNAL_SETTLE_MS));
      if (this.server !== server) return;
      const why = `${p.name} server (pid ${server.pid}) died mid-run: ${server.exitReason}`;
      this.server = null;
      const stop = stopRequested() ?? stopSignalOf((/^killed by (SIG[A-Z]+)$/.exec(server.exitReason ?? '')?.[1] ?? null) as NodeJS.Signals | null);
      if (!stop) {
        log(why);
        this.serverDeath = why;
      }
      this.host?.kill(why, stop);
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
  private async coldStart(res: Resources): Promise<void> {
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
    await this.stopServer();
    // What the engine keeps on disk once stopped cleanly (a memory engine saves only now).
    res.disk_stopped_bytes = diskUsage(dir);
    res.cold_eviction = evictPageCache(dir);
    const host = this.newHost();
    this.host = host;
    await host.request<'dataset'>(
      { type: 'dataset', participant: p.name, settingsPath: p.settingsPath, dataDir: opts.dataDir, dataset: ds.name },
      opts.loadTimeoutS,
    );
    const order = queryOrder(ds.nq);
    const query = order[order.length - 1];
    const knobs = ladderFor(p.settings, 'none', 10)[0] ?? {};
    const t0 = performance.now();
    const started = await this.startServer(true);
    const opened = await host.request<'opened'>(
      {
        type: 'open',
        reopen: true,
        participant: p.name,
        settingsPath: p.settingsPath,
        dataDir: opts.dataDir,
        dataset: ds.name,
        workDir: this.workDir!,
        maxConcurrency: opts.clients,
        server: started?.handle.connection,
      },
      opts.loadTimeoutS,
    );
    const t1 = performance.now();
    const first = await host.request<'point'>({ type: 'point', knobs, k: 10, queries: [query], filters: [null], clients: 1 }, opts.pointTimeoutS);
    const t2 = performance.now();
    if (first.reply.errors[0]) throw new Error(`the first query after the restart failed: ${first.reply.errors[0]}`);
    if (first.reply.ids.length === 0) throw new Error('the first query after the restart returned no rows');
    const openS = opened.openS ?? (t1 - t0) / 1000;
    res.cold_accept_s = started ? started.acceptS : openS;
    res.cold_first_query_s = started ? (t2 - t0) / 1000 : openS + (t2 - t1) / 1000;
    log(
      `${p.name}: cold start: accepts after ${fmtSeconds(res.cold_accept_s)}, first query after ${fmtSeconds(res.cold_first_query_s)} (page cache: ${res.cold_eviction.resident_after_bytes} bytes of the data left resident)`,
    );
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
  };
}

function threadsOf(opts: RunOptions): number {
  return opts.threads ?? availableParallelism();
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
    (prev.run.threads ?? null) === (next.run.threads ?? null)
  );
}

async function runParticipant(p: LoadedParticipant, ds: Dataset, groups: AskedGroup[], opts: RunOptions): Promise<ResultFile> {
  const started = new Date().toISOString();
  let result: ResultFile = {
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
      threads: threadsOf(opts),
    },
    load: null,
    groups: [],
    // Where the engine was, when it is a server the user runs (its URL's password masked).
    extra: opts.connect?.[p.name] ? { connection: remoteRecord(opts.connect[p.name]) } : {},
  };
  result.provenance = provenance(result.settings);
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
      const loadMissing =
        (opts.load?.concurrency !== undefined && prev.extra.concurrency === undefined) ||
        (opts.load?.openLoop !== undefined && prev.extra.open_loop === undefined);
      if (prev.run.complete && !qualityMissing && !loadMissing) {
        log(`${p.name}: ${ds.name} already measured (${path}); pass --fresh to measure again`);
        return prev;
      }
      // One file never mixes the figures of two vecbench programs.
      const mixed = provenanceMismatch(prev, { provenance: result.provenance });
      if (mixed) throw new UserError(`${path} cannot be resumed: ${mixed}; pass --fresh to measure it again, or --out another directory`);
      result = prev;
      result.run.resumed += 1;
      // Points a killed run appended to the journal after its last whole write.
      const folded = foldJournal(journalPath(opts.outDir, ds.name, p.name), result);
      log(`${p.name}: resuming ${path}${folded > 0 ? ` (${folded} points from its journal)` : ''}`);
    } else {
      log(`${p.name}: ${path} was measured with other settings or data; measuring afresh`);
    }
  }
  const writer = new ResultWriter(opts.outDir, () => result);
  // A result measured afresh starts with no journal; a resumed one has folded its journal.
  if (result.run.resumed === 0) writer.discardJournal();
  const save = () => writer.save();
  // Work directories of the layout before engine homes (<out>/.work) are of no use.
  const workRoot = join(opts.outDir, '.work');
  if (existsSync(workRoot)) for (const f of readdirSync(workRoot)) if (f.startsWith(`${p.name}-`)) rmSync(join(workRoot, f), { recursive: true, force: true });
  const engine = new EngineHandle(p, ds, opts, result, save);
  // A resumed result whose index a previous run built may reopen it instead of loading again.
  engine.reuseOnStart = result.load !== null;
  const order = Array.from(queryOrder(ds.nq));
  const warmSet = order.slice(0, result.run.query_set!.size);
  try {
    await engine.ready(result.load === null ? 'first load' : 'resumed run');
    const measurable = groups.filter((g) => g.asked && supportReason(p, g) === null);
    const builds = opts.builds ?? 1;
    const progress = new Progress(`${p.name}: measuring`, measurable.length * builds);
    let done = result.groups.filter((g) => g.complete && g.status === 'measured').length;
    const groupRun = (g: AskedGroup, group: ResultGroup, build: number): GroupRun => ({
      engine,
      p,
      ds,
      g,
      group,
      queries: opts.cold ? order : warmSet,
      clients: opts.clients,
      threads: threadsOf(opts),
      pointTimeoutS: opts.pointTimeoutS,
      timing: opts.timing ?? DEFAULT_TIMING,
      build,
      busyCores: opts.busyCores ?? DEFAULT_BUSY_CORES ?? BUSY_OTHER_CORES,
      hostSlow: opts.hostSlow ?? DEFAULT_HOST_SLOW,
      ...((opts.hostSlow ?? DEFAULT_HOST_SLOW) > 0 ? { hostSpeed: sharedHostSpeed() } : {}),
      onProgress: (what) => progress.update(done, what),
      save,
      append: (entry) => writer.append(entry),
    });
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
      try {
        await (opts.cold ? measureColdGroup : measureWarmGroup)(groupRun(g, group, 0));
      } catch (e) {
        if (!(e instanceof HostError) || e.userError) throw e;
        // The engine crashed or hung outside a point (explain, first query, reload): this
        // group is lost with the reason; the next group gets a fresh engine.
        group.status = 'failed';
        group.reason = e.message;
        group.complete = true;
        log(`${p.name}: group ${g.key} failed: ${e.message}`);
      }
      progress.update(++done, g.key);
      save();
    }
    // Later builds (--builds): a fresh index each, timed at the knobs the first was calibrated to.
    for (let b = 1; b < builds && !opts.cold; b++) {
      const todo = result.groups.filter((x) => x.status === 'measured' && x.complete && !x.points.some((pt) => pt.build === b && pt.view === 'throughput'));
      if (todo.length === 0) continue;
      await engine.rebuild(`build ${b + 1} of ${builds}`);
      for (const group of todo) {
        const g = groups.find((x) => x.key === group.key);
        if (!g) continue;
        group.points = group.points.filter((pt) => (pt.build ?? 0) !== b);
        try {
          await measureWarmGroup(groupRun(g, group, b));
        } catch (e) {
          if (!(e instanceof HostError) || e.userError) throw e;
          log(`${p.name}: group ${g.key}, build ${b + 1}: ${e.message}`);
        }
        progress.update(++done, `${g.key} (build ${b + 1})`);
        save();
      }
    }
    progress.done();
    if (ds.labels && opts.quality !== false && result.extra.quality === undefined) {
      try {
        result.extra.quality = await measureQuality(() => engine.ready('engine restarted'), p, ds, opts);
      } catch (e) {
        if (!(e instanceof HostError) || e.userError) throw e;
        result.extra.quality = {
          format: 'vecbench-quality/1',
          status: 'failed',
          reason: e.message,
          k: opts.qualityK ?? 100,
          queries: 0,
          labels: '',
          keyword: null,
          fusion: null,
          oracle: null,
          points: [],
          unsupported: [],
        };
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
  for (const dir of reapServerData()) log(`removed server data ${dir} left in ${serverDataBase()} by a run whose engine home is gone`);
  const participants: LoadedParticipant[] = [];
  for (const name of opts.participants) participants.push(await loadParticipant(name, opts.settingsFiles?.[name], opts.dataset));
  // The table after the run reads every stored result: one that cannot be read stops the run
  // now, before any measuring, not after it (a --fresh run replaces its own files unread).
  const replaced = new Set(opts.fresh ? opts.participants.map((name) => resolve(resultPath(opts.outDir, opts.dataset, name))) : []);
  for (const path of resultPaths(opts.outDir)) if (!replaced.has(resolve(path))) readResult(path);
  const ds = await prepareDataset(opts.dataDir, opts.dataset);
  // Recall over a handful of queries (reused point after point) says nothing: refuse it.
  if (ds.nq < MIN_RUN_QUERIES)
    throw new UserError(
      `dataset ${ds.name} has ${ds.nq} queries, vecbench run needs at least ${MIN_RUN_QUERIES} (and ${minPointQueries(Infinity).toLocaleString('en-US')} for a reliable recall); prepare it with more queries`,
    );
  if (typeof opts.querySet === 'number' && opts.querySet < MIN_RUN_QUERIES)
    throw new UserError(
      `--queries ${opts.querySet} is below the ${MIN_RUN_QUERIES} queries a point needs at least; pass --queries ${minPointQueries(ds.nq)} (or all)`,
    );
  // Settings that cannot suit this dataset (e.g. its dimension) stop the run before any work.
  const info = { name: ds.name, n: ds.n, d: ds.d, metric: ds.metric, hasText: ds.text !== undefined };
  for (const p of participants) {
    const why = p.adapter.checkDataset?.(p.index, info);
    if (why) throw new UserError(`participant ${p.name}: ${why}`);
  }
  const groups = prepareGroups(ds, opts.groups);
  // A machine already busy makes every figure suspect: say so before measuring (points measured
  // while it stays busy are retaken, then flagged).
  const busy = busyWarning(await checkQuiet(1000));
  if (busy) log(busy);
  // The host-speed reference is the fastest probe of the run: a couple of seconds of probes
  // first, so the first rounds are judged against the host at speed, not against themselves.
  if (!opts.cold && (opts.hostSlow ?? DEFAULT_HOST_SLOW) > 0) {
    const first = await sharedHostSpeed().waitForSpeed(0);
    log(
      `host-speed probe: fastest ${(first.ms / first.slowdown).toFixed(1)} ms over 2 s (a round whose probe takes over ${opts.hostSlow ?? DEFAULT_HOST_SLOW} x the run's fastest is retaken)`,
    );
  }
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
