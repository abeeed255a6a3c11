// Known datasets and how to prepare them. A dataset family registers a matcher; `prepare`
// finds the one that knows the name. Later formats add entries here, not switches elsewhere.
import { UserError } from '../util/errors.ts';
import { log } from '../util/progress.ts';
import { isPrepared, loadDataset, writePrepared, type Dataset, type PreparedData } from './layout.ts';
import { generateSynthetic, parseSyntheticName } from './synthetic.ts';
import { beirSource } from './beir.ts';
import { debianPackagesSource } from './sources/debian-packages.ts';

export interface DatasetSource {
  /** Shown by `vecbench datasets`. */
  pattern: string;
  describe: string;
  matches(name: string): boolean;
  make(name: string): Promise<PreparedData>;
}

export const DEFAULT_DATASET = 'synthetic-20k';

export const SOURCES: DatasetSource[] = [
  {
    pattern: 'synthetic-<N>',
    describe: 'generated embedding-like data (clustered, anisotropic, unit length, ip), e.g. synthetic-20k, synthetic-100k, synthetic-1m',
    matches: (name) => parseSyntheticName(name) !== null,
    make: async (name) => {
      const { n, nq } = parseSyntheticName(name)!;
      return generateSynthetic(n, nq);
    },
  },
  debianPackagesSource,
  beirSource,
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

/** Prepares a dataset unless it already is (a second prepare is a no-op). */
export async function prepareDataset(dataDir: string, name: string, opts: { force?: boolean } = {}): Promise<Dataset> {
  const source = sourceFor(name);
  if (!opts.force && isPrepared(dataDir, name)) return loadDataset(dataDir, name);
  log(`preparing ${name} ...`);
  const t0 = performance.now();
  const data = await source.make(name);
  const ds = await writePrepared(dataDir, name, data);
  log(`prepared ${name}: ${ds.n} x ${ds.d} (${ds.metric}), ${ds.nq} queries in ${((performance.now() - t0) / 1000).toFixed(1)}s -> ${ds.dir}`);
  return ds;
}
