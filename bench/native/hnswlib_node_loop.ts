// A plain Node loop over hnswlib-node, the binding vecbench's hnswlib participant uses: what a
// user of the binding gets without vecbench's host, adapter or timed loop. The same arguments,
// files and stdin / stdout lines as hnswlib_loop.py (bench/harness-overhead.ts), so the gap
// between the two is the binding's and the gap to vecbench is vecbench's own.
//
//   node --import tsx hnswlib_node_loop.ts DIR N D NQ K M EF_CONSTRUCTION SEED SPACE
import { createRequire } from 'node:module';
import { f32, serve } from './loop-common.ts';

const require = createRequire(import.meta.url);
const hnswlib = require('hnswlib-node') as typeof import('hnswlib-node');

const [dir, ...rest] = process.argv.slice(2);
const [n, d, nq, k, m, efc, seed] = rest.slice(0, 7).map(Number);
const space = rest[7] as 'ip' | 'l2';
const base = f32(dir, 'base.f32');
// The queries as a binding user holds them: plain arrays, converted before any timing.
const qv = f32(dir, 'queries.f32');
const queries = Array.from({ length: nq }, (_, i) => Array.from(qv.subarray(i * d, (i + 1) * d)));

const index = new hnswlib.HierarchicalNSW(space, d);
// replaceDeleted as the participant's settings have it (no effect on a search without deletes).
index.initIndex({ maxElements: n, m, efConstruction: efc, randomSeed: seed, allowReplaceDeleted: true });
const t0 = performance.now();
for (let i = 0; i < n; i++) index.addPoint(Array.from(base.subarray(i * d, (i + 1) * d)), i, true);
const { version } = require('hnswlib-node/package.json') as { version: string };
console.log(JSON.stringify({ ready: true, build_s: (performance.now() - t0) / 1000, version: `hnswlib-node ${version}` }));

await serve(dir, nq, k, {
  setKnob: (ef) => index.setEf(ef),
  search: (i) => index.searchKnn(queries[i], k).neighbors,
});
