// A load client for JSON-over-HTTP vector APIs, built in each worker thread: undici's Pool with
// keep-alive (the fastest well-kept Node HTTP client: measured 3-7x faster than
// node:http or fetch), one connection per in-flight request. The query goes as a JSON body
// {"vector": [...], "k": K}; from the answer only the "ids" array is read, straight from the
// bytes (parsing a whole 1000-hit JSON body costs ~300 us, the ids alone ~50 us).
import { Pool } from 'undici';
import type { CreateLoadClient, Knobs, LoadClient, SearchRequest } from '../../contracts.ts';

export interface HttpJsonOptions {
  /** e.g. http://127.0.0.1:8080 */
  origin: string;
  path: string;
}

/** The null ceiling this client's points are held against (pool.ts loadClientProtocol). */
export const protocol = 'http';

const IDS = Buffer.from('"ids":[');
const HEADERS = { 'content-type': 'application/json' };

/** The integers of the first `"ids":[...]` array in a JSON body (flat, or the first row of a
 * nested one), without parsing the rest. */
export function idsFromJson(body: Buffer): number[] {
  let i = body.indexOf(IDS);
  if (i < 0) throw new Error(`answer has no "ids" array: ${body.subarray(0, 120).toString()}`);
  i += IDS.length;
  while (body[i] === 0x5b /* [ */ || body[i] === 0x20) i++;
  const out: number[] = [];
  let v = 0;
  let digits = 0;
  for (; i < body.length; i++) {
    const c = body[i];
    if (c >= 0x30 && c <= 0x39) {
      v = v * 10 + (c - 0x30);
      digits++;
    } else {
      if (digits > 0) out.push(v);
      v = 0;
      digits = 0;
      if (c === 0x5d /* ] */) break;
    }
  }
  return out;
}

function queryBody(r: SearchRequest): string {
  let s = '{"vector":[';
  const v = r.vector;
  for (let i = 0; i < v.length; i++) s += (i ? ',' : '') + v[i];
  return `${s}],"k":${r.k}}`;
}

export const createLoadClient: CreateLoadClient = async (options, ctx) => {
  const o = options as HttpJsonOptions;
  const pool = new Pool(o.origin, { connections: Math.max(1, ctx.maxInFlight), pipelining: 1, keepAliveTimeout: 60_000 });
  let knobs: Knobs = {};
  const client: LoadClient = {
    async setKnobs(k) {
      knobs = k;
    },
    prepare: queryBody,
    async search(r, prepared) {
      void knobs;
      const body = typeof prepared === 'string' ? prepared : queryBody(r);
      const res = await pool.request({ origin: o.origin, path: o.path, method: 'POST', headers: HEADERS, body });
      const buf = Buffer.from(await res.body.arrayBuffer());
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${buf.subarray(0, 200).toString()}`);
      return idsFromJson(buf);
    },
    async close() {
      await pool.close();
    },
  };
  return client;
};
