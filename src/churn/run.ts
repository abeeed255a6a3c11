// `vecbench churn`: runs each runbook on a fresh engine of each participant (in its own host
// process, a server started for it where it has one, both as run starts them: engine-host.ts,
// engine-server.ts, under the participant's engine home in --out) and stores the measured steps
// in the participant's result file under `extra.churn`, saved after every step.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { EngineSession } from '../contracts.ts';
import type { Dataset } from '../datasets/layout.ts';
import { prepareDataset } from '../prepare/registry.ts';
import { RESULT_FORMAT, type ResultFile } from '../results/schema.ts';
import { engineLogPath, readResult, resultPath, writeResult } from '../results/store.ts';
import { type HostClient, HostError } from '../runner/client.ts';
import { loadParticipant, type LoadedParticipant } from '../runner/participants.ts';
import { QUERY_SEED } from '../runner/query-order.ts';
import { hardware } from '../results/hardware.ts';
import { VECBENCH_VERSION } from '../version.ts';
import { diskUsage } from '../runner/resources.ts';
import { removeServerData } from '../runner/server-data.ts';
import { EngineBudget } from '../runner/engine-budget.ts';
import { startEngineHost } from '../runner/engine-host.ts';
import { EngineServer } from '../runner/engine-server.ts';
import { churnWorkRoot, discardChurnWork, engineHome } from '../runner/engine-home.ts';
import { UserError } from '../util/errors.ts';
import { sha256 } from '../util/hash.ts';
import { Progress, log } from '../util/progress.ts';
import { RunbookExecutor } from './executor.ts';
import type { ChurnTarget, ExecOptions } from './step-kit.ts';
import { handleChurn } from './host-side.ts';
import type { ChurnCaps, ChurnHostReply, ChurnHostRequest } from './protocol.ts';
import { checkRunbookRows, type Runbook } from './runbook.ts';
import { CHURN_FORMAT, readChurnSection, type ChurnSection, type RunbookResult } from './schema.ts';

interface ChurnOptions {
  dataset: string;
  participants: string[];
  runbooks: Runbook[];
  outDir: string;
  dataDir: string;
  /** Run again even where a runbook's result exists for the same definition and settings. */
  fresh?: boolean;
  loadTimeoutS: number;
  stepTimeoutS: number;
  settingsFiles?: Record<string, string>;
}

/** The `clients` a skeleton result records: `vecbench run`'s default, so a later run with
 * default options resumes the file (and keeps extra.churn) instead of measuring afresh. */
const RUN_DEFAULT_CLIENTS = 32;

/** Requests to a participant host process. `dataDirs`: the engine's data directories (the
 * host's work directory, the server's data directory), measured by the harness at disk steps. */
class HostTarget implements ChurnTarget {
  constructor(
    private readonly host: HostClient,
    private readonly dataDirs: string[] = [],
  ) {}
  request<T extends ChurnHostReply['type']>(req: ChurnHostRequest, timeoutS: number): Promise<Extract<ChurnHostReply, { type: T }>> {
    return this.host.request<T>(req, timeoutS) as Promise<Extract<ChurnHostReply, { type: T }>>;
  }
  dirBytes(): number | null {
    return this.dataDirs.length === 0 ? null : this.dataDirs.reduce((a, d) => a + diskUsage(d), 0);
  }
}

/** Requests to a session in this process (tests wrap real sessions with it). */
export class LocalTarget implements ChurnTarget {
  constructor(
    private readonly session: EngineSession,
    private readonly ds: Dataset,
    private readonly concurrent: boolean,
    private readonly dataDirs: string[] = [],
  ) {}
  async request<T extends ChurnHostReply['type']>(req: ChurnHostRequest): Promise<Extract<ChurnHostReply, { type: T }>> {
    return (await handleChurn(this.session, this.ds, this.concurrent, req)) as Extract<ChurnHostReply, { type: T }>;
  }
  dirBytes(): number | null {
    return this.dataDirs.length === 0 ? null : this.dataDirs.reduce((a, d) => a + diskUsage(d), 0);
  }
}

/** Why a participant cannot take part at all, or null. */
export function unsupportedReason(caps: ChurnCaps, engine: string): string | null {
  if (caps.insert || caps.upsert || caps.delete) return null;
  return `${engine} in this participant implements no write method (EngineSession insert, upsert or delete), so it cannot take part in live churn`;
}

/** A new runbook record, before its first step. */
export function newRunbookResult(rb: Runbook, hash: string): RunbookResult {
  return {
    runbook: rb.name,
    ...(rb.description ? { description: rb.description } : {}),
    definition: JSON.parse(JSON.stringify(rb)),
    definition_hash: hash,
    status: 'incomplete',
    started: new Date().toISOString(),
    engine_version: 'unknown',
    caps: null,
    steps: [],
    leaks: { total: 0, listed: [] },
  };
}

/** What makes a stored runbook result stale: the runbook, the participant's settings, the data. */
function definitionHash(rb: Runbook, p: LoadedParticipant, ds: Dataset): string {
  return sha256(JSON.stringify({ runbook: rb, index: p.index, ladders: p.settings.ladders, batch: p.settings.batch_size, dataset: ds.hash }));
}

function skeleton(p: LoadedParticipant, ds: Dataset): ResultFile {
  const now = new Date().toISOString();
  const result: ResultFile = {
    format: RESULT_FORMAT,
    participant: p.name,
    engine: p.adapter.engine,
    engine_version: 'unknown',
    origin: 'measured',
    dataset: { name: ds.name, n: ds.n, d: ds.d, nq: ds.nq, metric: ds.metric, hash: ds.hash },
    settings: { index: p.index, ladders: p.settings.ladders, batch_size: p.settings.batch_size, notes: p.settings.notes },
    filter_strategy: p.adapter.filterStrategy,
    hardware: hardware(),
    run: { vecbench_version: VECBENCH_VERSION, started: now, updated: now, query_seed: QUERY_SEED, clients: RUN_DEFAULT_CLIENTS, complete: false, resumed: 0 },
    load: null,
    groups: [],
    extra: {},
  };
  // Settings go through JSON in the file: store them as `vecbench run` will compare them.
  return JSON.parse(JSON.stringify(result)) as ResultFile;
}

/** The most requests in flight at once: a mixed step's readers plus its writer (a pool sized
 * to the readers alone would queue every write behind a read), or a search step's clients. */
function maxInFlight(rb: Runbook): number {
  let m = 1;
  for (const s of rb.steps) {
    if (s.op === 'mixed') m = Math.max(m, s.readers + 1);
    if (s.op === 'search') m = Math.max(m, s.clients);
  }
  return m;
}

/** Host progress lines (ingest, writes, freshness), one Progress per kind. */
function progressRouter(prefix: string) {
  const bars = new Map<string, Progress>();
  return (p: { what: string; done: number; total: number }) => {
    const key = `${p.what}/${p.total}`;
    let bar = bars.get(key);
    if (!bar) bars.set(key, (bar = new Progress(`${prefix}: ${p.what}`, p.total)));
    bar.update(p.done);
  };
}

async function runOne(
  p: LoadedParticipant,
  ds: Dataset,
  rb: Runbook,
  rr: RunbookResult,
  result: ResultFile,
  opts: ChurnOptions,
  save: () => void,
): Promise<void> {
  const home = engineHome(opts.outDir, ds.name, p.name);
  const workRoot = churnWorkRoot(home);
  mkdirSync(workRoot, { recursive: true });
  const workDir = mkdtempSync(join(workRoot, 'runbook-'));
  const engineDir = join(workDir, 'engine');
  mkdirSync(engineDir);
  const prefix = `${p.name} ${rb.name}`;
  let host: HostClient | null = null;
  // The same server lifecycle as run's engines (src/runner/engine-server.ts): its data directory,
  // its log, a death that kills the host so the step under way fails with the reason. No memory
  // budget: churn measures freshness and recall under writes, not fit.
  const server = new EngineServer(p, ds, { loadTimeoutS: opts.loadTimeoutS }, new EngineBudget(p, ds, {}), (why, stop) => host?.kill(why, stop));
  try {
    const started = await server.start(workDir, false);
    // Engine output goes to its log, not next to the churn table.
    const logFile = engineLogPath(opts.outDir, ds.name, p.name, '.churn');
    log(`${prefix}: engine output goes to ${logFile}`);
    host = startEngineHost(p.name, logFile, progressRouter(prefix));
    const opened = await host.request<'opened'>(
      {
        type: 'open',
        participant: p.name,
        settingsPath: p.settingsPath,
        dataDir: opts.dataDir,
        dataset: ds.name,
        workDir: engineDir,
        maxConcurrency: maxInFlight(rb),
        server: started?.handle.connection,
      },
      opts.loadTimeoutS,
    );
    rr.engine_version = opened.engineVersion;
    if (result.engine_version === 'unknown') result.engine_version = opened.engineVersion;
    const caps = (await host.request<'churn-caps'>({ type: 'churn-caps' }, 60)).caps;
    rr.caps = caps;
    const unsupported = unsupportedReason(caps, p.adapter.engine);
    if (unsupported !== null) {
      rr.status = 'unsupported';
      rr.reason = unsupported;
      log(`${prefix}: unsupported: ${rr.reason}`);
      return;
    }
    const steps = new Progress(`${prefix}`, rb.steps.length);
    const execOpts: ExecOptions = {
      loadTimeoutS: opts.loadTimeoutS,
      stepTimeoutS: opts.stepTimeoutS,
      onStep: (i, total, what) => (i >= total ? steps.done() : steps.update(i, `step ${i + 1}: ${what}`)),
    };
    const exec = new RunbookExecutor(
      rb,
      ds,
      { name: p.name, settings: p.settings, filters: p.adapter.filters, concurrentSearch: p.adapter.concurrentSearch },
      new HostTarget(host, started ? [engineDir, started.handle.connection.dataDir] : [engineDir]),
      caps,
      rr,
      save,
      execOpts,
    );
    await exec.run();
    if (rr.status === 'failed') log(`${prefix}: ${rr.reason}`);
  } catch (e) {
    // An engine or server that cannot start, or a host that died outside a step: this runbook
    // is lost with the reason, the next one gets a fresh engine.
    rr.status = 'failed';
    rr.reason = e instanceof Error ? e.message : String(e);
    log(`${prefix}: failed: ${rr.reason}`);
    if (!(e instanceof HostError) && !(e instanceof UserError) && e instanceof Error && e.stack) log(e.stack);
  } finally {
    await host?.close();
    await server.stop();
    discardChurnWork(home, basename(workDir));
  }
}

async function churnParticipant(p: LoadedParticipant, ds: Dataset, opts: ChurnOptions): Promise<ResultFile> {
  const path = resultPath(opts.outDir, ds.name, p.name);
  let result: ResultFile;
  if (existsSync(path)) {
    result = readResult(path);
    if (result.dataset.hash !== ds.hash) {
      throw new UserError(
        `${path} was measured on another version of ${ds.name}; run "vecbench run --fresh --participants ${p.name}" first, or use another --out directory`,
      );
    }
  } else result = skeleton(p, ds);
  const section: ChurnSection = readChurnSection(result.extra, `result ${path}`) ?? { format: CHURN_FORMAT, runbooks: {} };
  result.extra.churn = section;
  const save = () => {
    result.run.updated = new Date().toISOString();
    writeResult(opts.outDir, result);
  };
  // Engine data left by a killed churn run of this participant is of no use to a new engine
  // (<out>/.work/ held it before engine homes).
  discardChurnWork(engineHome(opts.outDir, ds.name, p.name));
  const legacy = join(opts.outDir, '.work');
  if (existsSync(legacy)) {
    for (const f of readdirSync(legacy)) {
      if (!f.startsWith(`churn-${p.name}-`)) continue;
      removeServerData(join(legacy, f));
      rmSync(join(legacy, f), { recursive: true, force: true });
    }
  }
  for (const rb of opts.runbooks) {
    const hash = definitionHash(rb, p, ds);
    const prev = section.runbooks[rb.name];
    if (!opts.fresh && prev && prev.definition_hash === hash && (prev.status === 'measured' || prev.status === 'unsupported')) {
      log(`${p.name}: runbook ${rb.name} already measured on ${ds.name}; pass --fresh to run it again`);
      continue;
    }
    const rr = newRunbookResult(rb, hash);
    rr.settings = JSON.parse(JSON.stringify({ index: p.index, ladders: p.settings.ladders, batch_size: p.settings.batch_size })) as RunbookResult['settings'];
    section.runbooks[rb.name] = rr;
    save();
    await runOne(p, ds, rb, rr, result, opts, save);
    rr.finished = new Date().toISOString();
    save();
    // The other runbooks still run; the command's exit status says one failed.
    if (rr.status === 'failed') process.exitCode = 1;
  }
  return result;
}

export async function runChurn(opts: ChurnOptions): Promise<ResultFile[]> {
  const names = new Set<string>();
  for (const rb of opts.runbooks) {
    if (names.has(rb.name)) throw new UserError(`two runbooks are named "${rb.name}"; give each runbook its own name`);
    names.add(rb.name);
  }
  const participants: LoadedParticipant[] = [];
  for (const name of opts.participants) participants.push(await loadParticipant(name, opts.settingsFiles?.[name], opts.dataset));
  const ds = await prepareDataset(opts.dataDir, opts.dataset);
  for (const rb of opts.runbooks) checkRunbookRows(rb, ds.n, ds.name);
  const out: ResultFile[] = [];
  for (const p of participants) {
    try {
      out.push(await churnParticipant(p, ds, opts));
    } catch (e) {
      if (e instanceof HostError && e.userError) throw new UserError(e.message);
      if (!(e instanceof HostError)) throw e;
      process.exitCode = 1;
      log(`${p.name}: stopped: ${e.message} (finished runbooks are kept in ${resolve(opts.outDir)})`);
    }
  }
  return out;
}
