// Redis 8 vector sets (VADD / VSIM, built into the server) on a real redis-server compiled from
// Debian trixie's source package (provision.sh). The runner starts it on a free 127.0.0.1 port
// with a data directory of the run and stops it by PID (SIGTERM: it saves its data first, so a
// cold start reloads it). One vector set holds the rows; each element carries its attributes as
// JSON (SETATTR) and VSIM's FILTER expression is applied during the graph search.
// `redis` stores float32 (NOQUANT); `redis-q8` (participants/redis-q8) the same with int8 (Q8).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { createClient, createClientPool, type RedisClientPoolType } from '@redis/client';
import { z } from 'zod';
import * as sdk from '../../src/sdk/index.ts';

const PROVISION = 'participants/redis/provision.sh';
const KEY = 'vb:items';

const settingsSchema = sdk.settingsObject({
  /** Stored precision: NOQUANT = float32, Q8 = int8 per component (Redis's default), BIN = 1 bit. */
  quantization: z.enum(['NOQUANT', 'Q8', 'BIN']).default('NOQUANT'),
  /** HNSW links per node (VADD M; Redis's default 16). */
  M: sdk.intSetting(4, 4096, 16),
  /** Build exploration factor (VADD EF; Redis's default 200). */
  ef_construction: sdk.intSetting(1, 1_000_000, 200),
  /** VADD CAS: the neighbour search of an insert runs in a background thread and the link
   * step is checked-and-set in the main thread. Measured here (20k x 128, 4 connections):
   * 55 s with CAS against 18 s without, so off by default. */
  cas: z.boolean().default(false),
  /** Connections: ingest pipelines on these; VSIM blocks a connection while its thread works,
   * so searches need one per in-flight request (at least this many, at most maxConcurrency). */
  ingest_connections: sdk.intSetting(1, 64, 4),
});
type Settings = z.infer<typeof settingsSchema>;

const KNOB_DEFAULTS = { ef: 100, filter_ef: 0 } as const;

const KNOBS = { ef: sdk.intKnob(1), filter_ef: sdk.intKnob(0, Number.POSITIVE_INFINITY, "0: Redis's default, COUNT x 100") };

/** The knobs with the defaults where a point sets none (checked by the harness against KNOBS).
 * Exported for the load generator's client (load-client.ts), which applies the same knobs. */
export function parseKnobs(knobs: sdk.Knobs): { ef: number; filter_ef: number } {
  return { ...KNOB_DEFAULTS, ...knobs } as { ef: number; filter_ef: number };
}

// ---- filters ----

/** FilterExpr -> a VSIM FILTER expression over the elements' JSON attributes, e.g.
 * `.cat10 == 3 and (.num >= 100 and .num < 200)`. */
export function filterToRedis(f: sdk.FilterExpr): string {
  return sdk.foldFilter<string>(f, {
    eq: (field, value) => `.${field} == ${value}`,
    range: (field, gte, lt) => `(.${field} >= ${gte} and .${field} < ${lt})`,
    and: (parts) => (parts.length === 0 ? '1' : parts.join(' and ')),
  });
}

// ---- the server ----

export function redisServerPath(): string {
  const cache = process.env.VECBENCH_CACHE ?? '/var/cache/vecbench';
  const path = join(cache, 'redis', 'current', 'bin', 'redis-server');
  if (!existsSync(path))
    throw new sdk.SetupNeeded(
      `Redis 8 is not built (${path} is missing; ${PROVISION} builds it, also without root when VECBENCH_CACHE names a writable directory)`,
    );
  return path;
}

/** Commands a started server does not have (exported for the test that checks they are gone). */
export const DISABLED_COMMANDS = ['CONFIG', 'MODULE', 'DEBUG', 'REPLICAOF', 'SLAVEOF', 'MIGRATE', 'FAILOVER', 'SYNC', 'PSYNC'] as const;

async function startRedis(ctx: sdk.ServerStartContext<Settings>): Promise<sdk.ServerHandle> {
  // A password of this start's own, so no other local user can use the server: in a config file
  // only this user can read (Redis reads its first argument as one), never on the command line
  // (every user sees that in ps). It is masked wherever it could be printed.
  const password = randomBytes(24).toString('hex');
  sdk.registerSecret(password);
  // Beside the data directory, not in it: the data directory's size is the engine's disk use.
  const conf = sdk.serverSideFile(ctx.dataDir, 'redis.conf');
  rmSync(conf, { force: true });
  // Commands the harness never sends and that would turn the password into more than the data:
  // writing files anywhere the server may (CONFIG SET dir + SAVE), loading code (MODULE LOAD),
  // crashing it (DEBUG), or making it a replica of another host. Renamed to "" = gone.
  const disabled = DISABLED_COMMANDS.map((c) => `rename-command ${c} ""\n`).join('');
  writeFileSync(conf, `requirepass ${password}\n${disabled}`, { mode: 0o600, flag: 'wx' });
  const args = [
    conf,
    '--bind',
    '127.0.0.1',
    '--port',
    String(ctx.port),
    '--dir',
    ctx.dataDir,
    '--dbfilename',
    'dump.rdb',
    // No background saves during the run (a fork would land in the figures); SIGTERM saves.
    '--save',
    '',
    '--appendonly',
    'no',
    '--shutdown-on-sigterm',
    'save',
    '--daemonize',
    'no',
    '--logfile',
    '',
  ];
  const proc = sdk.spawnServer({ name: 'redis', command: redisServerPath(), args, dataDir: ctx.dataDir, logFile: ctx.logFile, stopSignal: 'SIGTERM' });
  const connection = { host: '127.0.0.1', port: ctx.port, dataDir: ctx.dataDir, params: { password } };
  return sdk.serverHandle(proc, connection, () => ping('127.0.0.1', ctx.port, password));
}

/** AUTH, then PING, on a fresh connection: PONG only once the server has loaded its data (while
 * loading it answers -LOADING). */
function ping(host: string, port: number, password: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host, port });
    let buf = '';
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(2000, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => sock.write(`AUTH ${password}\r\nPING\r\n`));
    sock.on('data', (d) => {
      buf += d.toString('latin1');
      const lines = buf.split('\r\n');
      if (lines.length >= 3) done(lines[0] === '+OK' && lines[1].startsWith('+PONG'));
      else if (lines.length === 2 && lines[0] !== '+OK') done(false);
    });
  });
}

/** Client options for a connection: AUTH (username, password) and SELECT (database) when the
 * server is one the user runs (--connect redis=redis://[user]:password@host:port[/db]). */
export function clientOptions(c: sdk.ServerConnection) {
  const p = c.params;
  return {
    socket: { host: c.host, port: c.port },
    ...(p.username !== undefined ? { username: String(p.username) } : {}),
    ...(p.password !== undefined ? { password: String(p.password) } : {}),
    ...(p.database !== undefined ? { database: Number(p.database) } : {}),
  };
}

const remote: sdk.RemoteServer = {
  schemes: ['redis'],
  defaultPort: 6379,
  connection(url) {
    const params: sdk.ServerConnection['params'] = {};
    if (url.username) params.username = decodeURIComponent(url.username);
    if (url.password) params.password = decodeURIComponent(url.password);
    const db = url.pathname.replace(/^\//, '');
    if (db) {
      if (!/^\d+$/.test(db)) throw new Error(`the database "${db}" is not a Redis database number (write redis://host:port/0)`);
      params.database = Number(db);
    }
    return sdk.urlConnection(url, 6379, params);
  },
  async check(c) {
    const client = createClient({ ...clientOptions(c), socket: { host: c.host, port: c.port, connectTimeout: 10_000, reconnectStrategy: false } });
    let failure: Error | null = null;
    client.on('error', (e: Error) => (failure ??= e));
    try {
      await client.connect();
      const pong = await client.ping();
      if (pong !== 'PONG') throw new Error(`PING answered ${pong}`);
    } catch (e) {
      throw failure ?? e;
    } finally {
      await client.close().catch(() => {});
    }
  },
};

// ---- the session ----

type Pool = RedisClientPoolType;

let versionCache: string | null = null;

async function readVersion(pool: Pool): Promise<string> {
  const info = String(await pool.sendCommand(['INFO', 'server']));
  const v = /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
  return `Redis ${v} (vector sets)`;
}

/** A vector as VADD / VSIM's FP32 blob: little-endian float32 (this machine's order). */
function blob(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** VSIM's arguments for a search: the session and the load generator's client
 * (participants/redis/load-client.ts) send the same command. */
export function vsimArgs(request: sdk.SearchRequest, knobs: { ef: number; filter_ef: number }): (string | Buffer)[] {
  const args: (string | Buffer)[] = ['VSIM', KEY, 'FP32', blob(request.vector), 'COUNT', String(request.k), 'EF', String(knobs.ef)];
  if (request.filter !== null) {
    args.push('FILTER', filterToRedis(request.filter));
    if (knobs.filter_ef > 0) args.push('FILTER-EF', String(knobs.filter_ef));
  }
  return args;
}

/** What the session hands its load generator's client (load-client.ts). */
export interface RedisLoadOptions {
  connection: sdk.ServerConnection;
  d: number;
}

class RedisSession implements sdk.EngineSession {
  private knobs = { ...KNOB_DEFAULTS } as { ef: number; filter_ef: number };

  constructor(
    private readonly pool: Pool,
    private readonly settings: Settings,
    private readonly d: number,
    private readonly connection?: sdk.ServerConnection,
  ) {}

  private async add(batch: sdk.RowBatch): Promise<void> {
    const s = this.settings;
    const n = batch.ids.length;
    if (batch.vectors.length !== n * this.d) throw new Error(`batch has ${batch.vectors.length} floats for ${n} rows of dimension ${this.d}`);
    const commands: (string | Buffer)[][] = [];
    for (let i = 0; i < n; i++) {
      const attrs: Record<string, number> = {};
      for (const a of sdk.ATTRIBUTES) attrs[a] = batch.attrs[a][i];
      const args: (string | Buffer)[] = ['VADD', KEY, 'FP32', blob(batch.vectors.slice(i * this.d, (i + 1) * this.d)), String(batch.ids[i])];
      if (s.cas) args.push('CAS');
      args.push(s.quantization, 'EF', String(s.ef_construction), 'SETATTR', JSON.stringify(attrs), 'M', String(s.M));
      commands.push(args);
    }
    // One share per connection; a connection pipelines its share (the client writes every
    // command without waiting for the replies before it).
    const shares = Math.min(s.ingest_connections, n);
    await Promise.all(
      Array.from({ length: shares }, (_, c) =>
        this.pool.execute((client) => Promise.all(commands.filter((_, i) => i % shares === c).map((args) => client.sendCommand(args)))),
      ),
    );
  }

  async ingest(batch: sdk.RowBatch): Promise<void> {
    await this.add(batch);
  }

  /** Nothing to do: VADD links each element into the HNSW graph as it arrives. */
  async buildIndex(): Promise<void> {}

  async setKnobs(knobs: sdk.Knobs): Promise<void> {
    this.knobs = parseKnobs(knobs);
  }

  async search(request: sdk.SearchRequest): Promise<number[]> {
    if (request.vector.length !== this.d) throw new Error(`query vector has ${request.vector.length} dimensions, the set ${this.d}`);
    const reply = (await this.pool.sendCommand(vsimArgs(request, this.knobs))) as unknown as (string | Buffer)[];
    return reply.map((x) => Number(String(x)));
  }

  /** The load generator's worker threads each open their own connections (load-client.ts). */
  loadClient(): sdk.LoadClientSpec {
    if (!this.connection) throw new Error('redis: no server connection to give the load client');
    const options: RedisLoadOptions = { connection: this.connection, d: this.d };
    return { module: sdk.besideSource(import.meta.url, 'load-client.ts'), options };
  }

  /** Bytes Redis holds for the vector set, in memory (MEMORY USAGE with every element sampled). */
  strategy(request: sdk.SearchRequest): sdk.Strategy {
    return sdk.declaredStrategy(request, 'graph walk', 'graph walk + filter');
  }

  async diskBytes(): Promise<number> {
    return Number(await this.pool.sendCommand(['MEMORY', 'USAGE', KEY, 'SAMPLES', '0']));
  }

  async insert(batch: sdk.RowBatch): Promise<void> {
    await this.add(batch);
  }

  /** VADD on an existing element updates its vector and attributes. */
  async upsert(batch: sdk.RowBatch): Promise<void> {
    await this.add(batch);
  }

  async delete(ids: Int32Array): Promise<void> {
    await Promise.all(Array.from(ids, (id) => this.pool.sendCommand(['VREM', KEY, String(id)])));
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

async function poolFor(ctx: sdk.OpenContext<Settings>): Promise<Pool> {
  const server = ctx.server;
  if (!server) throw new Error('redis: no server connection in the open context (the runner starts the server)');
  const size = Math.max(ctx.settings.ingest_connections, ctx.maxConcurrency, 1);
  const pool = createClientPool(clientOptions(server), { minimum: 1, maximum: size, acquireTimeout: 600_000 }) as unknown as Pool;
  pool.on('error', (e: Error) => ctx.log(`connection error: ${e.message}`));
  await pool.connect();
  return pool;
}

/** Why this dataset's metric cannot be served (vector sets rank by cosine only), or null. */
function metricProblem(dataset: { name: string; metric: sdk.Metric }): string | null {
  return dataset.metric === 'l2'
    ? `Redis vector sets rank by cosine similarity only and ${dataset.name} is an l2 dataset: leave this participant out of --participants for it`
    : null;
}

const participant: sdk.Participant<Settings> = {
  engine: 'Redis vector sets',
  async engineVersion() {
    if (versionCache) return versionCache;
    // No server yet: the built binary says its version ("Redis server v=8.2.1 sha=...").
    const out = spawnSync(redisServerPath(), ['--version'], { encoding: 'utf8' }).stdout ?? '';
    const v = /v=(\S+)/.exec(out)?.[1];
    return v ? `Redis ${v} (vector sets; the built redis-server's --version)` : 'Redis (no server running to ask)';
  },
  settingsSchema,
  knobs: KNOBS,
  filters: sdk.EVERY_FILTER,
  filterStrategy:
    "VSIM FILTER over each element's JSON attributes, evaluated during the HNSW walk (the walk goes on until COUNT matches or FILTER-EF candidates were examined)",
  concurrentSearch: true,
  server: { provision: 'provision.sh', start: startRedis, remote },
  // Asked before any work by the runner; open asks again for the commands that do not (churn).
  checkDataset: (_settings, dataset) => metricProblem(dataset),
  async open(ctx) {
    const problem = metricProblem(ctx.dataset);
    if (problem) throw new sdk.UserError(problem);
    const pool = await poolFor(ctx);
    await pool.sendCommand(['DEL', KEY]);
    versionCache = await readVersion(pool);
    return new RedisSession(pool, ctx.settings, ctx.dataset.d, ctx.server);
  },
  async reopen(ctx) {
    const pool = await poolFor(ctx);
    const card = Number(await pool.sendCommand(['VCARD', KEY]));
    if (!(card > 0)) throw new Error(`redis: the restarted server has no vector set ${KEY} (VCARD ${card})`);
    versionCache = await readVersion(pool);
    return new RedisSession(pool, ctx.settings, ctx.dataset.d, ctx.server);
  },
};

export default participant;
