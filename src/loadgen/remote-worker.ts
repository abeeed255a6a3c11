// The worker end of load from several client hosts: `vecbench load-worker --listen ADDR:PORT`
// serves coordinators, each connection with its own pool of client worker threads (pool.ts)
// that runs the point parts the coordinator sends and returns them. Apart from the coordinator
// (remote.ts), which runs on the benchmark's host.
import { createServer, type Server, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import type { FilterExpr, Knobs, LoadClientSpec } from '../contracts.ts';
import { UserError } from '../util/errors.ts';
import { redact } from '../util/redact.ts';
import { nowMs } from './clock.ts';
import { CpuMeter, DemandMeter } from './cpu.ts';
import { defaultWorkers, WorkerPool } from './pool.ts';
import { PROTOCOL_VERSION, type RemotePart, type RemoteReply, type RemoteRequest, fromB64, requestSchema, send, sleep, toB64 } from './remote-wire.ts';

/** One coordinator's connection: its pool lives as long as the connection. */
async function serveConnection(sock: Socket, cores: number): Promise<void> {
  let pool: WorkerPool | null = null;
  const lines = createInterface({ input: sock });
  sock.on('error', () => {});
  // A coordinator that goes away mid-point takes the point with it: stop its clients now.
  sock.on('close', () => {
    void pool?.close();
    pool = null;
  });
  const handle = async (m: RemoteRequest): Promise<RemoteReply> => {
    switch (m.type) {
      case 'hello':
        return { type: 'hello', id: m.id, version: PROTOCOL_VERSION, cores };
      case 'ping':
        return { type: 'pong', id: m.id, nowMs: nowMs() };
      case 'init': {
        await pool?.close();
        pool = await WorkerPool.start(m.spec as LoadClientSpec, m.workers ?? defaultWorkers(), m.maxInFlight, fromB64(m.queries, Float32Array), m.d);
        return { type: 'ready', id: m.id, workers: pool.size };
      }
      case 'knobs':
        await pool!.setKnobs(m.knobs as Knobs);
        return { type: 'ok', id: m.id };
      case 'closed': {
        if (!pool) throw new Error('no client started (init first)');
        await sleep(m.startAtMs - nowMs());
        const start = nowMs();
        const cpu = new CpuMeter({ pid: process.pid, tree: false });
        const demand = new DemandMeter(process.pid);
        const r = await pool.closed(m.k, m.queries, m.filters as (FilterExpr | null)[], m.inFlight, m.timeoutMs);
        const end = nowMs();
        const part: RemotePart = {
          latenciesMs: toB64(r.latenciesMs),
          sendLagMs: toB64(r.sendLagMs),
          status: toB64(r.status),
          ids: toB64(r.ids),
          offsets: toB64(r.offsets),
          errors: r.errors,
          timeouts: r.timeouts,
          firstError: r.firstError,
          histogram: r.histogram,
          startMs: start,
          endMs: end,
          cpuCores: cpu.cores(),
          busiestThread: demand.busiestThread(),
        };
        return { type: 'part', id: m.id, part };
      }
      case 'close':
        await pool?.close();
        pool = null;
        return { type: 'ok', id: m.id };
    }
  };
  try {
    for await (const line of lines) {
      let id = -1;
      let reply: RemoteReply;
      try {
        const raw = JSON.parse(line) as { id?: unknown };
        if (typeof raw.id === 'number') id = raw.id;
        reply = await handle(requestSchema.parse(raw));
      } catch (e) {
        reply = { type: 'error', id, message: redact(e instanceof Error ? e.message : String(e)) };
      }
      send(sock, reply);
    }
  } finally {
    await (pool as WorkerPool | null)?.close();
  }
}

/** Listens for coordinators; resolves once listening, with the bound port. */
export function startLoadWorker(host: string, port: number, cores: number): Promise<{ server: Server; port: number }> {
  const server = createServer((sock) => {
    void serveConnection(sock, cores);
  });
  return new Promise((resolve, reject) => {
    server.once('error', (e) =>
      reject(new UserError(`load-worker cannot listen on ${host}:${port} (${(e as Error).message}); pick a free port on an address of this host`)),
    );
    server.listen(port, host, () => {
      const a = server.address();
      resolve({ server, port: typeof a === 'object' && a ? a.port : port });
    });
  });
}
