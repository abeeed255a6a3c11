// The shard contract on a real scheduler: a one-node Slurm cluster started here runs a 4-task
// array job of `vecbench groundtruth shard` and its dependent merge, and the merged ground truth
// of every standard filter kind of the default dataset is byte-identical to `vecbench prepare`'s.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { STANDARD_KINDS } from '../../src/datasets/groups.ts';
import { DEFAULT_DATASET } from '../../src/prepare/registry.ts';
import { SlurmCluster } from '../helpers/slurm-cluster.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'vecbench.js');
const dir = mkdtempSync(join(tmpdir(), 'vecbench-gtslurm-'));
let cluster: SlurmCluster | undefined;

function vecbench(args: string[], env: NodeJS.ProcessEnv = process.env): string {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: { ...env, VECBENCH_QUIET: '1' }, encoding: 'utf8' });
  assert.equal(r.status, 0, `vecbench ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

describe('sharded ground truth on Slurm', () => {
  before(async () => {
    cluster = await SlurmCluster.start();
  });
  after(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a 4-shard array job plus its merge equals prepare on one machine, byte for byte, for every filter kind', async (t) => {
    const c = cluster!;
    const one = join(dir, 'one');
    const sharded = join(dir, 'sharded');
    const plan = join(dir, 'plan');
    let t0 = performance.now();
    vecbench(['prepare', DEFAULT_DATASET, '--data', one]);
    const oneSeconds = (performance.now() - t0) / 1000;
    vecbench(['prepare', DEFAULT_DATASET, '--data', sharded, '--no-groundtruth']);
    assert.deepEqual(
      readdirSync(join(sharded, DEFAULT_DATASET)).filter((f) => f === 'groundtruth'),
      [],
      '--no-groundtruth computes none',
    );
    vecbench(['groundtruth', 'plan', DEFAULT_DATASET, '--shards', '4', '--out', plan, '--data', sharded]);
    t0 = performance.now();
    const out = vecbench(['groundtruth', 'slurm', plan, '--submit'], c.env);
    const m = /submitted array job (\d+) \(4 tasks\) and merge job (\d+)/.exec(out);
    assert.ok(m, out);
    await c.waitJobs([m[1], m[2]]);
    const clusterSeconds = (performance.now() - t0) / 1000;
    t.diagnostic(`wall time: prepare with ground truth ${oneSeconds.toFixed(1)}s; Slurm 4-shard array + merge ${clusterSeconds.toFixed(1)}s`);
    for (let i = 0; i < 4; i++) assert.match(readFileSync(join(plan, `shard-${i}.log`), 'utf8'), new RegExp(`shard ${i}: computed`));
    assert.match(readFileSync(join(plan, 'merge.log'), 'utf8'), /merged into/);
    const want = readdirSync(join(one, DEFAULT_DATASET, 'groundtruth')).sort();
    assert.deepEqual(readdirSync(join(sharded, DEFAULT_DATASET, 'groundtruth')).sort(), want);
    for (const k of STANDARD_KINDS) for (const ext of ['ids.i32', 'dists.f32', 'matches.i32']) assert.ok(want.includes(`${k.name}.${ext}`), `${k.name}.${ext}`);
    for (const f of want) {
      const a = readFileSync(join(one, DEFAULT_DATASET, 'groundtruth', f));
      const b = readFileSync(join(sharded, DEFAULT_DATASET, 'groundtruth', f));
      assert.ok(a.equals(b), `${f} differs`);
    }
  });
});
