// The ceiling proof (docs/method.md §5): how fast the client itself can go, measured against engines that
// do no work: in process, the participant host's own loop against a null session; over HTTP,
// the worker-thread pool with the undici client against the null HTTP server (a process of its
// own); over each other protocol, the pool with the load client of the participant that declares
// the protocol (settings.json registry.ceiling) against that participant's real server holding
// only k rows (nullServerTarget). Results record the client's and the null engine's CPU, so a
// reader can tell whether the figure is the client's limit or the null engine's (on 2 cores,
// both share the machine).
import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { ATTRIBUTES, type LoadClientSpec, type RowAttributes } from '../contracts.ts';
import { HostClient } from '../runner/client.ts';
import { openEngine } from '../runner/engine-lifecycle.ts';
import { loadParticipant } from '../runner/participants.ts';
import { ceilingProtocols } from '../runner/registry.ts';
import { makeRng } from '../util/hash.ts';
import { besideSource, runnable } from '../util/code-paths.ts';
import { CpuMeter } from '../runner/cpu.ts';
import { nowMs } from './clock.ts';
import { loadClientProtocol, WorkerPool } from './pool.ts';

export const HTTP_CLIENT_MODULE = besideSource(import.meta.url, 'clients/http-json.ts');
const NULL_SERVER = runnable(besideSource(import.meta.url, 'null-http-server.ts'));

export interface CeilingFigure {
  protocol: string;
  in_flight: number;
  workers: number;
  requests: number;
  /** Requests per second achieved against the null engine. */
  rps: number;
  /** Cores the client used (all its threads), and the null engine's process (null in process). */
  client_cpu_cores: number | null;
  null_engine_cpu_cores: number | null;
  /** rps / client cores x the cores the client has: its rate with the null engine and other work
   * out of the way. */
  client_capacity_rps: number | null;
  /** Which side was the limit: 'client' or 'null engine' (at >= 90 % of its cores), 'both
   * sides together' (they filled the machine's cores between them), or neither (round trips,
   * or other work on the machine). */
  bound_by: string;
  /** What answered: the null engine of this protocol. */
  null_engine: string;
}

/** Which side set the rate: the client or the null engine when one used >= 90 % of its cores,
 * both together when they filled the machine's cores; otherwise neither saturated: round-trip
 * latency (low in-flight levels) or other work on the machine held them back. */
function boundBy(clientCores: number | null, clientAvailable: number, engineCores: number | null): string {
  if (clientCores !== null && clientCores >= 0.9 * clientAvailable) return 'client';
  if (engineCores !== null && engineCores >= 0.9) return 'null engine';
  if (clientCores !== null && engineCores !== null && clientCores + engineCores >= 0.9 * availableParallelism()) return 'both sides together';
  return 'neither: round trips or other work on the machine';
}

/** Random unit vectors as stand-in queries (the null engines ignore them). */
export function randomQueries(nq: number, d: number, seed = 11): Float32Array {
  const rng = makeRng(seed);
  const q = new Float32Array(nq * d);
  for (let i = 0; i < nq; i++) {
    let s = 0;
    for (let j = 0; j < d; j++) s += (q[i * d + j] = rng.normal()) ** 2;
    const inv = 1 / Math.sqrt(s);
    for (let j = 0; j < d; j++) q[i * d + j] *= inv;
  }
  return q;
}

/** In process: the host's closed loop against a null session (requests answered at once). */
export async function inProcessCeiling(inFlight: number, requests: number, k = 10): Promise<CeilingFigure> {
  const host = new HostClient('null');
  try {
    // One short run first: module loading and JIT warm-up stay out of the figure.
    await host.request<'loadgen-result'>({ type: 'loadgen-ceiling', requests: Math.min(requests, 20_000), inFlight, k }, 120);
    const meter = new CpuMeter({ pid: host.pid, tree: false });
    const r = await host.request<'loadgen-result'>({ type: 'loadgen-ceiling', requests, inFlight, k }, 600);
    const cores = meter.cores();
    const rps = requests / r.reply.wallS;
    // One thread: its capacity is the rate per CPU-second it actually got.
    const capacity = cores !== null && cores > 0 ? rps / Math.min(1, cores) : rps;
    return {
      protocol: 'in-process',
      in_flight: inFlight,
      workers: 0,
      requests,
      rps,
      client_cpu_cores: cores,
      null_engine_cpu_cores: null,
      client_capacity_rps: capacity,
      bound_by: boundBy(cores, 1, null),
      null_engine: 'a session answering every search at once (the host loop)',
    };
  } finally {
    await host.close();
  }
}

/** Starts the null HTTP server in a process of its own; resolves with its port. */
export function spawnNullHttpServer(k = 10): Promise<{ proc: ChildProcess; port: number; stop: () => void }> {
  // stdin is a pipe the server watches: it exits when this process goes, however it goes.
  const proc = spawn(process.execPath, [...NULL_SERVER.execArgv, NULL_SERVER.file, '0', String(k)], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error('the null HTTP server did not start within 30 s'));
    }, 30_000);
    proc.on('exit', (code) => reject(new Error(`the null HTTP server exited (code ${code})`)));
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, port: Number(m[1]), stop: () => proc.kill('SIGTERM') });
      }
    });
  });
}

/** Network protocols with a ceiling: HTTP (the null HTTP server and the undici client, as HTTP
 * load clients use), then those participants declare (settings.json registry.ceiling, in the
 * order of their names): each its own server and load client against a near-null engine, below. */
export function networkProtocols(): string[] {
  return ['http', ...ceilingProtocols().map((c) => c.protocol)];
}

export function isNetworkProtocol(p: string): boolean {
  return networkProtocols().includes(p);
}

/** The participant whose server and load client a protocol's ceiling uses. */
function protocolParticipant(protocol: string): string {
  const c = ceilingProtocols().find((x) => x.protocol === protocol);
  if (!c) throw new Error(`no participant declares the ${protocol} protocol's ceiling (settings.json registry.ceiling)`);
  return c.participant;
}

/** A null engine of one protocol, up and reachable through a load client spec. */
interface NullTarget {
  spec: LoadClientSpec;
  serverPid: number | undefined;
  /** Count the server's child processes too (PostgreSQL's backends). */
  serverTree: boolean;
  describe: string;
  stop(): Promise<void>;
}

async function nullHttpTarget(k: number): Promise<NullTarget> {
  const server = await spawnNullHttpServer(k);
  return {
    spec: { module: HTTP_CLIENT_MODULE, options: { origin: `http://127.0.0.1:${server.port}`, path: '/search' } },
    serverPid: server.proc.pid,
    serverTree: false,
    describe: `the null HTTP server (src/loadgen/null-http-server.ts): a fixed body of ${k} ids and distances`,
    stop: async () => server.stop(),
  };
}

/**
 * The protocol's real server (started by its participant's lifecycle in a directory of its own,
 * stopped by PID) holding only k rows, so every search returns k real ids at once: the least work
 * a server of that protocol can do for the participant's own request (a SQL server parses,
 * binds and runs the participant's statement over k rows; a key-value server runs its vector
 * command over a k-element set). The requests go through the participant's own load client: the
 * ceiling is the client path the participant is measured with.
 */
async function nullServerTarget(protocol: string, d: number, k: number, log: (m: string) => void): Promise<NullTarget> {
  const name = protocolParticipant(protocol);
  const p = await loadParticipant(name);
  if (!p.adapter.server) throw new Error(`participant ${name} has no server lifecycle`);
  const dataset = { name: `null-${k}`, n: k, d, metric: 'ip' as const, hasText: false };
  // Started and opened as every engine outside a run is (src/runner/engine-lifecycle.ts).
  const engine = await openEngine(p, { dataset, maxConcurrency: 1, log });
  const { session, server } = engine;
  const stop = () => engine.stop({ closeErrors: 'ignore' });
  try {
    if (!server) throw new Error(`participant ${name} has no server lifecycle`);
    const attrs = Object.fromEntries(ATTRIBUTES.map((a) => [a, new Int32Array(k)])) as RowAttributes;
    await session.ingest({ ids: Int32Array.from({ length: k }, (_, i) => i), vectors: randomQueries(k, d, 12), attrs });
    await session.buildIndex();
    await session.setKnobs({});
    const spec = session.loadClient?.();
    if (!spec) throw new Error(`participant ${name} has no load client`);
    const spoken = await loadClientProtocol(spec);
    if (spoken !== protocol)
      throw new Error(
        `participant ${name} declares the ${protocol} ceiling (settings.json registry.ceiling), but its load client speaks ${spoken ?? 'no protocol'} (its protocol export)`,
      );
    const version = await p.adapter.engineVersion();
    return {
      spec,
      serverPid: server.handle.pid,
      serverTree: true,
      describe: `${version} holding ${k} rows, queried through participants/${name}'s load client`,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

interface ProtocolCeilingOptions {
  /** In-flight levels, measured one after the other against one null engine. */
  levels: number[];
  workers: number;
  /** Seconds per run (after a short warm-up that also sizes the runs). */
  seconds: number;
  /** Runs per level, the fastest kept (default 2). */
  rounds?: number;
  d?: number;
  k?: number;
  log?: (message: string) => void;
  /** Called with each level's figure as soon as it is measured. */
  onFigure?: (f: CeilingFigure) => void;
}

/** A network protocol's ceiling at each level: the worker pool and the protocol's client against
 * its null engine, with the client's and the null engine's CPU. */
export async function protocolCeilings(protocol: string, o: ProtocolCeilingOptions): Promise<CeilingFigure[]> {
  const d = o.d ?? 128;
  const k = o.k ?? 10;
  const log = o.log ?? (() => {});
  const target = protocol === 'http' ? await nullHttpTarget(k) : await nullServerTarget(protocol, d, k, log);
  const nq = 1000;
  const queries = randomQueries(nq, d);
  let pool: WorkerPool | null = null;
  try {
    const levels = [...new Set(o.levels)].sort((a, b) => a - b);
    pool = await WorkerPool.start(target.spec, o.workers, Math.max(...levels), queries, d);
    await pool.setKnobs({});
    const p = pool;
    const order = (n: number) => Array.from({ length: n }, (_, i) => i % nq);
    const run = (n: number, c: number) => p.closed(k, order(n), new Array(n).fill(null), c, 10_000);
    const figures: CeilingFigure[] = [];
    for (const c of levels) {
      // Warm-up (connections, statements, JIT), which also sizes the measured runs to `seconds`.
      const warm = Math.max(300, 20 * c);
      const cal = await run(warm, c);
      const n = Math.max(warm, Math.round((warm / cal.wallS) * o.seconds));
      const available = Math.min(p.size, availableParallelism());
      // The best of `rounds` runs: a burst of other work on the machine lowers one run, and a
      // ceiling read low would flag points that are not client-limited.
      let best: CeilingFigure | null = null;
      for (let round = 0; round < (o.rounds ?? 2); round++) {
        const cpu0 = process.cpuUsage();
        const t0 = nowMs();
        const serverMeter = new CpuMeter({ pid: target.serverPid, tree: target.serverTree });
        const r = await run(n, c);
        const wallS = (nowMs() - t0) / 1000;
        const used = process.cpuUsage(cpu0);
        const serverCores = serverMeter.cores();
        if (r.errors + r.timeouts > 0) throw new Error(`the null ${protocol} engine failed ${r.errors + r.timeouts} of ${n} requests: ${r.firstError}`);
        const clientCores = (used.user + used.system) / 1e6 / wallS;
        const rps = n / r.wallS;
        if (best !== null && rps <= best.rps) continue;
        best = {
          protocol,
          in_flight: c,
          workers: p.size,
          requests: n,
          rps,
          client_cpu_cores: clientCores,
          null_engine_cpu_cores: serverCores,
          client_capacity_rps: clientCores > 0 ? (rps / clientCores) * available : null,
          bound_by: boundBy(clientCores, available, serverCores),
          null_engine: target.describe,
        };
      }
      figures.push(best!);
      o.onFigure?.(best!);
    }
    return figures;
  } finally {
    await pool?.close();
    await target.stop();
  }
}

interface HttpCeilingOptions {
  inFlight: number;
  workers: number;
  seconds: number;
  d?: number;
  k?: number;
}

/** Over HTTP at one level: the worker pool with the undici client against the null HTTP server. */
export async function httpCeiling(o: HttpCeilingOptions): Promise<CeilingFigure> {
  const [f] = await protocolCeilings('http', { levels: [o.inFlight], workers: o.workers, seconds: o.seconds, d: o.d, k: o.k });
  return f;
}

/** Conditions of a ceiling measurement, printed and stored beside the figures. */
export function machineState(): { cores: number; load_average_1m: number } {
  return { cores: availableParallelism(), load_average_1m: Number(loadavg()[0].toFixed(2)) };
}
