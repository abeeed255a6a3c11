// libSQL (npm libsql: the embedded SQLite fork with a DiskANN vector index, better-sqlite3's API)
// as a vecbench participant. One database file in the run's workDir holds a table of rows (id,
// the six attributes, an F32_BLOB(d) vector); buildIndex creates the DiskANN index
// (libsql_vector_idx) over it, and B-tree indexes on the attributes for the exact path.
// Searches are synchronous native calls: vector_top_k() for the index; a filter is a WHERE over
// vector_top_k's candidates joined back to the table (post-filter); search_l "exact" orders the
// (filtered) rows by vector distance instead, using no vector index. libSQL reads the beam width
// search_l from the index's stored parameters on every query and has no statement to change it,
// so setKnobs rewrites that one parameter in libsql_vector_meta_shadow (see the README).
// Writes are SQL statements that update the index before they return. The database file is the
// engine's own persistence: reopen opens it again without ingest (cold start, a resumed run).
import { existsSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { z } from 'zod';
import type LibsqlTypes from 'libsql';
import * as sdk from '../../src/sdk/index.ts';

const require = createRequire(import.meta.url);
// A CommonJS package (better-sqlite3's API): its constructor is module.exports.
const Database = require('libsql') as typeof import('libsql');
type Db = InstanceType<typeof Database>;
type Statement = LibsqlTypes.Statement;

const COMPRESS = ['none', 'float1bit', 'float8', 'float16', 'floatb16', 'float32'] as const;

const settingsSchema = sdk.settingsObject({
  /** DiskANN out-degree R (libSQL's max_neighbors; its default is 3 x sqrt(d)). 32 matches the
   * 2 x M = 32 links of layer 0 of the HNSW participants (M = 16). */
  max_neighbors: sdk.intSetting(2, 1024, 32),
  /** Candidate list size while inserting a row (DiskANN's build L; libSQL's default is 70). */
  insert_l: sdk.intSetting(1, 10_000, 200),
  /** Pruning factor of DiskANN's robust prune (libSQL's default is 1.2). */
  alpha: z.number().min(1).max(10).default(1.2),
  /** Neighbour vectors stored compressed in each node (libSQL's compress_neighbors); none:
   * stored as the column's float32. */
  compress_neighbors: z.enum(COMPRESS).default('none'),
  /** Beam width stored with the index, used until a ladder point sets search_l. */
  search_l: sdk.intSetting(1, 100_000, 200),
  /** B-tree indexes on the attribute columns (the exact path's WHERE uses them). */
  scalar_indexes: z.boolean().default(true),
});
type LibsqlSettings = z.infer<typeof settingsSchema>;

const DB_FILE = 'libsql.db';
const TABLE = 'items';
const INDEX = 'items_vec';
/** libSQL's table of vector index parameters (one blob per index). */
const META_TABLE = 'libsql_vector_meta_shadow';
/** The search_l tag in that blob: 9-byte records of a tag byte and a little-endian u64. */
const SEARCH_L_TAG = 9;
const RECORD = 9;

/** A vector as libSQL's text form, '[x,y,...]' (this build panics when a blob is bound). */
const vectorText = (v: Float32Array) => `[${v.join(',')}]`;

/** For ip served with the cosine metric the ranking is only the same on unit vectors. */
function checkUnitLength(batch: sdk.RowBatch, d: number): void {
  const off = sdk.firstNonUnitRow(batch, d);
  if (off)
    throw new sdk.UserError(
      `libsql: row ${off.id} has norm ${off.norm.toFixed(4)}; libSQL's vector index has no inner-product metric, so metric ip is served as cosine, which ranks alike only for unit vectors; normalise the dataset or use metric cosine`,
    );
}

/** Offset of the search_l record in an index parameter blob, or -1. */
function searchLOffset(meta: Uint8Array): number {
  if (meta.length % RECORD !== 0) return -1;
  let at = -1;
  for (let o = 0; o < meta.length; o += RECORD) {
    if (meta[o] === SEARCH_L_TAG) {
      if (at >= 0) return -1;
      at = o;
    }
  }
  return at;
}

type SearchL = number | 'exact';

class LibsqlSession implements sdk.EngineSession {
  /** Prepared statements by SQL text (a filter's shape, its values bound). */
  private readonly statements = new Map<string, Statement>();
  private searchL: SearchL;
  /** The beam width stored in the index's parameters now. */
  private storedSearchL: number | null = null;
  private indexed: boolean;
  private closed = false;
  private readonly distance: string;
  private readonly mustBeUnit: boolean;

  constructor(
    private readonly db: Db,
    private readonly settings: LibsqlSettings,
    private readonly d: number,
    metric: sdk.Metric,
    private readonly path: string,
    indexed: boolean,
  ) {
    this.distance = metric === 'l2' ? 'vector_distance_l2' : 'vector_distance_cos';
    this.mustBeUnit = metric === 'ip';
    this.indexed = indexed;
    this.searchL = settings.search_l;
    if (indexed) this.storedSearchL = this.readSearchL().value;
  }

  private statement(sql: string): Statement {
    let s = this.statements.get(sql);
    if (!s) {
      if (this.statements.size >= 256) this.statements.clear();
      s = this.db.prepare(sql);
      // Rows as arrays, not objects (raw() is refused on statements that return no rows).
      if (s.reader) s.raw(true);
      this.statements.set(sql, s);
    }
    return s;
  }

  /** The index's parameter blob and its search_l. */
  private readSearchL(): { meta: Buffer; offset: number; value: number } {
    const row = this.db.prepare(`SELECT metadata FROM ${META_TABLE} WHERE name = ?`).raw(true).get(INDEX) as unknown[] | undefined;
    if (!row || !(row[0] instanceof Uint8Array)) throw new Error(`libsql: no parameters of index ${INDEX} in ${META_TABLE}`);
    const meta = Buffer.from(row[0]);
    const offset = searchLOffset(meta);
    if (offset < 0) {
      throw new Error(
        `libsql: the parameters of index ${INDEX} are not in the layout this adapter knows (9-byte records with one search_l, libsql ${sdk.packageVersion('libsql')}); search_l cannot be set per ladder point`,
      );
    }
    return { meta, offset, value: Number(meta.readBigUInt64LE(offset + 1)) };
  }

  /** Stores a new beam width with the index: libSQL reads it on every vector_top_k. */
  private storeSearchL(value: number): void {
    if (this.storedSearchL === value) return;
    const { meta, offset } = this.readSearchL();
    meta.writeBigUInt64LE(BigInt(value), offset + 1);
    // A blob literal: binding a Buffer panics in this build of the binding.
    this.db.exec(`UPDATE ${META_TABLE} SET metadata = X'${meta.toString('hex')}' WHERE name = '${INDEX}'`);
    this.storedSearchL = value;
  }

  private write(batch: sdk.RowBatch): void {
    const m = batch.ids.length;
    if (batch.vectors.length !== m * this.d) {
      throw new Error(`libsql: batch has ${batch.vectors.length} floats for ${m} rows of d=${this.d}`);
    }
    if (m === 0) return;
    if (this.mustBeUnit) checkUnitLength(batch, this.d);
    const del = this.statement(`DELETE FROM ${TABLE} WHERE id = ?`);
    const ins = this.statement(
      `INSERT INTO ${TABLE} (id, ${sdk.ATTRIBUTES.join(', ')}, emb) VALUES (?, ${sdk.ATTRIBUTES.map(() => '?').join(', ')}, vector32(?))`,
    );
    const d = this.d;
    const run = this.db.transaction(() => {
      for (let i = 0; i < m; i++) {
        const id = batch.ids[i];
        // Replace a live row (upsert, or an id twice in a batch): the delete also takes its
        // node out of the vector index (see the schema for what stays behind).
        del.run(id);
        ins.run(id, ...sdk.ATTRIBUTES.map((a) => batch.attrs[a][i]), vectorText(batch.vectors.subarray(i * d, (i + 1) * d)));
      }
    });
    run();
  }

  async ingest(batch: sdk.RowBatch): Promise<void> {
    this.write(batch);
  }

  async buildIndex(): Promise<void> {
    const s = this.settings;
    const metric = this.distance === 'vector_distance_l2' ? 'l2' : 'cosine';
    const options = [
      `metric=${metric}`,
      `max_neighbors=${s.max_neighbors}`,
      `insert_l=${s.insert_l}`,
      `alpha=${s.alpha}`,
      `search_l=${s.search_l}`,
      ...(s.compress_neighbors === 'none' ? [] : [`compress_neighbors=${s.compress_neighbors}`]),
    ];
    this.db.exec(`CREATE INDEX ${INDEX} ON ${TABLE}(libsql_vector_idx(emb, ${options.map((o) => `'${o}'`).join(', ')}))`);
    if (s.scalar_indexes) for (const a of sdk.ATTRIBUTES) this.db.exec(`CREATE INDEX ${TABLE}_${a} ON ${TABLE}(${a})`);
    this.db.exec('ANALYZE');
    // Everything into the main file, so the saved state is the file itself.
    this.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    this.indexed = true;
    this.storedSearchL = this.readSearchL().value;
  }

  async setKnobs(knobs: sdk.Knobs): Promise<void> {
    let next: SearchL = this.settings.search_l;
    if (knobs.search_l !== undefined) next = knobs.search_l as SearchL;
    if (next !== 'exact' && this.indexed) this.storeSearchL(next);
    this.searchL = next;
  }

  /** The SQL and parameters of a request at the current knobs. */
  private query(request: sdk.SearchRequest): { sql: string; params: (number | string)[]; exact: boolean; candidates: number } {
    const v = vectorText(request.vector);
    const k = request.k;
    if (this.searchL === 'exact' || !this.indexed) {
      const f = request.filter ? sdk.filterSql(request.filter, { always: '1' }) : null;
      const where = f ? ` WHERE ${f.sql}` : '';
      return {
        sql: `SELECT id FROM ${TABLE}${where} ORDER BY ${this.distance}(emb, vector32(?)) LIMIT ?`,
        params: [...(f?.params ?? []), v, k],
        exact: true,
        candidates: 0,
      };
    }
    // vector_top_k yields index keys, the rowid, which is the row id.
    if (!request.filter) return { sql: `SELECT id FROM vector_top_k('${INDEX}', vector32(?), ?)`, params: [v, k], exact: false, candidates: k };
    // Post-filter: max(k, search_l) candidates in vector_top_k's order (CROSS JOIN keeps it the
    // outer loop), joined to their rows by rowid, the first k whose row passes the WHERE.
    const candidates = Math.max(k, this.searchL);
    const where = sdk.filterSql(request.filter, { always: '1', prefix: 't.' });
    return {
      sql: `SELECT t.id FROM vector_top_k('${INDEX}', vector32(?), ?) AS v CROSS JOIN ${TABLE} AS t ON t.id = v.id WHERE ${where.sql} LIMIT ?`,
      params: [v, candidates, ...where.params, k],
      exact: false,
      candidates,
    };
  }

  async search(request: sdk.SearchRequest): Promise<ArrayLike<number>> {
    const { sql, params } = this.query(request);
    const rows = this.statement(sql).all(...params) as number[][];
    const out = new Int32Array(rows.length);
    for (let i = 0; i < rows.length; i++) out[i] = rows[i][0];
    return out;
  }

  async explain(request: sdk.SearchRequest): Promise<string> {
    const { sql, params, exact, candidates } = this.query(request);
    const plan = (
      this.db
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .raw(true)
        .all(...params) as unknown[][]
    ).map((r) => String(r[r.length - 1]));
    const head = exact
      ? `exact: rows ordered by ${this.distance}${request.filter ? ' after the WHERE' : ''}, no vector index`
      : request.filter
        ? `DiskANN vector_top_k, search_l=${this.storedSearchL}, ${candidates} candidates, then the WHERE keeps the first ${request.k} (post-filter)`
        : `DiskANN vector_top_k, search_l=${this.storedSearchL}, k=${request.k}`;
    return [head, ...plan].join('\n');
  }

  checkPlan(plan: string, request: sdk.SearchRequest): void {
    const exact = this.searchL === 'exact' || !this.indexed;
    if (!exact && !/VIRTUAL TABLE/.test(plan)) throw new Error('libsql: the plan does not read vector_top_k (the DiskANN index)');
    // The join looks each candidate up by rowid: through the table's INTEGER PRIMARY KEY, or
    // through an attribute's covering index keyed (value, rowid) once ANALYZE has run.
    if (!exact && request.filter && !/SEARCH t USING (INTEGER PRIMARY KEY|COVERING INDEX \S+ \(.*\browid=\?\))/.test(plan)) {
      throw new Error('libsql: the filtered plan does not look the candidates up by rowid');
    }
  }

  strategy(request: sdk.SearchRequest): sdk.Strategy {
    return sdk.declaredStrategy(
      request,
      this.searchL === 'exact' || !this.indexed ? 'exact scan' : 'graph walk',
      this.searchL === 'exact' || !this.indexed ? 'exact scan of matches' : 'post-filter',
    );
  }

  async diskBytes(): Promise<number> {
    // The database file and its write-ahead log (the shared-memory index is not data).
    let total = 0;
    for (const p of [this.path, `${this.path}-wal`]) if (existsSync(p)) total += statSync(p).size;
    return total;
  }

  async insert(batch: sdk.RowBatch): Promise<void> {
    this.write(batch);
  }

  async upsert(batch: sdk.RowBatch): Promise<void> {
    this.write(batch);
  }

  async delete(ids: Int32Array): Promise<void> {
    const del = this.statement(`DELETE FROM ${TABLE} WHERE id = ?`);
    this.db.transaction(() => {
      for (const id of ids) del.run(id);
    })();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.statements.clear();
    this.db.close();
  }
}

function openDb(path: string, mustExist: boolean): Db {
  const db = new Database(path, mustExist ? { fileMustExist: true } : {});
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  return db;
}

function openSession(ctx: sdk.OpenContext<LibsqlSettings>, existing: boolean): LibsqlSession {
  const { d, metric } = ctx.dataset;
  const path = join(ctx.workDir, DB_FILE);
  if (existing) {
    if (!existsSync(path)) throw new Error(`libsql: no database ${path}; nothing to reopen`);
    const db = openDb(path, true);
    const names = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')").raw(true).all() as string[][]).map((r) => r[0]));
    if (!names.has(TABLE)) {
      db.close();
      throw new Error(`libsql: ${path} has no table ${TABLE}; nothing to reopen`);
    }
    return new LibsqlSession(db, ctx.settings, d, metric, path, names.has(INDEX));
  }
  // A reload after a crash gets the same workDir: start from an empty database.
  for (const p of [path, `${path}-wal`, `${path}-shm`]) rmSync(p, { force: true });
  const db = openDb(path, false);
  const attrs = sdk.ATTRIBUTES.map((a) => `${a} INTEGER NOT NULL`).join(', ');
  // The row id is the rowid, the vector index's key. DiskANN keeps a copy of each neighbour's
  // vector in the nodes that link to it, and a delete leaves those edges behind. A row inserted
  // again under its rowid takes them over (libSQL overwrites an edge to the same rowid), so a
  // deleted and re-inserted row is reachable at once; the price is that a row upserted with
  // another vector is still reached, and ranked, through the old copies until they are
  // replaced (README, "Writes"). Fresh rowids for every write were tried: the old edges, which
  // still carry the vector, then prune the re-inserted row's new edges and it can be missed.
  db.exec(`CREATE TABLE ${TABLE} (id INTEGER PRIMARY KEY, ${attrs}, emb F32_BLOB(${d}) NOT NULL)`);
  return new LibsqlSession(db, ctx.settings, d, metric, path, false);
}

const participant: sdk.Participant<LibsqlSettings> = {
  engine: 'libSQL',
  engineVersion: async () => sdk.packageVersion('libsql'),
  settingsSchema,
  knobs: {
    search_l: sdk.knobWith<number | string>(
      (v) => v === 'exact' || (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 100_000),
      'an integer 1..100000 or "exact"',
    ),
  },
  filters: sdk.EVERY_FILTER,
  filterStrategy:
    'post-filter: vector_top_k returns max(k, search_l) DiskANN candidates, a SQL WHERE on their rows keeps the first k (short results when too few pass); search_l "exact" scans the WHERE matches exactly',
  concurrentSearch: false,
  // search_l is a write to the database file, so threads sharing it would race on that write:
  // each search thread reopens its own copy of the work directory instead.
  reopenInThreads: 'copy',
  open: async (ctx) => openSession(ctx, false),
  reopen: async (ctx) => openSession(ctx, true),
};

export default participant;
