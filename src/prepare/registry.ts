// Known datasets and how to prepare them. A dataset family registers a matcher; `prepare`
// finds the one that knows the name. Later formats add entries here, not switches elsewhere.
import { UserError } from '../util/errors.ts';
import { log } from '../util/progress.ts';
import { isPrepared, loadDataset, writePrepared, type Dataset } from '../datasets/layout.ts';
import { generateSynthetic, parseSyntheticName, prepareSyntheticStreamed, STREAM_ABOVE_BYTES } from './synthetic.ts';
import { beirSource } from './beir.ts';
import { debianPackagesSource } from './sources/debian-packages.ts';
import { REAL_SOURCES } from './sources/index.ts';
import { prepareGroundTruth } from '../groundtruth/cache.ts';
import { refuseWhileBeingPrepared, whilePreparing } from '../datasets/preparing.ts';
import type { DatasetSource } from './dataset-source.ts';

/** The embedded default's data: 20,000 x 128 of intrinsic dimension 64 (src/prepare/synthetic.ts,
 * INTRINSIC_MODEL). On the default model's easier data every graph engine reached 0.96-1.00 at
 * its lowest search setting, so 16 of 36 of the default table's cells read above their target;
 * here 0.90, 0.95 and 0.99 lie inside each engine's knobs at k = 10 and 100. */
export const DEFAULT_DATASET = 'synthetic-20k-i64';
/** The groups of the embedded default run (`vecbench run` with no --dataset or --groups):
 * unfiltered at k = 10 and 100, and the 10 % category filter. The 1 % filter (cat100/10), where
 * post-filtering engines come apart, is not among them: there the filtered graph walk already
 * finds 0.994 at its lowest beam and the SQL planner answers exactly, so those cells would read
 * above every target whatever the knob (measured on this data, 2026-12-04); `--groups` asks for
 * it. Three groups keep the run near ten minutes on two cores. `--dataset` asks for others
 * (every group a dataset supports, when --groups is not given). */
export const DEFAULT_GROUPS = ['none/10', 'cat10/10', 'none/100'];
/** Index builds of the embedded default run (unless --builds says otherwise): each build is a
 * fresh engine process, and two processes of the same code differ by more than the passes of
 * one vary (measured: up to 1.25x on a quiet machine), so the default's intervals span two. */
export const DEFAULT_BUILDS = 2;
/** The embedded default run's --max-time (unless given): ten minutes from its start, on two cores.
 * On synthetic-20k-i64 its timing plan is about 9.5 minutes of passes before warm-ups and
 * probes, most of them curve points no cell reads (173 of 212); the bound leaves those out first
 * (src/runner/thin-to-fit.ts), never the cells' passes. */
export const DEFAULT_MAX_TIME_S = 600;

export const SOURCES: DatasetSource[] = [
  {
    pattern: 'synthetic-<N>[-<D>][-i<L>][-q<Q>]',
    describe:
      'generated embedding-like data (clustered, anisotropic, unit length, ip), N rows of D dimensions (default 128) and with -i<L>, L directions of equal spread in overlapping clusters (harder, like real embeddings; the default model has a few dominant directions and separated clusters), with -q<Q>, Q held-out queries (default 10k), e.g. synthetic-20k, synthetic-1m, synthetic-20k-768, synthetic-20k-128-i64, synthetic-1m-768-q20k',
    matches: (name) => parseSyntheticName(name) !== null,
    make: async (name) => {
      const { n, nq, d, intrinsic } = parseSyntheticName(name)!;
      return generateSynthetic(n, nq, { d, intrinsic });
    },
    // Sets larger than STREAM_ABOVE_BYTES are generated to disk block by block.
    prepare: async (dataDir, name, opts) => {
      const { n, nq, d, intrinsic } = parseSyntheticName(name)!;
      if (n * d * 4 > STREAM_ABOVE_BYTES) return prepareSyntheticStreamed(dataDir, name, n, nq, { d, intrinsic, quiet: opts?.quiet });
      return writePrepared(dataDir, name, generateSynthetic(n, nq, { d, intrinsic }));
    },
  },
  debianPackagesSource,
  beirSource,
  ...REAL_SOURCES,
];

export function sourceFor(name: string): DatasetSource {
  const s = SOURCES.find((x) => {
    try {
      return x.matches(name);
    } catch (e) {
      if (e instanceof UserError) throw e;
      return false;
    }
  });
  if (!s) throw new UserError(`unknown dataset "${name}"; known datasets: ${SOURCES.map((x) => x.pattern).join(', ')} (see vecbench datasets)`);
  return s;
}

/** Prepares a dataset unless it already is (a second prepare is a no-op), then its ground
 * truth (every filter kind, cached beside it). One prepare of a dataset runs at a time: it
 * holds the dataset's lock (src/datasets/preparing.ts). */
export async function prepareDataset(dataDir: string, name: string, opts: { force?: boolean; groundTruth?: boolean } = {}): Promise<Dataset> {
  // A prepared set is used as it is, even one no source names (a `prepare custom` set).
  if (!opts.force && isPrepared(dataDir, name)) {
    refuseWhileBeingPrepared(dataDir, name);
    return loadDataset(dataDir, name);
  }
  const source = sourceFor(name);
  return whilePreparing(dataDir, name, async () => {
    // Another prepare may have finished between the check above and the lock.
    if (!opts.force && isPrepared(dataDir, name)) return loadDataset(dataDir, name);
    log(`preparing ${name} ...`);
    const t0 = performance.now();
    let ds: Dataset;
    if (source.prepare) ds = await source.prepare(dataDir, name);
    else if (source.make) ds = await writePrepared(dataDir, name, await source.make(name));
    else throw new UserError(`dataset ${name} cannot be prepared by name; see vecbench datasets`);
    log(`prepared ${name}: ${ds.n} x ${ds.d} (${ds.metric}), ${ds.nq} queries in ${((performance.now() - t0) / 1000).toFixed(1)}s -> ${ds.dir}`);
    if (opts.groundTruth !== false) prepareGroundTruth(ds);
    return ds;
  });
}
