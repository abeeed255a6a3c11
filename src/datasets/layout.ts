// The prepared-dataset layout (docs/contracts.md, "Prepared dataset"): one directory per
// dataset with little-endian float32 matrices, int32 attribute columns and a manifest that
// records the shape, the metric and the sha256 of every file.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ATTRIBUTES, type AttrName, type Metric, type RowAttributes } from '../contracts.ts';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic.ts';
import { UserError } from '../util/errors.ts';
import { sha256, sha256File } from '../util/hash.ts';
import { readWhole } from '../util/read-whole.ts';
import { hashedAttributes } from './attributes.ts';
import { clearStalePrepares, TempDatasetDir } from './preparing.ts';
import { buildRegionTree, regionsOf } from './regions.ts';
import { REAL_QUERY_ATTRIBUTES, REAL_ROW_ATTRIBUTES, noRealQueries, noRealRows, type RealAttributeInfo } from './real-attributes.ts';
import { yieldToSignals } from '../util/at-exit.ts';

export const DATASET_FORMAT = 'vecbench-dataset/1';

/** Per-query attributes that filters are built from (docs/method.md §2). */
export const QUERY_ATTRIBUTES = ['cluster', 'far_cluster', 'lang', 'other_lang', 'region', 'label', 'other_label', 'measure_lo', 'measure_hi'] as const;
export type QueryAttrName = (typeof QUERY_ATTRIBUTES)[number];

const fileEntry = z.object({ bytes: z.number().int().nonnegative(), sha256: z.string().regex(/^[0-9a-f]{64}$/) });

export const manifestSchema = z.object({
  format: z.literal(DATASET_FORMAT),
  name: z.string().min(1),
  n: z.number().int().positive(),
  d: z.number().int().positive(),
  nq: z.number().int().positive(),
  metric: z.enum(['ip', 'cosine', 'l2']),
  /** How the data was made or where it came from. */
  source: z.record(z.string(), z.unknown()),
  clusters: z.number().int().positive(),
  langs: z.array(z.string()).min(1),
  has_text: z.boolean(),
  /** Relevance labels for answer quality (queries.text.jsonl, qrels.tsv, base.ids.jsonl, queries.ids.jsonl). */
  has_labels: z.boolean().optional(),
  /** The real attributes `label` and `measure`, when the rows carry them (docs/method.md §1). */
  real_attributes: z.object({ labels: z.array(z.string()).min(1), measure: z.string().min(1) }).optional(),
  files: z.record(z.string(), fileEntry),
  created: z.string(),
});
export type Manifest = z.infer<typeof manifestSchema>;

export interface PreparedData {
  n: number;
  d: number;
  nq: number;
  metric: Metric;
  base: Float32Array;
  queries: Float32Array;
  attrs: RowAttributes;
  queryAttrs: Record<QueryAttrName, Int32Array>;
  text?: string[];
  /** Relevance labels, for answer quality (hybrid search, docs/method.md §8). */
  labels?: Labels;
  /** Set when attrs.label / attrs.measure are real (src/datasets/real-attributes.ts). */
  real?: RealAttributeInfo;
  clusters: number;
  langs: string[];
  source: Record<string, unknown>;
}

/** Human or known-item relevance labels of a text dataset. Judgements are kept by the
 * corpus' own document ids, including documents the corpus lacks, so that nDCG's ideal
 * ranking is the one trec_eval would build from the same qrels. */
export interface Labels {
  /** The corpus id of each base row. */
  docIds: string[];
  /** The id and text of each query (same order as queries.f32). */
  queryIds: string[];
  queryText: string[];
  /** Per query index: judged document id -> graded relevance. */
  qrels: Map<number, Map<string, number>>;
}

export interface Dataset extends PreparedData {
  name: string;
  dir: string;
  manifest: Manifest;
  /** sha256 over the manifest's file hashes: keys the ground-truth cache. */
  hash: string;
}

/** Exported for the streaming writer (src/prepare/sources/writer.ts): one layout, one naming. */
export const fileNames = {
  base: 'base.f32',
  queries: 'queries.f32',
  attr: (a: AttrName) => `base.${a}.i32`,
  queryAttr: (a: QueryAttrName) => `queries.${a}.i32`,
  text: 'base.text.jsonl',
  docIds: 'base.ids.jsonl',
  queryIds: 'queries.ids.jsonl',
  queryText: 'queries.text.jsonl',
  qrels: 'qrels.tsv',
};

const jsonLines = (xs: string[]) => Buffer.from(`${xs.map((t) => JSON.stringify(t)).join('\n')}\n`);

function readJsonLines(dir: string, manifest: Manifest, file: string, expected: number): string[] {
  const path = join(dir, file);
  if (!existsSync(path)) throw new UserError(`dataset ${manifest.name}: ${path} is missing; re-prepare it (vecbench prepare ${manifest.name} --force)`);
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);
  if (lines.length !== expected)
    throw new UserError(
      `dataset ${manifest.name}: ${file} has ${lines.length} lines, expected ${expected} (truncated or corrupt); re-prepare it (vecbench prepare ${manifest.name} --force)`,
    );
  return lines.map((l) => JSON.parse(l) as string);
}

/** qrels.tsv: the BEIR layout, a header then query-id, corpus-id, score per line. */
function qrelsTsv(labels: Labels): Buffer {
  const lines = ['query-id\tcorpus-id\tscore'];
  for (const [q, judged] of [...labels.qrels.entries()].sort((a, b) => a[0] - b[0])) {
    for (const [doc, rel] of judged) lines.push(`${labels.queryIds[q]}\t${doc}\t${rel}`);
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

function readLabels(dir: string, manifest: Manifest): Labels {
  const docIds = readJsonLines(dir, manifest, fileNames.docIds, manifest.n);
  const queryIds = readJsonLines(dir, manifest, fileNames.queryIds, manifest.nq);
  const queryText = readJsonLines(dir, manifest, fileNames.queryText, manifest.nq);
  const byId = new Map(queryIds.map((id, i) => [id, i]));
  const qrels = new Map<number, Map<string, number>>();
  const lines = readFileSync(join(dir, fileNames.qrels), 'utf8')
    .split('\n')
    .slice(1)
    .filter((l) => l.length > 0);
  for (const line of lines) {
    const [qid, doc, rel] = line.split('\t');
    const q = byId.get(qid);
    if (q === undefined || doc === undefined || !Number.isInteger(Number(rel))) {
      throw new UserError(
        `dataset ${manifest.name}: ${fileNames.qrels} line "${line}" is not query-id, corpus-id, integer score of a known query; re-prepare it (vecbench prepare ${manifest.name} --force)`,
      );
    }
    let m = qrels.get(q);
    if (!m) qrels.set(q, (m = new Map()));
    m.set(doc, Number(rel));
  }
  return { docIds, queryIds, queryText, qrels };
}

export function datasetDir(dataDir: string, name: string): string {
  return join(dataDir, name);
}

export function isPrepared(dataDir: string, name: string): boolean {
  return existsSync(join(datasetDir(dataDir, name), 'manifest.json'));
}

function bytesOf(a: Float32Array | Int32Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** Checks what every engine relies on: shapes agree, no NaN / Inf, no zero vector under cosine. */
function validateVectors(name: string, what: string, v: Float32Array, rows: number, d: number, metric: Metric): void {
  if (v.length !== rows * d) {
    throw new UserError(`dataset ${name}: ${what} has ${v.length} floats, expected ${rows} x ${d}; re-prepare it (vecbench prepare ${name} --force)`);
  }
  for (let i = 0; i < rows; i++) {
    let norm = 0;
    for (let j = i * d, e = j + d; j < e; j++) {
      const x = v[j];
      if (!Number.isFinite(x)) {
        throw new UserError(
          `dataset ${name}: ${what} row ${i} has ${Number.isNaN(x) ? 'NaN' : 'Inf'} at dimension ${j - i * d}; fix the input file and prepare again`,
        );
      }
      norm += x * x;
    }
    if (metric === 'cosine' && norm === 0) {
      throw new UserError(`dataset ${name}: ${what} row ${i} is a zero vector, which has no cosine; drop it from the input or use --metric l2`);
    }
  }
}

/** Writes a prepared dataset atomically: files go to a temporary directory that is renamed into
 * place at the end, so an interrupted prepare leaves nothing half-written behind; stale
 * temporary directories of dead prepares go first (src/datasets/preparing.ts). */
export async function writePrepared(dataDir: string, name: string, data: PreparedData): Promise<Dataset> {
  const { n, d, nq, metric } = data;
  validateVectors(name, 'base', data.base, n, d, metric);
  validateVectors(name, 'queries', data.queries, nq, d, metric);
  clearStalePrepares(dataDir, name);
  const tmpDir = new TempDatasetDir(datasetDir(dataDir, name));
  try {
    await writePreparedFiles(tmpDir.path, name, data);
    tmpDir.publish();
  } catch (e) {
    // A full disk, or any other failure, leaves no half-prepared directory behind.
    tmpDir.discard();
    throw e;
  }
  return loadDataset(dataDir, name, { verify: false });
}

async function writePreparedFiles(tmp: string, name: string, data: PreparedData): Promise<void> {
  const { n, d, nq, metric } = data;
  const files: Record<string, z.infer<typeof fileEntry>> = {};
  const put = async (file: string, bytes: Uint8Array) => {
    writeFileAtomic(join(tmp, file), bytes);
    files[file] = { bytes: bytes.byteLength, sha256: sha256(bytes) };
    // A big set takes seconds to write: a signal meanwhile stops it (and removes tmp) at once.
    await yieldToSignals();
  };
  await put(fileNames.base, bytesOf(data.base));
  await put(fileNames.queries, bytesOf(data.queries));
  for (const a of ATTRIBUTES) {
    if (data.attrs[a].length !== n) throw new Error(`attribute ${a} has ${data.attrs[a].length} values for ${n} rows`);
    // Derived at load instead (deriveLateAttributes): a set made in memory keeps the hash it
    // had before these attributes existed, and with it every stored result of it.
    if (a === 'region' || a === 'tenant') continue;
    // A set without real attributes stores none, so its hash stays as it was before they existed.
    if (!data.real && REAL_ROW_ATTRIBUTES.has(a)) continue;
    await put(fileNames.attr(a), bytesOf(data.attrs[a]));
  }
  for (const a of QUERY_ATTRIBUTES) {
    if (a === 'region' || (!data.real && REAL_QUERY_ATTRIBUTES.has(a))) continue;
    await put(fileNames.queryAttr(a), bytesOf(data.queryAttrs[a]));
  }
  if (data.text) await put(fileNames.text, Buffer.from(`${data.text.map((t) => JSON.stringify(t)).join('\n')}\n`));
  if (data.labels) {
    const l = data.labels;
    if (l.docIds.length !== n || l.queryIds.length !== nq || l.queryText.length !== nq) {
      throw new Error(
        `labels: ${l.docIds.length} doc ids for ${n} rows, ${l.queryIds.length} query ids and ${l.queryText.length} query texts for ${nq} queries`,
      );
    }
    await put(fileNames.docIds, jsonLines(l.docIds));
    await put(fileNames.queryIds, jsonLines(l.queryIds));
    await put(fileNames.queryText, jsonLines(l.queryText));
    await put(fileNames.qrels, qrelsTsv(l));
  }
  const manifest: Manifest = {
    format: DATASET_FORMAT,
    name,
    n,
    d,
    nq,
    metric,
    source: data.source,
    clusters: data.clusters,
    langs: data.langs,
    has_text: data.text !== undefined,
    ...(data.labels ? { has_labels: true } : {}),
    ...(data.real ? { real_attributes: data.real } : {}),
    files,
    created: new Date().toISOString(),
  };
  writeJsonAtomic(join(tmp, 'manifest.json'), manifest);
}

function readTyped<T extends Float32Array | Int32Array>(
  dir: string,
  manifest: Manifest,
  file: string,
  ctor: { new (b: ArrayBuffer, o: number, l: number): T },
  expected: number,
): T {
  const path = join(dir, file);
  const entry = manifest.files[file];
  if (!entry) throw new UserError(`dataset ${manifest.name}: manifest lists no ${file}; re-prepare it (vecbench prepare ${manifest.name} --force)`);
  if (!existsSync(path)) throw new UserError(`dataset ${manifest.name}: ${path} is missing; re-prepare it (vecbench prepare ${manifest.name} --force)`);
  const size = statSync(path).size;
  if (size !== entry.bytes || size !== expected * 4) {
    throw new UserError(
      `dataset ${manifest.name}: ${file} has ${size} bytes, expected ${expected * 4} (truncated or corrupt); re-prepare it (vecbench prepare ${manifest.name} --force)`,
    );
  }
  const { buffer, read } = readWhole(path, size);
  if (read < size)
    throw new UserError(`dataset ${manifest.name}: ${file} ended at byte ${read} of ${size}; re-prepare it (vecbench prepare ${manifest.name} --force)`);
  return new ctor(buffer, 0, expected);
}

/** Files a set may lack: their attributes are then derived at load. */
const DERIVABLE: ((f: typeof fileNames) => string)[] = [(f) => f.attr('region'), (f) => f.attr('tenant'), (f) => f.queryAttr('region')];

/** The region and tenant attributes as the generators make them. */
function deriveLateAttributes(base: Float32Array, queries: Float32Array, n: number, nq: number, d: number) {
  const tree = buildRegionTree(base, n, d);
  return { rows: { region: regionsOf(tree, base, n), tenant: hashedAttributes(n).tenant }, queryRegion: regionsOf(tree, queries, nq) };
}

interface LoadOptions {
  /** Check every file's sha256 against the manifest (slow on big sets; on by default). */
  verify?: boolean;
}

export async function loadDataset(dataDir: string, name: string, opts: LoadOptions = {}): Promise<Dataset> {
  const dir = datasetDir(dataDir, name);
  const mpath = join(dir, 'manifest.json');
  if (!existsSync(mpath)) throw new UserError(`dataset ${name} is not prepared in ${dataDir}; run: vecbench prepare ${name}`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(mpath, 'utf8'));
  } catch {
    throw new UserError(`dataset ${name}: ${mpath} is not valid JSON (corrupt); re-prepare it (vecbench prepare ${name} --force)`);
  }
  const parsed = manifestSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(
      `dataset ${name}: manifest field ${issue.path.join('.') || '(root)'}: ${issue.message}; re-prepare it (vecbench prepare ${name} --force)`,
    );
  }
  const manifest = parsed.data;
  if (opts.verify !== false) {
    for (const [file, entry] of Object.entries(manifest.files)) {
      const path = join(dir, file);
      if (!existsSync(path)) throw new UserError(`dataset ${name}: ${path} is missing; re-prepare it (vecbench prepare ${name} --force)`);
      const got = await sha256File(path);
      if (got !== entry.sha256) {
        throw new UserError(
          `dataset ${name}: ${file} does not match the sha256 in its manifest (corrupt or changed); re-prepare it (vecbench prepare ${name} --force)`,
        );
      }
    }
  }
  const { n, d, nq } = manifest;
  const base = readTyped(dir, manifest, fileNames.base, Float32Array, n * d);
  const queries = readTyped(dir, manifest, fileNames.queries, Float32Array, nq * d);
  // A set made in memory (synthetic, labelled corpora), or prepared before the region and tenant
  // attributes existed, gets them derived here as the generators make them, so its hash (and
  // the results keyed by it) stay as they were. Streamed sets store them (deriving would cost a
  // pass over a large base at every load).
  const derived = DERIVABLE.filter((file) => manifest.files[file(fileNames)] === undefined);
  const made = derived.length > 0 ? deriveLateAttributes(base, queries, n, nq, manifest.d) : null;
  const real = manifest.real_attributes !== undefined;
  const noRows = real ? null : noRealRows(n);
  const noQueries = real ? null : noRealQueries(nq);
  const attrs = Object.fromEntries(
    ATTRIBUTES.map((a) => {
      if (noRows && REAL_ROW_ATTRIBUTES.has(a)) return [a, noRows[a as 'label' | 'measure']];
      const derivedHere = made && !manifest.files[fileNames.attr(a)] && a in made.rows;
      return [a, derivedHere ? made.rows[a as 'region' | 'tenant'] : readTyped(dir, manifest, fileNames.attr(a), Int32Array, n)];
    }),
  ) as RowAttributes;
  const queryAttrs = Object.fromEntries(
    QUERY_ATTRIBUTES.map((a) => {
      if (noQueries && REAL_QUERY_ATTRIBUTES.has(a)) return [a, noQueries[a as keyof typeof noQueries]];
      const derivedHere = made && a === 'region' && !manifest.files[fileNames.queryAttr(a)];
      return [a, derivedHere ? made.queryRegion : readTyped(dir, manifest, fileNames.queryAttr(a), Int32Array, nq)];
    }),
  ) as Record<QueryAttrName, Int32Array>;
  let text: string[] | undefined;
  if (manifest.has_text) {
    text = readFileSync(join(dir, fileNames.text), 'utf8')
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => JSON.parse(l) as string);
  }
  const labels = manifest.has_labels ? readLabels(dir, manifest) : undefined;
  validateVectors(name, 'base', base, n, d, manifest.metric);
  validateVectors(name, 'queries', queries, nq, d, manifest.metric);
  const hash = sha256(
    JSON.stringify(
      Object.entries(manifest.files)
        .sort()
        .map(([f, e]) => [f, e.sha256]),
    ),
  );
  return {
    name,
    dir,
    manifest,
    hash,
    n,
    d,
    nq,
    metric: manifest.metric,
    base,
    queries,
    attrs,
    queryAttrs,
    text,
    labels,
    ...(manifest.real_attributes ? { real: manifest.real_attributes } : {}),
    clusters: manifest.clusters,
    langs: manifest.langs,
    source: manifest.source,
  };
}
