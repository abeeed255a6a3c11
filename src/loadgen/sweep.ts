// The runner's side of the load generator (docs/method.md §5): for one participant, after its query
// groups, a closed-loop concurrency sweep (QPS and latency per in-flight level) and an open-loop
// ramp (p99 per offered Poisson rate), at one group and one knob setting. Every point records
// the engine's and the client's CPU, recall of its own queries, errors and time-outs, and the
// client-limited flag. Results go to `extra.concurrency` and `extra.open_loop`.
import { availableParallelism } from 'node:os';
import type { Knobs } from '../contracts.ts';
import type { Dataset } from '../datasets/layout.ts';
import { summarize } from '../metrics/recall.ts';
import type { ResultFile, ResultGroup } from '../results/schema.ts';
import { ladderFor, type LoadedParticipant } from '../runner/participants.ts';
import type { HostReply, HostRequest } from '../runner/protocol.ts';
import type { PointReply } from '../runner/point-reply.ts';
import { scorePoint, type AskedGroup } from '../runner/points.ts';
import { queryOrder } from '../runner/query-order.ts';
import { Progress, log } from '../util/progress.ts';
import { isNetworkProtocol, machineState, protocolCeilings } from './ceiling.ts';
import { CpuMeter, DemandMeter } from './cpu.ts';
import { OK } from './driver.ts';
import { CLIENT_LIMIT_RULE, isClientLimited } from './flags.ts';
import { LatencyHistogram } from './histogram.ts';
import type { LoadMode, LoadReply } from './protocol.ts';
import { poissonSchedule, requestsFor } from './schedule.ts';
import { concurrencySchema, openLoopSchema, type ConcurrencySection, type OpenLoopSection, type OpenStep, type SweepPoint } from './schema.ts';
import { defaultWorkers } from './pool.ts';
import { ClientHosts, type ClientHostFigures } from './remote.ts';
import { UserError } from '../util/errors.ts';

/** What the sweep needs of the runner's engine handle (src/runner/run.ts EngineHandle). */
export interface LoadEngine {
  request<T extends HostReply['type']>(req: HostRequest, timeoutS: number): Promise<Extract<HostReply, { type: T }>>;
  /** The engine's process (its server, or the host of an in-process engine) and the host's. */
  loadPids(): { engine: number | undefined; engineTree: boolean; host: number | undefined };
}

export interface LoadOptions {
  /** Closed-loop in-flight levels, e.g. [1, 2, 4, ..., 64]. */
  concurrency?: number[];
  /** Open-loop offered rates (requests/s), or 'auto': a ramp over the closed-loop peak. */
  openLoop?: number[] | 'auto';
  /** The open loop's latency budget: the highest rate whose p99 stays within it is reported. */
  budgetMs?: number;
  /** Client worker threads for network engines (default: defaultWorkers()), per client host
   * with clientHosts (default: each host's own default). */
  workers?: number;
  /** HOST:PORT of `vecbench load-worker`s that run the closed-loop sweep's clients (remote.ts). */
  clientHosts?: string[];
  /** Requests per closed-loop point (default 1000). */
  requestsPerPoint?: number;
  /** Seconds per open-loop step (default 3). */
  openStepS?: number;
  /** A request slower than this counts as a time-out (default 10 s). */
  requestTimeoutMs?: number;
  /** The knob setting: the first ladder point reaching this recall (default 0.95). */
  recallTarget?: number;
  /** Time limit of one point (seconds). */
  pointTimeoutS: number;
}

const DEFAULT_BUDGET_MS = 100;
/** The in-flight level whose null ceiling open-loop steps are held against (their requests
 * overlap without a fixed bound). */
const OPEN_CEILING_LEVEL = 64;
const OPEN_LOOP_SEED = 7001;
/** Fractions of the closed-loop peak offered by the automatic open-loop ramp. */
const AUTO_RAMP = [0.1, 0.25, 0.5, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25];

/** The group the load is measured on: none/10 when asked and measured, else the first measured. */
function loadGroup(groups: AskedGroup[], result: ResultFile): AskedGroup | null {
  const measured = (g: AskedGroup) => g.asked && result.groups.some((r) => r.key === g.key && r.status === 'measured');
  return groups.find((g) => g.key === 'none/10' && measured(g)) ?? groups.find(measured) ?? null;
}

/** The knob setting: the first ladder point whose measured recall reaches the target, else the
 * highest-recall point, else the middle of the ladder. */
function chooseKnobs(p: LoadedParticipant, g: AskedGroup, group: ResultGroup | undefined, target: number): { knobs: Knobs; reason: string } {
  const ladder = ladderFor(p.settings, g.filter, g.k);
  // Ladder points and the points calibration added (numbered after the ladder), by knob order
  // of measurement; the first build's only, so every build agrees.
  const pts = (group?.points ?? []).filter((pt) => (pt.build ?? 0) === 0 && pt.view === 'throughput').sort((a, b) => a.ladder_index - b.ladder_index);
  const onLadder = pts.filter((pt) => pt.ladder_index < ladder.length);
  const first = onLadder.find((pt) => pt.recall >= target);
  if (first) return { knobs: first.knobs, reason: `the first ladder point of ${g.key} with recall >= ${target} (${first.recall.toFixed(3)})` };
  if (pts.length > 0) {
    const top = [...pts].sort((a, b) => b.recall - a.recall)[0];
    return { knobs: top.knobs, reason: `no ladder point of ${g.key} reached recall ${target}: its highest-recall point (${top.recall.toFixed(3)})` };
  }
  return { knobs: ladder[Math.floor(ladder.length / 2)] ?? {}, reason: `the middle of the ${g.key} ladder (no measured points)` };
}

/** Recall (tie-aware) of the successful requests, and whether any returned id was invalid. */
function recallOf(ds: Dataset, g: AskedGroup, queries: number[], reply: LoadReply): { recall: number | null; invalid: boolean } {
  const ok: number[] = [];
  for (let i = 0; i < queries.length; i++) if (reply.status[i] === OK) ok.push(i);
  if (ok.length === 0) return { recall: null, invalid: false };
  const offsets = new Int32Array(ok.length + 1);
  ok.forEach((i, j) => (offsets[j + 1] = offsets[j] + (reply.offsets[i + 1] - reply.offsets[i])));
  const ids = new Int32Array(offsets[ok.length]);
  ok.forEach((i, j) => ids.set(reply.ids.subarray(reply.offsets[i], reply.offsets[i + 1]), offsets[j]));
  const sub: PointReply = { ids, offsets, latenciesMs: new Float64Array(ok.length), wallS: reply.wallS, errors: [] };
  const s = summarize(
    scorePoint(
      ds,
      g,
      ok.map((i) => queries[i]),
      sub,
    ),
  );
  return { recall: s.recall, invalid: s.unknownIds + s.duplicateIds + s.filterViolations > 0 };
}

function percentileOf(values: Float64Array, p: number): number {
  if (values.length === 0) return 0;
  const s = Float64Array.from(values).sort();
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

const round = (v: number, digits = 3) => (Number.isFinite(v) ? Number(v.toFixed(digits)) : v);
/** A latency for the stored row: null when nothing succeeded (NaN is not JSON). */
const msOrNull = (v: number) => (Number.isFinite(v) ? round(v) : null);

class Measurer {
  private cursor = 0;
  private readonly order: Int32Array;
  private readonly ceilings = new Map<number, number>();
  mode: LoadMode = 'in-process';
  workers = 0;
  client = '';
  concurrent = false;
  /** What the worker threads' client speaks (http, or a protocol a participant declares), or null. */
  protocol: string | null = null;
  /** In-flight levels the protocol's ceiling is measured at (all at once, on first need). */
  ceilingLevels: number[] = [1];
  private protocolCeilings: Map<number, number> | null = null;
  readonly notes: string[] = [];
  /** The participant's name, for progress lines. */
  label = '';
  /** --client-hosts: the hosts driving the closed-loop points, and the last point's shares. */
  remote: ClientHosts | null = null;
  private lastHosts: ClientHostFigures[] | undefined;

  constructor(
    private readonly engine: LoadEngine,
    private readonly ds: Dataset,
    private readonly g: AskedGroup,
    private readonly opts: LoadOptions,
  ) {
    this.order = queryOrder(ds.nq);
  }

  /** The next n queries of the shuffled order (wrapping around a small query set). */
  slice(n: number): number[] {
    const out = Array.from({ length: n }, (_, i) => this.order[(this.cursor + i) % this.ds.nq]);
    this.cursor = (this.cursor + n) % this.ds.nq;
    return out;
  }

  async init(maxInFlight: number): Promise<void> {
    const ready = await this.engine.request<'loadgen-ready'>(
      { type: 'loadgen-init', workers: this.opts.workers ?? defaultWorkers(), maxInFlight },
      this.opts.pointTimeoutS,
    );
    // A server driven through its session (no loadClient) has a client of its own, the host's
    // one thread: its CPU is measured, not estimated from the in-process ceiling.
    this.mode = ready.mode === 'in-process' && this.engine.loadPids().engineTree ? 'host-thread' : ready.mode;
    this.workers = this.mode === 'host-thread' ? 1 : ready.workers;
    if (this.mode === 'host-thread') this.client = 'the host event loop, through the session (no loadClient)';
    this.client ||= ready.client;
    this.concurrent = ready.concurrent;
    this.protocol = this.mode === 'workers' ? ready.protocol : null;
    const hosts = this.opts.clientHosts;
    if (hosts && hosts.length > 0) {
      if (this.mode !== 'workers' || !ready.spec)
        throw new UserError(
          `--client-hosts: ${this.label} has no load client for other hosts to run (${this.client}); drop --client-hosts for it, or run a network engine`,
        );
      this.remote = await ClientHosts.connect(hosts);
      try {
        await this.remote.init(ready.spec, this.opts.workers, maxInFlight, this.ds.queries, this.ds.d);
      } catch (e) {
        await this.remote.close();
        this.remote = null;
        throw e;
      }
      this.workers = this.remote.workers;
      // The protocol's ceiling measured here says nothing of the client hosts' clients.
      this.protocol = null;
    }
  }

  /** The client's own rate at this in-flight level against the null engine: the host loop's
   * (in process), or the worker threads' client through its protocol (network engines; the
   * nearest measured level at or below, for the open loop). */
  async ceiling(inFlight: number): Promise<number | null> {
    if (this.mode === 'workers') return this.networkCeiling(inFlight);
    if (this.mode !== 'in-process') return null;
    const c = this.concurrent ? inFlight : 1;
    let v = this.ceilings.get(c);
    if (v === undefined) {
      const n = 20_000;
      const r = await this.engine.request<'loadgen-result'>({ type: 'loadgen-ceiling', requests: n, inFlight: c, k: this.g.k }, this.opts.pointTimeoutS);
      v = n / r.reply.wallS;
      this.ceilings.set(c, v);
    }
    return v;
  }

  private async networkCeiling(inFlight: number): Promise<number | null> {
    if (this.protocol === null || !isNetworkProtocol(this.protocol)) return null;
    if (this.protocolCeilings === null) {
      this.protocolCeilings = new Map();
      const protocol = this.protocol;
      const levels = [...new Set([...this.ceilingLevels, inFlight])].sort((a, b) => a - b);
      log(`${this.label}: measuring the ${protocol} client's null ceiling at in-flight ${levels.join(', ')}`);
      try {
        const figures = await protocolCeilings(protocol, { levels, workers: this.workers, seconds: 1, d: this.ds.d, k: this.g.k, log: () => {} });
        for (const f of figures) this.protocolCeilings.set(f.in_flight, f.rps);
        this.notes.push(
          `the ${protocol} null ceiling (${figures[0]?.null_engine ?? 'null engine'}) was measured at in-flight ${levels.join(', ')}: ${figures.map((f) => `${f.in_flight}: ${round(f.rps, 0)}/s`).join(', ')}; load average ${machineState().load_average_1m}`,
        );
      } catch (e) {
        this.notes.push(
          `the ${protocol} null ceiling could not be measured (${(e as Error).message.split('\n')[0]}): points are flagged by the client's busy thread only`,
        );
      }
    }
    const levels = [...this.protocolCeilings.keys()].sort((a, b) => a - b);
    const at = levels.filter((c) => c <= inFlight).pop();
    return at === undefined ? null : (this.protocolCeilings.get(at) ?? null);
  }

  clientInfo(ceiling: number | null) {
    const ceilings = this.protocolCeilings
      ? [...this.protocolCeilings].sort((a, b) => a[0] - b[0]).map(([in_flight, qps]) => ({ in_flight, qps: round(qps, 0) }))
      : undefined;
    return {
      mode: this.mode,
      workers: this.workers,
      client: this.client,
      concurrent: this.concurrent,
      machine_cores: availableParallelism(),
      ceiling_qps: ceiling === null ? null : round(ceiling, 0),
      protocol: this.protocol ?? undefined,
      protocol_ceilings: ceilings,
      rule: CLIENT_LIMIT_RULE,
      client_hosts: this.remote?.names,
    };
  }

  /** Runs one host request with the engine's and the client's CPU measured around it. */
  async measured(req: HostRequest): Promise<{ reply: LoadReply; engineCores: number | null; clientCores: number | null; clientDemand: number | null }> {
    if (this.remote && req.type === 'loadgen-closed') return this.remoteMeasured(req);
    this.lastHosts = undefined;
    const pids = this.engine.loadPids();
    const engineMeter = new CpuMeter({ pid: pids.engine, tree: pids.engineTree });
    const own = this.mode !== 'in-process';
    const clientMeter = own ? new CpuMeter({ pid: pids.host, tree: false }) : null;
    const demandMeter = own ? new DemandMeter(pids.host) : null;
    const r = await this.engine.request<'loadgen-result'>(req, this.opts.pointTimeoutS);
    return { reply: r.reply, engineCores: engineMeter.cores(), clientCores: clientMeter?.cores() ?? null, clientDemand: demandMeter?.busiestThread() ?? null };
  }

  /** A closed-loop point from the client hosts: the engine takes the knobs, the hosts the
   * requests; the client's CPU is the hosts' summed, its busiest thread the busiest of theirs. */
  private async remoteMeasured(req: Extract<HostRequest, { type: 'loadgen-closed' }>) {
    const remote = this.remote!;
    await this.engine.request<'loadgen-knobs-set'>({ type: 'loadgen-knobs', knobs: req.knobs }, this.opts.pointTimeoutS);
    await remote.setKnobs(req.knobs);
    const pids = this.engine.loadPids();
    const engineMeter = new CpuMeter({ pid: pids.engine, tree: pids.engineTree });
    const { reply, hosts } = await remote.closed(req.k, req.queries, req.filters, req.inFlight, req.timeoutMs);
    this.lastHosts = hosts;
    const cpu = hosts.map((h) => h.cpu_cores);
    const busy = hosts.map((h) => h.busiest_thread);
    return {
      reply,
      engineCores: engineMeter.cores(),
      clientCores: cpu.includes(null) ? null : (cpu as number[]).reduce((a, b) => a + b, 0),
      clientDemand: busy.includes(null) ? null : Math.max(...(busy as number[])),
    };
  }

  /** Shared columns of a sweep point and an open-loop step. */
  async common(
    queries: number[],
    m: { reply: LoadReply; engineCores: number | null; clientCores: number | null; clientDemand: number | null },
    qps: number,
    inFlight: number,
    sendLagP99Ms?: number,
  ) {
    const { reply } = m;
    const hist = LatencyHistogram.decode(reply.histogram);
    const lat = hist.summary();
    const { recall, invalid } = recallOf(this.ds, this.g, queries, reply);
    const ceiling = await this.ceiling(inFlight);
    const estimated = this.mode === 'in-process';
    const clientCores = estimated ? (ceiling ? qps / ceiling : null) : m.clientCores;
    const limited = isClientLimited(
      estimated
        ? { mode: 'in-process', qps, ceilingQps: ceiling }
        : {
            mode: 'threads',
            qps,
            ceilingQps: ceiling,
            busiestThread:
              m.clientDemand ?? (m.clientCores === null ? null : m.clientCores / (this.remote?.usableCores ?? Math.min(this.workers, availableParallelism()))),
            sendLagP99Ms,
          },
    );
    const flags: string[] = [];
    if (limited) flags.push('client-limited');
    if (reply.errors + reply.timeouts > 0) flags.push('errors');
    if (invalid) flags.push('invalid-results');
    return {
      engine_cpu_pct: m.engineCores === null ? null : round(m.engineCores * 100, 1),
      client_cpu_pct: clientCores === null ? null : round(clientCores * 100, 1),
      client_busy_pct: m.clientDemand === null ? null : round(m.clientDemand * 100, 1),
      recall: recall === null ? null : round(recall, 4),
      p50_ms: msOrNull(lat.p50),
      p95_ms: msOrNull(lat.p95),
      p99_ms: msOrNull(lat.p99),
      p999_ms: msOrNull(lat.p999),
      max_ms: msOrNull(lat.max),
      mean_ms: msOrNull(lat.mean),
      requests: queries.length,
      errors: reply.errors,
      timeouts: reply.timeouts,
      duration_s: round(reply.wallS, 4),
      client_cpu_estimated: estimated,
      first_error: reply.firstError ?? undefined,
      flags,
      clientCores,
      ceiling,
    };
  }

  async closedPoint(knobs: Knobs, inFlight: number, requests: number): Promise<SweepPoint> {
    const queries = this.slice(requests);
    const m = await this.measured({
      type: 'loadgen-closed',
      knobs,
      k: this.g.k,
      queries,
      filters: queries.map((q) => this.g.filters[q]),
      inFlight,
      timeoutMs: this.opts.requestTimeoutMs ?? 10_000,
    });
    const okCount = m.reply.status.reduce((a, s) => a + (s === OK ? 1 : 0), 0);
    const qps = m.reply.wallS > 0 ? okCount / m.reply.wallS : 0;
    const { clientCores, ceiling, ...c } = await this.common(queries, m, qps, inFlight);
    // The cores the client threads can use: this machine's, or the client hosts' together.
    const clientCoresAvailable = this.remote?.usableCores ?? Math.min(this.workers, availableParallelism());
    const capacity = this.mode === 'in-process' ? ceiling : clientCores && clientCores > 0 ? (qps / clientCores) * clientCoresAvailable : null;
    return {
      in_flight: inFlight,
      qps: round(qps, 1),
      ...c,
      client_hosts: this.lastHosts,
      client_capacity_qps: capacity === null ? null : round(capacity, 0),
    };
  }

  async openStep(knobs: Knobs, rate: number, stepS: number, seed: number, budgetMs: number): Promise<OpenStep> {
    const n = requestsFor(rate, stepS, 50, 100_000);
    const queries = this.slice(n);
    const intendedMs = poissonSchedule(rate, n, seed);
    const m = await this.measured({
      type: 'loadgen-open',
      knobs,
      k: this.g.k,
      queries,
      filters: queries.map((q) => this.g.filters[q]),
      intendedMs,
      timeoutMs: this.opts.requestTimeoutMs ?? 10_000,
    });
    const okCount = m.reply.status.reduce((a, s) => a + (s === OK ? 1 : 0), 0);
    const achieved = m.reply.wallS > 0 ? okCount / m.reply.wallS : 0;
    // Only a client thread of its own can fall behind its schedule; in process, a late send
    // is the engine holding the thread (queueing, which the latency already carries).
    const lag = this.mode !== 'in-process' ? percentileOf(m.reply.sendLagMs, 99) : undefined;
    const { clientCores, ceiling, ...c } = await this.common(queries, m, achieved, this.concurrent ? OPEN_CEILING_LEVEL : 1, lag);
    void clientCores;
    void ceiling;
    const within = c.p99_ms !== null && c.p99_ms <= budgetMs && c.errors + c.timeouts === 0 && !c.flags.includes('client-limited');
    return {
      offered_qps: round(rate, 1),
      achieved_qps: round(achieved, 1),
      ...c,
      send_lag_p99_ms: round(percentileOf(m.reply.sendLagMs, 99)),
      within_budget: within,
    };
  }
}

/** Saturation: the smallest in-flight level reaching 90 % of the peak QPS. */
export function saturationOf(points: { in_flight: number; qps: number }[]): { in_flight: number; qps: number } | null {
  if (points.length === 0) return null;
  const peak = Math.max(...points.map((p) => p.qps));
  const p = [...points].sort((a, b) => a.in_flight - b.in_flight).find((x) => x.qps >= 0.9 * peak)!;
  return { in_flight: p.in_flight, qps: p.qps };
}

/** Steps to a higher in-flight level that lost at least 10 % of the throughput. */
export function antiScalingOf(points: { in_flight: number; qps: number }[]) {
  const s = [...points].sort((a, b) => a.in_flight - b.in_flight);
  const out: { from_in_flight: number; to_in_flight: number; qps_from: number; qps_to: number }[] = [];
  for (let i = 1; i < s.length; i++)
    if (s[i].qps < 0.9 * s[i - 1].qps) out.push({ from_in_flight: s[i - 1].in_flight, to_in_flight: s[i].in_flight, qps_from: s[i - 1].qps, qps_to: s[i].qps });
  return out;
}

/** Measures the sweep and / or the open loop for one participant and stores them in result.extra. */
export async function measureLoad(
  engine: LoadEngine,
  p: LoadedParticipant,
  ds: Dataset,
  groups: AskedGroup[],
  result: ResultFile,
  opts: LoadOptions,
  save: () => void,
): Promise<void> {
  const wantSweep = opts.concurrency !== undefined && opts.concurrency.length > 0 && result.extra.concurrency === undefined;
  const wantOpen = opts.openLoop !== undefined && result.extra.open_loop === undefined;
  if (!wantSweep && !wantOpen) return;
  const g = loadGroup(groups, result);
  if (!g) {
    log(`${p.name}: no measured group to put load on; the concurrency sweep and open loop are skipped`);
    return;
  }
  const group = result.groups.find((x) => x.key === g.key);
  const { knobs, reason } = chooseKnobs(p, g, group, opts.recallTarget ?? 0.95);
  const levels = [...new Set(opts.concurrency ?? [])].sort((a, b) => a - b);
  const m = new Measurer(engine, ds, g, opts);
  m.label = p.name;
  await m.init(Math.max(64, ...levels));
  // The protocol's ceiling is measured once, at every level the points will be held against
  // (the open loop's at OPEN_CEILING_LEVEL).
  m.ceilingLevels = [...(wantSweep ? levels : []), ...(wantOpen ? [OPEN_CEILING_LEVEL] : [])];
  try {
    const requests = opts.requestsPerPoint ?? 1000;
    let peak = 0;
    if (wantSweep) {
      const notes: string[] = [];
      let run = levels;
      if (!m.concurrent && levels.some((c) => c > 1)) {
        run = levels.filter((c) => c === 1);
        if (run.length === 0) run = [1];
        notes.push(`${p.adapter.engine}'s searches do not overlap (concurrentSearch: false): only in-flight 1 is measured; more in flight would only queue`);
      }
      const progress = new Progress(`${p.name}: concurrency sweep`, run.length);
      const points: SweepPoint[] = [];
      const sectionOf = (ceiling: number | null): ConcurrencySection => ({
        format: 'vecbench-concurrency/1',
        group: g.key,
        knobs,
        knobs_reason: reason,
        client: m.clientInfo(ceiling),
        requests_per_point: requests,
        points,
        saturation: saturationOf(points),
        anti_scaling: antiScalingOf(points),
        notes: [...notes, ...m.notes],
      });
      for (const c of run) {
        try {
          points.push(await m.closedPoint(knobs, c, Math.max(requests, c * 4)));
        } catch (e) {
          // A client host lost mid-sweep: the points measured so far are stored, marked.
          if (points.length > 0 && m.remote) {
            notes.push(`incomplete: in-flight ${c} and above were not measured (${(e as Error).message})`);
            // Client hosts have no ceiling measured here (Measurer.init).
            result.extra.concurrency = concurrencySchema.parse(sectionOf(null));
            save();
          }
          throw e;
        }
        progress.update(points.length, `in-flight ${c}`);
      }
      progress.done();
      peak = Math.max(0, ...points.map((x) => x.qps));
      result.extra.concurrency = concurrencySchema.parse(sectionOf(await m.ceiling(1)));
      save();
    } else if (result.extra.concurrency !== undefined) {
      peak = Math.max(0, ...concurrencySchema.parse(result.extra.concurrency).points.map((x) => x.qps));
    }
    if (wantOpen) {
      const budget = opts.budgetMs ?? DEFAULT_BUDGET_MS;
      const stepS = opts.openStepS ?? 3;
      const notes: string[] = [];
      let rates: number[];
      let from: string;
      if (Array.isArray(opts.openLoop)) {
        rates = [...opts.openLoop].sort((a, b) => a - b);
        from = 'given';
      } else {
        if (peak <= 0) {
          // No sweep to read the peak from: one closed-loop point at high concurrency finds it.
          const probe = await m.closedPoint(knobs, m.concurrent ? 32 : 1, requests);
          peak = probe.qps;
          notes.push(`the ramp's peak came from one closed-loop probe at in-flight ${probe.in_flight}: ${probe.qps} QPS`);
        }
        rates = AUTO_RAMP.map((f) => Math.max(1, Math.round(f * peak)));
        from = `a ramp of ${AUTO_RAMP.join(', ')} x the closed-loop peak (${round(peak, 1)} QPS)`;
      }
      const progress = new Progress(`${p.name}: open loop`, rates.length);
      const steps: OpenStep[] = [];
      let saturatedAt: number | null = null;
      for (let i = 0; i < rates.length; i++) {
        const step = await m.openStep(knobs, rates[i], stepS, OPEN_LOOP_SEED + i, budget);
        steps.push(step);
        progress.update(steps.length, `${rates[i]}/s: p99 ${step.p99_ms} ms`);
        if (saturatedAt === null && step.achieved_qps < 0.9 * step.offered_qps) {
          saturatedAt = step.offered_qps;
          // The automatic ramp stops past saturation: the queue would only grow.
          if (!Array.isArray(opts.openLoop)) break;
        }
      }
      progress.done();
      const ok = steps.filter((s) => s.within_budget).map((s) => s.offered_qps);
      const section: OpenLoopSection = {
        format: 'vecbench-open-loop/1',
        group: g.key,
        knobs,
        knobs_reason: reason,
        client: m.clientInfo(await m.ceiling(1)),
        arrivals: 'poisson',
        seed: OPEN_LOOP_SEED,
        budget_p99_ms: budget,
        step_s: stepS,
        rates_from: from,
        steps,
        max_qps_within_budget: ok.length > 0 ? Math.max(...ok) : null,
        saturated_at_qps: saturatedAt,
        notes: [...notes, ...m.notes],
      };
      result.extra.open_loop = openLoopSchema.parse(section);
      save();
    }
  } finally {
    await m.remote?.close();
    await engine.request<'loadgen-stopped'>({ type: 'loadgen-stop' }, 60).catch(() => {});
  }
}
