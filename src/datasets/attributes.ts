// Filter attributes (docs/method.md §1): cat10 / cat100 / cat1000 / num / tenant come from a hash
// of the row id, so every engine and every size of a dataset family sees the same values;
// `cluster` is the row's k-means cluster; `region` its piece of a balanced partition
// (src/datasets/regions.ts); `lang` is a real attribute where the data has one.
import type { Metric } from '../contracts.ts';
import { hashMod, makeRng } from '../util/hash.ts';

export const NUM_RANGE = 1_000_000;
const SALT = { cat10: 1, cat100: 2, cat1000: 3, num: 4, tenant: 5 } as const;

/** Tenants, numbered by size: tenant 0 is the largest. Sizes follow Zipf's law with this
 * exponent, so the largest holds ~9.5 % of the rows, the median one ~0.035 % (a few dozen rows
 * at 100,000) and the smallest ~0.02 %: a few large tenants and many tiny ones. */
export const TENANTS = 1000;
const TENANT_ZIPF = 0.9;
/** Resolution of the hash a tenant is drawn from. */
const TENANT_UNIT = 2 ** 30;

/** Cumulative share of rows of tenants 0..t, scaled to TENANT_UNIT. */
const TENANT_CDF: Float64Array = (() => {
  const w = Float64Array.from({ length: TENANTS }, (_, t) => 1 / (t + 1) ** TENANT_ZIPF);
  const total = w.reduce((a, b) => a + b, 0);
  let acc = 0;
  return Float64Array.from(w, (x) => (acc += x) * (TENANT_UNIT / total));
})();

/** The tenant of a row id: the first tenant whose cumulative share exceeds the id's hash. */
function tenantOf(id: number): number {
  const u = hashMod(id, SALT.tenant, TENANT_UNIT);
  let lo = 0;
  let hi = TENANTS - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (TENANT_CDF[mid] > u) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

export function hashedAttributes(n: number, firstId = 0): { cat10: Int32Array; cat100: Int32Array; cat1000: Int32Array; num: Int32Array; tenant: Int32Array } {
  const cat10 = new Int32Array(n);
  const cat100 = new Int32Array(n);
  const cat1000 = new Int32Array(n);
  const num = new Int32Array(n);
  const tenant = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const id = firstId + i;
    cat10[i] = hashMod(id, SALT.cat10, 10);
    cat100[i] = hashMod(id, SALT.cat100, 100);
    cat1000[i] = hashMod(id, SALT.cat1000, 1000);
    num[i] = hashMod(id, SALT.num, NUM_RANGE);
    tenant[i] = tenantOf(id);
  }
  return { cat10, cat100, cat1000, num, tenant };
}

function similarity(metric: Metric, a: Float32Array, ao: number, b: Float32Array, bo: number, d: number): number {
  if (metric === 'l2') {
    let s = 0;
    for (let j = 0; j < d; j++) {
      const t = a[ao + j] - b[bo + j];
      s += t * t;
    }
    return -s;
  }
  let s = 0;
  for (let j = 0; j < d; j++) s += a[ao + j] * b[bo + j];
  return s;
}

/** Seeded k-means (Lloyd) on a sample of rows; returns centroids (c x d). For ip / cosine the
 * centroids are renormalised (spherical k-means), matching how the engines rank. */
export function kmeans(
  v: Float32Array,
  n: number,
  d: number,
  c: number,
  metric: Metric,
  seed: number,
  opts: { sample?: number; iterations?: number } = {},
): Float32Array {
  const rng = makeRng(seed);
  const sampleSize = Math.min(n, opts.sample ?? 50_000);
  const sample = new Int32Array(sampleSize);
  // Reservoir-free sample: a seeded partial Fisher-Yates over row ids.
  const perm = new Int32Array(n);
  for (let i = 0; i < n; i++) perm[i] = i;
  for (let i = 0; i < sampleSize; i++) {
    const j = i + Math.floor(rng.uniform() * (n - i));
    const t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
    sample[i] = perm[i];
  }
  const cent = new Float32Array(c * d);
  for (let i = 0; i < c; i++) cent.set(v.subarray(sample[i % sampleSize] * d, sample[i % sampleSize] * d + d), i * d);
  const assign = new Int32Array(sampleSize);
  const sums = new Float64Array(c * d);
  const counts = new Int32Array(c);
  for (let it = 0; it < (opts.iterations ?? 15); it++) {
    sums.fill(0);
    counts.fill(0);
    for (let s = 0; s < sampleSize; s++) {
      const row = sample[s];
      let best = 0;
      let bestSim = -Infinity;
      for (let k = 0; k < c; k++) {
        const sim = similarity(metric, v, row * d, cent, k * d, d);
        if (sim > bestSim) {
          bestSim = sim;
          best = k;
        }
      }
      assign[s] = best;
      counts[best]++;
      for (let j = 0; j < d; j++) sums[best * d + j] += v[row * d + j];
    }
    updateCentroids(cent, sums, counts, d, metric, () => {
      const row = sample[Math.floor(rng.uniform() * sampleSize)];
      return v.subarray(row * d, row * d + d);
    });
  }
  return cent;
}

/** One k-means update: each centroid becomes the mean of its rows (`sums` / `counts`), unit
 * length unless the metric is l2; an empty cluster restarts at the row `restart()` draws. */
export function updateCentroids(cent: Float32Array, sums: Float64Array, counts: Int32Array, d: number, metric: Metric, restart: () => Float32Array): void {
  for (let k = 0; k < counts.length; k++) {
    if (counts[k] === 0) {
      cent.set(restart(), k * d);
      continue;
    }
    let norm = 0;
    for (let j = 0; j < d; j++) {
      const x = sums[k * d + j] / counts[k];
      cent[k * d + j] = x;
      norm += x * x;
    }
    if (metric !== 'l2' && norm > 0) {
      const inv = 1 / Math.sqrt(norm);
      for (let j = 0; j < d; j++) cent[k * d + j] *= inv;
    }
  }
}

/** Nearest and farthest centroid of each row. */
export function assignClusters(
  v: Float32Array,
  rows: number,
  d: number,
  cent: Float32Array,
  c: number,
  metric: Metric,
): { nearest: Int32Array; farthest: Int32Array } {
  const nearest = new Int32Array(rows);
  const farthest = new Int32Array(rows);
  for (let i = 0; i < rows; i++) {
    let best = 0;
    let worst = 0;
    let bestSim = -Infinity;
    let worstSim = Infinity;
    for (let k = 0; k < c; k++) {
      const sim = similarity(metric, v, i * d, cent, k * d, d);
      if (sim > bestSim) {
        bestSim = sim;
        best = k;
      }
      if (sim < worstSim) {
        worstSim = sim;
        worst = k;
      }
    }
    nearest[i] = best;
    farthest[i] = worst;
  }
  return { nearest, farthest };
}

/** A language for each query other than its own, chosen by hash (deterministic). */
export function otherLanguages(ownLang: Int32Array, langs: number, salt = 7): Int32Array {
  const out = new Int32Array(ownLang.length);
  for (let i = 0; i < ownLang.length; i++) {
    const shift = 1 + hashMod(i, salt, langs - 1);
    out[i] = (ownLang[i] + shift) % langs;
  }
  return out;
}
