// fashion-mnist-784-euclidean: the ann-benchmarks set built from Zalando's Fashion-MNIST, read
// from Debian's `dataset-fashion-mnist` package (IDX gzip files): the 60,000 training images
// are the base set and the 10,000 test images the queries (held out by construction), 784-d
// uint8 pixels as float32, metric L2. Images have no language: every row gets the single
// language "und" and queries none, so the language groups are not asked.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SetupNeeded, UserError } from '../../util/errors.ts';
import type { DatasetSource } from '../dataset-source.ts';
import { openIdx } from '../readers/idx.ts';
import { checkPinned, hashInputs, readAllRows, streamRows } from './common.ts';
import { NO_LANGUAGE, PreparedWriter, withWriter } from './writer.ts';

const FASHION_MNIST_NAME = 'fashion-mnist-784-euclidean';
export const FASHION_MNIST_DIR = '/usr/share/datasets/fashion-mnist';
const FILES = { base: 'train-images-idx3-ubyte.gz', queries: 't10k-images-idx3-ubyte.gz' };
/** sha256 of the files of dataset-fashion-mnist 0.0~git20200523.55506a9-1 (Debian 12). */
export const FASHION_MNIST_PINNED: Record<string, string> = {
  [FILES.base]: 'b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7',
  [FILES.queries]: 'cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa',
};

/** Where the IDX files are: the Debian package's directory, or $VECBENCH_FASHION_MNIST_DIR
 * (the same file names; then the files are recorded but not checked against the pins). */
function inputDir(): { dir: string; pinned: boolean } {
  const override = process.env.VECBENCH_FASHION_MNIST_DIR;
  if (override) return { dir: override, pinned: false };
  return { dir: FASHION_MNIST_DIR, pinned: true };
}

export const fashionMnistSource: DatasetSource = {
  pattern: FASHION_MNIST_NAME,
  describe: 'Fashion-MNIST images (ann-benchmarks set), from the Debian package dataset-fashion-mnist',
  size: '60,000 x 784, 10,000 queries',
  metric: 'l2',
  origin: `apt: dataset-fashion-mnist (${FASHION_MNIST_DIR})`,
  matches: (name) => name === FASHION_MNIST_NAME,
  prepare: async (dataDir, name, opts) => {
    const { dir, pinned } = inputDir();
    const basePath = join(dir, FILES.base);
    const queryPath = join(dir, FILES.queries);
    if (!existsSync(basePath) || !existsSync(queryPath)) {
      throw new SetupNeeded(`${name}: ${basePath} is missing (the Debian package dataset-fashion-mnist: apt-get install dataset-fashion-mnist)`);
    }
    const inputs = await hashInputs([basePath, queryPath]);
    if (pinned) {
      for (const rec of inputs)
        checkPinned(rec, FASHION_MNIST_PINNED[rec.path.slice(dir.length + 1)], 'reinstall it: apt-get install --reinstall dataset-fashion-mnist');
    }
    const base = await openIdx(basePath);
    const queries = await openIdx(queryPath);
    try {
      if (queries.dim !== base.dim)
        throw new UserError(`${queryPath}: queries are ${queries.dim}-d, the base set ${base.dim}-d; use the files of one Fashion-MNIST release`);
      const writer = new PreparedWriter({ dataDir, name, d: base.dim, metric: 'l2', rows: base.rows, quiet: opts?.quiet });
      return await withWriter(writer, async (w) => {
        await streamRows(base, w, { metric: 'l2' });
        const q = await readAllRows(queries, 'l2');
        w.setQueries(q, queries.rows, new Int32Array(queries.rows).fill(NO_LANGUAGE));
        return w.finish({
          langs: ['und'],
          source: {
            kind: 'fashion-mnist',
            package: 'dataset-fashion-mnist',
            inputs,
            pinned,
            queries: 'the 10,000 test images (held out by construction)',
            lang: 'images have no language: one language for all rows, queries none, so the lang/otherlang groups are not asked',
          },
        });
      });
    } finally {
      await base.close();
      await queries.close();
    }
  },
};
