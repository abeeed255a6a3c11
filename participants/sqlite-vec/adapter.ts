// sqlite-vec as a vecbench participant: SQLite (through better-sqlite3, in the participant
// host's thread) with the sqlite-vec extension's `vec0` virtual table, which stores the
// vectors in fixed-size chunks and answers a KNN query by scanning every chunk: an exact
// search, with no index to build and no search knob (one ladder point per group). The six
// attributes are vec0 metadata columns, tested inside that scan, so a filtered query computes
// distances only for the rows that pass. Rows with text also go to an FTS5 table (SQLite's
// full-text search, BM25-ranked) for the keyword arm, and the hybrid arm fuses both in one SQL
// statement. The database is one file in workDir: reopen opens it again (cold start, a
// resumed run, and the throughput view's threads, each with a connection of its own).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { z } from 'zod';
import type Database from 'better-sqlite3';
import * as sdk from '../../src/sdk/index.ts';

const require = createRequire(import.meta.url);
// CommonJS packages: better-sqlite3 exports its class as module.exports.
const BetterSqlite = require('better-sqlite3') as typeof Database;
const sqliteVec = require('sqlite-vec') as { load(db: Database.Database): void };

export const settingsSchema = sdk.settingsObject({
  /** Rows per vec0 chunk (sqlite-vec's chunk_size, a multiple of 8; its default 1024). */
  chunk_size: z
    .number()
    .int()
    .min(8)
    .max(1 << 20)
    .multipleOf(8)
    .default(1024),
  /** The vec0 distance used for metric ip / cosine (vectors are unit length, so cosine and
   * l2 rank as ip does; vec0 has no inner-product distance). */
  ip_distance: z.enum(['cosine', 'l2']).default('cosine'),
  /** SQLite's page cache of the connection, MiB (PRAGMA cache_size). */
  cache_mib: sdk.intSetting(1, 1 << 16, 256),
});
export type SqliteVecSettings = z.infer<typeof settingsSchema>;

const DB_FILE = 'sqlite-vec.db';
const TABLE = 'vectors';
const TEXT_TABLE = 'texts';
/** vec0 refuses a KNN query with k above this (SQLITE_VEC_VEC0_K_MAX). */
const K_MAX = 4096;
/** Reciprocal rank fusion constant of the hybrid statement. */
const RRF_K = 60;

type Db = Database.Database;
type Statement = Database.Statement<unknown[], unknown>;

/** cosine and l2 rank as ip does only on unit vectors. */
function checkUnitLength(batch: sdk.RowBatch, d: number): void {
  const off = sdk.firstNonUnitRow(batch, d);
  if (off)
    throw new sdk.UserError(
      `sqlite-vec: row ${off.id} has norm ${off.norm.toFixed(4)}; vec0 has no inner-product distance, and cosine or l2 rank as ip only for unit vectors: leave sqlite-vec out of --participants for this dataset`,
    );
}

/** The query text as an FTS5 expression: its words, each quoted, any of them (FTS5's own
 * syntax would reject punctuation and read AND / OR / NOT / NEAR as operators). */
export function ftsQuery(text: string): string | null {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu);
  return words ? words.map((w) => `"${w}"`).join(' OR ') : null;
}

/** A connection with the extension loaded. `existing`: the file must be there (a missing file
 * is an error, not a new empty database). */
function connect(path: string, s: SqliteVecSettings, existing = false): Db {
  const db = new BetterSqlite(path, { fileMustExist: existing });
  sqliteVec.load(db);
  db.pragma(`cache_size = -${s.cache_mib * 1024}`);
  return db;
}

class SqliteVecSession implements sdk.EngineSession {
  private readonly insertRow: Statement;
  private readonly deleteRow: Statement;
  private readonly insertText: Statement | null;
  private readonly deleteText: Statement | null;
  /** Prepared KNN statements, by their SQL (one per filter shape). */
  private readonly statements = new Map<string, Statement>();
  /** The query vector as vec0 reads it (float32 bytes), refilled for each search: a query may be
   * a view into shared memory, which is not bound directly. */
  private readonly query: Buffer;
  private readonly queryFloats: Float32Array;
  private readonly mustBeUnit: boolean;
  keywordSearch?: sdk.EngineSession['keywordSearch'];
  hybridSearch?: sdk.EngineSession['hybridSearch'];

  constructor(
    private readonly db: Db,
    private readonly d: number,
    metric: sdk.Metric,
    withText: boolean,
    private readonly path: string,
  ) {
    this.mustBeUnit = metric === 'ip';
    const cols = sdk.ATTRIBUTES.join(', ');
    this.insertRow = db.prepare(`INSERT INTO ${TABLE}(rowid, embedding, ${cols}) VALUES (?, ?, ${sdk.ATTRIBUTES.map(() => '?').join(', ')})`);
    this.deleteRow = db.prepare(`DELETE FROM ${TABLE} WHERE rowid = ?`);
    this.insertText = withText
      ? db.prepare(`INSERT INTO ${TEXT_TABLE}(rowid, text, ${cols}) VALUES (?, ?, ${sdk.ATTRIBUTES.map(() => '?').join(', ')})`)
      : null;
    this.deleteText = withText ? db.prepare(`DELETE FROM ${TEXT_TABLE} WHERE rowid = ?`) : null;
    this.query = Buffer.alloc(d * 4);
    this.queryFloats = new Float32Array(this.query.buffer, this.query.byteOffset, d);
    if (withText) {
      this.keywordSearch = async (text, k, filter) => this.keyword(text, k, filter);
      this.hybridSearch = async (request, text) => this.hybrid(request, text);
    }
  }

  /** A new database in workDir: the vec0 table (and the FTS5 table for text). */
  static create(ctx: sdk.OpenContext<SqliteVecSettings>): SqliteVecSession {
    const { d, metric, hasText } = ctx.dataset;
    const s = ctx.settings;
    const path = join(ctx.workDir, DB_FILE);
    const db = connect(path, s);
    const distance = metric === 'l2' ? 'l2' : s.ip_distance;
    // Integer metadata columns: vec0 tests them chunk by chunk, before any distance.
    db.exec(
      `CREATE VIRTUAL TABLE ${TABLE} USING vec0(embedding float[${d}] distance_metric=${distance}, ${sdk.ATTRIBUTES.map((a) => `${a} integer`).join(', ')}, chunk_size=${s.chunk_size})`,
    );
    if (hasText) {
      // Porter stems over unicode61 tokens (no stop-word list); the attributes ride along
      // unindexed, so a filtered keyword query reads them from the rows it matched.
      db.exec(`CREATE VIRTUAL TABLE ${TEXT_TABLE} USING fts5(text, ${sdk.ATTRIBUTES.map((a) => `${a} UNINDEXED`).join(', ')}, tokenize = 'porter unicode61')`);
    }
    ctx.log(`vec0 table, d=${d}, distance ${distance}, chunk_size ${s.chunk_size}${hasText ? ', FTS5 text table' : ''}`);
    return new SqliteVecSession(db, d, metric, hasText, path);
  }

  /** The database a previous session left in workDir. */
  static reopen(ctx: sdk.OpenContext<SqliteVecSettings>): SqliteVecSession {
    const { d, metric, hasText } = ctx.dataset;
    const path = join(ctx.workDir, DB_FILE);
    const db = connect(path, ctx.settings, true);
    const tables = new Set(db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).pluck().all() as string[]);
    if (!tables.has(TABLE) || tables.has(TEXT_TABLE) !== hasText) {
      db.close();
      throw new Error(`sqlite-vec: ${path} holds no ${TABLE} table${hasText ? ` and ${TEXT_TABLE} table` : ''} for this dataset; nothing to reopen`);
    }
    return new SqliteVecSession(db, d, metric, hasText, path);
  }

  private check(batch: sdk.RowBatch): void {
    if (batch.vectors.length !== batch.ids.length * this.d) {
      throw new Error(`sqlite-vec: batch has ${batch.vectors.length} floats for ${batch.ids.length} rows of d=${this.d}`);
    }
    if (this.mustBeUnit) checkUnitLength(batch, this.d);
  }

  /** Writes the batch in one transaction. `replace`: a row already present is deleted first
   * (vec0 refuses a second row with the same rowid). */
  private write(batch: sdk.RowBatch, replace: boolean): void {
    this.check(batch);
    const d = this.d;
    const bytes = Buffer.from(batch.vectors.buffer, batch.vectors.byteOffset, batch.vectors.byteLength);
    this.db.transaction(() => {
      for (let i = 0; i < batch.ids.length; i++) {
        // vec0 takes integers only as SQLite integers: bound as BigInt (a JS number binds as REAL).
        const id = BigInt(batch.ids[i]);
        const attrs = sdk.ATTRIBUTES.map((a) => BigInt(batch.attrs[a][i]));
        if (replace) {
          this.deleteRow.run(id);
          this.deleteText?.run(id);
        }
        this.insertRow.run(id, bytes.subarray(i * d * 4, (i + 1) * d * 4), ...attrs);
        this.insertText?.run(id, batch.text?.[i] ?? '', ...attrs);
      }
    })();
  }

  async ingest(batch: sdk.RowBatch): Promise<void> {
    this.write(batch, false);
  }

  async buildIndex(): Promise<void> {
    // vec0 has no index: the rows are in their chunks once inserted, and every transaction is
    // committed to the file.
  }

  async setKnobs(_knobs: sdk.Knobs): Promise<void> {}

  private statement(sql: string): Statement {
    let st = this.statements.get(sql);
    if (!st) {
      st = this.db.prepare(sql).pluck();
      this.statements.set(sql, st);
    }
    return st;
  }

  private knn(filter: sdk.FilterExpr | null): { sql: string; params: number[] } {
    const f = filter ? sdk.filterSql(filter, { always: '1' }) : null;
    return { sql: `SELECT rowid FROM ${TABLE} WHERE embedding MATCH ? AND k = ?${f ? ` AND ${f.sql}` : ''} ORDER BY distance`, params: f?.params ?? [] };
  }

  private setQuery(vector: Float32Array): Buffer {
    if (vector.length !== this.d) throw new Error(`sqlite-vec: query has ${vector.length} dimensions, the table ${this.d}`);
    this.queryFloats.set(vector);
    return this.query;
  }

  async search(request: sdk.SearchRequest): Promise<ArrayLike<number>> {
    const { sql, params } = this.knn(request.filter);
    return this.statement(sql).all(this.setQuery(request.vector), Math.min(request.k, K_MAX), ...params) as number[];
  }

  private keyword(text: string, k: number, filter: sdk.FilterExpr | null): number[] {
    const match = ftsQuery(text);
    if (match === null) return [];
    const f = filter ? sdk.filterSql(filter, { always: '1' }) : null;
    const sql = `SELECT rowid FROM ${TEXT_TABLE} WHERE ${TEXT_TABLE} MATCH ?${f ? ` AND ${f.sql}` : ''} ORDER BY rank LIMIT ?`;
    return this.statement(sql).all(match, ...(f?.params ?? []), k) as number[];
  }

  private hybrid(request: sdk.SearchRequest, text: string): number[] {
    const k = Math.min(request.k, K_MAX);
    const match = ftsQuery(text);
    const f = request.filter ? sdk.filterSql(request.filter, { always: '1' }) : null;
    const params = f?.params ?? [];
    if (match === null) return this.statement(this.knn(request.filter).sql).all(this.setQuery(request.vector), k, ...params) as number[];
    // Each arm's top k, ranked, fused by reciprocal rank in one statement (ties by rowid).
    const where = f ? ` AND ${f.sql}` : '';
    const sql =
      `WITH dense AS (SELECT rowid, row_number() OVER (ORDER BY distance) AS r FROM ${TABLE} WHERE embedding MATCH ? AND k = ?${where}), ` +
      `words AS (SELECT rowid, row_number() OVER (ORDER BY rank) AS r FROM ${TEXT_TABLE} WHERE ${TEXT_TABLE} MATCH ?${where} ORDER BY rank LIMIT ?) ` +
      `SELECT rowid FROM (SELECT rowid, 1.0 / (${RRF_K} + r) AS s FROM dense UNION ALL SELECT rowid, 1.0 / (${RRF_K} + r) AS s FROM words) ` +
      `GROUP BY rowid ORDER BY sum(s) DESC, rowid LIMIT ?`;
    return this.statement(sql).all(this.setQuery(request.vector), k, ...params, match, ...params, k, k) as number[];
  }

  async explain(request: sdk.SearchRequest): Promise<string> {
    const { sql, params } = this.knn(request.filter);
    const rows = this.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(this.setQuery(request.vector), Math.min(request.k, K_MAX), ...params) as { detail: string }[];
    return rows.map((r) => r.detail).join('\n');
  }

  checkPlan(plan: string, request: sdk.SearchRequest): void {
    // vec0's KNN plan is index string "3{...": without it the statement reads the table row by
    // row. Each metadata constraint it takes adds "&<column><op>"; a filter left to SQLite
    // would be applied after the k nearest were chosen, and return short results.
    if (!/VIRTUAL TABLE INDEX \d+:3\{/.test(plan)) {
      throw new Error(`sqlite-vec: the plan does not use vec0's KNN scan (${plan.replace(/\n/g, '; ')})`);
    }
    if (request.filter && !/VIRTUAL TABLE INDEX \d+:3\{[^\s]*&/.test(plan)) {
      throw new Error(`sqlite-vec: the filter is not evaluated inside vec0's scan (${plan.replace(/\n/g, '; ')})`);
    }
  }

  strategy(request: sdk.SearchRequest): sdk.Strategy {
    return sdk.declaredStrategy(request, 'exact scan', 'exact scan of matches');
  }

  async diskBytes(): Promise<number> {
    return sdk.fileBytes(this.path, `${this.path}-wal`, `${this.path}-journal`);
  }

  async insert(batch: sdk.RowBatch): Promise<void> {
    this.write(batch, true);
  }

  async upsert(batch: sdk.RowBatch): Promise<void> {
    this.write(batch, true);
  }

  async delete(ids: Int32Array): Promise<void> {
    this.db.transaction(() => {
      for (const id of ids) {
        this.deleteRow.run(BigInt(id));
        this.deleteText?.run(BigInt(id));
      }
    })();
  }

  async close(): Promise<void> {
    this.statements.clear();
    if (this.db.open) this.db.close();
  }
}

/** The versions of SQLite and its binding, read from the loaded library. */
function sqliteVersions(): string {
  const db = new BetterSqlite(':memory:');
  try {
    sqliteVec.load(db);
    const row = db.prepare('SELECT sqlite_version() AS s, vec_version() AS v').get() as { s: string; v: string };
    return `${sdk.packageVersion('sqlite-vec')} (vec_version ${row.v}, SQLite ${row.s}, better-sqlite3 ${sdk.packageVersion('better-sqlite3')})`;
  } finally {
    db.close();
  }
}

const participant: sdk.Participant<SqliteVecSettings> = {
  engine: 'sqlite-vec',
  engineVersion: async () => sqliteVersions(),
  settingsSchema,
  // vec0's search is an exact scan: no search knob.
  knobs: {},
  filters: sdk.EVERY_FILTER,
  filterStrategy: 'exact scan: vec0 tests the metadata columns chunk by chunk and computes distances only for the rows that pass',
  concurrentSearch: false,
  // reopen opens the database file with a connection of its own; searches never write it.
  reopenInThreads: true,
  keywordScoring: "BM25 (SQLite FTS5's bm25(), k1 1.2, b 0.75; porter stems, no stop-word list)",
  fusionMethod: `RRF, k = ${RRF_K}, over each arm's top k, in one SQL statement`,
  open: async (ctx) => SqliteVecSession.create(ctx),
  reopen: async (ctx) => SqliteVecSession.reopen(ctx),
};

export default participant;
