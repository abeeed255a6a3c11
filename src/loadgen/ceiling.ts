// The ceiling proof (METHOD 5): how fast the client itself can go, measured against engines that
// do no work: in process, the participant host's own loop against a null session; over HTTP,
// the worker-thread pool with the undici client against the null HTTP server (a process of its
// own). Results record the client's and the null engine's CPU, so a reader can tell whether the
// figure is the client's limit or the null engine's (on 2 cores, both share the machine).
import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { HostClient } from '../runner/client.ts';
import { makeRng } from '../util/hash.ts';
import { CpuMeter } from './cpu.ts';
import { nowMs } from './clock.ts';
import { WorkerPool } from './pool.ts';

export const HTTP_CLIENT_MODULE = fileURLToPath(new URL('./clients/http-json.ts', import.meta.url));
const NULL_SERVER = fileURLToPath(new URL('./null-http-server.ts', import.meta.url));

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
  /** Which side was the limit: 'client' or 'null engine' (at >= 90 % of its cores), or 'other
   * work on the machine' (neither got the CPU it wanted). */
  bound_by: string;
}

/** Which side set the rate: the client or the null engine when one used >= 90 % of its cores;
 * otherwise neither could get the CPU it wanted, i.e. other work on the machine. */
function boundBy(clientCores: number | null, clientAvailable: number, engineCores: number | null): string {
  if (clientCores !== null && clientCores >= 0.9 * clientAvailable) return 'client';
  if (engineCores !== null && engineCores >= 0.9) return 'null engine';
  return 'other work on the machine';
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
    return { protocol: 'in-process', in_flight: inFlight, workers: 0, requests, rps, client_cpu_cores: cores, null_engine_cpu_cores: null, client_capacity_rps: capacity, bound_by: boundBy(cores, 1, null) };
  } finally {
    await host.close();
  }
}

/** Starts the null HTTP server in a process of its own; resolves with its port. */
export function spawnNullHttpServer(k = 10): Promise<{ proc: ChildProcess; port: number; stop: () => void }> {
  // stdin is a pipe the server watches: it exits when this process goes, however it goes.
  const proc = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), NULL_SERVER, '0', String(k)], { stdio: ['pipe', 'pipe', 'inherit'] });
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

export interface HttpCeilingOptions {
  inFlight: number;
  workers: number;
  seconds: number;
  d?: number;
  k?: number;
  /** An already running null server's port (else one is started and stopped). */
  port?: number;
  serverPid?: number;
}

/** Over HTTP: the worker pool with the undici client against the null HTTP server. */
export async function httpCeiling(o: HttpCeilingOptions): Promise<CeilingFigure> {
  const d = o.d ?? 128;
  const k = o.k ?? 10;
  const server = o.port === undefined ? await spawnNullHttpServer(k) : null;
  const port = o.port ?? server!.port;
  const serverPid = o.serverPid ?? server?.proc.pid;
  const nq = 1000;
  const queries = randomQueries(nq, d);
  let pool: WorkerPool | null = null;
  try {
    pool = await WorkerPool.start({ module: HTTP_CLIENT_MODULE, options: { origin: `http://127.0.0.1:${port}`, path: '/search' } }, o.workers, o.inFlight, queries, d);
    const p = pool;
    const ids = (n: number) => Array.from({ length: n }, (_, i) => i % nq);
    const run = (n: number) => p.closed(k, ids(n), new Array(n).fill(null), o.inFlight, 10_000);
    // Warm-up (connections, JIT), then a calibration sizes the measured run to `seconds`.
    const cal = await run(3000);
    const n = Math.max(2000, Math.round((3000 / cal.wallS) * o.seconds));
    const cpu0 = process.cpuUsage();
    const t0 = nowMs();
    const serverMeter = new CpuMeter({ pid: serverPid, tree: false });
    const r = await run(n);
    const wallS = (nowMs() - t0) / 1000;
    const used = process.cpuUsage(cpu0);
    const clientCores = (used.user + used.system) / 1e6 / wallS;
    const serverCores = serverMeter.cores();
    if (r.errors + r.timeouts > 0) throw new Error(`the null HTTP server failed ${r.errors + r.timeouts} of ${n} requests: ${r.firstError}`);
    const rps = n / r.wallS;
    const available = Math.min(p.size, availableParallelism());
    const bound = boundBy(clientCores, available, serverCores);
    return { protocol: 'http', in_flight: o.inFlight, workers: p.size, requests: n, rps, client_cpu_cores: clientCores, null_engine_cpu_cores: serverCores, client_capacity_rps: clientCores > 0 ? (rps / clientCores) * available : null, bound_by: bound };
  } finally {
    await pool?.close();
    server?.stop();
  }
}

/** Conditions of a ceiling measurement, printed and stored beside the figures. */
export function machineState(): { cores: number; load_average_1m: number } {
  return { cores: availableParallelism(), load_average_1m: Number(loadavg()[0].toFixed(2)) };
}
