// `vecbench import FILE`: results published by other harnesses, converted into vecbench
// result files (origin 'imported', participant NAME@HARNESS) and stored beside our own in
// <out>/<dataset>/<participant>.json, so the terminal table, `report --json` and the page
// read them through the same path and the same cell rule as measured results.
//
// - VectorBench result JSON: one file per participant and dataset, converted whole
//   (src/report/import/vectorbench.ts); importing it again replaces it.
// - ann-benchmarks HDF5 result files: one file is one point of one algo; recall is computed
//   here from the named vecbench dataset's ground truth (src/report/import/annbench.ts).
//   Points of the same algo accumulate into one result file; a file imported again replaces
//   its own point.
import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadDataset } from '../datasets/layout.ts';
import { groundTruthFor } from '../groundtruth/cache.ts';
import { RESULT_FORMAT, resultSchema, type ResultFile, type ResultGroup } from '../results/schema.ts';
import { readResult, resultPath, writeResult } from '../results/store.ts';
import { VECBENCH_VERSION } from '../version.ts';
import { UserError } from '../util/errors.ts';
import { groupOrder } from './cells.ts';
import { ANN_BENCHMARKS, HDF5_MAGIC, readAnnBenchmarks, scoreAnnBenchmarks } from './import/annbench.ts';
import { checkImportedName, importedName, NOT_RECORDED, preparedDatasetInfo, renumberLadder } from './import/common.ts';
import { convertVectorBench, looksLikeVectorBench } from './import/vectorbench.ts';

interface ImportOptions {
  /** Results directory the imported files are written to. */
  outDir: string;
  /** Prepared datasets directory. */
  dataDir: string;
  /** The vecbench dataset the imported figures belong to (required for ann-benchmarks). */
  dataset?: string;
  now?: Date;
}

interface ImportOutcome {
  harness: 'VectorBench' | 'ann-benchmarks';
  participant: string;
  dataset: string;
  /** Result file written. */
  path: string;
  /** Group keys touched and the points now stored in them. */
  groups: { key: string; points: number }[];
  /** What the import left out and why (also recorded in the groups' skipped[]). */
  notes: string[];
}

type SourceFormat = 'vectorbench' | 'ann-benchmarks';

/** Tells the two formats apart by content, not by file name. */
export function detectFormat(file: string): SourceFormat {
  if (!existsSync(file)) throw new UserError(`${file}: no such file`);
  const head = Buffer.alloc(8);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, head, 0, 8, 0);
  } finally {
    closeSync(fd);
  }
  if (head.equals(Buffer.from(HDF5_MAGIC))) return 'ann-benchmarks';
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    throw new UserError(`${file}: neither HDF5 (ann-benchmarks) nor JSON (VectorBench); vecbench import reads those two formats`);
  }
  if (looksLikeVectorBench(raw)) return 'vectorbench';
  if ((raw as { format?: unknown })?.format === RESULT_FORMAT)
    throw new UserError(`${file}: already a vecbench result file; copy it into <out>/<dataset>/ instead of importing it`);
  throw new UserError(`${file}: JSON, but not a VectorBench result file (expected top-level participant or name, system and groups)`);
}

export async function importResults(file: string, opts: ImportOptions): Promise<ImportOutcome> {
  const path = resolve(file);
  const format = detectFormat(path);
  return format === 'vectorbench' ? importVectorBench(path, opts) : importAnnBenchmarks(path, opts);
}

function summary(r: ResultFile): ImportOutcome['groups'] {
  return r.groups.map((g) => ({ key: g.key, points: g.points.length }));
}

function refuseMeasured(outDir: string, r: ResultFile): void {
  const p = resultPath(outDir, r.dataset.name, r.participant);
  if (existsSync(p) && readResult(p).origin !== 'imported') throw new UserError(`${p} holds measured results; an import never replaces them`);
}

function importVectorBench(path: string, opts: ImportOptions): ImportOutcome {
  const raw: unknown = JSON.parse(readFileSync(path, 'utf8'));
  let dataset;
  if (opts.dataset) {
    dataset = preparedDatasetInfo(opts.dataDir, opts.dataset);
    if (!dataset)
      throw new UserError(
        `dataset ${opts.dataset} is not prepared in ${opts.dataDir}; run: vecbench prepare ${opts.dataset} (or leave out --dataset to keep the file's own dataset name)`,
      );
  } else {
    const name = (raw as { dataset?: unknown }).dataset;
    const dsName = typeof name === 'string' ? name : typeof name === 'object' && name !== null ? (name as { name?: unknown }).name : undefined;
    // Checked before it names a directory to look in (convertVectorBench checks it again).
    if (typeof dsName === 'string')
      dataset = preparedDatasetInfo(opts.dataDir, checkImportedName(path, typeof name === 'string' ? 'dataset' : 'dataset.name', dsName)) ?? undefined;
  }
  const result = convertVectorBench(raw, path, { dataset, vecbenchVersion: VECBENCH_VERSION, now: opts.now });
  refuseMeasured(opts.outDir, result);
  const written = writeResult(opts.outDir, result);
  const notes = result.groups.flatMap((g) => g.skipped.map((s) => s.reason));
  return { harness: 'VectorBench', participant: result.participant, dataset: result.dataset.name, path: written, groups: summary(result), notes };
}

async function importAnnBenchmarks(path: string, opts: ImportOptions): Promise<ImportOutcome> {
  if (!opts.dataset) {
    throw new UserError(
      `${path}: an ann-benchmarks file holds only returned ids; recall needs the dataset's ground truth: pass --dataset NAME (the vecbench dataset prepared from the same data)`,
    );
  }
  const run = await readAnnBenchmarks(path);
  const ds = await loadDataset(opts.dataDir, opts.dataset, { verify: false });
  const gt = groundTruthFor(ds, 'none');
  const scored = scoreAnnBenchmarks(run, path, ds, gt);
  const participant = importedName(path, 'algo', scored.algo, ANN_BENCHMARKS);
  const now = (opts.now ?? new Date()).toISOString();
  const dataset = { name: ds.name, n: ds.n, d: ds.d, nq: ds.nq, metric: ds.metric, hash: ds.hash };
  const target = resultPath(opts.outDir, ds.name, participant);

  let result: ResultFile;
  if (existsSync(target)) {
    result = readResult(target);
    if (result.origin !== 'imported') throw new UserError(`${target} holds measured results; an import never replaces them`);
    if (result.dataset.hash !== ds.hash) {
      throw new UserError(`${target} was imported against another version of dataset ${ds.name} (data hash differs); delete it to import again`);
    }
  } else {
    result = resultSchema.parse({
      format: RESULT_FORMAT,
      participant,
      engine: scored.algo,
      engine_version: `${NOT_RECORDED} (ann-benchmarks)`,
      origin: 'imported',
      dataset,
      settings: { index: {}, ladders: [], notes: 'imported from ann-benchmarks result files; each file is one point; knobs are parsed from its name' },
      filter_strategy: 'no filters (ann-benchmarks runs unfiltered queries only)',
      hardware: { cpu: NOT_RECORDED, cores: 0, memory_bytes: 0, os: NOT_RECORDED, node: NOT_RECORDED },
      run: { vecbench_version: VECBENCH_VERSION, started: now, updated: now, query_seed: 0, clients: 1, complete: true },
      load: null,
      groups: [],
      extra: {},
    });
  }
  const key = `none/${scored.k}`;
  let group: ResultGroup | undefined = result.groups.find((g) => g.key === key);
  if (!group) {
    const fresh: ResultGroup = { key, filter: 'none', k: scored.k, status: 'measured', median_matches: ds.n, points: [], skipped: [], complete: true };
    group = fresh;
    result.groups.push(fresh);
    result.groups.sort((a, b) => groupOrder(a.key)[0] - groupOrder(b.key)[0] || groupOrder(a.key)[1] - groupOrder(b.key)[1]);
  }
  const imp = (typeof result.extra.import === 'object' && result.extra.import !== null ? result.extra.import : {}) as {
    runs?: Record<string, Record<string, unknown>>;
  } & Record<string, unknown>;
  const runs = imp.runs ?? {};
  // A run is known by its name and k; importing it again replaces its point.
  const runKey = `${key} ${scored.name}`;
  const previous = runs[runKey];
  if (previous) group.points = group.points.filter((p) => JSON.stringify(p.knobs) !== JSON.stringify(previous.knobs));
  group.points = renumberLadder([...group.points, scored.point]);
  runs[runKey] = { ...scored.facts, knobs: scored.point.knobs, imported: now };
  result.extra = {
    ...result.extra,
    import: {
      harness: 'ann-benchmarks',
      note: "ann-benchmarks times one query at a time: QPS = 1 / mean per-query time of the stored run, clients = 1; recall computed by vecbench from the returned ids against this dataset's ground truth; build_time is ingest and index build together (one fit call); index_size is ann-benchmarks' memory reading in kB",
      ...imp,
      runs,
      not_recorded: ['engine_version', 'hardware', 'load'],
    },
  };
  result.run.updated = now;
  const written = writeResult(opts.outDir, result);
  return { harness: 'ann-benchmarks', participant, dataset: ds.name, path: written, groups: summary(result), notes: [] };
}
