// Measures one load point for the sweep (sweep.ts): a closed-loop in-flight level or an
// open-loop offered rate, with the engine's and the client's CPU, recall of the point's own
// queries, errors, time-outs and the client-limited flag. It also knows the null ceilings the
// points are held against. Apart from sweep.ts, which chooses the group, knobs and levels.
import { availableParallelism } from 'node:os';
import type { Knobs } from '../contracts.ts';
import type { Dataset } from '../datasets/layout.ts';
import { summarize } from '../metrics/recall.ts';
import type { HostRequest } from '../runner/protocol.ts';
import type { PointReply } from '../runner/point-reply.ts';
import { scorePoint, type AskedGroup } from '../runner/points.ts';
import { queryOrder } from '../runner/query-order.ts';
import { log } from '../util/progress.ts';
import { isNetworkProtocol, machineState, protocolCeilings } from './ceiling.ts';
import { CpuMeter, DemandMeter } from '../runner/cpu.ts';
import { OK } from './driver.ts';
import { CLIENT_LIMIT_RULE, isClientLimited } from '../runner/client-limit.ts';
import { LatencyHistogram } from './histogram.ts';
import type { LoadMode, LoadReply } from './protocol.ts';
import { poissonSchedule, requestsFor } from './schedule.ts';
import type { OpenStep, SweepPoint } from './schema.ts';
import { defaultWorkers } from './pool.ts';
import { ClientHosts, type ClientHostFigures } from './remote.ts';
import { UserError } from '../util/errors.ts';
import type { LoadEngine, LoadOptions } from './load-options.ts';
/** The in-flight level whose null ceiling open-loop steps are held against (their requests
 * overlap without a fixed bound). */
export const OPEN_CEILING_LEVEL = 64;

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

export const round = (v: number, digits = 3) => (Number.isFinite(v) ? Number(v.toFixed(digits)) : v);
/** A latency for the stored row: null when nothing succeeded (NaN is not JSON). */
const msOrNull = (v: number) => (Number.isFinite(v) ? round(v) : null);

export class Measurer {
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
