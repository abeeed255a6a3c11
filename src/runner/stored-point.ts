// The stored point of a timed warm entry (step 5 of the warm protocol, measure-group.ts): the
// quiet passes' estimates and intervals, recall, the flags (client-limited, busy-machine, the
// harness's share), the raw per-pass figures and storage read per query.
import { isClientLimited } from './client-limit.ts';
import { recallInterval, summarizePasses, type PassFigures } from '../metrics/intervals.ts';
import { pointReadings } from '../metrics/recall.ts';
import type { ResultPoint } from '../results/schema.ts';
import { log } from '../util/progress.ts';
import { HostError } from './client.ts';
import { harnessFlag, measureHarnessOverhead } from './harness-overhead.ts';
import type { Entry } from './timed-rounds.ts';
import type { GroupEngine, GroupRun } from './group-run.ts';
import { minPointQueries } from './timing-defaults.ts';
/** A point answered by fewer queries than recall needs (warm: a --queries cut; cold: a slow
 * engine's slice, src/runner/measure-group.ts): informational. */
export const FEW_QUERIES = 'few-queries';

/** The stored point of a timed entry. */
export async function pointOf(run: GroupRun, e: Entry): Promise<ResultPoint> {
  const { p, ds, queries, timing } = run;
  const quiet = e.busy.map((b) => !b);
  const quietCount = quiet.filter(Boolean).length;
  const busyMachine = quietCount < timing.minPasses;
  // A point that could not get enough quiet passes keeps them all, and says so.
  const use = busyMachine ? e.busy.map(() => true) : quiet;
  const pick = <T>(xs: T[]) => xs.filter((_, i) => use[i]);
  const figures: PassFigures = {
    qps: pick(e.pass.qps),
    wall_s: pick(e.pass.wall_s),
    latency_ms: {
      mean: pick(e.pass.latency_ms.mean),
      p50: pick(e.pass.latency_ms.p50),
      p95: pick(e.pass.latency_ms.p95),
      p99: pick(e.pass.latency_ms.p99),
      p999: pick(e.pass.latency_ms.p999),
    },
  };
  const sum = summarizePasses(figures, e.maxLatency);
  const r = e.item.recall!;
  const s = r.summary;
  const flags: string[] = [];
  if (s.unknownIds + s.duplicateIds + s.filterViolations > 0) flags.push('invalid-results');
  if (queries.length < minPointQueries(ds.nq)) flags.push(FEW_QUERIES);
  const server = p.adapter.server !== undefined;
  const perThreadQps = sum.qps / Math.max(1, e.drive.threads);
  // The null pass is the point's own loop against an engine that answers at once: its rate is
  // the ceiling an in-process engine (sharing the host's thread with that loop) is held against.
  const harness = await harnessCost(run, e.drive.clients);
  const limited = server
    ? isClientLimited({ mode: 'threads', qps: sum.qps, busiestThread: e.demand.wall > 0 ? e.demand.weighted / e.demand.wall : null })
    : isClientLimited({ mode: 'in-process', qps: perThreadQps, ceilingQps: harness?.qps ?? null });
  if (limited) flags.push('client-limited');
  if (busyMachine) flags.push('busy-machine');
  // Held against the time each query takes of the pass (1 / QPS): the mean latency in the
  // latency view, and what the harness's share of throughput is with requests in flight.
  if (harness !== null) flags.push(...harnessFlag(harness.perQueryMs, 1000 / sum.qps));
  const mean = (xs: (number | null)[]) => {
    const v = xs.filter((x): x is number => x !== null);
    return v.length === 0 ? null : v.reduce((a, b) => a + b, 0) / v.length;
  };
  return {
    ladder_index: e.item.li,
    knobs: e.item.knobs,
    view: e.view,
    clients: e.drive.clients * e.drive.threads,
    queries: queries.length,
    query_slice: [queries[0], queries[queries.length - 1]],
    ...pointReadings(s),
    qps: sum.qps,
    duration_s: figures.wall_s.reduce((a, b) => a + b, 0),
    latency_ms: sum.latency_ms,
    flags,
    passes: figures.qps.length,
    passes_trimmed: sum.trimmed,
    passes_busy: e.busy.filter(Boolean).length,
    pass: {
      ...figures,
      other_cores: e.pass.other_cores,
      steal: e.pass.steal,
      ...(e.pass.host_ms.some((x) => x !== null) ? { host_ms: e.pass.host_ms } : {}),
      at_unix_s: e.pass.at_unix_s,
      round_at_unix_s: e.pass.round_at_unix_s,
      busy: e.busy,
      read_bytes: e.pass.read_bytes,
      major_faults: e.pass.major_faults,
    },
    ...ioPerQuery(pick(e.pass.read_bytes), pick(e.pass.major_faults), queries.length),
    ci: { qps: sum.ci.qps, recall: recallInterval(r.perQuery), latency_ms: sum.ci.latency_ms },
    answers_varied: e.varied.size,
    ...(e.item.calibratedFor !== undefined ? { calibrated_for: e.item.calibratedFor } : {}),
    ...(e.view === 'throughput' && e.item.readsCell && (timing.cellHalfWidth ?? 0) > 0 ? { for_cell: true } : {}),
    build: run.build,
    driven: e.drive.threads > 1 && e.threadsUsed === 1 ? '1 at a time (the threads could not open the index)' : e.drive.text,
    machine: {
      other_cores: mean(e.pass.other_cores),
      steal: mean(e.pass.steal),
      ...(e.pass.host_ms.some((x) => x !== null) ? { host_ms: mean(e.pass.host_ms) } : {}),
    },
    ...(harness !== null ? { harness_ms: harness.perQueryMs } : {}),
  };
}

/** Storage read per query over the kept passes, when every kept pass could be read. */
function ioPerQuery(bytes: (number | null)[], faults: (number | null)[], queries: number): { io?: NonNullable<ResultPoint['io']> } {
  if (bytes.length === 0 || bytes.some((x) => x === null) || faults.some((x) => x === null)) return {};
  const sum = (xs: (number | null)[]) => xs.reduce<number>((a, b) => a + (b ?? 0), 0);
  const n = bytes.length * queries;
  return { io: { read_bytes_per_query: sum(bytes) / n, major_faults_per_query: sum(faults) / n } };
}

type HarnessCost = { perQueryMs: number; qps: number };
const harnessCache = new WeakMap<GroupEngine, Map<string, HarnessCost | null>>();

/** The host's own cost per query at this k and in-flight level (null engine), and the rate it
 * caps the loop at; cached per engine. */
async function harnessCost(run: GroupRun, clients: number): Promise<HarnessCost | null> {
  let m = harnessCache.get(run.engine);
  if (!m) harnessCache.set(run.engine, (m = new Map()));
  const key = `${run.g.k}/${clients}`;
  if (!m.has(key)) {
    try {
      const r = await measureHarnessOverhead((req) => run.engine.request<'null-pass'>(req, run.pointTimeoutS), run.g.k, run.queries, clients);
      m.set(key, r);
    } catch (e) {
      if (!(e instanceof HostError) || e.userError) throw e;
      log(`${run.p.name}: the harness overhead could not be measured: ${e.message}`);
      m.set(key, null);
    }
  }
  return m.get(key) ?? null;
}
