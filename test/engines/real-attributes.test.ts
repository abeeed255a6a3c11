// Real attributes (src/datasets/real-attributes.ts): the label and measure a dataset's rows
// really carry, the query-side values built from them, the groups on them, and a run of real
// engines on a Fashion-MNIST-shaped set that has them; sets without them ask none of the groups.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { filterKind, matchingRows } from '../../src/datasets/groups.ts';
import type { Dataset } from '../../src/datasets/layout.ts';
import { measureBounds, realQueryAttributes } from '../../src/datasets/real-attributes.ts';
import { prepareDataset } from '../../src/prepare/registry.ts';
import { readResult, resultPath } from '../../src/results/store.ts';
import { prepareGroups } from '../../src/runner/points.ts';
import { run } from '../../src/runner/run.ts';
import { writeFashionLike } from '../helpers/fashion-fixture.ts';

const roots: string[] = [];
const freshDir = (tag: string) => {
  const d = mkdtempSync(join(tmpdir(), `vecbench-real-${tag}-`));
  roots.push(d);
  return d;
};
after(() => {
  for (const d of roots) rmSync(d, { recursive: true, force: true });
});

describe('the query side of real attributes', () => {
  test('measure slices: a tenth of the rows each, ties kept in one slice, the last past the largest', () => {
    const spread = Int32Array.from({ length: 100 }, (_, i) => 99 - i);
    assert.deepEqual(Array.from(measureBounds(spread)), [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
    // Half the rows share one value: several bounds coincide, no row falls in two slices.
    const tied = Int32Array.from({ length: 100 }, (_, i) => (i < 50 ? 7 : i));
    const b = measureBounds(tied);
    assert.deepEqual(Array.from(b), [7, 7, 7, 7, 7, 50, 60, 70, 80, 90, 100]);
  });

  test('each query gets its own label, a different one, and the slice holding its own measure', () => {
    const rows = { label: Int32Array.from({ length: 100 }, (_, i) => i % 4), measure: Int32Array.from({ length: 100 }, (_, i) => (i < 50 ? 7 : i)) };
    const queries = { label: Int32Array.from([0, 1, 2, 3, 3]), measure: Int32Array.from([7, 55, 99, 3, 120]) };
    const qa = realQueryAttributes({ info: { labels: ['a', 'b', 'c', 'd'], measure: 'test' }, rows, queries });
    assert.deepEqual(Array.from(qa.label), [0, 1, 2, 3, 3]);
    for (let q = 0; q < 5; q++) assert.ok(qa.other_label[q] !== qa.label[q] && qa.other_label[q] >= 0 && qa.other_label[q] < 4, `query ${q}`);
    // 7: the tied slice [7, 50) holds all 50 rows of 7; 55 -> [50, 60); 99 -> [90, 100); below
    // every row -> the first slice; above every row -> the last.
    assert.deepEqual(
      Array.from({ length: 5 }, (_, q) => [qa.measure_lo[q], qa.measure_hi[q]]),
      [
        [7, 50],
        [50, 60],
        [90, 100],
        [7, 50],
        [90, 100],
      ],
    );
  });

  test('one label only: no other label exists, so otherlabel asks for none (-1)', () => {
    const one = realQueryAttributes({
      info: { labels: ['only'], measure: 'test' },
      rows: { label: new Int32Array(10), measure: new Int32Array(10) },
      queries: { label: new Int32Array(3), measure: new Int32Array(3) },
    });
    assert.deepEqual(Array.from(one.other_label), [-1, -1, -1]);
  });
});

describe('a set without real attributes (synthetic)', () => {
  let ds: Dataset;
  before(async () => {
    process.env.VECBENCH_QUIET = '1';
    ds = await prepareDataset(freshDir('syn'), 'synthetic-2000');
  });

  test('stores no label or measure files, and the four groups keep nothing and are not asked', () => {
    assert.equal(ds.real, undefined);
    assert.ok(!Object.keys(ds.manifest.files).some((f) => /label|measure/.test(f)), Object.keys(ds.manifest.files).join(', '));
    assert.ok(ds.attrs.label.every((x) => x === 0) && ds.attrs.measure.every((x) => x === 0));
    assert.ok(ds.queryAttrs.label.every((x) => x === -1) && ds.queryAttrs.measure_hi.every((x) => x === -1));
    const groups = prepareGroups(
      ds,
      ['label', 'otherlabel', 'measure10', 'label+measure10'].map((filter) => ({ filter, k: 10 })),
    );
    assert.deepEqual(
      groups.map((g) => [g.key, g.asked, g.medianMatches]),
      [
        ['label/10', false, 0],
        ['otherlabel/10', false, 0],
        ['measure10/10', false, 0],
        ['label+measure10/10', false, 0],
      ],
    );
  });
});

describe('real engines on a set with real attributes (Fashion-MNIST-shaped, 2,000 images)', () => {
  let ds: Dataset;
  let files: ReturnType<typeof writeFashionLike>;
  const outDir = freshDir('out');
  const dataDir = freshDir('data');
  const NAME = 'fashion-mnist-784-euclidean';
  const GROUPS = ['label', 'otherlabel', 'measure10', 'label+measure10'].map((filter) => ({ filter, k: 10 }));
  before(async () => {
    const inputs = freshDir('in');
    files = writeFashionLike(inputs, 2000, 60);
    process.env.VECBENCH_FASHION_MNIST_DIR = inputs;
    process.env.VECBENCH_QUIET = '1';
    try {
      ds = await prepareDataset(dataDir, NAME);
      await run({ dataset: NAME, participants: ['exact', 'hnswlib'], outDir, dataDir, clients: 4, groups: GROUPS, pointTimeoutS: 600, loadTimeoutS: 600 });
    } finally {
      delete process.env.VECBENCH_FASHION_MNIST_DIR;
    }
  });

  test('the filters keep the rows whose real values match: 200 of each class, a slice of ink', () => {
    for (let q = 0; q < 5; q++) {
      const own = matchingRows(filterKind('label').forQuery(q, ds.queryAttrs), ds.attrs, ds.n);
      assert.equal(own.length, 200);
      assert.ok(own.every((r) => files.trainLabels[r] === files.testLabels[q]));
      const slice = matchingRows(filterKind('measure10').forQuery(q, ds.queryAttrs), ds.attrs, ds.n);
      assert.ok(slice.every((r) => ds.attrs.measure[r] >= ds.queryAttrs.measure_lo[q] && ds.attrs.measure[r] < ds.queryAttrs.measure_hi[q]));
      assert.ok(slice.length >= 100 && slice.length <= 400, `query ${q}: ${slice.length} rows in its ink slice`);
    }
  });

  test('exact answers every asked real group at recall 1; hnswlib returns only matching rows; the sparse AND is not asked', () => {
    const exact = readResult(resultPath(outDir, NAME, 'exact'));
    const hnsw = readResult(resultPath(outDir, NAME, 'hnswlib'));
    const status = (r: typeof exact) => Object.fromEntries(r.groups.map((g) => [g.key, g.status]));
    const want = { 'label/10': 'measured', 'otherlabel/10': 'measured', 'measure10/10': 'measured', 'label+measure10/10': 'not_asked' };
    assert.deepEqual(status(exact), want);
    assert.deepEqual(status(hnsw), want);
    for (const g of exact.groups.filter((x) => x.status === 'measured')) for (const p of g.points) assert.equal(p.recall, 1, `exact ${g.key}`);
    for (const g of hnsw.groups.filter((x) => x.status === 'measured')) {
      const top = g.points.reduce((a, b) => (b.recall > a.recall ? b : a));
      assert.ok(top.recall >= 0.9, `hnswlib ${g.key}: best recall ${top.recall}`);
      for (const p of g.points) assert.equal(p.filter_violations, 0, `hnswlib ${g.key} returned rows outside the filter`);
    }
  });
});
