// The fidelity bench's load client (bench/fidelity.ts): runs ONE prepared statement, the same
// pgbench runs, with the query's id as its only parameter. The load generator hands each request
// a "vector"; here the bench makes every query a 1-dimensional vector holding its id, so the
// worker pool, the closed loop and the timing are exactly the ones `vecbench run` uses, and the
// PostgreSQL path is pgvector's load client's (src/loadgen/clients/pg-ids.ts).
import type { CreateLoadClient, LoadClient, SearchRequest } from '../src/contracts.ts';
import { encodeExecution, PgIdConnections, type PgExecution } from '../src/loadgen/clients/pg-ids.ts';

export const protocol = 'postgres';

export interface FidelityPgOptions {
  host: string;
  port: number;
  user: string;
  database: string;
  password?: string;
  /** The statement, with $1 = the query id. */
  text: string;
}

export const createLoadClient: CreateLoadClient = async (options, ctx) => {
  const o = options as FidelityPgOptions;
  const conns = await PgIdConnections.open(o, Math.max(1, ctx.maxInFlight));
  const encode = (r: SearchRequest) => encodeExecution('vb_fidelity', o.text, [r.vector[0]]);
  const client: LoadClient = {
    async setKnobs() {},
    prepare: encode,
    search(r, prepared) {
      return conns.execute((prepared as PgExecution | undefined) ?? encode(r));
    },
    async close() {
      await conns.close();
    },
  };
  return client;
};
