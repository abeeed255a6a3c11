// A plain Node loop over @orama/orama for vecbench's orama participant (bench/harness-overhead.ts):
// Orama is JavaScript, so this is its native interface. It loads the database the participant
// saved after its build (one columns file: a 4-byte little-endian header length, a JSON header
// whose meta holds Orama's save() with the vectors left out, then the vectors as float32 rows
// beside their internal ids) through Orama's own load(), the vectors put back in the form
// Orama's save() gives them, and asks the adapter's search: mode 'vector', the same
// similarity threshold, limit k, no where clause. Orama has no search knob: the KNOB of each
// stdin line is echoed and ignored.
//
//   node --import tsx orama_loop.ts SAVED_FILE DIR NQ D K SIMILARITY STEMMING [--adapter ...]
// (--adapter: the participant's adapter timed in this process too, loop-common.ts's adapterMode)
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type AnyOrama, type AnySchema, create, load, type RawData, search } from '@orama/orama';
import { adapterMode, f32, serve } from './loop-common.ts';

const [saved, dir, nqArg, dArg, kArg, similarityArg, stemmingArg] = process.argv.slice(2);
const [nq, d, k, similarity] = [nqArg, dArg, kArg, similarityArg].map(Number);
const stemming = stemmingArg === 'true';
const version = (createRequire(import.meta.url)('@orama/orama/package.json') as { version: string }).version;

const queries = f32(dir, 'queries.f32');

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

await serve(
  dir,
  nq,
  k,
  {
    setKnob: () => {},
    search: (i: number) => {
      const params = { mode: 'vector', vector: { value: queries.subarray(i * d, (i + 1) * d), property: vectorProperty }, similarity, limit: k } as const;
      // Vector search answers synchronously unless hooks are registered (none are here).
      const answer = search(db, params as never);
      const ids = (res: Awaited<typeof answer>): Int32Array => Int32Array.from(res.hits, (h) => Number(h.id));
      return answer instanceof Promise ? answer.then(ids) : ids(answer);
    },
  },
  await adapterMode(dir, queries, d, k),
);
