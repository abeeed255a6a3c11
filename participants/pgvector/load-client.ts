// The load generator's client for pgvector on PostgreSQL (EngineSession.loadClient): built in
// each client worker thread, it opens its own `pg` pool to the participant's server and runs the
// very statements the session runs (shared SQL from ../pgvector-pglite/sql.ts, named prepared
// statements, the query vector bound in binary, ids read in array row mode), with the same knob
// SETs and plan mode on every pooled connection.
import pg from 'pg';
import type { CreateLoadClient, FilterExpr, Knobs, LoadClient, Metric, SearchRequest } from '../../src/contracts.ts';
import { searchStatement, vectorBinary } from '../pgvector-pglite/sql.ts';
import { parseKnobs } from './adapter.ts';

export interface PgLoadOptions {
  host: string;
  port: number;
  user: string;
  database: string;
  metric: Metric;
  d: number;
  /** settings.filtered_plans: 'custom' plans each filtered execution with its values. */
  filteredPlans: 'custom' | 'generic';
}

interface ConnState {
  knobs: string;
  planMode: string;
}

export const createLoadClient: CreateLoadClient = async (options, ctx) => {
  const o = options as PgLoadOptions;
  const pool = new pg.Pool({ host: o.host, port: o.port, user: o.user, database: o.database, max: Math.max(1, ctx.maxInFlight), connectionTimeoutMillis: 10_000 });
  pool.on('error', () => {}); // a broken idle connection: the next query reports it
  const state = new WeakMap<pg.PoolClient, ConnState>();
  let knobSql = '';
  let resort = false;
  const names = new Map<string, string>();

  const planMode = (f: FilterExpr | null) => (f !== null && o.filteredPlans === 'custom' ? 'force_custom_plan' : 'auto');

  const client: LoadClient = {
    async setKnobs(knobs: Knobs) {
      const k = parseKnobs(knobs);
      // The same SETs as the session, so both measure the same engine configuration.
      knobSql = `SET hnsw.ef_search = ${k.ef_search}; SET hnsw.iterative_scan = ${k.iterative_scan}; SET hnsw.max_scan_tuples = ${k.max_scan_tuples}`;
      resort = k.iterative_scan === 'relaxed_order';
    },
    async search(r: SearchRequest) {
      if (r.vector.length !== o.d) throw new Error(`query vector has ${r.vector.length} dimensions, the table ${o.d}`);
      const st = searchStatement(o.metric, r.k, r.filter, { resort });
      let name = names.get(st.key);
      if (!name) names.set(st.key, (name = `vb_load_${names.size}`));
      const conn = await pool.connect();
      try {
        let s = state.get(conn);
        if (!s) state.set(conn, (s = { knobs: '', planMode: '' }));
        const mode = planMode(r.filter);
        if (s.knobs !== knobSql || s.planMode !== mode) {
          await conn.query(`${knobSql}${knobSql ? '; ' : ''}SET plan_cache_mode = ${mode}`);
          s.knobs = knobSql;
          s.planMode = mode;
        }
        const res = await conn.query<number[]>({ name, text: st.text, values: [Buffer.from(vectorBinary(r.vector).buffer), ...st.params], rowMode: 'array' });
        return res.rows.map((row) => row[0]);
      } finally {
        conn.release();
      }
    },
    async close() {
      await pool.end();
    },
  };
  return client;
};
