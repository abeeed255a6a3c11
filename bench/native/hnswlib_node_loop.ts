// A plain Node loop over hnswlib-node, the binding vecbench's hnswlib participant uses: what a
// user of the binding gets without vecbench's host, adapter or timed loop. The same arguments,
// files and stdin / stdout lines as hnswlib_loop.py (bench/harness-overhead.ts), so the gap
// between the two is the binding's and the gap to vecbench is vecbench's own.
//
//   node --import tsx hnswlib_node_loop.ts DIR N D NQ K M EF_CONSTRUCTION SEED SPACE
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';

const require = createRequire(import.meta.url);
const hnswlib = require('hnswlib-node') as typeof import('hnswlib-node');

const [dir, ...rest] = process.argv.slice(2);
const [n, d, nq, k, m, efc, seed] = rest.slice(0, 7).map(Number);
const space = rest[7] as 'ip' | 'l2';
const f32 = (file: string): Float32Array => {
  const b = readFileSync(`${dir}/${file}`);
  return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
};
const base = f32('base.f32');
const gtBuf = readFileSync(`${dir}/gt.i32`);
const gt = new Int32Array(gtBuf.buffer, gtBuf.byteOffset, nq * k);
// The queries as a binding user holds them: plain arrays, converted before any timing.
const qv = f32('queries.f32');
const queries = Array.from({ length: nq }, (_, i) => Array.from(qv.subarray(i * d, (i + 1) * d)));

/** Seconds this process's main thread has run on a CPU (Linux), or NaN. */
const runS = (): number => {
  try {
    return Number(readFileSync('/proc/self/schedstat', 'utf8').split(' ')[0]) / 1e9;
  } catch {
    return Number.NaN;
  }
};

const index = new hnswlib.HierarchicalNSW(space, d);
// replaceDeleted as the participant's settings have it (no effect on a search without deletes).
index.initIndex({ maxElements: n, m, efConstruction: efc, randomSeed: seed, allowReplaceDeleted: true });
const t0 = performance.now();
for (let i = 0; i < n; i++) index.addPoint(Array.from(base.subarray(i * d, (i + 1) * d)), i, true);
const { version } = require('hnswlib-node/package.json') as { version: string };
console.log(JSON.stringify({ ready: true, build_s: (performance.now() - t0) / 1000, version: `hnswlib-node ${version}` }));

const found: number[][] = new Array(nq);
const lat = new Float64Array(nq);
for await (const line of createInterface({ input: process.stdin })) {
  const parts = line.trim().split(/\s+/);
  if (parts[0] === '') continue;
  const ef = Number(parts[0]);
  const passes = Number(parts[1]);
  index.setEf(ef);
  const qps: number[] = [];
  const cpuQps: number[] = [];
  const meanMs: number[] = [];
  for (let p = 0; p < passes; p++) {
    const cpu0 = runS();
    const start = performance.now();
    for (let i = 0; i < nq; i++) {
      const t = performance.now();
      found[i] = index.searchKnn(queries[i], k).neighbors;
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
