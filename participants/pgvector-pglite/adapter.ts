// pgvector in PGlite: PostgreSQL compiled to WASM, run in this process, with the pgvector
// extension's HNSW index. Rows go in with binary COPY, the index is built after ingest, and
// each search is one Bind/Execute/Sync round trip on a named prepared statement per
// (k, filter shape), with the vector and the filter values bound in binary.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { z } from 'zod';
import * as sdk from '../../src/sdk/index.ts';
import * as pgsql from '../_shared/postgres-sql.ts';

/** Rows' text as tsvectors, for the keyword arm (docs/method.md §8), beside the vector table so the
 * binary COPY of the vectors is unchanged; only datasets with text have it. */
const TEXT_TABLE = `${pgsql.TABLE}_text`;

const settingsSchema = sdk
  .settingsObject({
    ...pgsql.pgvectorGraphSettings,
    /** 'disk': the data directory lives in workDir (Node's file system under the WASM
     * PostgreSQL); 'memory': Emscripten's in-memory file system. */
    storage: z.enum(['disk', 'memory']).default('disk'),
    /** maintenance_work_mem for the HNSW build (MB): the whole graph must fit or the build
     * slows down (pgvector prints a notice, logged). 'auto': rows x (4 d + 600 B) x 1.25 (a
     * 128-d row took ~1,080 B of graph at m = 16), clamped to 64..1536 (WASM32 caps PGlite's
     * memory at 2 GB). */
    maintenance_work_mem_mb: z.union([z.literal('auto'), z.number().int().min(16).max(1536)]).default('auto'),
    /** Plans of filtered statements: 'custom' plans every execution with the actual filter
     * values (the planner sees the selectivity and can pick the exact path); 'generic' plans
     * once per statement. Unfiltered statements always use their one generic plan: nothing in
     * them changes the plan and planning costs ~0.5 ms in WASM. */
    filtered_plans: z.enum(['custom', 'generic']).default('custom'),
    /** Whether the planner may answer a filtered query with a sequential scan + sort. With
     * filter_indexes off and this off, filtered queries can only take the HNSW path (used to
     * show the post-filter short results; not a benchmark setting). */
    filtered_seqscan: z.boolean().default(true),
  })
  .refine(...pgsql.pgvectorGraphRule);

type Settings = z.infer<typeof settingsSchema>;

const ITERATIVE = ['off', 'relaxed_order', 'strict_order'] as const;
const KNOB_DEFAULTS = { ef_search: 40, iterative_scan: 'off', max_scan_tuples: 20000, fetch_factor: 1 } as const;

interface KnobState {
  /** A number: hnsw.ef_search. 'exact': the statement bypasses the HNSW index (exact path). */
  ef_search: number | 'exact';
  iterative_scan: (typeof ITERATIVE)[number];
  max_scan_tuples: number;
  fetch_factor: number;
}

const KNOBS = {
  ef_search: sdk.knobWith<number | string>(
    (v) => v === 'exact' || (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 1000),
    `an integer 1..1000 (pgvector's range) or "exact"`,
  ),
  iterative_scan: sdk.choiceKnob(ITERATIVE),
  max_scan_tuples: sdk.intKnob(1),
  fetch_factor: sdk.knobWith<number>((v) => typeof v === 'number' && v >= 1 && v <= 100, 'a number 1..100'),
};

/** The knobs with the defaults where a point sets none (checked by the harness against KNOBS). */
function parseKnobs(knobs: sdk.Knobs): KnobState {
  return { ...KNOB_DEFAULTS, ...knobs } as KnobState;
}

// ---- the PostgreSQL wire protocol, for the search path ----
// PGlite's query() sends Parse + Describe + Bind + Describe + Execute + Sync as six calls into
// WASM and binds everything as text; a search here is one call with a named statement.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

class Wire {
  private chunks: Uint8Array[] = [];
  private size = 0;

  private push(b: Uint8Array): void {
    this.chunks.push(b);
    this.size += b.length;
  }
  private int16(v: number): void {
    const b = new Uint8Array(2);
    new DataView(b.buffer).setInt16(0, v);
    this.push(b);
  }
  private int32(v: number): void {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setInt32(0, v);
    this.push(b);
  }
  private cstring(s: string): void {
    this.push(encoder.encode(s));
    this.push(new Uint8Array(1));
  }
  /** Starts a message: its length is patched in at finish. */
  private message(type: string, body: () => void): void {
    const head = new Uint8Array(5);
    head[0] = type.charCodeAt(0);
    this.push(head);
    const before = this.size;
    body();
    new DataView(head.buffer).setInt32(1, 4 + this.size - before);
  }

  parse(name: string, text: string, paramTypes: number[]): this {
    this.message('P', () => {
      this.cstring(name);
      this.cstring(text);
      this.int16(paramTypes.length);
      for (const t of paramTypes) this.int32(t);
    });
    return this;
  }
  /** Binds every parameter and the result in binary format. */
  bind(statement: string, params: Uint8Array[]): this {
    this.message('B', () => {
      this.cstring('');
      this.cstring(statement);
      this.int16(1);
      this.int16(1);
      this.int16(params.length);
      for (const p of params) {
        this.int32(p.length);
        this.push(p);
      }
      this.int16(1);
      this.int16(1);
    });
    return this;
  }
  execute(): this {
    this.message('E', () => {
      this.cstring('');
      this.int32(0);
    });
    return this;
  }
  sync(): this {
    this.message('S', () => {});
    return this;
  }
  bytes(): Uint8Array {
    const out = new Uint8Array(this.size);
    let o = 0;
    for (const c of this.chunks) {
      out.set(c, o);
      o += c.length;
    }
    return out;
  }
}

/**
 * The message of an unfiltered search (Bind with the vector in binary, Execute, Sync), built once
 * per statement: each query writes its vector into it in place. A message built per query (a
 * dozen small buffers, the statement text and its key) cost the participant a measurable share
 * of a search at small ef (bench:overhead, docs/method.md, "The binding's share").
 */
class UnfilteredSearch {
  private readonly message: Uint8Array;
  private readonly view: DataView;
  /** Where the vector's floats start: after 'B', the length, the unnamed portal, the statement's
   * name, the format codes, the parameter count, the value's length, and pgvector's dimension
   * and unused int16s. */
  private readonly floatsAt: number;

  constructor(statement: string, d: number) {
    const vector = new Uint8Array(4 + 4 * d);
    new DataView(vector.buffer).setInt16(0, d);
    this.message = new Wire().bind(statement, [vector]).execute().sync().bytes();
    this.view = new DataView(this.message.buffer);
    this.floatsAt = 5 + 1 + encoder.encode(statement).length + 1 + 2 + 2 + 2 + 4 + 4;
  }

  /** The message for this vector (valid until the next call: use it at once). */
  with(vector: Float32Array): Uint8Array {
    for (let i = 0; i < vector.length; i++) this.view.setFloat32(this.floatsAt + 4 * i, vector[i]);
    return this.message;
  }
}

function int4Binary(v: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setInt32(0, v);
  return b;
}

/** Reads a backend response: the first int4 column of every DataRow; throws on ErrorResponse. */
function readIds(resp: Uint8Array, k: number): Int32Array {
  const dv = new DataView(resp.buffer, resp.byteOffset, resp.byteLength);
  const ids = new Int32Array(k);
  let n = 0;
  let o = 0;
  while (o + 5 <= resp.length) {
    const type = resp[o];
    const len = dv.getInt32(o + 1);
    if (type === 0x44 /* D */) {
      // int16 column count, int32 value length, then the int4 value
      if (n < k) ids[n++] = dv.getInt32(o + 11);
    } else if (type === 0x45 /* E */) {
      throw new Error(`PostgreSQL: ${errorText(resp.subarray(o + 5, o + 1 + len))}`);
    }
    o += 1 + len;
  }
  return ids.subarray(0, n);
}

function errorText(body: Uint8Array): string {
  const fields: Record<string, string> = {};
  let o = 0;
  while (o < body.length && body[o] !== 0) {
    const code = String.fromCharCode(body[o]);
    const end = body.indexOf(0, o + 1);
    fields[code] = decoder.decode(body.subarray(o + 1, end));
    o = end + 1;
  }
  return [fields.M ?? 'unknown error', fields.D, fields.H].filter(Boolean).join('; ');
}

// ---- the session ----

function autoMaintenanceMb(rows: number, d: number, m: number): number {
  const bytes = rows * (4 * d + 600 + 16 * Math.max(0, m - 16)) * 1.25;
  return Math.min(1536, Math.max(64, Math.ceil(bytes / 2 ** 20)));
}

interface Prepared {
  name: string;
  text: string;
  filterParams: number;
}

let lastOpened: PGlite | null = null;
let versionCache: string | null = null;

async function readVersion(db: PGlite): Promise<string> {
  const v = (await db.query<{ v: string }>('SELECT version() AS v')).rows[0].v;
  const ext = (await db.query<{ v: string }>("SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'")).rows[0]?.v ?? 'not installed';
  const m = /PostgreSQL (\S+) \(PGlite (\S+)\)/.exec(v);
  return m ? `PGlite ${m[2]} (PostgreSQL ${m[1]}, pgvector ${ext})` : `${v} (pgvector ${ext})`;
}

/**
 * The database as the session uses it, with a count of its calls under way: each method that
 * returns a promise counts until it settles. An unfiltered search with nothing under way runs
 * its messages synchronously (execProtocolRawSync), so nothing can come between them, and skips
 * the query mutex (about 5 us a search: the adapter read 0.95 of a plain loop's speed at ef 10
 * with it, 0.98 without, timed query by query in one process by bench:overhead); with a write or
 * anything else under way (a mixed churn step) it queues on the mutex as before.
 */
function countingCalls(db: PGlite): { db: PGlite; idle: () => boolean } {
  let underWay = 0;
  const counted = new Proxy(db, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const out = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (!(out instanceof Promise)) return out;
        underWay++;
        return out.finally(() => underWay--);
      };
    },
  });
  return { db: counted, idle: () => underWay === 0 };
}

class PgliteSession implements sdk.EngineSession {
  private readonly statements = new Map<string, Prepared>();
  /** Unfiltered searches by k, for the knobs in effect (cleared when they change). */
  private readonly unfiltered = new Map<number, UnfilteredSearch>();
  private knobs: KnobState = { ...KNOB_DEFAULTS };
  private planMode: 'unfiltered' | 'filtered-custom' | 'filtered-generic' | null = null;
  private stagingReady = false;
  /** Rows ingested, to size maintenance_work_mem. */
  private rows = 0;

  /** Every call but the idle unfiltered search goes through `db`, which counts them. */
  private readonly db: PGlite;
  private readonly idle: () => boolean;

  constructor(
    private readonly raw: PGlite,
    calls: ReturnType<typeof countingCalls>,
    private readonly settings: Settings,
    private readonly d: number,
    private readonly metric: sdk.Metric,
    private readonly vectorOid: number,
    private readonly log: (m: string) => void,
  ) {
    this.db = calls.db;
    this.idle = calls.idle;
  }

  async ingest(batch: sdk.RowBatch): Promise<void> {
    await this.copyInto(pgsql.TABLE, batch);
    await this.addText(batch, false);
    this.rows += batch.ids.length;
  }

  /** Set on datasets with text: PostgreSQL full-text search over TEXT_TABLE. */
  keywordSearch?: sdk.EngineSession['keywordSearch'];
  private fullText = false;

  async enableFullText(create: boolean): Promise<void> {
    if (create) await this.db.exec(`CREATE TABLE ${TEXT_TABLE} (id int4 PRIMARY KEY, tsv tsvector NOT NULL)`);
    this.fullText = true;
    this.keywordSearch = (text, k, filter) => this.searchText(text, k, filter);
  }

  private async addText(batch: sdk.RowBatch, upsert: boolean): Promise<void> {
    if (!this.fullText || batch.ids.length === 0) return;
    const texts = batch.text ?? new Array<string>(batch.ids.length).fill('');
    await this.db.query(
      `INSERT INTO ${TEXT_TABLE} (id, tsv) SELECT i, to_tsvector('english', t) FROM unnest($1::int4[], $2::text[]) AS u(i, t)${upsert ? ' ON CONFLICT (id) DO UPDATE SET tsv = EXCLUDED.tsv' : ''}`,
      [Array.from(batch.ids), texts],
    );
  }

  /** The query's lexemes OR-ed (plainto_tsquery ANDs them, which would leave most synopsis-
   * length queries with no match), ranked by ts_rank: not BM25, there is no IDF. */
  private async searchText(text: string, k: number, filter: sdk.FilterExpr | null): Promise<Int32Array> {
    const where = pgsql.filterToSql(filter, 3);
    const r = await this.db.query<{ id: number }>(
      `SELECT id FROM ${TEXT_TABLE}${filter ? ` JOIN ${pgsql.TABLE} USING (id)` : ''}, (SELECT replace(plainto_tsquery('english', $1)::text, '&', '|')::tsquery AS q) AS query ` +
        `WHERE tsv @@ q${where.sql ? ` AND ${where.sql}` : ''} ORDER BY ts_rank(tsv, q) DESC, id LIMIT $2`,
      [text, k, ...where.params],
      { onNotice: () => {} }, // a query of stop words only draws a notice and matches nothing
    );
    return Int32Array.from(r.rows, (x) => x.id);
  }

  private async copyInto(table: string, batch: sdk.RowBatch): Promise<void> {
    if (batch.ids.length === 0) return;
    const blob = new Blob([pgsql.copyBinary(batch, this.d)]);
    await this.db.query(`COPY ${table} (${pgsql.COLUMNS.join(', ')}) FROM '/dev/blob' WITH (FORMAT binary)`, [], { blob });
  }

  async buildIndex(): Promise<void> {
    const s = this.settings;
    const notices: string[] = [];
    const mwm = s.maintenance_work_mem_mb === 'auto' ? autoMaintenanceMb(this.rows, this.d, s.m) : s.maintenance_work_mem_mb;
    await this.db.exec(`SET maintenance_work_mem = '${mwm}MB'`);
    await this.db.query(
      `CREATE INDEX ${pgsql.HNSW_INDEX} ON ${pgsql.TABLE} USING hnsw (embedding ${pgsql.hnswOpclass(this.metric)}) WITH (m = ${s.m}, ef_construction = ${s.ef_construction})`,
      [],
      {
        onNotice: (n) => notices.push(n.message ?? String(n)),
      },
    );
    for (const n of notices) this.log(`HNSW build notice: ${n}`);
    if (notices.some((n) => /maintenance_work_mem/.test(n))) {
      this.log(`the HNSW graph did not fit in maintenance_work_mem = ${mwm}MB: the build went slow; raise index.maintenance_work_mem_mb`);
    }
    if (s.filter_indexes) {
      for (const a of sdk.ATTRIBUTES) await this.db.exec(`CREATE INDEX ${pgsql.TABLE}_${a}_idx ON ${pgsql.TABLE} (${a})`);
    }
    await this.db.exec(`ANALYZE ${pgsql.TABLE}`);
    if (this.fullText) await this.db.exec(`CREATE INDEX ${TEXT_TABLE}_gin ON ${TEXT_TABLE} USING gin (tsv); ANALYZE ${TEXT_TABLE}`);
    await this.db.exec('CHECKPOINT');
  }

  async setKnobs(knobs: sdk.Knobs): Promise<void> {
    const k = parseKnobs(knobs);
    await this.db.exec(
      `SET hnsw.ef_search = ${k.ef_search === 'exact' ? KNOB_DEFAULTS.ef_search : k.ef_search}; SET hnsw.iterative_scan = ${k.iterative_scan}; SET hnsw.max_scan_tuples = ${k.max_scan_tuples}`,
    );
    this.knobs = k;
    this.unfiltered.clear();
  }

  /** The named statement for (k, filter shape, ordering), parsed once. */
  private async statement(request: sdk.SearchRequest): Promise<{ prep: Prepared; filterValues: number[] }> {
    const st = pgsql.searchStatement(this.metric, request.k, request.filter, {
      exact: this.knobs.ef_search === 'exact',
      resort: this.knobs.iterative_scan === 'relaxed_order',
      fetch: Math.ceil(request.k * this.knobs.fetch_factor),
    });
    let prep = this.statements.get(st.key);
    if (!prep) {
      prep = { name: `vb_search_${this.statements.size}`, text: st.text, filterParams: st.params.length };
      const types = [this.vectorOid, ...st.params.map(() => 23 /* int4 */)];
      const resp = await this.db.runExclusive(() => this.db.execProtocolRaw(new Wire().parse(prep!.name, st.text, types).sync().bytes(), { syncToFs: false }));
      readIds(resp, 0);
      this.statements.set(st.key, prep);
    }
    return { prep, filterValues: st.params };
  }

  /** Unfiltered statements: one generic plan, sequential scans off so the plan is the HNSW
   * scan the settings promise (with a high ef_search the planner otherwise prices a seq scan +
   * sort below the index and silently answers exactly). Filtered statements: the planner's
   * free choice, re-planned per execution with the actual values (filtered_plans = custom). */
  private async usePlanMode(filter: sdk.FilterExpr | null): Promise<void> {
    const mode = filter === null ? 'unfiltered' : this.settings.filtered_plans === 'custom' ? 'filtered-custom' : 'filtered-generic';
    if (mode === this.planMode) return;
    const cache = mode === 'filtered-custom' ? 'force_custom_plan' : 'force_generic_plan';
    const seqscan = mode !== 'unfiltered' && this.settings.filtered_seqscan;
    await this.db.exec(`SET plan_cache_mode = ${cache}; SET enable_seqscan = ${seqscan ? 'on' : 'off'}`);
    this.planMode = mode;
  }

  async search(request: sdk.SearchRequest): Promise<Int32Array> {
    if (request.vector.length !== this.d) throw new Error(`query vector has ${request.vector.length} dimensions, the table ${this.d}`);
    if (this.planMode !== 'unfiltered' || request.filter !== null) await this.usePlanMode(request.filter);
    if (request.filter === null) {
      let search = this.unfiltered.get(request.k);
      if (!search) {
        search = new UnfilteredSearch((await this.statement(request)).prep.name, this.d);
        this.unfiltered.set(request.k, search);
      }
      const message = search;
      if (this.idle()) return readIds(this.raw.execProtocolRawSync(message.with(request.vector)), request.k);
      // The vector is written inside the exclusive section: a search waiting for it must not
      // overwrite the message of the one under way.
      const resp = await this.db.runExclusive(() => this.db.execProtocolRaw(message.with(request.vector), { syncToFs: false }));
      return readIds(resp, request.k);
    }
    const { prep, filterValues } = await this.statement(request);
    const msg = new Wire()
      .bind(prep.name, [pgsql.vectorBinary(request.vector), ...filterValues.map(int4Binary)])
      .execute()
      .sync()
      .bytes();
    const resp = await this.db.runExclusive(() => this.db.execProtocolRaw(msg, { syncToFs: false }));
    return readIds(resp, request.k);
  }

  async explain(request: sdk.SearchRequest): Promise<string> {
    await this.usePlanMode(request.filter);
    const { prep, filterValues } = await this.statement(request);
    const args = [`'${pgsql.vectorLiteral(request.vector)}'`, ...filterValues.map(String)].join(', ');
    const rows = (await this.db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (FORMAT TEXT) EXECUTE ${prep.name}(${args})`)).rows;
    // The query vector's literal would fill the plan; keep its length only.
    const plan = rows.map((r) => r['QUERY PLAN'].replace(/'\[[^\]]{200,}\]'/g, `'[${request.vector.length} floats]'`)).join('\n');
    const knobs = `knobs: hnsw.ef_search=${this.knobs.ef_search} hnsw.iterative_scan=${this.knobs.iterative_scan} hnsw.max_scan_tuples=${this.knobs.max_scan_tuples} fetch_factor=${this.knobs.fetch_factor} plans=${this.planMode}`;
    return `${pgsql.describePath(plan)}\n${knobs}\nstatement: ${prep.text}\n${plan}`;
  }

  checkPlan(plan: string, request: sdk.SearchRequest): void {
    pgsql.checkPlanText(plan, {
      filter: request.filter,
      k: request.k,
      allowFilteredSeqScan: !this.settings.filter_indexes || this.knobs.ef_search === 'exact',
    });
  }

  strategy(request: sdk.SearchRequest, plan: string | null): sdk.Strategy {
    return plan === null ? { label: 'unknown (no plan)', observed: false } : pgsql.planStrategy(plan, request.filter !== null, this.knobs.iterative_scan);
  }

  async diskBytes(): Promise<number> {
    const text = this.fullText ? ` + pg_total_relation_size('${TEXT_TABLE}')` : '';
    const r = await this.db.query<{ b: string | number }>(`SELECT pg_total_relation_size('${pgsql.TABLE}')${text} AS b`);
    return Number(r.rows[0].b);
  }

  async insert(batch: sdk.RowBatch): Promise<void> {
    await this.copyInto(pgsql.TABLE, batch);
    await this.addText(batch, false);
  }

  async upsert(batch: sdk.RowBatch): Promise<void> {
    if (batch.ids.length === 0) return;
    if (!this.stagingReady) {
      await this.db.exec(`CREATE TEMP TABLE ${pgsql.TABLE}_staging (LIKE ${pgsql.TABLE})`);
      this.stagingReady = true;
    }
    await this.copyInto(`${pgsql.TABLE}_staging`, batch);
    const set = pgsql.COLUMNS.filter((c) => c !== 'id')
      .map((c) => `${c} = EXCLUDED.${c}`)
      .join(', ');
    await this.db.exec(
      `INSERT INTO ${pgsql.TABLE} (${pgsql.COLUMNS.join(', ')}) SELECT ${pgsql.COLUMNS.join(', ')} FROM ${pgsql.TABLE}_staging ON CONFLICT (id) DO UPDATE SET ${set}; TRUNCATE ${pgsql.TABLE}_staging`,
    );
    await this.addText(batch, true);
  }

  async delete(ids: Int32Array): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query(`DELETE FROM ${pgsql.TABLE} WHERE id = ANY($1::int4[])`, [Array.from(ids)]);
    if (this.fullText) await this.db.query(`DELETE FROM ${TEXT_TABLE} WHERE id = ANY($1::int4[])`, [Array.from(ids)]);
  }

  async compact(): Promise<void> {
    // PGlite runs no background workers (max_worker_processes = 0): nothing vacuums or analyzes
    // on its own, so the statistics the planner picks paths by are refreshed here too.
    await this.db.exec(`VACUUM (ANALYZE) ${pgsql.TABLE}`);
  }

  async close(): Promise<void> {
    if (lastOpened === this.db) {
      versionCache ??= await readVersion(this.db);
      lastOpened = null;
    }
    await this.db.close();
  }
}

/** Starts PGlite on the run's data directory: a fresh one (open) or the one a closed session
 * left there (reopen, for the cold start: no ingest, no index build). */
async function connect(ctx: sdk.OpenContext<Settings>, existing: boolean): Promise<sdk.EngineSession> {
  const s = ctx.settings;
  const d = ctx.dataset.d;
  // pgvector: the vector type holds up to 16,000 dimensions, its HNSW index up to 2,000.
  if (!Number.isInteger(d) || d < 1 || d > 2000) throw new Error(`pgvector's HNSW index takes vectors of at most 2,000 dimensions; the dataset has ${d}`);
  let dataDir: string | undefined;
  if (s.storage === 'disk') {
    dataDir = join(ctx.workDir, 'pgdata');
    mkdirSync(dataDir, { recursive: true });
  } else if (existing) {
    throw new Error('pgvector-pglite: index.storage is "memory": a closed session leaves no data to reopen');
  }
  const db = await PGlite.create({ dataDir, extensions: { vector } });
  try {
    if (existing) {
      const found = (await db.query<{ t: string | null }>(`SELECT to_regclass('${pgsql.TABLE}')::text AS t`)).rows[0].t;
      if (found === null) throw new Error(`pgvector-pglite: no ${pgsql.TABLE} table in ${dataDir}; nothing to reopen`);
    } else {
      await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
      await db.exec(
        `CREATE TABLE ${pgsql.TABLE} (id int4 PRIMARY KEY, embedding vector(${d}) NOT NULL, ${sdk.ATTRIBUTES.map((a) => `${a} int4 NOT NULL`).join(', ')})`,
      );
    }
    const oid = (await db.query<{ oid: number }>("SELECT 'vector'::regtype::oid::int4 AS oid")).rows[0].oid;
    // Whatever else asks this database (the engine's version) counts as a call under way too.
    const calls = countingCalls(db);
    lastOpened = calls.db;
    const session = new PgliteSession(db, calls, s, d, ctx.dataset.metric, oid, ctx.log);
    if (ctx.dataset.hasText) {
      const hasTable = existing && (await db.query<{ t: string | null }>(`SELECT to_regclass('${TEXT_TABLE}')::text AS t`)).rows[0].t !== null;
      if (!existing || hasTable) await session.enableFullText(!existing);
    }
    return session;
  } catch (e) {
    await db.close();
    throw e;
  }
}

const participant: sdk.Participant<Settings> = {
  engine: 'pgvector (PGlite)',
  async engineVersion() {
    if (versionCache) return versionCache;
    if (lastOpened && !lastOpened.closed) return (versionCache = await readVersion(lastOpened));
    // No session open: start a throwaway in-memory instance to ask the engine itself.
    const db = await PGlite.create({ extensions: { vector } });
    try {
      await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
      return (versionCache = await readVersion(db));
    } finally {
      await db.close();
    }
  },
  settingsSchema,
  knobs: KNOBS,
  filters: sdk.EVERY_FILTER,
  filterStrategy:
    'SQL WHERE on the same statement; the planner picks per query between the HNSW index scan with the filter applied to its candidates (hnsw.iterative_scan keeps walking when too few pass) and an exact scan of the matches through btree indexes',
  concurrentSearch: false,
  // A second PGlite cannot open the live data directory; a copy made after buildIndex (which
  // ends with a CHECKPOINT) opens and answers as the session does (README, "Threads").
  reopenInThreads: 'copy',
  keywordScoring:
    "PostgreSQL full text (to_tsvector('english'), GIN index, the query's lexemes OR-ed) ranked by ts_rank: not BM25, no IDF (a rare term weighs no more than a common one)",
  async open(ctx: sdk.OpenContext<Settings>): Promise<sdk.EngineSession> {
    return connect(ctx, false);
  },
  async reopen(ctx: sdk.OpenContext<Settings>): Promise<sdk.EngineSession> {
    return connect(ctx, true);
  },
};

export default participant;
