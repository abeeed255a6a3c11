// The worker end of load from several client hosts: `vecbench load-worker --listen ADDR:PORT`
// serves coordinators, each connection with its own pool of client worker threads (pool.ts)
// that runs the point parts the coordinator sends and returns them. Apart from the coordinator
// (remote.ts), which runs on the benchmark's host.
import { createServer, type Server, type Socket } from 'node:net';
import type { FilterExpr, Knobs } from '../contracts.ts';
import { UserError } from '../util/errors.ts';
import { redact } from '../util/redact.ts';
import { nowMs } from './clock.ts';
import { CpuMeter, DemandMeter } from '../runner/cpu.ts';
import { defaultWorkers, WorkerPool } from './pool.ts';
import { clientModuleFor, newNonce, proof, proofMatches } from './remote-auth.ts';
import {
  LIMITS,
  PROTOCOL_VERSION,
  type RemotePart,
  type RemoteReply,
  type RemoteRequest,
  fromB64,
  readLines,
  requestSchema,
  send,
  sleep,
  toB64,
} from './remote-wire.ts';

/** One coordinator's connection: its pool lives as long as the connection. Nothing but a hello
 * carrying the secret's proof is answered until one came. */
function serveConnection(sock: Socket, cores: number, secret: string): void {
  let pool: WorkerPool | null = null;
  const nonce = newNonce();
  let authenticated = false;
  sock.on('error', () => {});
  send(sock, { type: 'challenge', id: 0, nonce });
  // A coordinator that goes away mid-point takes the point with it: stop its clients now.
  sock.on('close', () => {
    void pool?.close();
    pool = null;
  });
  const handle = async (m: RemoteRequest): Promise<RemoteReply> => {
    if (m.type !== 'hello' && !authenticated) throw new RefusedPeer('hello with the shared secret first');
    switch (m.type) {
      case 'hello':
        if (!proofMatches(proof(secret, 'coordinator', nonce, m.nonce), m.proof))
          throw new RefusedPeer("authentication failed: the coordinator's secret is not this load-worker's (VECBENCH_LOAD_SECRET)");
        authenticated = true;
        return { type: 'hello', id: m.id, version: PROTOCOL_VERSION, cores, proof: proof(secret, 'worker', nonce, m.nonce) };
      case 'ping':
        return { type: 'pong', id: m.id, nowMs: nowMs() };
      case 'init': {
        const module = clientModuleFor(m.spec.client);
        const maxWorkers = LIMITS.workersPerCore * cores;
        if (m.workers !== undefined && m.workers > maxWorkers)
          throw new Error(`${m.workers} client threads asked, at most ${maxWorkers} here (${LIMITS.workersPerCore} a core)`);
        await pool?.close();
        pool = await WorkerPool.start({ module, options: m.spec.options }, m.workers ?? defaultWorkers(), m.maxInFlight, fromB64(m.queries, Float32Array), m.d);
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
  // One message at a time, in order, as they came.
  let chain = Promise.resolve();
  const refuse = (id: number, message: string) => {
    send(sock, { type: 'error', id, message });
    sock.end();
    sock.destroySoon();
  };
  readLines(
    sock,
    (line) => {
      chain = chain.then(async () => {
        if (sock.destroyed) return;
        let id = -1;
        let reply: RemoteReply;
        try {
          const raw = JSON.parse(line) as { id?: unknown };
          if (typeof raw?.id === 'number') id = raw.id;
          reply = await handle(requestSchema.parse(raw));
        } catch (e) {
          if (e instanceof RefusedPeer || !authenticated) return refuse(id, e instanceof RefusedPeer ? e.message : 'hello with the shared secret first');
          reply = { type: 'error', id, message: redact(e instanceof Error ? e.message : String(e)) };
        }
        send(sock, reply);
      });
    },
    () => refuse(-1, `a message longer than ${LIMITS.lineBytes} bytes; this load-worker reads no more of it`),
  );
}

/** A peer this worker will not talk to: the connection ends after the one-line reason. */
class RefusedPeer extends Error {}

/** Listens for coordinators; resolves once listening, with the bound port. */
export function startLoadWorker(host: string, port: number, cores: number, secret: string): Promise<{ server: Server; port: number }> {
  const server = createServer((sock) => {
    serveConnection(sock, cores, secret);
  });
  server.maxConnections = LIMITS.connections;
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
