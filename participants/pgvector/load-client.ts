// The load generator's client for pgvector on PostgreSQL (EngineSession.loadClient): built in
// each client worker thread, it opens its own connections to the participant's server (one per
// in-flight request) and runs the very statements the session runs (shared SQL from
// ../_shared/postgres-sql.ts as named prepared statements, the query vector bound in binary) with
// the same knob SETs and plan mode, through the load generator's PostgreSQL fast path
// (src/loadgen/clients/pg-ids.ts: executions encoded before the timed loop, only the ids read).
import * as sdk from '../../src/sdk/index.ts';
import { searchStatement, vectorBinary } from '../_shared/postgres-sql.ts';
import { parseKnobs, planSettings, type PgLoadOptions } from './adapter.ts';

/** The null ceiling its points are held against (`vecbench ceiling --protocols postgres`). */
export const protocol = 'postgres';

interface Prepared {
  exec: sdk.PgExecution;
  setup: sdk.PgSetup;
}

export const createLoadClient: sdk.CreateLoadClient = async (options, ctx) => {
  const o = options as PgLoadOptions;
  const conns = await sdk.PgIdConnections.open(o, Math.max(1, ctx.maxInFlight));
  let resort = false;
  // The session settings an execution needs, unfiltered or filtered: the same SETs as the
  // session, so both measure the same engine configuration. One object per setting (compared by
  // identity).
  let setups = { unfiltered: sdk.encodeSetup([]), filtered: sdk.encodeSetup([]) };
  const names = new Map<string, string>();

  const setupFor = (f: sdk.FilterExpr | null) => (f === null ? setups.unfiltered : setups.filtered);

  const prepare = (r: sdk.SearchRequest): Prepared => {
    if (r.vector.length !== o.d) throw new Error(`query vector has ${r.vector.length} dimensions, the table ${o.d}`);
    const st = searchStatement(o.metric, r.k, r.filter, { resort });
    let name = names.get(st.key);
    if (!name) names.set(st.key, (name = `vb_load_${names.size}`));
    const vector = Buffer.from(vectorBinary(r.vector).buffer);
    return { exec: sdk.encodeExecution(name, st.text, [vector, ...st.params]), setup: setupFor(r.filter) };
  };

  const client: sdk.LoadClient = {
    async setKnobs(knobs: sdk.Knobs) {
      const k = parseKnobs(knobs);
      const sets = [`SET hnsw.ef_search = ${k.ef_search}`, `SET hnsw.iterative_scan = ${k.iterative_scan}`, `SET hnsw.max_scan_tuples = ${k.max_scan_tuples}`];
      setups = {
        unfiltered: sdk.encodeSetup([...sets, ...planSettings(false, o.filteredPlans)]),
        filtered: sdk.encodeSetup([...sets, ...planSettings(true, o.filteredPlans)]),
      };
      resort = k.iterative_scan === 'relaxed_order';
    },
    prepare,
    search(r, prepared) {
      const p = (prepared as Prepared | undefined) ?? prepare(r);
      return conns.execute(p.exec, p.setup);
    },
    async close() {
      await conns.close();
    },
  };
  return client;
};
