// pgvector on a real PostgreSQL server (Debian's PostgreSQL 15 + pgvector 0.8.0 built from
// trixie's source package, or Debian 13's packaged PostgreSQL 17 + pgvector; provision.sh).
// The runner starts a private cluster for the run (initdb into its data directory, postgres on
// a free 127.0.0.1 port, stopped by PID). Rows go in with binary COPY, the HNSW index is built
// after ingest, searches are named prepared statements on a pool sized to the concurrency. The
// SQL (filters, operators, statements, binary encodings, plan checks) is shared with the PGlite
// participant: ../_shared/postgres-sql.ts.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { z } from 'zod';
import * as sdk from '../../src/sdk/index.ts';
import * as pgsql from '../_shared/postgres-sql.ts';

const PROVISION = 'participants/pgvector/provision.sh';

const settingsSchema = sdk
  .settingsObject({
    ...pgsql.pgvectorGraphSettings,
    /** Plans of filtered statements: 'custom' plans each execution with its filter values (the
     * planner sees the selectivity); 'generic' plans once per statement. */
    filtered_plans: z.enum(['custom', 'generic']).default('custom'),
    /** shared_buffers (MB): PostgreSQL's own page cache. */
    shared_buffers_mb: z.number().int().min(16).default(1024),
    /** maintenance_work_mem (MB) for the HNSW build: the graph must fit or the build slows. */
    maintenance_work_mem_mb: z.number().int().min(64).default(1024),
    /** Extra processes for a parallel HNSW build (pgvector >= 0.7): 1 uses both cores. */
    parallel_build_workers: sdk.intSetting(0, 64, 1),
  })
  .refine(...pgsql.pgvectorGraphRule);

type Settings = z.infer<typeof settingsSchema>;

const ITERATIVE = ['off', 'relaxed_order', 'strict_order'] as const;
const KNOB_DEFAULTS = { ef_search: 40, iterative_scan: 'off', max_scan_tuples: 20000 } as const;

interface KnobState {
  ef_search: number;
  iterative_scan: (typeof ITERATIVE)[number];
  max_scan_tuples: number;
}

const KNOBS = { ef_search: sdk.intKnob(1, 1000, "pgvector's range"), iterative_scan: sdk.choiceKnob(ITERATIVE), max_scan_tuples: sdk.intKnob(1) };

/** The knobs with pgvector's defaults where a point sets none (checked by the harness against
 * KNOBS). Exported for the load generator's client (load-client.ts), which applies the same knobs. */
export function parseKnobs(knobs: sdk.Knobs): KnobState {
  return { ...KNOB_DEFAULTS, ...knobs } as KnobState;
}

// ---- the server ----

/** The newest installed PostgreSQL that has pgvector: its bin directory and major version. */
export function findPostgres(): { bin: string; major: number } {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root)
    ? readdirSync(root)
        .map(Number)
        .filter((v) => Number.isInteger(v))
        .sort((a, b) => b - a)
    : [];
  for (const major of majors) {
    const bin = join(root, String(major), 'bin');
    if (existsSync(join(bin, 'postgres')) && existsSync(`/usr/share/postgresql/${major}/extension/vector.control`)) return { bin, major };
  }
  throw new sdk.SetupNeeded(
    `PostgreSQL with pgvector is not installed (looked in ${root}/*/bin and /usr/share/postgresql/*/extension/vector.control; ${PROVISION} installs it)`,
  );
}

/** Who the server runs as: PostgreSQL refuses root, so as root it runs as `postgres`. */
function serverUser(): { uid: number; gid: number; name: string } | null {
  if (process.getuid?.() !== 0) return null;
  const ids = sdk.userIds('postgres');
  if (!ids) throw new sdk.SetupNeeded(`the postgres system user is missing (the postgresql package creates it; ${PROVISION} installs it)`);
  return { ...ids, name: 'postgres' };
}

function connectionConfig(host: string, port: number, params: sdk.ServerConnection['params'] = {}): pg.ClientConfig {
  const text = (k: string) => (params[k] === undefined ? undefined : String(params[k]));
  return { host, port, user: text('user') ?? 'postgres', database: text('database') ?? 'postgres', password: text('password'), connectionTimeoutMillis: 2000 };
}

/** A PostgreSQL the user runs (vecbench run --connect pgvector=postgres://user:password@host:port/db):
 * the user needs CREATE on the database, and the vector extension created or creatable. */
const remote: sdk.RemoteServer = {
  schemes: ['postgres', 'postgresql'],
  defaultPort: 5432,
  connection(url) {
    const user = decodeURIComponent(url.username) || 'postgres';
    const params: sdk.ServerConnection['params'] = { user, database: decodeURIComponent(url.pathname.replace(/^\//, '')) || user };
    if (url.password) params.password = decodeURIComponent(url.password);
    return sdk.urlConnection(url, 5432, params);
  },
  async check(c) {
    const client = new pg.Client({ ...connectionConfig(c.host, c.port, c.params), connectionTimeoutMillis: 10_000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
    } finally {
      await client.end().catch(() => {});
    }
  },
};

async function startPostgres(ctx: sdk.ServerStartContext<Settings>): Promise<sdk.ServerHandle> {
  const { bin } = findPostgres();
  const user = serverUser();
  const dir = ctx.dataDir;
  if (user) sdk.checkReachable(dir, user);
  // The superuser's password, of this cluster's own: with it in no other local user's hands, none
  // can log in (initdb's trust would let any of them in as superuser, and COPY ... TO PROGRAM runs
  // commands as postgres). Kept beside the data directory, readable by this user only, so a
  // restart of the cluster (cold start, reopen, resume) can log in again; masked when printed.
  const passwordFile = sdk.serverSideFile(dir, 'password');
  let password: string | undefined;
  if (!ctx.existing) {
    mkdirSync(dir, { recursive: true });
    if (user) chownSync(dir, user.uid, user.gid);
    password = randomBytes(24).toString('hex');
    rmSync(passwordFile, { force: true });
    writeFileSync(passwordFile, `${password}\n`, { mode: 0o600, flag: 'wx' });
    // initdb reads it as the server's user: a copy of its own, removed once initdb is done.
    const pwfile = sdk.serverSideFile(dir, 'initdb-pwfile');
    rmSync(pwfile, { force: true });
    writeFileSync(pwfile, `${password}\n`, { mode: 0o600, flag: 'wx' });
    if (user) chownSync(pwfile, user.uid, user.gid);
    try {
      const r = spawnSync(
        join(bin, 'initdb'),
        ['-D', dir, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${pwfile}`, '-E', 'UTF8', '--locale=C', '--no-instructions'],
        { uid: user?.uid, gid: user?.gid, encoding: 'utf8' },
      );
      if (r.status !== 0) throw new Error(`initdb failed: ${(r.stderr || r.stdout || String(r.error)).trim().split('\n').slice(-3).join(' | ')}`);
    } finally {
      rmSync(pwfile, { force: true });
    }
  } else if (existsSync(passwordFile)) {
    password = readFileSync(passwordFile, 'utf8').trim();
  }
  // (An existing cluster without the file was made before clusters had passwords: trust.)
  if (password !== undefined) sdk.registerSecret(password);
  const s = ctx.settings;
  const conf: Record<string, string | number> = {
    listen_addresses: '127.0.0.1',
    port: ctx.port,
    // TCP only: every client connects to 127.0.0.1. A socket in the run's directory failed the
    // start once that path passed the kernel's 107 bytes (a deep --out); none is needed.
    unix_socket_directories: '',
    max_connections: 300,
    shared_buffers: `${s.shared_buffers_mb}MB`,
    maintenance_work_mem: `${s.maintenance_work_mem_mb}MB`,
    max_parallel_maintenance_workers: s.parallel_build_workers,
    // Each query is cheap to plan and run; JIT compilation would add tens of ms to a few of them.
    jit: 'off',
    // No checkpoint in the middle of the load (it would land in the ingest or build time).
    max_wal_size: '8GB',
    checkpoint_timeout: '1h',
    logging_collector: 'off',
  };
  const args = ['-D', dir, ...Object.entries(conf).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  const proc = sdk.spawnServer({
    name: 'postgres',
    command: join(bin, 'postgres'),
    args,
    uid: user?.uid,
    gid: user?.gid,
    dataDir: dir,
    logFile: ctx.logFile,
    // SIGINT is PostgreSQL's fast shutdown: ends sessions, checkpoints, exits (data kept).
    stopSignal: 'SIGINT',
  });
  const params: sdk.ServerConnection['params'] = { user: 'postgres', database: 'postgres' };
  if (password !== undefined) params.password = password;
  const connection = { host: '127.0.0.1', port: ctx.port, dataDir: dir, params };
  return sdk.serverHandle(proc, connection, async () => {
    const c = new pg.Client(connectionConfig('127.0.0.1', ctx.port, params));
    try {
      await c.connect();
      await c.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await c.end().catch(() => {});
    }
  });
}

/**
 * The plan settings of a search statement, as SETs. Unfiltered: sequential scans off, so the plan
 * is the HNSW scan the settings promise (at a high ef_search or k = 1000 the planner otherwise
 * prices a seq scan + sort below the index and silently answers exactly; the plan check would
 * fail the group). Filtered: the planner's free choice between the HNSW scan and an exact scan of
 * the btree matches, planned per execution with the actual values when filtered_plans = custom.
 */
export function planSettings(filtered: boolean, filteredPlans: 'custom' | 'generic'): string[] {
  if (!filtered) return ['SET plan_cache_mode = auto', 'SET enable_seqscan = off'];
  return [`SET plan_cache_mode = ${filteredPlans === 'custom' ? 'force_custom_plan' : 'auto'}`, 'SET enable_seqscan = on'];
}

// ---- the session ----

/** Per-connection state: which knobs and plan mode were SET on it, which statements it has. */
interface ConnState {
  knobsKey: string;
  planMode: string;
}
const connState = new WeakMap<pg.PoolClient, ConnState>();

let versionCache: string | null = null;

async function readVersion(pool: pg.Pool): Promise<string> {
  const v = (await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0].v;
  const ext = (await pool.query<{ v: string }>("SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'")).rows[0]?.v ?? 'not installed';
  return `PostgreSQL ${v.split(' ')[0]}, pgvector ${ext}`;
}

/** What the session hands its load generator's client (load-client.ts). */
export interface PgLoadOptions {
  host: string;
  port: number;
  user: string;
  database: string;
  password?: string;
  metric: sdk.Metric;
  d: number;
  /** settings.filtered_plans: 'custom' plans each filtered execution with its values. */
  filteredPlans: 'custom' | 'generic';
}

class PgvectorSession implements sdk.EngineSession {
  private knobs: KnobState = { ...KNOB_DEFAULTS };
  private knobsKey = '';
  private readonly names = new Map<string, string>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly settings: Settings,
    private readonly d: number,
    private readonly metric: sdk.Metric,
    private readonly log: (m: string) => void,
  ) {
    this.knobsKey = this.keyOf(this.knobs);
  }

  private keyOf(k: KnobState): string {
    return `SET hnsw.ef_search = ${k.ef_search}; SET hnsw.iterative_scan = ${k.iterative_scan}; SET hnsw.max_scan_tuples = ${k.max_scan_tuples}`;
  }

  async ingest(batch: sdk.RowBatch): Promise<void> {
    if (batch.ids.length === 0) return;
    const client = await this.pool.connect();
    try {
      const sink = client.query(copyFrom(`COPY ${pgsql.TABLE} (${pgsql.COLUMNS.join(', ')}) FROM STDIN WITH (FORMAT binary)`));
      await pipeline(Readable.from([Buffer.from(pgsql.copyBinary(batch, this.d).buffer)]), sink);
    } finally {
      client.release();
    }
  }

  async buildIndex(): Promise<void> {
    const s = this.settings;
    const client = await this.pool.connect();
    const notices: string[] = [];
    const onNotice = (n: { message?: string }) => notices.push(n.message ?? String(n));
    client.on('notice', onNotice);
    try {
      await client.query(`SET maintenance_work_mem = '${s.maintenance_work_mem_mb}MB'`);
      await client.query(`SET max_parallel_maintenance_workers = ${s.parallel_build_workers}`);
      await client.query(
        `CREATE INDEX ${pgsql.HNSW_INDEX} ON ${pgsql.TABLE} USING hnsw (embedding ${pgsql.hnswOpclass(this.metric)}) WITH (m = ${s.m}, ef_construction = ${s.ef_construction})`,
      );
      if (s.filter_indexes) for (const a of sdk.ATTRIBUTES) await client.query(`CREATE INDEX ${pgsql.TABLE}_${a}_idx ON ${pgsql.TABLE} (${a})`);
      await client.query(`ANALYZE ${pgsql.TABLE}`);
    } finally {
      client.off('notice', onNotice);
      client.release();
    }
    for (const n of notices) this.log(`HNSW build notice: ${n}`);
    if (notices.some((n) => /maintenance_work_mem/.test(n)))
      this.log(`the HNSW graph did not fit in maintenance_work_mem = ${s.maintenance_work_mem_mb}MB: the build went slow; raise index.maintenance_work_mem_mb`);
  }

  async setKnobs(knobs: sdk.Knobs): Promise<void> {
    this.knobs = parseKnobs(knobs);
    // Applied lazily to each pooled connection before its next statement (SET is per session).
    this.knobsKey = this.keyOf(this.knobs);
  }

  /** The session settings a request's plan needs (planSettings: shared with the load client). */
  private planSetsFor(filter: sdk.FilterExpr | null): string {
    return planSettings(filter !== null, this.settings.filtered_plans).join('; ');
  }

  /** A pooled connection with the current knobs and the request's plan mode SET on it. */
  private async connection(filter: sdk.FilterExpr | null): Promise<pg.PoolClient> {
    const client = await this.pool.connect();
    let st = connState.get(client);
    if (!st) connState.set(client, (st = { knobsKey: '', planMode: '' }));
    const mode = this.planSetsFor(filter);
    const sets: string[] = [];
    if (st.knobsKey !== this.knobsKey) sets.push(this.knobsKey);
    if (st.planMode !== mode) sets.push(mode);
    if (sets.length > 0) {
      try {
        await client.query(sets.join('; '));
      } catch (e) {
        client.release(e as Error);
        throw e;
      }
      st.knobsKey = this.knobsKey;
      st.planMode = mode;
    }
    return client;
  }

  /** The named statement of a request: pg parses it once per connection, then binds only. */
  private statement(request: sdk.SearchRequest): { name: string; text: string; params: number[] } {
    const st = pgsql.searchStatement(this.metric, request.k, request.filter, { resort: this.knobs.iterative_scan === 'relaxed_order' });
    let name = this.names.get(st.key);
    if (!name) this.names.set(st.key, (name = `vb_search_${this.names.size}`));
    return { name, text: st.text, params: st.params };
  }

  async search(request: sdk.SearchRequest): Promise<number[]> {
    if (request.vector.length !== this.d) throw new Error(`query vector has ${request.vector.length} dimensions, the table ${this.d}`);
    const { name, text, params } = this.statement(request);
    const client = await this.connection(request.filter);
    try {
      // The vector goes as a Buffer, which pg binds in binary (pgvector's vector_recv format).
      const r = await client.query<number[]>({ name, text, values: [Buffer.from(pgsql.vectorBinary(request.vector).buffer), ...params], rowMode: 'array' });
      return r.rows.map((row) => row[0]);
    } finally {
      client.release();
    }
  }

  async explain(request: sdk.SearchRequest): Promise<string> {
    const { name, text, params } = this.statement(request);
    const client = await this.connection(request.filter);
    try {
      // Runs it once so the named statement exists on this connection, then explains that very
      // statement (generic or custom plan, as the searches get it).
      await client.query({ name, text, values: [Buffer.from(pgsql.vectorBinary(request.vector).buffer), ...params], rowMode: 'array' });
      const args = [`'${pgsql.vectorLiteral(request.vector)}'::vector`, ...params.map(String)].join(', ');
      const rows = (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (FORMAT TEXT) EXECUTE ${name}(${args})`)).rows;
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      const knobs = `knobs: hnsw.ef_search=${this.knobs.ef_search} hnsw.iterative_scan=${this.knobs.iterative_scan} hnsw.max_scan_tuples=${this.knobs.max_scan_tuples} ${planSettings(
        request.filter !== null,
        this.settings.filtered_plans,
      )
        .map((x) => x.replace(/^SET (\S+) = /, '$1='))
        .join(' ')}`;
      return `${pgsql.describePath(plan)}\n${knobs}\nstatement: ${text}\n${plan}`;
    } finally {
      client.release();
    }
  }

  /** The load generator's worker threads each open their own pool with the same statements. */
  loadClient(): sdk.LoadClientSpec {
    const o = this.pool.options;
    const options: PgLoadOptions = {
      host: String(o.host),
      port: Number(o.port),
      user: String(o.user),
      database: String(o.database),
      password: o.password === undefined ? undefined : String(o.password),
      metric: this.metric,
      d: this.d,
      filteredPlans: this.settings.filtered_plans,
    };
    return { module: sdk.besideSource(import.meta.url, 'load-client.ts'), options };
  }

  checkPlan(plan: string, request: sdk.SearchRequest): void {
    pgsql.checkPlanText(plan, { filter: request.filter, k: request.k, allowFilteredSeqScan: !this.settings.filter_indexes });
  }

  strategy(request: sdk.SearchRequest, plan: string | null): sdk.Strategy {
    return plan === null ? { label: 'unknown (no plan)', observed: false } : pgsql.planStrategy(plan, request.filter !== null, this.knobs.iterative_scan);
  }

  async diskBytes(): Promise<number> {
    const r = await this.pool.query<{ b: string }>(`SELECT pg_total_relation_size('${pgsql.TABLE}') AS b`);
    return Number(r.rows[0].b);
  }

  async insert(batch: sdk.RowBatch): Promise<void> {
    await this.ingest(batch);
  }

  async upsert(batch: sdk.RowBatch): Promise<void> {
    if (batch.ids.length === 0) return;
    const client = await this.pool.connect();
    try {
      await client.query(`CREATE TEMP TABLE IF NOT EXISTS ${pgsql.TABLE}_staging (LIKE ${pgsql.TABLE})`);
      const sink = client.query(copyFrom(`COPY ${pgsql.TABLE}_staging (${pgsql.COLUMNS.join(', ')}) FROM STDIN WITH (FORMAT binary)`));
      await pipeline(Readable.from([Buffer.from(pgsql.copyBinary(batch, this.d).buffer)]), sink);
      const set = pgsql.COLUMNS.filter((c) => c !== 'id')
        .map((c) => `${c} = EXCLUDED.${c}`)
        .join(', ');
      await client.query(
        `INSERT INTO ${pgsql.TABLE} (${pgsql.COLUMNS.join(', ')}) SELECT ${pgsql.COLUMNS.join(', ')} FROM ${pgsql.TABLE}_staging ON CONFLICT (id) DO UPDATE SET ${set}`,
      );
      await client.query(`TRUNCATE ${pgsql.TABLE}_staging`);
    } finally {
      client.release();
    }
  }

  async delete(ids: Int32Array): Promise<void> {
    if (ids.length === 0) return;
    await this.pool.query(`DELETE FROM ${pgsql.TABLE} WHERE id = ANY($1::int4[])`, [Array.from(ids)]);
  }

  async compact(): Promise<void> {
    await this.pool.query(`VACUUM ${pgsql.TABLE}`);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

function poolFor(ctx: sdk.OpenContext<Settings>): pg.Pool {
  const server = ctx.server;
  if (!server)
    throw new Error(`pgvector: no server connection in the open context (the runner starts the server; tests start it with participant.server.start)`);
  // No connect time limit in the pool: under 32 slow filtered queries on 2 cores a new backend
  // can take seconds to start, and a 2 s limit failed queries that were only waiting.
  const pool = new pg.Pool({ ...connectionConfig(server.host, server.port, server.params), connectionTimeoutMillis: 0, max: Math.max(1, ctx.maxConcurrency) });
  // A broken idle connection must not crash the host: the next query reports the error.
  pool.on('error', (e) => ctx.log(`connection error: ${e.message}`));
  return pool;
}

const participant: sdk.Participant<Settings> = {
  engine: 'pgvector (PostgreSQL)',
  async engineVersion() {
    if (versionCache) return versionCache;
    const { bin, major } = findPostgres();
    const v = spawnSync(join(bin, 'postgres'), ['--version'], { encoding: 'utf8' }).stdout.trim();
    return `${v} (pgvector for PostgreSQL ${major}; no server running to ask for the extension's version)`;
  },
  settingsSchema,
  knobs: KNOBS,
  filters: sdk.EVERY_FILTER,
  filterStrategy:
    'SQL WHERE on the same statement; the planner picks per query between the HNSW index scan with the filter applied to its candidates (hnsw.iterative_scan keeps walking when too few pass: off / relaxed_order / strict_order are ladder knobs) and an exact scan of the matches through btree indexes on the filter columns',
  concurrentSearch: true,
  server: { provision: 'provision.sh', start: startPostgres, runsAs: serverUser, remote },
  async open(ctx) {
    const d = ctx.dataset.d;
    if (!Number.isInteger(d) || d < 1 || d > 16000) throw new Error(`pgvector stores at most 16,000 dimensions; the dataset has ${d}`);
    const pool = poolFor(ctx);
    await pool.query('CREATE EXTENSION IF NOT EXISTS vector');
    await pool.query(`DROP TABLE IF EXISTS ${pgsql.TABLE}`);
    await pool.query(
      `CREATE TABLE ${pgsql.TABLE} (id int4 PRIMARY KEY, embedding vector(${d}) NOT NULL, ${sdk.ATTRIBUTES.map((a) => `${a} int4 NOT NULL`).join(', ')})`,
    );
    versionCache = await readVersion(pool);
    return new PgvectorSession(pool, ctx.settings, d, ctx.dataset.metric, ctx.log);
  },
  async reopen(ctx) {
    const pool = poolFor(ctx);
    const n = Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM pg_class WHERE relname = '${pgsql.HNSW_INDEX}'`)).rows[0].n);
    if (n !== 1) throw new Error(`pgvector: the reopened cluster has no index ${pgsql.HNSW_INDEX}`);
    versionCache = await readVersion(pool);
    return new PgvectorSession(pool, ctx.settings, ctx.dataset.d, ctx.dataset.metric, ctx.log);
  },
};

export default participant;
