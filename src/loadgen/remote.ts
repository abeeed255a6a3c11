// Load from several client hosts (docs/client-hosts.md). `vecbench load-worker --listen ADDR:PORT`
// runs the client worker threads of pool.ts on its host; the coordinator (`vecbench run
// --client-hosts`) connects to each over TCP, one JSON message a line (zod-validated both ways),
// measures each worker's clock offset with a ping exchange, and starts every point at one
// instant of its own clock translated to each worker's. Each worker returns its part of the
// point (per-request arrays, an encoded HDR histogram, counts, its own CPU); the coordinator
// merges the histograms exactly (mergeResults adds the decoded histograms) and sums the counts.
// This file is the coordinator; the worker end is remote-worker.ts, the messages remote-wire.ts.
import { createConnection, type Socket } from 'node:net';
import type { FilterExpr, Knobs, LoadClientSpec } from '../contracts.ts';
import { UserError } from '../util/errors.ts';
import { nowMs } from './clock.ts';
import type { DriveResult } from './driver.ts';
import { mergeResults } from './pool.ts';
import type { LoadReply } from './protocol.ts';
import { clientNameOf, loadSecret, newNonce, proof, proofMatches } from './remote-auth.ts';
import {
  LIMITS,
  PROTOCOL_VERSION,
  type RemoteReply,
  type RemoteRequestBody,
  fromB64,
  parseHostPort,
  readLines,
  replySchema,
  send,
  sleep,
  toB64,
} from './remote-wire.ts';

class HostLink {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (r: RemoteReply) => void; reject: (e: Error) => void }>();
  private dead: string | null = null;
  /** Worker clock minus coordinator clock, ms. */
  offsetMs = 0;
  cores = 0;
  workers = 0;
  /** The worker's challenge (its first line), for the hello's proof. */
  readonly challenge: Promise<string>;
  private onChallenge: (nonce: string) => void = () => {};

  private constructor(
    readonly name: string,
    private readonly sock: Socket,
  ) {
    this.challenge = new Promise((resolve) => (this.onChallenge = resolve));
    readLines(
      sock,
      (line) => this.onLine(line),
      () => {
        this.fail(`sent a message longer than ${LIMITS.lineBytes} bytes; it is not a vecbench load-worker`);
        sock.destroy();
      },
    );
    sock.on('close', () => this.fail('closed the connection (the load-worker died or was stopped); restart `vecbench load-worker` there and run again'));
    sock.on('error', (e) => this.fail(`connection failed (${e.message}); check that \`vecbench load-worker\` still runs there`));
  }

  private onLine(line: string): void {
    {
      let m: RemoteReply;
      try {
        m = replySchema.parse(JSON.parse(line));
      } catch (e) {
        this.fail(`sent a message this vecbench does not understand (${(e as Error).message.split('\n')[0]}); run the same vecbench version on both hosts`);
        return;
      }
      if (m.type === 'challenge') {
        this.onChallenge(m.nonce);
        return;
      }
      // The worker refuses with id -1 when it cannot tell which request was refused.
      if (m.type === 'error' && m.id === -1) {
        this.fail(`refused: ${m.message}`);
        return;
      }
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (!w) return;
      if (m.type === 'error') w.reject(new UserError(`client host ${this.name}: ${m.message}`));
      else w.resolve(m);
    }
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
    this.onChallenge('');
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
    const secret = loadSecret();
    const links: HostLink[] = [];
    try {
      for (const h of hosts) {
        const l = await HostLink.connect(h, timeoutMs);
        links.push(l);
        const workerNonce = await Promise.race([l.challenge, sleep(timeoutMs).then(() => '')]);
        if (!/^[0-9a-f]{64}$/.test(workerNonce))
          throw new UserError(`client host ${h} did not open with a load-worker's challenge; start \`vecbench load-worker\` of this version there`);
        const nonce = newNonce();
        const hello = await l.call<'hello'>({ type: 'hello', version: PROTOCOL_VERSION, nonce, proof: proof(secret, 'coordinator', workerNonce, nonce) });
        // The worker proves the secret too, before it is sent a client's options (passwords).
        if (!proofMatches(proof(secret, 'worker', workerNonce, nonce), hello.proof))
          throw new UserError(`client host ${h} does not hold the shared secret (VECBENCH_LOAD_SECRET); it is not your load-worker, or its secret differs`);
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
    const client = { client: clientNameOf(spec.module), options: spec.options };
    await Promise.all(
      this.links.map(async (l) => {
        l.workers = (await l.call<'ready'>({ type: 'init', spec: client, workers, maxInFlight: per, d, queries: q })).workers;
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
