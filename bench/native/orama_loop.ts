// A plain Node loop over @orama/orama for vecbench's orama participant (bench/harness-overhead.ts):
// Orama is JavaScript, so this is its native interface. It loads the database the participant
// saved after its build (one columns file: a 4-byte little-endian header length, a JSON header
// whose meta holds Orama's save() with the vectors left out, then the vectors as float32 rows
// beside their internal ids) through Orama's own load(), the vectors put back in the form
// Orama's save() gives them, and asks the adapter's search: mode 'vector', the same
// similarity threshold, limit k, no where clause. Orama has no search knob: the KNOB of each
// stdin line is echoed and ignored.
//
//   node --import tsx orama_loop.ts SAVED_FILE DIR NQ D K SIMILARITY STEMMING
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { type AnyOrama, type AnySchema, create, load, type RawData, search } from '@orama/orama';

const [saved, dir, nqArg, dArg, kArg, similarityArg, stemmingArg] = process.argv.slice(2);
const [nq, d, k, similarity] = [nqArg, dArg, kArg, similarityArg].map(Number);
const stemming = stemmingArg === 'true';
const version = (createRequire(import.meta.url)('@orama/orama/package.json') as { version: string }).version;

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

interface SavedIndex {
  searchablePropertiesWithTypes: Record<string, string>;
  vectorIndexes: Record<string, { size: number; vectors: [number, [number, number[]]][] }>;
}

const t0 = performance.now();
const file = readFileSync(saved);
const headerLength = file.readUInt32LE(0);
const header = JSON.parse(file.toString('utf8', 4, 4 + headerLength)) as {
  format: string;
  meta: { d: number; raw: RawData & { index: SavedIndex } };
  columns: { name: string; type: string; length: number }[];
};
if (header.format !== 'vecbench-columns/1' || header.columns.some((c) => c.type !== 'i32' && c.type !== 'f32'))
  throw new Error(`orama_loop: ${saved} is not the orama participant's saved database (format ${header.format}); rebuild its index`);
if (header.meta.d !== d) throw new Error(`orama_loop: ${saved} holds d=${header.meta.d}, the queries d=${d}; run the bench on the participant's dataset`);
// The columns follow the header, each 8-byte aligned; copied out so each is aligned for its type.
const columns: Record<string, Int32Array | Float32Array> = {};
let at = (4 + headerLength + 7) & ~7;
for (const c of header.columns) {
  const bytes = file.subarray(at, at + 4 * c.length);
  const copy = new Uint8Array(bytes);
  columns[c.name] = c.type === 'i32' ? new Int32Array(copy.buffer) : new Float32Array(copy.buffer);
  at += (4 * c.length + 7) & ~7;
}
const raw = header.meta.raw;
// The schema the participant created, read back from the saved index's own property types.
const types = raw.index.searchablePropertiesWithTypes;
const vectorProperty = Object.keys(types).find((p) => types[p].startsWith('vector['));
if (vectorProperty === undefined) throw new Error(`orama_loop: ${saved} has no vector property; rebuild the orama participant's index`);
const db = create({ schema: { ...types } as AnySchema, sort: { enabled: false }, components: { tokenizer: { stemming } } }) as AnyOrama;
// save() writes each vector as [internal id, [magnitude, numbers]]; the magnitude is computed
// as Orama's own vector index computes it (float64 sum of squares of the float32 values).
const ids = columns.ids as Int32Array;
const vectors = columns.vectors as Float32Array;
const entries: [number, [number, number[]]][] = new Array(ids.length);
for (let i = 0; i < ids.length; i++) {
  const v = vectors.subarray(i * d, (i + 1) * d);
  let sq = 0;
  for (let j = 0; j < d; j++) sq += v[j] * v[j];
  entries[i] = [ids[i], [Math.sqrt(sq), Array.from(v)]];
}
raw.index.vectorIndexes[vectorProperty] = { size: d, vectors: entries };
load(db, raw);
console.log(JSON.stringify({ ready: true, build_s: (performance.now() - t0) / 1000, version }));

const found: Int32Array[] = new Array(nq);
const lat = new Float64Array(nq);
for await (const line of createInterface({ input: process.stdin })) {
  const parts = line.trim().split(/\s+/);
  if (parts[0] === '') continue;
  const knob = Number(parts[0]);
  const passes = Number(parts[1]);
  const qps: number[] = [];
  const cpuQps: number[] = [];
  const meanMs: number[] = [];
  for (let p = 0; p < passes; p++) {
    const cpu0 = runS();
    const start = performance.now();
    for (let i = 0; i < nq; i++) {
      const t = performance.now();
      const params = { mode: 'vector', vector: { value: queries.subarray(i * d, (i + 1) * d), property: vectorProperty }, similarity, limit: k } as const;
      // Vector search answers synchronously unless hooks are registered (none are here).
      const answer = search(db, params as never);
      const res = answer instanceof Promise ? await answer : answer;
      const out = new Int32Array(res.hits.length);
      for (let j = 0; j < out.length; j++) out[j] = Number(res.hits[j].id);
      found[i] = out;
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
  console.log(JSON.stringify({ ef: knob, qps, cpu_qps: cpuQps, mean_ms: meanMs, recall: hits / (nq * k) }));
}
