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
//   node --import tsx pglite_loop.ts DATA_DIR DIR NQ D K SQL
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';

const [dataDir, dir, nqArg, dArg, kArg, sql] = process.argv.slice(2);
const [nq, d, k] = [nqArg, dArg, kArg].map(Number);
const STATEMENT = 'knn';

const f32 = (file: string): Float32Array => {
  const b = readFileSync(`${dir}/${file}`);
  return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
};
const queries = f32('queries.f32');
const gtBuf = readFileSync(`${dir}/gt.i32`);
const gt = new Int32Array(gtBuf.buffer, gtBuf.byteOffset, nq * k);

/** Seconds this process's main thread has run on a CPU (Linux), or NaN. */
const runS = (): number => {
  try {
    return Number(readFileSync('/proc/self/schedstat', 'utf8').split(' ')[0]) / 1e9;
  } catch {
    return Number.NaN;
  }
};

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

const found: Int32Array[] = Array.from({ length: nq }, () => new Int32Array(k).fill(-1));
const lat = new Float64Array(nq);
for await (const line of createInterface({ input: process.stdin })) {
  const parts = line.trim().split(/\s+/);
  if (parts[0] === '') continue;
  const ef = Number(parts[0]);
  const passes = Number(parts[1]);
  await db.exec(`SET hnsw.ef_search = ${ef}`);
  const qps: number[] = [];
  const cpuQps: number[] = [];
  const meanMs: number[] = [];
  for (let p = 0; p < passes; p++) {
    const cpu0 = runS();
    const start = performance.now();
    for (let i = 0; i < nq; i++) {
      const t = performance.now();
      for (let j = 0; j < d; j++) bv.setFloat32(vectorAt + 4 * j, queries[i * d + j]);
      const ids = found[i];
      ids.fill(-1);
      let n = 0;
      readResponse(await db.execProtocolRaw(bind, { syncToFs: false }), (view, at) => {
        if (n < k) ids[n++] = view.getInt32(at);
      });
      lat[i] = performance.now() - t;
    }
    const wall = (performance.now() - start) / 1000;
    cpuQps.push(nq / (runS() - cpu0));
    qps.push(nq / wall);
    meanMs.push(lat.reduce((a, b) => a + b, 0) / nq);
  }
  let hits = 0;
  for (let i = 0; i < nq; i++) {
    const want = new Set(gt.subarray(i * k, (i + 1) * k));
    for (const id of found[i]) if (want.has(id)) hits++;
  }
  console.log(JSON.stringify({ ef, qps, cpu_qps: cpuQps, mean_ms: meanMs, recall: hits / (nq * k) }));
}
await db.close();
