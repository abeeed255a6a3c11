// The `synthetic` generator: embedding-like data that is clustered, anisotropic and of low
// intrinsic dimension, then unit-normalised (so metric ip = cosine). Uniform random noise is
// useless for benchmarking: in high dimensions every point is nearly equidistant and every
// ANN index looks broken. Deterministic by seed; queries are held out (drawn from the same
// distribution, never copied from the base set).
import { UserError } from '../util/errors.ts';
import { makeRng } from '../util/hash.ts';
import { assignClusters, hashedAttributes, kmeans, otherLanguages } from '../datasets/attributes.ts';
import type { Dataset, PreparedData } from '../datasets/layout.ts';
import { PreparedWriter } from './sources/writer.ts';
import { yieldToSignals } from '../util/at-exit.ts';
import { buildRegionTree, regionsOf } from '../datasets/regions.ts';
import { noRealQueries, noRealRows } from '../datasets/real-attributes.ts';

const SYNTHETIC_DEFAULTS = { d: 128, latent: 24, generators: 64, clusters: 50, seed: 42 };
/** What a set named with an intrinsic dimension (`-i<L>`) is made of instead: its L latent
 * directions all spread alike (no decaying spectrum), its generating clusters overlap (centres
 * drawn with a spread of 0.25 per direction, the clusters' own 0.25-1) and the isotropic noise is
 * larger. Chosen by measurement: at 20k x 128 and L = 64, an HNSW graph (M 16, efConstruction
 * 200) finds 0.53 of the 10 nearest at ef 10 and 0.877 of the 100 nearest at ef 100, where the
 * default model gives 0.96 and 1.000; 0.99 of the 10 nearest takes ef 192 (300 queries;
 * docs/method.md, "Datasets"). */
const INTRINSIC_MODEL = { centreScale: 0.25, noise: 0.2 };
/** The default model: a few directions carry most of the variance, clusters stand apart. */
const DECAYING_MODEL = { centreScale: 1.6, noise: 0.08 };

/** Options of the generator: the defaults above, or `intrinsic` for the model of that name. */
export type SyntheticOptions = Partial<typeof SYNTHETIC_DEFAULTS> & { intrinsic?: number };
/** A base larger than this is generated block by block straight to disk (prepareSyntheticStreamed),
 * in memory for a block, the k-means sample and the queries: a set meant not to fit in RAM
 * (the disk tier) must not need RAM to be made. */
export const STREAM_ABOVE_BYTES = 1 << 30;
/** Held-out queries of a generated set unless its name says (-q<Q>): the cold protocol answers
 * each (point, view) with its own slice of at least 1,000 of them (docs/measurement.md), so
 * 10,000 cover ten slices before any query is asked twice; the price is ground truth over them,
 * out of core for a set made to disk. The disk tier asks for more (src/commands/tiers.ts). */
const SYNTHETIC_QUERIES = 10_000;
/** Bounds of `-q<Q>`: enough queries for a group's first and one point; at most what a
 * generated set's ground truth computes in minutes rather than hours at a million rows. */
const MIN_SYNTHETIC_QUERIES = 100;
const MAX_SYNTHETIC_QUERIES = 100_000;
/** Rows per generated block: about 16 MB of float32. */
const blockRows = (d: number) => Math.max(1, Math.floor((16 << 20) / (4 * d)));
/** Language codes and the generator clusters' skew give per-language shares of ~1-17 %. */
const SYNTHETIC_LANGS = ['en', 'de', 'fr', 'es', 'ja', 'zh', 'ru', 'pt', 'it', 'ko'];

/** Most dimensions a generated set may have (the widest common embedding models give 4,096). */
const MAX_SYNTHETIC_D = 4096;

/** `synthetic-<N>[-<D>][-i<L>][-q<Q>]`: rows (with k or m), dimension (default 128), when asked
 * the intrinsic dimension (INTRINSIC_MODEL) and the held-out queries (default 10,000; with k) are
 * part of the name, so users can ask for any size, width, difficulty and query set, and results
 * say which they measured. */
export function parseSyntheticName(name: string): { n: number; nq: number; d: number; intrinsic?: number } | null {
  const m = /^synthetic-(\d+)(k|m)?(?:-(\d+))?(?:-i(\d+))?(?:-q(\d+)(k)?)?$/.exec(name);
  if (!m) return null;
  const n = Number(m[1]) * (m[2] === 'k' ? 1000 : m[2] === 'm' ? 1_000_000 : 1);
  if (n < 100) throw new UserError(`dataset ${name}: synthetic sets need at least 100 rows; try synthetic-20k`);
  const d = m[3] === undefined ? SYNTHETIC_DEFAULTS.d : Number(m[3]);
  if (!(d >= 2 && d <= MAX_SYNTHETIC_D))
    throw new UserError(`dataset ${name}: the dimension after the rows must be 2 to ${MAX_SYNTHETIC_D}, e.g. synthetic-20k-768`);
  const intrinsic = m[4] === undefined ? undefined : Number(m[4]);
  if (intrinsic !== undefined && !(intrinsic >= 1 && intrinsic <= d))
    throw new UserError(`dataset ${name}: the intrinsic dimension after -i must be 1 to the dimension (${d}), e.g. synthetic-20k-128-i64`);
  const nq = m[5] === undefined ? SYNTHETIC_QUERIES : Number(m[5]) * (m[6] === 'k' ? 1000 : 1);
  if (!(nq >= MIN_SYNTHETIC_QUERIES && nq <= MAX_SYNTHETIC_QUERIES))
    throw new UserError(
      `dataset ${name}: the queries after -q must be ${MIN_SYNTHETIC_QUERIES} to ${MAX_SYNTHETIC_QUERIES / 1000}k, e.g. synthetic-1m-768-q20k`,
    );
  // A point answers a seeded subset of the queries (--queries).
  return { n, nq, d, ...(intrinsic !== undefined ? { intrinsic } : {}) };
}

/** The generator's seeded model: a latent space, its generating clusters and the projection to
 * d dimensions. draw() makes the next rows in the seed's sequence, so drawing n rows at once or
 * in blocks gives the same rows. */
function syntheticModel(opts: SyntheticOptions) {
  const { d, latent, generators: G, clusters, seed } = { ...SYNTHETIC_DEFAULTS, ...opts };
  const flat = opts.intrinsic !== undefined;
  const L = opts.intrinsic ?? latent;
  const { centreScale, noise } = flat ? INTRINSIC_MODEL : DECAYING_MODEL;
  const rng = makeRng(seed);
  // A fixed random projection from the latent space gives correlated, anisotropic dimensions.
  const proj = new Float32Array(d * L);
  for (let i = 0; i < proj.length; i++) proj[i] = rng.normal() / Math.sqrt(L);
  // Generator clusters: Zipf-like sizes, own centres and own per-axis spreads.
  const weights = new Float64Array(G);
  let wsum = 0;
  for (let g = 0; g < G; g++) wsum += weights[g] = 1 / (g + 1) ** 0.6;
  const cdf = new Float64Array(G);
  let acc = 0;
  for (let g = 0; g < G; g++) cdf[g] = acc += weights[g] / wsum;
  const centres = new Float32Array(G * L);
  const spreads = new Float32Array(G * L);
  for (let g = 0; g < G; g++) {
    for (let j = 0; j < L; j++) {
      centres[g * L + j] = centreScale * rng.normal();
      // A decaying spectrum: a few directions carry most of the variance (flat: all alike).
      spreads[g * L + j] = (0.25 + 0.75 * rng.uniform()) / (flat ? 1 : Math.sqrt(1 + j * 0.5));
    }
  }
  const genLang = new Int32Array(G);
  for (let g = 0; g < G; g++) genLang[g] = g % SYNTHETIC_LANGS.length;

  const z = new Float64Array(L);
  const draw = (count: number, out: Float32Array, langOut: Int32Array) => {
    for (let i = 0; i < count; i++) {
      const u = rng.uniform();
      let g = 0;
      while (g < G - 1 && cdf[g] < u) g++;
      for (let j = 0; j < L; j++) z[j] = centres[g * L + j] + spreads[g * L + j] * rng.normal();
      let norm = 0;
      const o = i * d;
      for (let r = 0; r < d; r++) {
        let x = noise * rng.normal();
        for (let j = 0; j < L; j++) x += proj[r * L + j] * z[j];
        out[o + r] = x;
        norm += x * x;
      }
      const inv = 1 / Math.sqrt(norm);
      for (let r = 0; r < d; r++) out[o + r] *= inv;
      // Language follows the generator cluster 85 % of the time: a real attribute that
      // agrees with the vector, like the language of a paragraph.
      langOut[i] = rng.uniform() < 0.85 ? genLang[g] : Math.floor(rng.uniform() * SYNTHETIC_LANGS.length);
    }
  };
  // What the source record says of the model (a set with an intrinsic dimension names it).
  const model = { d, latent: L, generators: G, ...(flat ? { intrinsic: L } : {}) };
  return { d, L, G, clusters, seed, draw, model };
}

export function generateSynthetic(n: number, nq: number, opts: SyntheticOptions = {}): PreparedData {
  const { d, clusters, seed, draw, model } = syntheticModel(opts);
  const base = new Float32Array(n * d);
  const lang = new Int32Array(n);
  draw(n, base, lang);
  const queries = new Float32Array(nq * d);
  const qlang = new Int32Array(nq);
  draw(nq, queries, qlang);

  const cent = kmeans(base, n, d, clusters, 'ip', seed + 1);
  const rowsC = assignClusters(base, n, d, cent, clusters, 'ip');
  const qC = assignClusters(queries, nq, d, cent, clusters, 'ip');
  const regions = buildRegionTree(base, n, d);
  return {
    n,
    d,
    nq,
    metric: 'ip',
    base,
    queries,
    attrs: { ...hashedAttributes(n), cluster: rowsC.nearest, lang, region: regionsOf(regions, base, n), ...noRealRows(n) },
    queryAttrs: {
      cluster: qC.nearest,
      far_cluster: qC.farthest,
      lang: qlang,
      other_lang: otherLanguages(qlang, SYNTHETIC_LANGS.length),
      region: regionsOf(regions, queries, nq),
      ...noRealQueries(nq),
    },
    clusters,
    langs: SYNTHETIC_LANGS,
    source: { generator: 'synthetic', seed, ...model },
  };
}

/** Generates a set block by block into the prepared layout (src/prepare/sources/writer.ts): the
 * same rows and queries generateSynthetic makes for the seed; clusters from k-means on a sample. */
export async function prepareSyntheticStreamed(
  dataDir: string,
  name: string,
  n: number,
  nq: number,
  opts: SyntheticOptions & { quiet?: boolean } = {},
): Promise<Dataset> {
  const { d, clusters, seed, draw, model } = syntheticModel(opts);
  const writer = new PreparedWriter({ dataDir, name, d, metric: 'ip', rows: n, clusters, seed, quiet: opts.quiet });
  try {
    const rows = blockRows(d);
    const block = new Float32Array(rows * d);
    const lang = new Int32Array(rows);
    for (let done = 0; done < n; done += rows) {
      const count = Math.min(rows, n - done);
      draw(count, block, lang);
      writer.appendBase(block.subarray(0, count * d), count, lang.subarray(0, count));
      // A set of gigabytes takes minutes: a signal meanwhile stops it (the writer's temporary
      // directory goes with it).
      await yieldToSignals();
    }
    const queries = new Float32Array(nq * d);
    const qlang = new Int32Array(nq);
    draw(nq, queries, qlang);
    writer.setQueries(queries, nq, qlang);
    return await writer.finish({ source: { generator: 'synthetic', seed, ...model, streamed: true }, langs: SYNTHETIC_LANGS });
  } catch (e) {
    writer.abort();
    throw e;
  }
}
