// A streaming writer for the prepared layout (docs/contracts.md, "Prepared dataset"): the files
// and manifest of layout.ts's writePrepared, but base rows arrive in blocks and go straight to
// disk (memory for one block, the k-means sample and the queries). It writes `<name>.tmp-<pid>`
// and renames it at the end, so an interrupted prepare leaves no half-written set; its temporary
// directory goes on an error or a signal, or at the next prepare (src/datasets/preparing.ts).
import { createHash, type Hash } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ATTRIBUTES, type AttrName, type Metric } from '../../contracts.ts';
import { UserError, diskFullError } from '../../util/errors.ts';
import { makeRng } from '../../util/hash.ts';
import { Progress } from '../../util/progress.ts';
import { writeJsonAtomic } from '../../util/atomic.ts';
import { assignClusters, hashedAttributes, otherLanguages, updateCentroids } from '../../datasets/attributes.ts';
import { buildRegionTree, regionsOf } from '../../datasets/regions.ts';
import { exactTopK } from '../../groundtruth/exact.ts';
import { clearStalePrepares, TempDatasetDir } from '../../datasets/preparing.ts';
import { yieldToSignals } from '../../util/at-exit.ts';
import { DATASET_FORMAT, QUERY_ATTRIBUTES, datasetDir, fileNames, loadDataset } from '../../datasets/layout.ts';
import type { Dataset, Manifest, QueryAttrName } from '../../datasets/layout.ts';
import {
  checkRealSizes,
  noRealQueries,
  REAL_QUERY_ATTRIBUTES,
  REAL_ROW_ATTRIBUTES,
  type RealAttributeValues,
  realQueryAttributes,
} from '../../datasets/real-attributes.ts';

const DEFAULT_CLUSTERS = 50;
const KMEANS_SAMPLE = 50_000;
/** Query language code meaning "none": a set with one language asks no language groups. */
export const NO_LANGUAGE = -1;

class HashedFile {
  private readonly fd: number;
  private readonly hash: Hash = createHash('sha256');
  bytes = 0;
  constructor(readonly path: string) {
    try {
      this.fd = openSync(path, 'w');
    } catch (e) {
      throw diskFullError(e, path) ?? e;
    }
  }
  write(data: Uint8Array): void {
    let off = 0;
    try {
      while (off < data.length) off += writeSync(this.fd, data, off, data.length - off);
    } catch (e) {
      // A full disk names this file; the writer's abort removes the temporary directory.
      throw diskFullError(e, this.path) ?? e;
    }
    this.hash.update(data);
    this.bytes += data.length;
  }
  /** fsyncs and closes; returns the manifest entry. */
  finish(): { bytes: number; sha256: string } {
    try {
      fsyncSync(this.fd);
    } catch (e) {
      throw diskFullError(e, this.path) ?? e;
    }
    closeSync(this.fd);
    return { bytes: this.bytes, sha256: this.hash.digest('hex') };
  }
  abort(): void {
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
  }
}

const bytesOf = (a: Float32Array | Int32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** Checks one block of input rows (finite values; no zero vector under cosine) and, for
 * cosine, scales each row to unit length in place. Errors name the input file and row. */
export function checkAndNormalise(block: Float32Array, rows: number, d: number, metric: Metric, label: string, firstRow: number): void {
  for (let i = 0; i < rows; i++) {
    let norm = 0;
    const o = i * d;
    for (let j = 0; j < d; j++) {
      const x = block[o + j];
      if (!Number.isFinite(x)) {
        throw new UserError(`${label}: row ${firstRow + i} has ${Number.isNaN(x) ? 'NaN' : 'Inf'} at dimension ${j}; fix the input file and prepare again`);
      }
      norm += x * x;
    }
    if (metric === 'cosine') {
      if (norm === 0) throw new UserError(`${label}: row ${firstRow + i} is a zero vector, which has no cosine; drop it from the input or use --metric l2`);
      const inv = 1 / Math.sqrt(norm);
      for (let j = 0; j < d; j++) block[o + j] *= inv;
    }
  }
}

/** Each row's nearest centroid, with the exact top-k machinery (BLAS when the native addon
 * is built): real sets have millions of rows, and a scalar loop over rows x centroids x d
 * would take hours. Ties go to the lower centroid number. */
function nearestCentroids(v: Float32Array, rows: number, d: number, cent: Float32Array, c: number, metric: Metric): Int32Array {
  const r = exactTopK({ base: cent, n: c, d, queries: v, nq: rows, metric, k: 1 });
  return r.ids;
}

/** Seeded Lloyd k-means on the reservoir sample (spherical for ip / cosine: centroids are
 * renormalised, as the engines rank by inner product). Initial centroids are rows of a seeded
 * shuffle of the sample; an empty cluster restarts at a random sample row. */
function sampledKmeans(
  sample: Float32Array,
  rows: number,
  d: number,
  c: number,
  metric: Metric,
  seed: number,
  what: string,
  quiet?: boolean,
  iterations = 15,
): Float32Array {
  const rng = makeRng(seed);
  const order = Int32Array.from({ length: rows }, (_, i) => i);
  for (let i = 0; i < Math.min(c, rows); i++) {
    const j = i + Math.floor(rng.uniform() * (rows - i));
    const t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  const cent = new Float32Array(c * d);
  for (let k = 0; k < c; k++) cent.set(sample.subarray(order[k % rows] * d, order[k % rows] * d + d), k * d);
  const sums = new Float64Array(c * d);
  const counts = new Int32Array(c);
  const progress = new Progress(what, iterations, quiet);
  for (let it = 0; it < iterations; it++) {
    const assign = nearestCentroids(sample.subarray(0, rows * d), rows, d, cent, c, metric);
    sums.fill(0);
    counts.fill(0);
    for (let s = 0; s < rows; s++) {
      const k = assign[s];
      counts[k]++;
      for (let j = 0, o = s * d, ko = k * d; j < d; j++) sums[ko + j] += sample[o + j];
    }
    updateCentroids(cent, sums, counts, d, metric, () => {
      const row = Math.floor(rng.uniform() * rows);
      return sample.subarray(row * d, row * d + d);
    });
    progress.update(it + 1);
  }
  return cent;
}

interface WriterOptions {
  dataDir: string;
  name: string;
  d: number;
  metric: Metric;
  /** Base rows that will be appended (known up front from the input headers). */
  rows: number;
  hasText?: boolean;
  clusters?: number;
  seed?: number;
  quiet?: boolean;
}

interface FinishOptions {
  source: Record<string, unknown>;
  /** Names of the lang codes (at least one). */
  langs: string[];
}

/** Streams a dataset into the prepared layout. Call appendBase for consecutive blocks of
 * base rows, setQueries once, then finish (or abort on failure). */
export class PreparedWriter {
  readonly dir: string;
  readonly tmp: string;
  private readonly tmpDir: TempDatasetDir;
  private readonly base: HashedFile;
  /** Streamed columns; cluster and region come at finish, the real attributes with setRealAttributes. */
  private readonly attrFiles: Record<Exclude<AttrName, 'cluster' | 'region' | 'label' | 'measure'>, HashedFile>;
  private readonly text: HashedFile | null;
  private written = 0;
  private readonly sample: Float32Array;
  private readonly sampleSize: number;
  private sampleFilled = 0;
  private readonly rng: { uniform: () => number };
  private queries: { v: Float32Array; nq: number; lang: Int32Array } | null = null;
  private real: RealAttributeValues | null = null;
  private readonly progress: Progress;
  private closed = false;
  readonly clusters: number;
  readonly seed: number;

  constructor(readonly opts: WriterOptions) {
    const { dataDir, name, d, rows } = opts;
    if (rows <= 0) throw new UserError(`dataset ${name}: no base rows to prepare; check the input files`);
    this.clusters = Math.min(opts.clusters ?? DEFAULT_CLUSTERS, rows);
    this.seed = opts.seed ?? 42;
    this.dir = datasetDir(dataDir, name);
    mkdirSync(dataDir, { recursive: true });
    clearStalePrepares(dataDir, name);
    this.tmpDir = new TempDatasetDir(this.dir);
    this.tmp = this.tmpDir.path;
    this.base = new HashedFile(join(this.tmp, fileNames.base));
    this.attrFiles = {
      cat10: new HashedFile(join(this.tmp, fileNames.attr('cat10'))),
      cat100: new HashedFile(join(this.tmp, fileNames.attr('cat100'))),
      cat1000: new HashedFile(join(this.tmp, fileNames.attr('cat1000'))),
      num: new HashedFile(join(this.tmp, fileNames.attr('num'))),
      tenant: new HashedFile(join(this.tmp, fileNames.attr('tenant'))),
      lang: new HashedFile(join(this.tmp, fileNames.attr('lang'))),
    };
    this.text = opts.hasText ? new HashedFile(join(this.tmp, fileNames.text)) : null;
    this.sampleSize = Math.min(KMEANS_SAMPLE, rows);
    this.sample = new Float32Array(this.sampleSize * d);
    this.rng = makeRng(this.seed + 17);
    this.progress = new Progress(`prepare ${name}`, rows, opts.quiet);
  }

  get rowsWritten(): number {
    return this.written;
  }

  /** Appends base rows (already checked and normalised with checkAndNormalise). */
  appendBase(block: Float32Array, rows: number, lang: Int32Array, text?: (string | null)[]): void {
    const { d } = this.opts;
    if (block.length !== rows * d || lang.length !== rows)
      throw new Error(`appendBase: block of ${block.length} floats / ${lang.length} langs for ${rows} rows of ${d}`);
    if (this.written + rows > this.opts.rows) throw new Error(`appendBase: more than the ${this.opts.rows} rows announced`);
    if (this.text && (!text || text.length !== rows)) throw new Error('appendBase: text is required for every row of this dataset');
    this.base.write(bytesOf(block));
    const h = hashedAttributes(rows, this.written);
    this.attrFiles.cat10.write(bytesOf(h.cat10));
    this.attrFiles.cat100.write(bytesOf(h.cat100));
    this.attrFiles.cat1000.write(bytesOf(h.cat1000));
    this.attrFiles.num.write(bytesOf(h.num));
    this.attrFiles.tenant.write(bytesOf(h.tenant));
    this.attrFiles.lang.write(bytesOf(lang));
    if (this.text && text) this.text.write(Buffer.from(`${text.map((t) => JSON.stringify(t ?? '')).join('\n')}\n`));
    // Seeded reservoir sample (algorithm R) for k-means: memory bounded whatever n is.
    for (let i = 0; i < rows; i++) {
      const id = this.written + i;
      let slot = -1;
      if (id < this.sampleSize) slot = id;
      else {
        const j = Math.floor(this.rng.uniform() * (id + 1));
        if (j < this.sampleSize) slot = j;
      }
      if (slot >= 0) {
        this.sample.set(block.subarray(i * d, i * d + d), slot * d);
        this.sampleFilled = Math.max(this.sampleFilled, slot + 1);
      }
    }
    this.written += rows;
    this.progress.update(this.written);
  }

  /** The held-out queries (already checked and normalised) and their languages. */
  setQueries(v: Float32Array, nq: number, lang: Int32Array): void {
    if (nq <= 0) throw new UserError(`dataset ${this.opts.name}: no queries; check the query input`);
    if (v.length !== nq * this.opts.d || lang.length !== nq) throw new Error('setQueries: sizes disagree');
    this.queries = { v, nq, lang };
  }

  /** The rows' and queries' real label and measure (src/datasets/real-attributes.ts), for a set
   * that has them; held in memory (two int32 per row) until finish. */
  setRealAttributes(values: RealAttributeValues): void {
    this.real = values;
  }

  /** Clusters, query attributes, manifest; then renames the directory into place. */
  async finish(meta: FinishOptions): Promise<Dataset> {
    const { name, d, metric, dataDir } = this.opts;
    if (this.written !== this.opts.rows) throw new Error(`finish: ${this.written} rows written, ${this.opts.rows} announced`);
    if (!this.queries) throw new Error('finish: setQueries was not called');
    const files: Manifest['files'] = {};
    files[fileNames.base] = this.base.finish();
    for (const a of ['cat10', 'cat100', 'cat1000', 'num', 'tenant', 'lang'] as const) files[fileNames.attr(a)] = this.attrFiles[a].finish();
    if (this.text) files[fileNames.text] = this.text.finish();
    this.closed = true;

    // k-means and the region tree on the sample, then every base row's nearest centroid and
    // region in a second pass over base.f32, block by block.
    const c = this.clusters;
    const cent = sampledKmeans(this.sample, this.sampleFilled, d, c, metric, this.seed + 1, `prepare ${name}: k-means`, this.opts.quiet);
    const regions = buildRegionTree(this.sample, this.sampleFilled, d);
    const clusterFile = new HashedFile(join(this.tmp, fileNames.attr('cluster')));
    const regionFile = new HashedFile(join(this.tmp, fileNames.attr('region')));
    const clusterProgress = new Progress(`prepare ${name}: clusters`, this.written, this.opts.quiet);
    const blockRows = Math.max(1, Math.floor((16 << 20) / (4 * d)));
    const fd = openSync(join(this.tmp, fileNames.base), 'r');
    try {
      const buf = new Float32Array(blockRows * d);
      const raw = new Uint8Array(buf.buffer);
      for (let r = 0; r < this.written; r += blockRows) {
        const count = Math.min(blockRows, this.written - r);
        const want = count * d * 4;
        let off = 0;
        while (off < want) {
          const got = readSync(fd, raw, off, want - off, r * d * 4 + off);
          if (got === 0) throw new Error(`${fileNames.base} ended early while assigning clusters`);
          off += got;
        }
        const nearest = nearestCentroids(buf.subarray(0, count * d), count, d, cent, c, metric);
        clusterFile.write(bytesOf(nearest));
        regionFile.write(bytesOf(regionsOf(regions, buf, count)));
        clusterProgress.update(r + count);
        await yieldToSignals();
      }
    } finally {
      closeSync(fd);
    }
    files[fileNames.attr('cluster')] = clusterFile.finish();
    files[fileNames.attr('region')] = regionFile.finish();

    const { v, nq, lang } = this.queries;
    const qc = assignClusters(v, nq, d, cent, c, metric);
    const singleLanguage = meta.langs.length < 2;
    const otherLang = singleLanguage ? new Int32Array(nq).fill(NO_LANGUAGE) : otherLanguages(lang, meta.langs.length);
    const putSmallLater: [string, Uint8Array][] = [];
    if (this.real) {
      checkRealSizes(this.real, this.written, nq);
      for (const a of ['label', 'measure'] as const) putSmallLater.push([fileNames.attr(a), bytesOf(this.real.rows[a])]);
    }
    const qattrs: Record<QueryAttrName, Int32Array> = {
      cluster: qc.nearest,
      far_cluster: qc.farthest,
      lang,
      other_lang: otherLang,
      region: regionsOf(regions, v, nq),
      ...(this.real ? realQueryAttributes(this.real) : noRealQueries(nq)),
    };
    const putSmall = (file: string, data: Uint8Array) => {
      const f = new HashedFile(join(this.tmp, file));
      f.write(data);
      files[file] = f.finish();
    };
    putSmall(fileNames.queries, bytesOf(v));
    for (const [file, data] of putSmallLater) putSmall(file, data);
    // A set without real attributes stores none of their files, so its hash stays as it was.
    for (const a of QUERY_ATTRIBUTES) if (this.real || !REAL_QUERY_ATTRIBUTES.has(a)) putSmall(fileNames.queryAttr(a), bytesOf(qattrs[a]));

    const manifest: Manifest = {
      format: DATASET_FORMAT,
      name,
      n: this.written,
      d,
      nq,
      metric,
      source: meta.source,
      clusters: c,
      langs: meta.langs,
      has_text: this.text !== null,
      ...(this.real ? { real_attributes: this.real.info } : {}),
      files,
      created: new Date().toISOString(),
    };
    writeJsonAtomic(join(this.tmp, 'manifest.json'), manifest);
    // Order matters: the check that every attribute file exists keeps the layout whole.
    for (const a of ATTRIBUTES) if (!files[fileNames.attr(a)] && (this.real || !REAL_ROW_ATTRIBUTES.has(a))) throw new Error(`attribute ${a} was not written`);
    this.tmpDir.publish();
    return loadDataset(dataDir, name, { verify: false });
  }

  /** Removes the temporary directory (after a failure). */
  abort(): void {
    if (!this.closed) {
      this.base.abort();
      for (const f of Object.values(this.attrFiles)) f.abort();
      this.text?.abort();
      this.closed = true;
    }
    this.tmpDir.discard();
  }
}

/** Runs a writer body, aborting (no temporary files left) when it throws. */
export async function withWriter<T>(writer: PreparedWriter, body: (w: PreparedWriter) => Promise<T>): Promise<T> {
  try {
    return await body(writer);
  } catch (e) {
    writer.abort();
    throw e;
  }
}
