// npm run bench:groundtruth [-- --n 200000 --d 768 --nq 1000 --k 100]
// Times the native exact top-k (src/groundtruth/exact.ts) against numpy's blocked sgemm on the same
// deterministic data (metric ip, 2 threads each) and checks that they agree on the ids.
// VECBENCH_PYTHON picks the python interpreter (default: Debian's /usr/bin/python3 with
// python3-numpy, the reference the project compares against; else python3 on PATH).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { exactDistance, exactTopK, nativeAvailable } from '../src/groundtruth/exact.ts';

const THREADS = 2;

function intFlag(v: string | undefined, def: number, name: string): number {
  const x = v === undefined ? def : Number(v);
  if (!Number.isInteger(x) || x < 1) throw new Error(`--${name} must be a positive integer (got ${v})`);
  return x;
}

const { values } = parseArgs({
  options: { n: { type: 'string' }, d: { type: 'string' }, nq: { type: 'string' }, k: { type: 'string' } },
});
const n = intFlag(values.n, 200_000, 'n');
const d = intFlag(values.d, 768, 'd');
const nq = intFlag(values.nq, 1_000, 'nq');
const k = intFlag(values.k, 100, 'k');

/** Deterministic clustered data: 64 gaussian-ish centres plus noise (xorshift32, fixed seeds). */
function generate(rows: number, seed: number): Float32Array {
  let x = seed >>> 0;
  const u = (): number => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
  const g = (): number => u() + u() + u() + u() - 2; // approximately normal, sd 0.58
  const centres = new Float32Array(64 * d);
  let c = 0x9e3779b9;
  for (let i = 0; i < centres.length; i++) {
    c ^= c << 13;
    c >>>= 0;
    c ^= c >>> 17;
    c ^= c << 5;
    c >>>= 0;
    centres[i] = (c / 4294967296 - 0.5) * 2;
  }
  const v = new Float32Array(rows * d);
  for (let r = 0; r < rows; r++) {
    const co = Math.floor(u() * 64) * d;
    for (let i = 0; i < d; i++) v[r * d + i] = centres[co + i] + g();
  }
  return v;
}

if (!nativeAvailable()) {
  console.error('bench:groundtruth: the native addon is not built (node scripts/build-native.mjs, needs libopenblas-dev)');
  process.exit(1);
}
const base = generate(n, 1);
const queries = generate(nq, 2);
const dir = mkdtempSync(path.join(tmpdir(), 'vecbench-gt-'));
try {
  // Raw little-endian float32 (every platform node runs on here is little-endian).
  writeFileSync(path.join(dir, 'base.f32'), new Uint8Array(base.buffer, base.byteOffset, base.byteLength));
  writeFileSync(path.join(dir, 'queries.f32'), new Uint8Array(queries.buffer, queries.byteOffset, queries.byteLength));

  const t0 = performance.now();
  const res = exactTopK({ base, n, d, queries, nq, metric: 'ip', k, backend: 'native', threads: THREADS });
  const nativeS = (performance.now() - t0) / 1000;

  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'groundtruth_numpy.py');
  const python = process.env.VECBENCH_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
  const py = spawnSync(python, [script, dir, String(n), String(d), String(nq), String(k)], {
    encoding: 'utf8',
    env: { ...process.env, OPENBLAS_NUM_THREADS: String(THREADS), OMP_NUM_THREADS: String(THREADS) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (py.status !== 0) throw new Error(`${python} ${script} failed (status ${py.status}${py.error ? `, ${py.error.message}` : ''})`);
  const numpyS = (JSON.parse(py.stdout.trim().split('\n').pop()!) as { seconds: number }).seconds;
  const npBuf = readFileSync(path.join(dir, 'numpy_ids.i32'));
  const npIds = new Int32Array(npBuf.buffer, npBuf.byteOffset, nq * k);

  // Agreement: a numpy id counts when native returned it too, or when it ties native's k-th
  // distance (float32 scores order near-equal rows differently from the float64 re-rank).
  let agree = 0;
  for (let q = 0; q < nq; q++) {
    const m = res.counts[q];
    const mine = new Set(res.ids.subarray(q * k, q * k + m));
    const kth = res.dists[q * k + m - 1];
    for (let e = 0; e < m; e++) {
      const id = npIds[q * k + e];
      if (mine.has(id)) agree++;
      else if (id >= 0 && Math.abs(exactDistance('ip', queries, q * d, base, id * d, d) - kth) <= 1e-5 * Math.max(1, Math.abs(kth))) agree++;
    }
  }
  const total = res.counts.reduce((s, c) => s + c, 0);
  console.log(
    `groundtruth native=${nativeS.toFixed(3)}s numpy=${numpyS.toFixed(3)}s ratio=${(numpyS / nativeS).toFixed(2)} agree=${(agree / Math.max(1, total)).toFixed(4)}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
