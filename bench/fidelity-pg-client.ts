// The fidelity bench's load client (bench/fidelity.ts): runs ONE prepared statement, the same
// pgbench runs, with the query's id as its only parameter. The load generator hands each request
// a "vector"; here the bench makes every query a 1-dimensional vector holding its id, so the
// worker pool, the closed loop and the timing are exactly the ones `vecbench run` uses.
import pg from 'pg';
import type { CreateLoadClient, LoadClient } from '../src/contracts.ts';

export interface FidelityPgOptions {
  host: string;
  port: number;
  user: string;
  database: string;
  /** The statement, with $1 = the query id. */
  text: string;
}

export const createLoadClient: CreateLoadClient = async (options, ctx) => {
  const o = options as FidelityPgOptions;
  const pool = new pg.Pool({ host: o.host, port: o.port, user: o.user, database: o.database, max: Math.max(1, ctx.maxInFlight) });
  pool.on('error', () => {});
  const client: LoadClient = {
    async setKnobs() {},
    async search(r) {
      const res = await pool.query<number[]>({ name: 'vb_fidelity', text: o.text, values: [r.vector[0]], rowMode: 'array' });
      return res.rows.map((row) => row[0]);
    },
    async close() {
      await pool.end();
    },
  };
  return client;
};
