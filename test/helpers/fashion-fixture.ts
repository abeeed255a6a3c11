// Fashion-MNIST-shaped inputs for tests: the Debian package's four IDX gzip files, small.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { makeRng } from '../../src/util/hash.ts';

const randomBytes = (n: number, seed: number) => {
  const rng = makeRng(seed);
  return Uint8Array.from({ length: n }, () => Math.floor(rng.uniform() * 256));
};

/** Fashion-MNIST-shaped IDX gzip files: images of 4 x 4 pixels, image r with its first r % 16
 * pixels blank (its ink is then what is left lit), and label files of classes r % 10 (train) and
 * 3r % 10 (test). */
export function writeFashionLike(
  dir: string,
  train: number,
  test: number,
): { train: Uint8Array; test: Uint8Array; trainLabels: Uint8Array; testLabels: Uint8Array } {
  const img = (rows: number, seed: number) => {
    const px = randomBytes(rows * 16, seed);
    for (let r = 0; r < rows; r++) px.fill(0, r * 16, r * 16 + (r % 16));
    return px;
  };
  const labelFile = (labels: Uint8Array) => {
    const head = new Uint8Array(8);
    head.set([0, 0, 0x08, 1]);
    new DataView(head.buffer).setUint32(4, labels.length, false);
    return gzipSync(Buffer.concat([head, labels]));
  };
  const trainLabels = Uint8Array.from({ length: train }, (_, r) => r % 10);
  const testLabels = Uint8Array.from({ length: test }, (_, r) => (3 * r) % 10);
  writeFileSync(join(dir, 'train-labels-idx1-ubyte.gz'), labelFile(trainLabels));
  writeFileSync(join(dir, 't10k-labels-idx1-ubyte.gz'), labelFile(testLabels));
  const idx = (data: Uint8Array, rows: number) => {
    const head = new Uint8Array(16);
    head.set([0, 0, 0x08, 3]);
    const dv = new DataView(head.buffer);
    dv.setUint32(4, rows, false);
    dv.setUint32(8, 4, false);
    dv.setUint32(12, 4, false);
    return gzipSync(Buffer.concat([head, data]));
  };
  const a = img(train, 11);
  const b = img(test, 12);
  writeFileSync(join(dir, 'train-images-idx3-ubyte.gz'), idx(a, train));
  writeFileSync(join(dir, 't10k-images-idx3-ubyte.gz'), idx(b, test));
  return { train: a, test: b, trainLabels, testLabels };
}
