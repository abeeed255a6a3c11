// The load generator's client for Chroma (EngineSession.loadClient): built in each client worker
// thread, an undici Pool with keep-alive (one connection per in-flight request) to the
// participant's server, posting the session's own query body (adapter.ts queryBody: the
// participant's `where` translation), encoded once per query before the timed loop. From the
// answer only the ids are read, straight from its bytes (src/loadgen/clients/http-json.ts).
import { Pool } from 'undici';
import * as sdk from '../../src/sdk/index.ts';
import { queryBody, type ChromaLoadOptions } from './adapter.ts';

/** The null ceiling its points are held against: the undici client and the null HTTP server. */
export const protocol = 'http';

const HEADERS = { 'content-type': 'application/json' };

export const createLoadClient: sdk.CreateLoadClient = async (options, ctx) => {
  const o = options as ChromaLoadOptions;
  const paths = new Map(o.queryPaths);
  let ef = o.ef;
  let path = paths.get(ef)!;
  const pool = new Pool(o.origin, { connections: Math.max(1, ctx.maxInFlight), pipelining: 1, keepAliveTimeout: 60_000 });

  const prepare = (r: sdk.SearchRequest): string => {
    if (r.vector.length !== o.d) throw new Error(`query vector has ${r.vector.length} dimensions, the collection ${o.d}`);
    return JSON.stringify(queryBody(r, ef));
  };

  const client: sdk.LoadClient = {
    async setKnobs(knobs: sdk.Knobs) {
      if (knobs.ef === undefined) return;
      const p = typeof knobs.ef === 'number' ? paths.get(knobs.ef) : undefined;
      if (!p) throw new Error(`chroma: knob ef=${knobs.ef} has no collection (built: ${[...paths.keys()].join(', ')})`);
      ef = knobs.ef as number;
      path = p;
    },
    prepare,
    async search(r, prepared) {
      const body = typeof prepared === 'string' ? prepared : prepare(r);
      const res = await pool.request({ path, method: 'POST', headers: HEADERS, body });
      const buf = Buffer.from(await res.body.arrayBuffer());
      if (res.statusCode !== 200) throw new Error(`Chroma query: HTTP ${res.statusCode}: ${buf.subarray(0, 200).toString()}`);
      return sdk.idsFromJson(buf);
    },
    async close() {
      await pool.close();
    },
  };
  return client;
};
