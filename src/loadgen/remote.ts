// Load from several client hosts (docs/client-hosts.md). `vecbench load-worker --listen ADDR:PORT`
// runs the client worker threads of pool.ts on its host; the coordinator (`vecbench run
// --client-hosts`) connects to each over TCP, one JSON message a line (zod-validated both ways),
// measures each worker's clock offset with a ping exchange, and starts every point at one
// instant of its own clock translated to each worker's. Each worker returns its part of the
// point (per-request arrays, an encoded HDR histogram, counts, its own CPU); the coordinator
// merges the histograms exactly (mergeResults adds the decoded histograms) and sums the counts.
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import type { FilterExpr, Knobs, LoadClientSpec } from '../contracts.ts';
import { UserError } from '../util/errors.ts';
import { VECBENCH_VERSION } from '../version.ts';
import { redact } from '../util/redact.ts';
import { nowMs } from './clock.ts';
import { CpuMeter, DemandMeter } from './cpu.ts';
import type { DriveResult } from './driver.ts';
import { defaultWorkers, mergeResults, WorkerPool } from './pool.ts';
import type { LoadReply } from './protocol.ts';

/** Coordinator and worker must be the same vecbench: the point's meaning depends on both. */
const PROTOCOL_VERSION = `vecbench-load-worker/1 vecbench ${VECBENCH_VERSION}`;

const b64 = z.string();
const toB64 = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');
function fromB64<T>(s: string, C: { new (b: ArrayBuffer): T; BYTES_PER_ELEMENT: number }): T {
  const buf = Buffer.from(s, 'base64');
  // A copy: Buffer's pool slice is not aligned for every element size.
  const ab = new ArrayBuffer(buf.length);
  new Uint8Array(ab).set(buf);
  return new C(ab);
}

const requestSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('hello'), id: z.number(), version: z.string() }),
  z.object({ type: z.literal('ping'), id: z.number() }),
  z.object({
    type: z.literal('init'),
    id: z.number(),
    spec: z.object({ module: z.string(), options: z.unknown() }),
    /** Client threads; absent: the worker host's default (pool.ts defaultWorkers). */
    workers: z.number().int().positive().optional(),
    maxInFlight: z.number().int().positive(),
    d: z.number().int().positive(),
    queries: b64,
  }),
  z.object({ type: z.literal('knobs'), id: z.number(), knobs: z.record(z.string(), z.unknown()) }),
  z.object({
    type: z.literal('closed'),
    id: z.number(),
    k: z.number().int().positive(),
    queries: z.array(z.number().int().nonnegative()),
    filters: z.array(z.unknown()),
    inFlight: z.number().int().positive(),
    timeoutMs: z.number().positive(),
    /** On the worker's own clock (clock.ts nowMs). */
    startAtMs: z.number(),
  }),
  z.object({ type: z.literal('close'), id: z.number() }),
]);
type RemoteRequest = z.infer<typeof requestSchema>;
type RemoteRequestBody = RemoteRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

const partSchema = z.object({
  latenciesMs: b64,
  sendLagMs: b64,
  status: b64,
  ids: b64,
  offsets: b64,
  errors: z.number(),
  timeouts: z.number(),
  firstError: z.string().nullable(),
  histogram: z.string(),
  /** Worker clock: when the point started and its last request finished. */
  startMs: z.number(),
  endMs: z.number(),
  cpuCores: z.number().nullable(),
  busiestThread: z.number().nullable(),
});
type RemotePart = z.infer<typeof partSchema>;

const replySchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('hello'), id: z.number(), version: z.string(), cores: z.number() }),
  z.object({ type: z.literal('pong'), id: z.number(), nowMs: z.number() }),
  z.object({ type: z.literal('ready'), id: z.number(), workers: z.number() }),
  z.object({ type: z.literal('ok'), id: z.number() }),
  z.object({ type: z.literal('part'), id: z.number(), part: partSchema }),
  z.object({ type: z.literal('error'), id: z.number(), message: z.string() }),
]);
type RemoteReply = z.infer<typeof replySchema>;

const send = (s: Socket, m: object) => s.write(`${JSON.stringify(m)}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** "host:port" -> its parts; the fix is named when it is not one. */
export function parseHostPort(v: string, what: string, anyPort = false): { host: string; port: number } {
  const i = v.lastIndexOf(':');
  const port = Number(v.slice(i + 1));
  const host = v.slice(0, i).replace(/^\[|\]$/g, '');
  if (i <= 0 || !Number.isInteger(port) || port < (anyPort ? 0 : 1) || port > 65535)
    throw new UserError(`${what}: "${v}" is not HOST:PORT (write e.g. 10.0.0.2:7100)`);
  return { host, port };
}

// ---- the worker: `vecbench load-worker --listen ADDR:PORT` ----

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

// ---- the coordinator ----

class HostLink {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (r: RemoteReply) => void; reject: (e: Error) => void }>();
  private dead: string | null = null;
  /** Worker clock minus coordinator clock, ms. */
  offsetMs = 0;
  cores = 0;
  workers = 0;

  private constructor(
    readonly name: string,
    private readonly sock: Socket,
  ) {
    createInterface({ input: sock }).on('line', (line) => {
      let m: RemoteReply;
      try {
        m = replySchema.parse(JSON.parse(line));
      } catch (e) {
        this.fail(`sent a message this vecbench does not understand (${(e as Error).message.split('\n')[0]}); run the same vecbench version on both hosts`);
        return;
      }
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (!w) return;
      if (m.type === 'error') w.reject(new UserError(`client host ${this.name}: ${m.message}`));
      else w.resolve(m);
    });
    sock.on('close', () => this.fail('closed the connection (the load-worker died or was stopped); restart `vecbench load-worker` there and run again'));
    sock.on('error', (e) => this.fail(`connection failed (${e.message}); check that \`vecbench load-worker\` still runs there`));
  }

  static connect(name: string, timeoutMs: number): Promise<HostLink> {
    const { host, port } = parseHostPort(name, '--client-hosts');
    return new Promise((resolve, reject) => {
      const sock = createConnection({ host, port });
      const timer = setTimeout(() => {
        sock.destroy();
        reject(new UserError(`client host ${name} is unreachable (no answer in ${timeoutMs} ms); start \`vecbench load-worker --listen ${name}\` there`));
      }, timeoutMs);
      sock.once('connect', () => {
        clearTimeout(timer);
        sock.setNoDelay(true);
        resolve(new HostLink(name, sock));
      });
      sock.once('error', (e) => {
        clearTimeout(timer);
        reject(new UserError(`client host ${name} is unreachable (${e.message}); start \`vecbench load-worker --listen ${name}\` there`));
      });
    });
  }

  private fail(why: string): void {
    this.dead ??= `client host ${this.name} ${why}`;
    for (const w of this.waiting.values()) w.reject(new UserError(this.dead));
    this.waiting.clear();
  }

  call<T extends RemoteReply['type']>(m: RemoteRequestBody): Promise<Extract<RemoteReply, { type: T }>> {
    if (this.dead) return Promise.reject(new UserError(this.dead));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (r: RemoteReply) => void, reject });
      send(this.sock, { ...m, id });
    });
  }

  /** The offset from the ping with the shortest round trip (its midpoint is the best estimate). */
  async measureOffset(pings = 8): Promise<void> {
    let best = Infinity;
    for (let i = 0; i < pings; i++) {
      const t0 = nowMs();
      const r = await this.call<'pong'>({ type: 'ping' });
      const t1 = nowMs();
      if (t1 - t0 < best) {
        best = t1 - t0;
        this.offsetMs = r.nowMs - (t0 + t1) / 2;
      }
    }
  }

  close(): void {
    this.sock.destroy();
  }
}

export interface ClientHostFigures {
  host: string;
  requests: number;
  ok: number;
  in_flight: number;
  cpu_cores: number | null;
  busiest_thread: number | null;
}

/** The coordinator's handle on every client host of a run. */
export class ClientHosts {
  private constructor(private readonly links: HostLink[]) {}

  get names(): string[] {
    return this.links.map((l) => l.name);
  }

  get workers(): number {
    return this.links.reduce((a, l) => a + l.workers, 0);
  }

  /** Cores the client threads can use, all hosts together (each: its threads or its cores). */
  get usableCores(): number {
    return this.links.reduce((a, l) => a + Math.min(l.workers, l.cores), 0);
  }

  /** Connects, checks the version and measures each host's clock offset. */
  static async connect(hosts: string[], timeoutMs = 5000): Promise<ClientHosts> {
    const links: HostLink[] = [];
    try {
      for (const h of hosts) {
        const l = await HostLink.connect(h, timeoutMs);
        links.push(l);
        const hello = await l.call<'hello'>({ type: 'hello', version: PROTOCOL_VERSION });
        if (hello.version !== PROTOCOL_VERSION)
          throw new UserError(
            `client host ${h} runs ${hello.version}, this coordinator ${PROTOCOL_VERSION}; install the same vecbench there and restart its load-worker`,
          );
        l.cores = hello.cores;
        await l.measureOffset();
      }
    } catch (e) {
      for (const l of links) l.close();
      throw e;
    }
    return new ClientHosts(links);
  }

  /** Builds the client on every host (`workers` threads each; queries nq x d are sent once). */
  async init(spec: LoadClientSpec, workers: number | undefined, maxInFlight: number, queries: Float32Array, d: number): Promise<void> {
    const per = Math.max(1, Math.ceil(maxInFlight / this.links.length));
    const q = toB64(queries);
    await Promise.all(
      this.links.map(async (l) => {
        l.workers = (await l.call<'ready'>({ type: 'init', spec, workers, maxInFlight: per, d, queries: q })).workers;
      }),
    );
  }

  async setKnobs(knobs: Knobs): Promise<void> {
    await Promise.all(this.links.map((l) => l.call<'ok'>({ type: 'knobs', knobs })));
  }

  /**
   * One closed-loop point at `inFlight` in total: host i holds its share of the in-flight
   * requests and the same share of the point's requests, and every host starts at one
   * coordinator instant. The merged reply is in request order, its histogram the exact sum.
   */
  async closed(
    k: number,
    queries: number[],
    filters: (FilterExpr | null)[],
    inFlight: number,
    timeoutMs: number,
  ): Promise<{ reply: LoadReply; hosts: ClientHostFigures[] }> {
    const n = queries.length;
    const active = this.links.slice(0, Math.max(1, Math.min(this.links.length, inFlight)));
    const shares = active.map((_, i) => Math.floor(inFlight / active.length) + (i < inFlight % active.length ? 1 : 0));
    // Requests in proportion to the in-flight share, so the hosts finish together.
    const bounds = [0];
    let acc = 0;
    for (const s of shares) bounds.push(Math.round(((acc += s) / inFlight) * n));
    // Far enough ahead that every host has its message before the start.
    const startAt = nowMs() + 200;
    const parts = await Promise.all(
      active.map(async (l, i) => {
        const lo = bounds[i];
        const hi = bounds[i + 1];
        const r = await l.call<'part'>({
          type: 'closed',
          k,
          queries: queries.slice(lo, hi),
          filters: filters.slice(lo, hi),
          inFlight: shares[i],
          timeoutMs,
          startAtMs: startAt + l.offsetMs,
        });
        return { l, lo, hi, p: r.part, share: shares[i] };
      }),
    );
    const drive: DriveResult[] = parts.map(({ l, lo, hi, p }) => ({
      indices: Int32Array.from({ length: hi - lo }, (_, j) => lo + j),
      latenciesMs: fromB64(p.latenciesMs, Float64Array),
      sendLagMs: fromB64(p.sendLagMs, Float64Array),
      status: fromB64(p.status, Uint8Array),
      ids: fromB64(p.ids, Int32Array),
      offsets: fromB64(p.offsets, Int32Array),
      errors: p.errors,
      timeouts: p.timeouts,
      firstError: p.firstError,
      histogram: p.histogram,
      // Back on the coordinator's clock: the point runs from the first start to the last end.
      startMs: p.startMs - l.offsetMs,
      endMs: p.endMs - l.offsetMs,
    }));
    const hosts = parts.map(({ l, lo, hi, p, share }) => ({
      host: l.name,
      requests: hi - lo,
      ok: fromB64(p.status, Uint8Array).filter((s) => s === 0).length,
      in_flight: share,
      cpu_cores: p.cpuCores,
      busiest_thread: p.busiestThread,
    }));
    return { reply: mergeResults(n, drive), hosts };
  }

  /** A host still busy with a point (another host failed) is cut off: its worker stops the point
   * when the connection closes. */
  async close(): Promise<void> {
    await Promise.all(this.links.map((l) => Promise.race([l.call<'ok'>({ type: 'close' }).catch(() => {}), sleep(2000)])));
    for (const l of this.links) l.close();
  }
}
