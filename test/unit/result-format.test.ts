// Stored results outlive the code that wrote them: files of format 1 (test/fixtures/
// results-format-1, written by `vecbench run` at 6096435: hnswlib and exact on synthetic-2000,
// none/10 and cat10/10) must read, and derive the same cells, in every later version. A format
// change adds a step to src/results/migrate.ts; this file then proves the old files still read.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { deriveCells } from '../../src/report/cells.ts';
import { toCurrentFormat, type FormatStep } from '../../src/results/migrate.ts';
import { storageOf } from '../../src/results/provenance.ts';
import { RESULT_FORMAT } from '../../src/results/schema.ts';
import { readAllResults } from '../../src/results/store.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/results-format-1', import.meta.url));

test('result files of format 1 read in this version and derive their cells', () => {
  const results = readAllResults(FIXTURE);
  assert.deepEqual(results.map((r) => r.participant).sort(), ['exact', 'hnswlib']);
  for (const r of results) {
    assert.equal(r.format, RESULT_FORMAT);
    assert.equal(r.dataset.name, 'synthetic-2000');
    assert.deepEqual(r.groups.map((g) => g.key).sort(), ['cat10/10', 'none/10']);
  }
  const cells = deriveCells(results);
  // hnswlib's throughput cells at the three targets in both groups: each a value with its
  // interval, or a reason; exact is read at recall 1.
  const hnsw = cells.filter((c) => c.participant === 'hnswlib' && c.view === 'throughput');
  assert.equal(hnsw.length, 6);
  for (const c of hnsw) {
    if (c.value === null) continue;
    assert.ok(c.value > 0 && c.ci_low! <= c.value && c.value <= c.ci_high!, JSON.stringify(c));
  }
  assert.ok(
    hnsw.some((c) => c.value !== null),
    'some hnswlib cell has a value',
  );
});

test('a result of an earlier format is lifted step by step to this one; an unknown format is refused', () => {
  // Two made-up steps stand for the ones later format changes add.
  const steps: FormatStep[] = [
    { from: 'x/1', to: 'x/2', up: (r) => ({ ...r, renamed: r.old, old: undefined }) },
    { from: 'x/2', to: 'x/3', up: (r) => ({ ...r, added: 0 }) },
  ];
  assert.deepEqual(toCurrentFormat({ format: 'x/1', old: 5 }, steps, 'x/3'), { format: 'x/3', renamed: 5, old: undefined, added: 0 });
  assert.deepEqual(toCurrentFormat({ format: 'x/3', kept: 1 }, steps, 'x/3'), { format: 'x/3', kept: 1 });
  assert.equal(toCurrentFormat({ format: 'x/4' }, steps, 'x/3'), null);
  assert.equal(toCurrentFormat({ format: 'x/0' }, steps, 'x/3'), null);
  for (const bad of [null, 3, 'x', [1]]) assert.equal(toCurrentFormat(bad, steps, 'x/3'), null);
  // A step that loops back is refused, not followed forever.
  assert.equal(
    toCurrentFormat(
      { format: 'y/1' },
      [
        { from: 'y/1', to: 'y/1b', up: (r) => r },
        { from: 'y/1b', to: 'y/1', up: (r) => r },
      ],
      'y/2',
    ),
    null,
  );
  // Today: format 1 is current, nothing to lift.
  assert.equal(RESULT_FORMAT, 'vecbench-result/1');
});

test("provenance records the storage under --out from sysfs: the disk's read-ahead, null off a block device", () => {
  const here = storageOf(FIXTURE);
  if (here !== null) {
    // The device's own queue settings, as sysfs has them (a partition reads its disk's).
    const queue = ['/sys/block', here.device, 'queue'].join('/');
    const ownQueue = existsSync(queue) ? queue : null;
    if (ownQueue) assert.equal(here.read_ahead_kb, Number(readFileSync(`${ownQueue}/read_ahead_kb`, 'utf8')));
    assert.ok(Number.isInteger(here.read_ahead_kb) && here.read_ahead_kb >= 0);
    // A directory not made yet is on its nearest existing parent's device.
    assert.deepEqual(storageOf(join(FIXTURE, 'not', 'made', 'yet')), here);
  }
  assert.equal(storageOf('/proc'), null, 'procfs is on no block device');
});
