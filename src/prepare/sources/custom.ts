// `vecbench prepare custom --name N --base FILE --queries FILE [--groundtruth FILE]
// [--metric ip|cosine|l2]`: a user's own vectors in any supported format. When a ground-truth
// file is given, vecbench computes its own exact top-k and compares (ties allowed): a
// different id still agrees when its true distance is within 1e-6 of the k-th distance.
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Metric } from '../../contracts.ts';
import { groundTruthFor, prepareGroundTruth } from '../../groundtruth/cache.ts';
import { exactDistance } from '../../groundtruth/exact.ts';
import { UserError } from '../../util/errors.ts';
import { SAFE_NAME_RULE, isSafeName, shownName } from '../../util/names.ts';
import { log } from '../../util/progress.ts';
import { datasetDir, isPrepared, loadDataset, type Dataset } from '../../datasets/layout.ts';
import type { DatasetSource } from '../dataset-source.ts';
import { whilePreparing } from '../../datasets/preparing.ts';
import { FORMAT_HELP, declaredMetric, openIds, openVectors, parseInputSpec, readAllIds } from '../../datasets/readers/index.ts';
import { hashInputs, readAllRows, streamRows } from './common.ts';
import { NO_LANGUAGE, PreparedWriter, withWriter } from './writer.ts';

export const CUSTOM_NAME = 'custom';
const TIE_TOLERANCE = 1e-6;

interface CustomOptions {
  name: string;
  base: string;
  queries: string;
  groundtruth?: string;
  metric?: Metric;
  force?: boolean;
  quiet?: boolean;
}

/** Names a custom set may not take: the registry's own (checked by the caller). */
function checkCustomName(name: string): void {
  if (!isSafeName(name)) {
    throw new UserError(`--name ${shownName(name)}: use ${SAFE_NAME_RULE} (a directory name), e.g. --name sift-1m`);
  }
  if (name === CUSTOM_NAME) throw new UserError('--name custom: choose another name for the dataset, e.g. --name my-vectors');
}

/** path + size + mtime of each input: enough to see that a second prepare has nothing to do. */
function fingerprint(specs: string[]): { spec: string; path: string; bytes: number; mtime: number }[] {
  return specs.map((spec) => {
    const { path } = parseInputSpec(spec);
    let st;
    try {
      st = statSync(path);
    } catch {
      throw new UserError(`${path}: no such file; check the path`);
    }
    return { spec, path: resolve(path), bytes: st.size, mtime: Math.round(st.mtimeMs) };
  });
}

interface GroundTruthCheck {
  k: number;
  queries: number;
  disagree: number;
  /** Queries whose id lists differ but agree once ties are allowed. */
  tiesOnly: number;
  example: string | null;
}

/** Compares a ground-truth file with vecbench's own exact top-k (filter none). */
async function checkGroundTruth(ds: Dataset, spec: string, opts: { quiet?: boolean } = {}): Promise<GroundTruthCheck> {
  const reader = await openIds(spec);
  let theirs: Int32Array;
  try {
    if (reader.rows !== ds.nq)
      throw new UserError(`${reader.label}: ${reader.rows} rows of neighbours for ${ds.nq} queries; pass the ground truth of these queries`);
    theirs = await readAllIds(reader);
  } finally {
    await reader.close();
  }
  const gt = groundTruthFor(ds, 'none', { quiet: opts.quiet });
  const k = Math.min(reader.dim, gt.depth);
  const { d, metric } = ds;
  let disagree = 0;
  let tiesOnly = 0;
  let example: string | null = null;
  for (let q = 0; q < ds.nq; q++) {
    const ours = gt.ids.subarray(q * gt.depth, q * gt.depth + k);
    // The k-th distance in float64, recomputed: the cache stores float32, whose rounding
    // (1e-4 at an L2 distance of 1000) would swamp the 1e-6 tolerance.
    const kth = exactDistance(metric, ds.queries, q * d, ds.base, ours[k - 1] * d, d);
    const mine = new Set(ours);
    let differs = false;
    let bad = false;
    for (let j = 0; j < k; j++) {
      const id = theirs[q * reader.dim + j];
      if (mine.has(id)) continue;
      differs = true;
      if (id < 0 || id >= ds.n) {
        bad = true;
        example ??= `query ${q}: id ${id} is not a base row`;
        continue;
      }
      const dist = exactDistance(metric, ds.queries, q * d, ds.base, id * d, d);
      if (!(dist <= kth + TIE_TOLERANCE)) {
        bad = true;
        example ??= `query ${q}: id ${id} at distance ${dist.toPrecision(7)}, the ${k}-th true distance is ${kth.toPrecision(7)}`;
      }
    }
    // Duplicates in their list would also hide a missing true neighbour.
    if (!bad && new Set(theirs.subarray(q * reader.dim, q * reader.dim + k)).size < k) {
      bad = true;
      example ??= `query ${q}: the ground truth lists an id twice`;
    }
    if (bad) disagree++;
    else if (differs) tiesOnly++;
  }
  return { k, queries: ds.nq, disagree, tiesOnly, example };
}

async function convertCustom(dataDir: string, o: CustomOptions, metric: Metric): Promise<Dataset> {
  const base = await openVectors(o.base, 'base');
  let queries;
  try {
    queries = await openVectors(o.queries, 'queries');
  } catch (e) {
    await base.close();
    throw e;
  }
  try {
    if (queries.dim !== base.dim)
      throw new UserError(`${queries.label}: queries are ${queries.dim}-d, the base ${base.label} is ${base.dim}-d; pass files of the same dimension`);
    const specs = [o.base, o.queries];
    const inputs = await hashInputs([...new Set(specs.map((s) => parseInputSpec(s).path))]);
    const writer = new PreparedWriter({ dataDir, name: o.name, d: base.dim, metric, rows: base.rows, quiet: o.quiet });
    return await withWriter(writer, async (w) => {
      await streamRows(base, w, { metric });
      w.setQueries(await readAllRows(queries!, metric), queries!.rows, new Int32Array(queries!.rows).fill(NO_LANGUAGE));
      return w.finish({
        langs: ['und'],
        source: {
          kind: 'custom',
          base: o.base,
          queries: o.queries,
          inputs,
          fingerprint: fingerprint(specs),
          metric_from: o.metric ? '--metric' : 'default',
          lang: 'no language column: queries carry none, so the lang/otherlang groups are not asked',
        },
      });
    });
  } finally {
    await base.close();
    await queries.close();
  }
}

/** Prepares (or reuses) a custom set, then checks a given ground truth against it. */
export async function prepareCustom(dataDir: string, o: CustomOptions): Promise<{ ds: Dataset; check: GroundTruthCheck | null }> {
  checkCustomName(o.name);
  const metric: Metric = o.metric ?? (await declaredMetric(o.base)) ?? 'l2';
  const prints = fingerprint([o.base, o.queries]);
  const ds = await whilePreparing(dataDir, o.name, async () => {
    if (isPrepared(dataDir, o.name) && !o.force) {
      const manifest = JSON.parse(readFileSync(join(datasetDir(dataDir, o.name), 'manifest.json'), 'utf8')) as {
        metric?: string;
        source?: { kind?: string; fingerprint?: unknown };
      };
      const same = manifest.source?.kind === 'custom' && manifest.metric === metric && JSON.stringify(manifest.source.fingerprint) === JSON.stringify(prints);
      if (!same) {
        throw new UserError(`dataset ${o.name} is already prepared from other inputs or another metric; add --force to replace it, or choose another --name`);
      }
      const prepared = await loadDataset(dataDir, o.name);
      log(`${o.name} is already prepared from these files; nothing to do`);
      return prepared;
    }
    log(`preparing ${o.name} from ${o.base} and ${o.queries} (${metric}) ...`);
    const converted = await convertCustom(dataDir, o, metric);
    prepareGroundTruth(converted, { quiet: o.quiet });
    return converted;
  });
  let check: GroundTruthCheck | null = null;
  if (o.groundtruth) {
    check = await checkGroundTruth(ds, o.groundtruth, { quiet: o.quiet });
    if (check.disagree > 0) {
      throw new UserError(
        `ground truth ${o.groundtruth} disagrees with vecbench's exact top-${check.k} on ${check.disagree} of ${check.queries} queries (${check.example}); check --metric (${metric}) and that the files belong together (the prepared set is kept in ${ds.dir})`,
      );
    }
  }
  return { ds, check };
}

export const customSource: DatasetSource = {
  pattern: CUSTOM_NAME,
  describe: `your own files: vecbench prepare custom --name N --base FILE --queries FILE [--groundtruth FILE] [--metric ip|cosine|l2]; formats: ${FORMAT_HELP}`,
  size: 'any',
  metric: 'ip/cosine/l2',
  origin: 'local files',
  matches: (name) => name === CUSTOM_NAME,
  prepare: async () => {
    throw new UserError('prepare custom needs --name N --base FILE --queries FILE (see vecbench prepare --help)');
  },
};
