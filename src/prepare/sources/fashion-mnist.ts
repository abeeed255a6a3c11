// fashion-mnist-784-euclidean: the ann-benchmarks set built from Zalando's Fashion-MNIST, read
// from Debian's `dataset-fashion-mnist` package (IDX gzip files): the 60,000 training images
// are the base set and the 10,000 test images the queries (held out by construction), 784-d
// uint8 pixels as float32, metric L2. Images have no language: every row gets the single
// language "und" and queries none, so the language groups are not asked. Real attributes: the
// label is the image's class from the package's label files (test images have theirs), the
// measure its ink, the number of pixels that are not blank.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SetupNeeded, UserError } from '../../util/errors.ts';
import type { DatasetSource } from '../dataset-source.ts';
import type { MatrixReader } from '../../datasets/readers/common.ts';
import { openIdx } from '../../datasets/readers/idx.ts';
import { checkPinned, hashInputs, readAllRows, streamRows } from './common.ts';
import { NO_LANGUAGE, PreparedWriter, withWriter } from './writer.ts';

const FASHION_MNIST_NAME = 'fashion-mnist-784-euclidean';
export const FASHION_MNIST_DIR = '/usr/share/datasets/fashion-mnist';
const FILES = {
  base: 'train-images-idx3-ubyte.gz',
  queries: 't10k-images-idx3-ubyte.gz',
  baseLabels: 'train-labels-idx1-ubyte.gz',
  queryLabels: 't10k-labels-idx1-ubyte.gz',
};
/** The ten classes, in the order of their label values. */
const CLASSES = ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker', 'Bag', 'Ankle boot'];
/** sha256 of the files of dataset-fashion-mnist 0.0~git20200523.55506a9-1 (Debian 12). */
export const FASHION_MNIST_PINNED: Record<string, string> = {
  [FILES.base]: 'b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7',
  [FILES.queries]: 'cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa',
  [FILES.baseLabels]: '0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056',
  [FILES.queryLabels]: '8d3605d196f4be44669e46906da9733c8131fef761fdbfec72c424d5222f1a05',
};

/** The class of every image of an IDX label file, checked against the image count. */
async function readClasses(path: string, rows: number): Promise<Int32Array> {
  const reader = await openIdx(path);
  try {
    if (reader.rows !== rows || reader.dim !== 1)
      throw new UserError(`${path}: ${reader.rows} x ${reader.dim} labels for ${rows} images; use the label file of the same Fashion-MNIST release`);
    const labels = await reader.readInts(0, rows);
    const bad = labels.findIndex((x) => x < 0 || x >= CLASSES.length);
    if (bad >= 0)
      throw new UserError(`${path}: label ${labels[bad]} of image ${bad} is not a class 0-${CLASSES.length - 1}; the file is corrupt: reinstall it`);
    return labels;
  } finally {
    await reader.close();
  }
}

/** Ink of each image: its pixels that are not blank. */
async function inkOf(reader: MatrixReader): Promise<Int32Array> {
  const ink = new Int32Array(reader.rows);
  const block = 4096;
  for (let from = 0; from < reader.rows; from += block) {
    const count = Math.min(block, reader.rows - from);
    countInk(await reader.readFloats(from, count), count, reader.dim, ink, from);
  }
  return ink;
}

function countInk(pixels: Float32Array, rows: number, d: number, out: Int32Array, at: number): void {
  for (let i = 0; i < rows; i++) {
    let lit = 0;
    for (let j = i * d; j < (i + 1) * d; j++) if (pixels[j] > 0) lit++;
    out[at + i] = lit;
  }
}

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
    const [basePath, queryPath, baseLabelPath, queryLabelPath] = [FILES.base, FILES.queries, FILES.baseLabels, FILES.queryLabels].map((f) => join(dir, f));
    for (const path of [basePath, queryPath, baseLabelPath, queryLabelPath]) {
      if (!existsSync(path))
        throw new SetupNeeded(`${name}: ${path} is missing (the Debian package dataset-fashion-mnist: apt-get install dataset-fashion-mnist)`);
    }
    const inputs = await hashInputs([basePath, queryPath, baseLabelPath, queryLabelPath]);
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
        const queryInk = new Int32Array(queries.rows);
        countInk(q, queries.rows, queries.dim, queryInk, 0);
        w.setRealAttributes({
          info: { labels: CLASSES, measure: `ink: pixels that are not blank, of ${base.dim}` },
          rows: { label: await readClasses(baseLabelPath, base.rows), measure: await inkOf(base) },
          queries: { label: await readClasses(queryLabelPath, queries.rows), measure: queryInk },
        });
        return w.finish({
          langs: ['und'],
          source: {
            kind: 'fashion-mnist',
            package: 'dataset-fashion-mnist',
            inputs,
            pinned,
            queries: 'the 10,000 test images (held out by construction)',
            lang: 'images have no language: one language for all rows, queries none, so the lang/otherlang groups are not asked',
            real_attributes: "label: the image's class (the label files); measure: its ink, the pixels that are not blank",
          },
        });
      });
    } finally {
      await base.close();
      await queries.close();
    }
  },
};
