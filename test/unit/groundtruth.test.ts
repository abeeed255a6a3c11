import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Metric } from '../../src/contracts.ts';
import { exactDistance, exactTopK, nativeAvailable, type Backend, type ExactArgs, type ExactResult } from '../../src/groundtruth/exact.ts';

const METRICS: Metric[] = ['ip', 'cosine', 'l2'];
const BACKENDS: Backend[] = ['native', 'js'];

function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

function gauss(r: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
}

function normalizeRows(v: Float32Array, d: number): void {
  for (let o = 0; o < v.length; o += d) {
    let s = 0;
    for (let i = 0; i < d; i++) s += v[o + i] * v[o + i];
    const inv = 1 / Math.sqrt(s || 1);
    for (let i = 0; i < d; i++) v[o + i] *= inv;
  }
}

/** Clustered gaussian rows; unit length for cosine. */
function clustered(seed: number, n: number, d: number, metric: Metric, clusters = 8): Float32Array {
  const r = rng(seed);
  const centers = Array.from({ length: clusters }, () => Float32Array.from({ length: d }, () => 2 * gauss(r)));
  const v = new Float32Array(n * d);
  for (let j = 0; j < n; j++) {
    const c = centers[Math.floor(r() * clusters)];
    for (let i = 0; i < d; i++) v[j * d + i] = c[i] + gauss(r);
  }
  if (metric === 'cosine') normalizeRows(v, d);
  return v;
}

/** Small integer entries: sgemm is exact, and equal distances are frequent. */
function integerRows(seed: number, n: number, d: number): Float32Array {
  const r = rng(seed);
  return Float32Array.from({ length: n * d }, () => Math.floor(r() * 3) - 1);
}

/** The obvious O(n * nq * d) computation: every distance, full sort by (distance, id). */
function naive(a: ExactArgs): { ids: number[][]; dists: number[][] } {
  const { base, d, queries, nq, metric, k } = a;
  const cand = a.rows ? Array.from(a.rows) : Array.from({ length: a.n }, (_, i) => i);
  const ids: number[][] = [],
    dists: number[][] = [];
  for (let q = 0; q < nq; q++) {
    const scored = cand.map((id) => {
      let s = 0;
      for (let i = 0; i < d; i++) {
        const x = queries[q * d + i],
          y = base[id * d + i];
        s += metric === 'l2' ? (x - y) * (x - y) : x * y;
      }
      const dist = metric === 'l2' ? Math.sqrt(s) : metric === 'ip' ? -s : 1 - s;
      return { id, dist };
    });
    scored.sort((u, v) => u.dist - v.dist || u.id - v.id);
    const top = scored.slice(0, k);
    ids.push(top.map((t) => t.id));
    dists.push(top.map((t) => t.dist));
  }
  return { ids, dists };
}

function checkAgainstNaive(args: ExactArgs, res: ExactResult): void {
  const want = naive(args);
  const { k, nq } = args;
  assert.equal(res.k, k);
  assert.equal(res.nq, nq);
  assert.equal(res.ids.length, nq * k);
  assert.equal(res.dists.length, nq * k);
  assert.equal(res.counts.length, nq);
  const cands = args.rows ? args.rows.length : args.n;
  for (let q = 0; q < nq; q++) {
    const m = Math.min(k, cands);
    assert.equal(res.counts[q], m, `counts[${q}]`);
    assert.deepEqual(Array.from(res.ids.subarray(q * k, q * k + m)), want.ids[q], `ids of query ${q}`);
    for (let e = 0; e < m; e++) {
      const got = res.dists[q * k + e],
        exp = want.dists[q][e];
      assert.ok(Math.abs(got - exp) <= 1e-6 * Math.max(1, Math.abs(exp)), `dist q=${q} e=${e}: ${got} vs ${exp}`);
      // Every reported distance is exactly exactDistance of the reported id, rounded to float32.
      assert.equal(got, Math.fround(exactDistance(args.metric, args.queries, q * args.d, args.base, res.ids[q * k + e] * args.d, args.d)));
    }
    for (let e = m; e < k; e++) {
      assert.equal(res.ids[q * k + e], -1, `padding id q=${q} e=${e}`);
      assert.equal(res.dists[q * k + e], Infinity, `padding dist q=${q} e=${e}`);
    }
  }
}

function requireNative(backend: Backend): void {
  if (backend === 'native') {
    assert.ok(
      nativeAvailable(),
      'native addon native/build/Release/topk.node is missing or does not load: run `node scripts/build-native.mjs` (needs libopenblas-dev)',
    );
  }
}

describe('exactTopK against a naive computation', () => {
  for (const backend of BACKENDS) {
    for (const metric of METRICS) {
      it(`${backend} ${metric}: all rows, subset rows, k > candidates`, () => {
        requireNative(backend);
        const n = 1500,
          d = 37,
          nq = 11;
        const base = clustered(1, n, d, metric);
        // Deliberate exact ties: rows 100..104 copy row 7, and query 0 is row 7 itself.
        for (const j of [100, 101, 102, 103, 104]) base.copyWithin(j * d, 7 * d, 8 * d);
        const queries = clustered(2, nq, d, metric);
        queries.set(base.subarray(7 * d, 8 * d), 0);
        const r = rng(3);
        const rows = Int32Array.from({ length: n }, (_, i) => i).filter(() => r() < 0.03);
        rows.reverse(); // order of the row ids must not matter
        const all: ExactArgs = { base, n, d, queries, nq, metric, k: 10, backend };
        checkAgainstNaive(all, exactTopK(all));
        const sub: ExactArgs = { ...all, rows, k: 10 };
        checkAgainstNaive(sub, exactTopK(sub));
        const big: ExactArgs = { ...all, rows: rows.subarray(0, 20), k: 30 };
        checkAgainstNaive(big, exactTopK(big));
        const bigAll: ExactArgs = { base: base.subarray(0, 25 * d), n: 25, d, queries, nq, metric, k: 40, backend };
        checkAgainstNaive(bigAll, exactTopK(bigAll));
        const none: ExactArgs = { ...all, rows: new Int32Array(0), k: 5 };
        checkAgainstNaive(none, exactTopK(none));
        // One query, as the exact participant searches (the native backend's matrix-vector path).
        const one: ExactArgs = { ...all, queries: queries.subarray(0, d), nq: 1 };
        checkAgainstNaive(one, exactTopK(one));
        checkAgainstNaive({ ...one, rows }, exactTopK({ ...one, rows }));
      });

      it(`${backend} ${metric}: exact ties are broken by the smaller row id`, () => {
        requireNative(backend);
        const n = 3000,
          d = 6,
          nq = 9;
        const base = integerRows(4, n, d);
        const queries = integerRows(5, nq, d);
        // Duplicated rows spread across native row blocks.
        for (const j of [2999, 2500, 1536, 1535, 1024, 40]) base.copyWithin(j * d, 13 * d, 14 * d);
        queries.set(base.subarray(13 * d, 14 * d), 0);
        const args: ExactArgs = { base, n, d, queries, nq, metric, k: 25, backend, threads: 2 };
        const res = exactTopK(args);
        checkAgainstNaive(args, res);
        const rows = Int32Array.from({ length: 1200 }, (_, i) => (i * 7) % n);
        const sub: ExactArgs = { ...args, rows, threads: 1 };
        checkAgainstNaive(sub, exactTopK(sub));
      });
    }
  }

  it('exactDistance', () => {
    const a = Float32Array.from([1, 2, 3, 0]),
      b = Float32Array.from([9, 4, -1, 2, 5]);
    assert.equal(exactDistance('ip', a, 0, b, 1, 3), -(4 - 2 + 6));
    assert.equal(exactDistance('cosine', a, 0, b, 1, 3), 1 - 8);
    assert.equal(exactDistance('l2', a, 1, b, 2, 2), Math.sqrt(9 + 1));
  });

  it('VECBENCH_GT_BACKEND=js makes auto pick js', () => {
    const base = clustered(6, 50, 4, 'ip'),
      queries = clustered(7, 2, 4, 'ip');
    const prev = process.env.VECBENCH_GT_BACKEND;
    process.env.VECBENCH_GT_BACKEND = 'js';
    try {
      assert.equal(exactTopK({ base, n: 50, d: 4, queries, nq: 2, metric: 'ip', k: 3 }).backend, 'js');
    } finally {
      if (prev === undefined) delete process.env.VECBENCH_GT_BACKEND;
      else process.env.VECBENCH_GT_BACKEND = prev;
    }
    assert.equal(exactTopK({ base, n: 50, d: 4, queries, nq: 2, metric: 'ip', k: 3 }).backend, nativeAvailable() ? 'native' : 'js');
  });
});

describe('native and js agree on clustered data', () => {
  for (const metric of METRICS) {
    for (const subset of [false, true]) {
      it(`${metric}${subset ? ' with rows' : ''}`, () => {
        requireNative('native');
        const n = 5000,
          d = 96,
          nq = 40,
          k = 50;
        const base = clustered(10, n, d, metric, 12);
        const queries = clustered(11, nq, d, metric, 12);
        const r = rng(12);
        const rows = subset ? Int32Array.from({ length: n }, (_, i) => i).filter(() => r() < 0.4) : undefined;
        const args: ExactArgs = { base, n, d, queries, nq, metric, k, rows };
        const a = exactTopK({ ...args, backend: 'native' });
        const b = exactTopK({ ...args, backend: 'js' });
        assert.equal(a.backend, 'native');
        assert.equal(b.backend, 'js');
        assert.deepEqual(a.counts, b.counts);
        for (let q = 0; q < nq; q++) {
          const m = a.counts[q];
          const kth = Math.max(a.dists[q * k + m - 1], b.dists[q * k + m - 1]);
          const setB = new Set(b.ids.subarray(q * k, q * k + m));
          for (let e = 0; e < m; e++) {
            const da = a.dists[q * k + e],
              db = b.dists[q * k + e];
            assert.ok(Math.abs(da - db) <= 1e-5 * Math.max(1, Math.abs(da)), `q=${q} e=${e}: ${da} vs ${db}`);
            // Ties aside: an id clearly inside the top-k must be found by both backends.
            if (kth - da > 1e-6 * Math.max(1, Math.abs(da))) assert.ok(setB.has(a.ids[q * k + e]), `q=${q}: id ${a.ids[q * k + e]} missing from js`);
          }
        }
      });
    }
  }
});

describe('native selection at large k', () => {
  // The addon keeps, per query, a threshold and a buffer of the rows that reach it, cut back to
  // the kk best by quickselect whenever it fills (kk = k + 8 + k/8); groups of 256 queries,
  // the rows split into ranges when there are fewer groups than threads, ranges merged at the
  // end. Integer entries keep sgemm exact, so both backends must return the same lists.
  for (const metric of METRICS) {
    it(`${metric}: many cuts, several query groups, split rows, equal to js and naive`, () => {
      requireNative('native');
      const n = 4000,
        d = 8,
        k = 300;
      const base = integerRows(20, n, d);
      const queries = integerRows(21, 300, d);
      const r = rng(22);
      const rows = Int32Array.from({ length: n }, (_, i) => i)
        .filter(() => r() < 0.6)
        .reverse();
      for (const [nq, threads] of [
        [300, 2],
        [5, 2],
        [5, 3],
        [300, 1],
      ] as const) {
        for (const sub of [undefined, rows]) {
          const args: ExactArgs = { base, n, d, queries: queries.subarray(0, nq * d), nq, metric, k, rows: sub, threads };
          const a = exactTopK({ ...args, backend: 'native' });
          const b = exactTopK({ ...args, backend: 'js' });
          assert.deepEqual(a.ids, b.ids, `ids, nq=${nq} threads=${threads} rows=${sub !== undefined}`);
          assert.deepEqual(a.dists, b.dists, `dists, nq=${nq} threads=${threads} rows=${sub !== undefined}`);
          assert.deepEqual(a.counts, b.counts);
          if (nq === 5) checkAgainstNaive(args, a);
        }
      }
    });
  }

  it('rows stored in order of improving score (every row raises the threshold)', () => {
    requireNative('native');
    // Row j points along the query direction with a length growing with j (ip), so a sweep in
    // row order would admit every row; plus copies of the best row near both ends (ties).
    const n = 5000,
      d = 4,
      nq = 3,
      k = 700;
    const base = new Float32Array(n * d);
    for (let j = 0; j < n; j++) base.set([1 + j / 64, (j % 7) / 8, 0, 0], j * d);
    for (const j of [1, 2, 4990]) base.copyWithin(j * d, (n - 1) * d, n * d);
    const queries = Float32Array.from([1, 0, 0, 0, 1, 0.5, 0, 0, 0.5, 1, 0, 0]);
    for (const threads of [1, 2]) {
      const args: ExactArgs = { base, n, d, queries, nq, metric: 'ip', k, threads, backend: 'native' };
      checkAgainstNaive(args, exactTopK(args));
    }
  });
});

describe('exactTopK input validation', () => {
  const n = 20,
    d = 4,
    nq = 3;
  const good = (): ExactArgs => ({
    base: new Float32Array(n * d).fill(1),
    n,
    d,
    queries: new Float32Array(nq * d).fill(1),
    nq,
    metric: 'ip',
    k: 5,
    backend: 'js',
  });
  const cases: [string, Partial<ExactArgs> | Record<string, unknown>, RegExp][] = [
    ['base length', { base: new Float32Array(n * d - 1) }, /\bbase\b/],
    ['base type', { base: new Float64Array(n * d) }, /\bbase\b/],
    ['queries length', { queries: new Float32Array(nq * d + 4) }, /\bqueries\b/],
    ['n', { n: 21 }, /\bbase\b|\bn\b/],
    ['n not an integer', { n: 2.5 }, /\bn\b/],
    ['d', { d: 0 }, /\bd\b/],
    ['nq', { nq: -1 }, /\bnq\b/],
    ['k zero', { k: 0 }, /\bk\b/],
    ['k NaN', { k: Number.NaN }, /\bk\b/],
    ['metric', { metric: 'dot' }, /\bmetric\b/],
    ['rows out of range', { rows: Int32Array.from([0, 20]) }, /\brows\b/],
    ['rows negative', { rows: Int32Array.from([-1]) }, /\brows\b/],
    ['rows duplicate', { rows: Int32Array.from([3, 4, 3]) }, /\brows\b/],
    ['rows type', { rows: [1, 2] }, /\brows\b/],
    ['threads', { threads: 0 }, /\bthreads\b/],
    ['backend', { backend: 'gpu' }, /\bbackend\b/],
  ];
  for (const [name, patch, re] of cases) {
    it(name, () => {
      for (const backend of ['js', 'auto'] as const) {
        assert.throws(
          () => exactTopK({ ...good(), backend, ...patch } as ExactArgs),
          (err: unknown) => err instanceof Error && re.test(err.message),
        );
      }
    });
  }
  it('valid arguments pass', () => {
    assert.equal(exactTopK(good()).counts[0], 5);
  });
});
