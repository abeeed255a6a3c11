// A plain Node loop over PGlite (PostgreSQL in WASM, with pgvector) for vecbench's pgvector-pglite
// participant (bench/harness-overhead.ts): PGlite's own language is JavaScript, so this is its
// native interface. It opens a copy of the data directory the participant left after its build
// (the same table and HNSW index), sets the session as the adapter sets it for an unfiltered
// point (one generic plan, sequential scans off, hnsw.iterative_scan off, hnsw.max_scan_tuples
// 20000, hnsw.ef_search = the knob), and runs the adapter's statement the way the adapter does:
// parsed once as a named statement with the vector type's OID, then per query one
// execProtocolRaw call of Bind (the vector in pgvector's binary form, result binary) + Execute
// + Sync; the ids are read from the DataRow messages.
//
//   node --import tsx pglite_loop.ts DATA_DIR DIR NQ D K SQL [--adapter ...]
// (--adapter: the participant's adapter timed in this process too, loop-common.ts's adapterMode)
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { adapterMode, f32, serve } from './loop-common.ts';

const [dataDir, dir, nqArg, dArg, kArg, sql] = process.argv.slice(2);
const [nq, d, k] = [nqArg, dArg, kArg].map(Number);
const STATEMENT = 'knn';

const queries = f32(dir, 'queries.f32');

/** Throws the backend's message when the response holds an ErrorResponse; else calls onRow with
 * the offset of each DataRow's first column value. */
function readResponse(resp: Uint8Array, onRow: (view: DataView, at: number) => void): void {
  const view = new DataView(resp.buffer, resp.byteOffset, resp.byteLength);
  for (let o = 0; o + 5 <= resp.length; o += 1 + view.getInt32(o + 1)) {
    // DataRow: int16 column count, int32 value length, then the value.
    if (resp[o] === 0x44) onRow(view, o + 11);
    else if (resp[o] === 0x45) {
      // ErrorResponse: fields of a code byte and a C string; 'M' is the message.
      let f = o + 5;
      let message = 'unknown error';
      while (resp[f] !== 0) {
        const end = resp.indexOf(0, f + 1);
        if (resp[f] === 0x4d) message = Buffer.from(resp.subarray(f + 1, end)).toString('utf8');
        f = end + 1;
      }
      throw new Error(`pglite_loop: PostgreSQL: ${message}`);
    }
  }
}

const t0 = performance.now();
const db = await PGlite.create({ dataDir, extensions: { vector } });
const vectorOid = (await db.query<{ oid: number }>("SELECT 'vector'::regtype::oid::int4 AS oid")).rows[0].oid;
const pg = (await db.query<{ v: string }>('SELECT version() AS v')).rows[0].v;
const ext = (await db.query<{ v: string }>("SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'")).rows[0]?.v;
if (ext === undefined) throw new Error(`pglite_loop: ${dataDir} has no pgvector extension; rebuild the pgvector-pglite participant's index`);
const pglite = /PostgreSQL (\S+) \(PGlite (\S+)\)/.exec(pg);
const version = pglite ? `PGlite ${pglite[2]} (PostgreSQL ${pglite[1]}, pgvector ${ext})` : `${pg} (pgvector ${ext})`;
await db.exec('SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off; SET hnsw.iterative_scan = off; SET hnsw.max_scan_tuples = 20000');

const encoder = new TextEncoder();
const cstring = (s: string): Uint8Array => {
  const b = encoder.encode(s);
  const out = new Uint8Array(b.length + 1);
  out.set(b);
  return out;
};
// Parse (named statement, one parameter typed as pgvector's vector) + Sync.
const name = cstring(STATEMENT);
const text = cstring(sql);
const parse = new Uint8Array(1 + 4 + name.length + text.length + 2 + 4 + 5);
const pv = new DataView(parse.buffer);
parse[0] = 0x50;
pv.setInt32(1, 4 + name.length + text.length + 2 + 4);
parse.set(name, 5);
parse.set(text, 5 + name.length);
pv.setInt16(5 + name.length + text.length, 1);
pv.setInt32(5 + name.length + text.length + 2, vectorOid);
parse.set([0x53, 0, 0, 0, 4], parse.length - 5);
readResponse(await db.execProtocolRaw(parse, { syncToFs: false }), () => {});

// Bind + Execute + Sync, laid out once; each query writes its vector into `vectorAt`.
const vectorBytes = 4 + 4 * d;
const bindBody = 1 + name.length + 2 + 2 + 2 + 4 + vectorBytes + 2 + 2;
const bind = new Uint8Array(1 + 4 + bindBody + 10 + 5);
const bv = new DataView(bind.buffer);
let o = 0;
bind[o] = 0x42;
bv.setInt32(o + 1, 4 + bindBody);
o += 5;
o += 1; // the unnamed portal
bind.set(name, o);
o += name.length;
bv.setInt16(o, 1); // one parameter format: binary
bv.setInt16(o + 2, 1);
bv.setInt16(o + 4, 1); // one parameter
bv.setInt32(o + 6, vectorBytes);
o += 10;
// pgvector's binary vector: int16 dimensions, int16 unused, the floats (all big-endian).
bv.setInt16(o, d);
const vectorAt = o + 4;
o += vectorBytes;
bv.setInt16(o, 1); // one result format: binary
bv.setInt16(o + 2, 1);
o += 4;
bind.set([0x45, 0, 0, 0, 9, 0, 0, 0, 0, 0], o); // Execute the unnamed portal, no row limit
bind.set([0x53, 0, 0, 0, 4], o + 10);
console.log(JSON.stringify({ ready: true, build_s: (performance.now() - t0) / 1000, version }));

await serve(
  dir,
  nq,
  k,
  {
    setKnob: (ef: number) => db.exec(`SET hnsw.ef_search = ${ef}`).then(() => {}),
    search: async (i: number) => {
      for (let j = 0; j < d; j++) bv.setFloat32(vectorAt + 4 * j, queries[i * d + j]);
      const ids: number[] = [];
      readResponse(await db.execProtocolRaw(bind, { syncToFs: false }), (view, at) => {
        if (ids.length < k) ids.push(view.getInt32(at));
      });
      return ids;
    },
  },
  await adapterMode(dir, queries, d, k),
);
await db.close();
