// Out-of-core ground truth: the same answers as the in-memory computation (ties aside), with
// the base read in blocks, on both backends (native threads, JS worker threads); resumable
// from checkpoints; row-range shards that merge exactly (the multi-machine plan); the
// cache.ts hook that switches to it when the base exceeds VECBENCH_GT_MEMORY.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { writePrepared, type Dataset } from '../../src/datasets/layout.ts';
import { generateSynthetic } from '../../src/prepare/synthetic.ts';
import { computeGroundTruth, groundTruthFor, type GroundTruth } from '../../src/groundtruth/cache.ts';
import { nativeAvailable } from '../../src/groundtruth/exact.ts';
import { gtMemoryBytes, outOfCoreGroundTruth, partialDir, planShards } from '../../src/groundtruth/outofcore.ts';
import { loadCheckpoint, mergePartials, readPartialFile, runShard, type PartialTopK } from '../../src/groundtruth/partial-topk.ts';
import { UserError } from '../../src/util/errors.ts';

process.env.VECBENCH_QUIET = '1';
const dir = mkdtempSync(join(tmpdir(), 'vecbench-gtooc-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const DEPTH = 50;
/** Bytes for blocks of ~700 rows of 128-d: several blocks per shard. */
const SMALL_MEMORY = 700 * 128 * 4;

/** Same result, ties aside: every distance equal, and where ids differ their distances are
 * equal (candidates at the same float32 distance may come in either order). */
function assertSameTopK(got: PartialTopK | GroundTruth, want: GroundTruth, what: string) {
  assert.deepEqual(got.matches, want.matches, `${what}: matches`);
  assert.deepEqual(got.dists, want.dists, `${what}: distances`);
  let differ = 0;
  for (let i = 0; i < want.ids.length; i++) {
    if (got.ids[i] !== want.ids[i]) {
      differ++;
      const row = Math.floor(i / want.depth) * want.depth;
      const tied = Array.from(want.ids.subarray(row, row + want.depth)).some((id, j) => id === got.ids[i] && want.dists[row + j] === got.dists[i]);
      assert.ok(tied || got.dists[i] === want.dists[i], `${what}: id ${got.ids[i]} at ${i} is not a tie of ${want.ids[i]}`);
    }
  }
  assert.ok(differ <= want.ids.length / 100, `${what}: ${differ} ids differ`);
}

describe('out-of-core ground truth', () => {
  let ds: Dataset;
  const expected = new Map<string, GroundTruth>();
  before(async () => {
    ds = await writePrepared(dir, 'ooc', generateSynthetic(3000, 60));
    for (const f of ['none', 'cat10', 'cluster', 'lang', 'cat10+num10']) expected.set(f, computeGroundTruth(ds, f, DEPTH, { quiet: true }));
  });

  test('VECBENCH_GT_MEMORY: sizes parse; bad values are one-line errors', () => {
    assert.equal(gtMemoryBytes('512m'), 512 * 2 ** 20);
    assert.equal(gtMemoryBytes('4g'), 4 * 2 ** 30);
    assert.equal(gtMemoryBytes('1.5GiB'), 1.5 * 2 ** 30);
    assert.equal(gtMemoryBytes('2097152'), 2 * 2 ** 20);
    assert.equal(gtMemoryBytes(undefined), 2 * 2 ** 30);
    assert.throws(
      () => gtMemoryBytes('lots'),
      (e: Error) => e instanceof UserError && /VECBENCH_GT_MEMORY="lots" is not a size; write it like 512m/.test(e.message),
    );
    assert.throws(() => gtMemoryBytes('10k'), /below 1 MB/);
  });

  test('blocks stay within the memory setting and shards cover every row once', () => {
    const plan = planShards(ds, 'none', DEPTH, { memoryBytes: SMALL_MEMORY, backend: 'js', threads: 2 });
    assert.equal(plan.specs.length, 2);
    assert.ok(plan.blockRows * ds.d * 4 * plan.specs.length <= SMALL_MEMORY);
    assert.deepEqual(
      plan.specs.map((s) => s.range),
      [
        [0, 1500],
        [1500, 3000],
      ],
    );
    const native = planShards(ds, 'none', DEPTH, { memoryBytes: SMALL_MEMORY, backend: 'native', threads: 2 });
    assert.equal(native.specs.length, 1);
    assert.equal(native.specs[0].threads, 2);
  });

  test('native backend (the addon threads share each block) equals the in-memory result', () => {
    assert.ok(nativeAvailable(), 'the native addon is built by npm ci (scripts/build-native.mjs)');
    for (const [f, want] of expected) {
      const got = outOfCoreGroundTruth(ds, f, DEPTH, { memoryBytes: SMALL_MEMORY, backend: 'native', quiet: true, checkpointEveryS: 0 });
      assert.equal(got.backend, 'native');
      assertSameTopK(got, want, `native ${f}`);
    }
  });

  test('JS backend with one worker thread per core equals the in-memory result', () => {
    for (const f of ['none', 'cluster', 'cat10+num10']) {
      const got = outOfCoreGroundTruth(ds, f, DEPTH, { memoryBytes: SMALL_MEMORY, backend: 'js', threads: 2, quiet: true, checkpointEveryS: 0 });
      assert.equal(got.backend, 'js');
      assertSameTopK(got, expected.get(f)!, `js ${f}`);
      assert.ok(!existsSync(join(partialDir(ds, f), 'nothing')));
    }
  });

  test('an interrupted run resumes from its last checkpoint', () => {
    const opts = { memoryBytes: SMALL_MEMORY, backend: 'native' as const, quiet: true, checkpointEveryS: 0 };
    rmSync(partialDir(ds, 'cat10'), { recursive: true, force: true });
    const plan = planShards(ds, 'cat10', DEPTH, opts);
    const spec = plan.specs[0];
    // Crash after the second block.
    assert.throws(
      () =>
        runShard(spec, (done) => {
          if (done >= 2 * plan.blockRows) throw new Error('power cut');
        }),
      /power cut/,
    );
    const ckpt = loadCheckpoint(spec);
    assert.ok(ckpt, 'a checkpoint was written');
    assert.equal(ckpt.next, 2 * plan.blockRows);
    const got = outOfCoreGroundTruth(ds, 'cat10', DEPTH, opts);
    assert.equal(got.resumedRows, 2 * plan.blockRows);
    assertSameTopK(got, expected.get('cat10')!, 'resumed cat10');
    // A checkpoint of other settings (another depth) is not used.
    const other = planShards(ds, 'cat10', DEPTH - 1, opts).specs[0];
    assert.equal(loadCheckpoint(other), null);
  });

  test('row-range shards (one per machine) merge into exactly the full result', () => {
    const opts = { backend: 'native' as const, quiet: true, checkpointEveryS: 0, memoryBytes: SMALL_MEMORY };
    for (const f of ['none', 'lang']) {
      rmSync(partialDir(ds, f), { recursive: true, force: true });
      const parts = [
        outOfCoreGroundTruth(ds, f, DEPTH, { ...opts, rowRange: [2000, 3000] }),
        outOfCoreGroundTruth(ds, f, DEPTH, { ...opts, rowRange: [0, 1234] }),
        outOfCoreGroundTruth(ds, f, DEPTH, { ...opts, rowRange: [1234, 2000] }),
      ];
      assertSameTopK(mergePartials(parts), expected.get(f)!, `merged ${f}`);
      // What a merge step on another machine does: read the finished checkpoint files.
      const files = readdirSync(partialDir(ds, f)).filter((x) => /^shard-(0-1234|1234-2000|2000-3000)\.ckpt$/.test(x));
      assert.equal(files.length, 3);
      const read = files.map((x) => readPartialFile(join(partialDir(ds, f), x), ds.nq, DEPTH));
      assert.ok(read.every((r) => r.next === r.range[1]));
      assertSameTopK(mergePartials(read.map((r) => r.partial)), expected.get(f)!, `merged from files ${f}`);
    }
    assert.throws(() => outOfCoreGroundTruth(ds, 'none', DEPTH, { ...opts, rowRange: [10, 5000] }), /row range 10\.\.5000 is not inside 0\.\.3000/);
  });

  test('the cache uses it when the base exceeds VECBENCH_GT_MEMORY, prints an estimate and progress, and clears its checkpoints', () => {
    const script = `
      import { loadDataset } from ${JSON.stringify(join(import.meta.dirname, '../../src/datasets/layout.ts'))};
      import { groundTruthFor, computeGroundTruth } from ${JSON.stringify(join(import.meta.dirname, '../../src/groundtruth/cache.ts'))};
      const ds = await loadDataset(${JSON.stringify(dir)}, 'ooc');
      const gt = groundTruthFor(ds, 'cluster');
      const want = computeGroundTruth(ds, 'cluster', gt.depth, { quiet: true });
      let same = 0;
      for (let i = 0; i < want.dists.length; i++) if (want.dists[i] === gt.dists[i]) same++;
      console.log(JSON.stringify({ depth: gt.depth, same, total: want.dists.length }));`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { ...process.env, VECBENCH_QUIET: '0', VECBENCH_GT_MEMORY: '1m' },
    });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
    assert.equal(out.depth, 1000);
    assert.equal(out.same, out.total);
    assert.match(
      r.stderr,
      /ground truth ooc cluster: estimated at most \S+ for 60 queries x 3,000 rows \(native, \d+ threads; calibrated on \d+ rows x 60 queries/,
    );
    assert.match(r.stderr, /ground truth ooc cluster \(out of core, 1 shard\): 100% \(3000\/3000\) rows/);
    assert.ok(!existsSync(partialDir(ds, 'cluster')), 'checkpoints are removed once the result is cached');
    assert.ok(readdirSync(join(ds.dir, 'groundtruth')).includes('cluster.ids.i32'));
    // Under the setting, the in-memory path serves it from the cache.
    assert.equal(groundTruthFor(ds, 'cluster', { quiet: true }).backend, 'cache');
  });

  test('a base file cut short fails with one line naming it', () => {
    const copy = join(dir, 'cut');
    rmSync(copy, { recursive: true, force: true });
    return writePrepared(dir, 'cut', generateSynthetic(1000, 20)).then((small) => {
      truncateSync(join(small.dir, 'base.f32'), 1000 * 128 * 4 - 4096);
      assert.throws(
        () => outOfCoreGroundTruth(small, 'none', 10, { memoryBytes: 100 * 128 * 4, backend: 'native', quiet: true }),
        (e: Error) => e instanceof UserError && /base\.f32 ends early at byte \d+ \(truncated\); re-prepare the dataset/.test(e.message),
      );
    });
  });
});
