// Sharded ground truth without a scheduler: the plan's shards run one by one give the cache
// files of prepare byte for byte; a finished shard is not computed again; merge refuses a
// missing or corrupt shard in one line naming it and the command that fixes it; the Slurm
// scripts and the Kubernetes manifests carry the same contract.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { writePrepared } from '../../src/datasets/layout.ts';
import { generateSynthetic } from '../../src/prepare/synthetic.ts';
import { prepareGroundTruth } from '../../src/groundtruth/cache.ts';
import { mergePlan } from '../../src/groundtruth/plan-merge.ts';
import { readPlan, runPlanShard, writePlan } from '../../src/groundtruth/plan.ts';
import { UserError } from '../../src/util/errors.ts';

process.env.VECBENCH_QUIET = '1';
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'vecbench.js');
const dir = mkdtempSync(join(tmpdir(), 'vecbench-gtplan-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function vecbench(args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [BIN, ...args], { env: { ...process.env, VECBENCH_QUIET: '1' }, encoding: 'utf8' });
}

describe('ground-truth plans', () => {
  const one = join(dir, 'one');
  const sharded = join(dir, 'sharded');
  const plan = join(dir, 'plan');
  before(async () => {
    const data = generateSynthetic(3000, 200);
    prepareGroundTruth(await writePrepared(one, 'small', data), { quiet: true });
    await writePrepared(sharded, 'small', data);
  });

  test('shards run one by one merge into the files prepare writes, byte for byte; a finished shard is a no-op', async () => {
    const p = await writePlan(sharded, 'small', 3, plan);
    assert.equal(p.shards.length, 3);
    assert.ok(p.inputs.some((f) => f.file === 'base.f32' && /^[0-9a-f]{64}$/.test(f.sha256)));
    for (let i = 0; i < 3; i++) assert.equal(await runPlanShard(plan, i, { quiet: true }), true);
    const before = statSync(join(plan, 'shard-1.bin')).mtimeMs;
    assert.equal(await runPlanShard(plan, 1, { quiet: true }), false, 'resumed shard with a valid output');
    assert.equal(statSync(join(plan, 'shard-1.bin')).mtimeMs, before);
    await mergePlan(plan);
    const gt = (d: string) => join(d, 'small', 'groundtruth');
    const files = readdirSync(gt(one)).sort();
    assert.deepEqual(readdirSync(gt(sharded)).sort(), files);
    for (const f of files) assert.ok(readFileSync(join(gt(one), f)).equals(readFileSync(join(gt(sharded), f))), `${f} differs`);
  });

  test('row ranges x query blocks: shards read blocks of the base, and the merge equals prepare (distances and matches exactly, ids but for float32 ties)', async () => {
    const rplan = join(dir, 'rplan');
    const p = await writePlan(sharded, 'small', 4, rplan, 2);
    assert.deepEqual([...new Set(p.shards.map((s) => s.rows.join('-')))], ['0-1500', '1500-3000']);
    process.env.VECBENCH_GT_MEMORY = String(2 ** 20);
    try {
      for (let i = 0; i < 4; i++) assert.equal(await runPlanShard(rplan, i, { quiet: true }), true);
    } finally {
      delete process.env.VECBENCH_GT_MEMORY;
    }
    assert.deepEqual(
      readdirSync(rplan).filter((f) => f.endsWith('.ckpt')),
      [],
      'checkpoints removed once the output is written',
    );
    rmSync(join(sharded, 'small', 'groundtruth'), { recursive: true, force: true });
    await mergePlan(rplan);
    const gt = (d: string, f: string) => readFileSync(join(d, 'small', 'groundtruth', f));
    for (const k of readPlan(rplan).filters) {
      assert.ok(gt(one, `${k}.dists.f32`).equals(gt(sharded, `${k}.dists.f32`)), `${k} distances`);
      assert.ok(gt(one, `${k}.matches.i32`).equals(gt(sharded, `${k}.matches.i32`)), `${k} matches`);
      const a = new Int32Array(new Uint8Array(gt(one, `${k}.ids.i32`)).buffer);
      const b = new Int32Array(new Uint8Array(gt(sharded, `${k}.ids.i32`)).buffer);
      const dd = new Float32Array(new Uint8Array(gt(one, `${k}.dists.f32`)).buffer);
      const depth = readPlan(rplan).depth;
      for (let i = 0; i < a.length; i++) {
        if (a[i] === b[i]) continue;
        // A swap of two rows at the same float32 distance: b[i] sits at an equal distance in a's list.
        const row = Math.floor(i / depth) * depth;
        const j = Array.from(a.subarray(row, row + depth)).indexOf(b[i]);
        assert.ok(j >= 0 && dd[row + j] === dd[i], `${k}: id ${b[i]} at ${i} is not a tie of ${a[i]}`);
      }
    }
    // Back to the byte-identical cache of the first plan for the tests below.
    await mergePlan(plan);
  });

  test('merge refuses a corrupt or missing shard in one line naming it and the fix', async () => {
    const path = join(plan, 'shard-2.bin');
    const buf = readFileSync(path);
    buf[buf.length - 1] ^= 0xff;
    writeFileSync(path, buf);
    await assert.rejects(
      () => mergePlan(plan),
      (e: Error) =>
        e instanceof UserError && /^shard 2 of .*plan\.json is missing or corrupt .*; compute it: vecbench groundtruth shard .* --index 2$/.test(e.message),
    );
    rmSync(path);
    const r = vecbench(['groundtruth', 'merge', plan]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^vecbench: shard 2 .* --index 2\n$/);
    assert.equal(await runPlanShard(plan, 2, { quiet: true }), true, 'the fix recomputes it');
    await mergePlan(plan);
  });

  test('a shard index outside the plan, a plan that does not parse, or too many shards are one-line errors', async () => {
    let r = vecbench(['groundtruth', 'shard', plan, '--index', '7']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--index 7 is not a shard of .*; give --index 0\.\.2/);
    const bad = join(dir, 'bad');
    r = vecbench(['groundtruth', 'plan', 'small', '--shards', '100000', '--out', bad, '--data', sharded]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--shards 100000 exceeds the \d+ work units of small per row range; give --shards \d+ or fewer/);
    writeFileSync(join(bad, 'plan.json'), '{"format":"vecbench-gt-plan/1"}');
    r = vecbench(['groundtruth', 'merge', bad]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /plan\.json: field dataset: .*; write the plan again/);
  });

  test('slurm writes an array script of one task per shard and a merge script', () => {
    const r = vecbench(['groundtruth', 'slurm', plan, '--cpus', '2']);
    assert.equal(r.status, 0, r.stderr);
    const shards = readFileSync(join(plan, 'shards.sbatch'), 'utf8');
    assert.match(shards, /^#!\/bin\/bash\n/);
    assert.match(shards, /^#SBATCH --array=0-2$/m);
    assert.match(shards, /^#SBATCH --cpus-per-task=2$/m);
    assert.match(shards, /^#SBATCH --mem=\d+M$/m);
    assert.match(shards, /groundtruth shard '[^']+' --index "\$SLURM_ARRAY_TASK_ID"$/m);
    assert.match(readFileSync(join(plan, 'merge.sbatch'), 'utf8'), /groundtruth merge '[^']+'$/m);
  });

  test('k8s writes an Indexed Job of one pod per shard and a merge Job', () => {
    const r = vecbench(['groundtruth', 'k8s', plan, '--image', 'registry.example/vecbench:1', '--parallelism', '2']);
    assert.equal(r.status, 0, r.stderr);
    // JSON is YAML: kubectl applies these files as they are.
    const shards = JSON.parse(readFileSync(join(plan, 'k8s-shards.yaml'), 'utf8'));
    const merge = JSON.parse(readFileSync(join(plan, 'k8s-merge.yaml'), 'utf8'));
    const n = readPlan(plan).shards.length;
    for (const job of [shards, merge]) {
      assert.equal(job.apiVersion, 'batch/v1');
      assert.equal(job.kind, 'Job');
      assert.match(job.metadata.name, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
      const pod = job.spec.template.spec;
      assert.equal(pod.restartPolicy, 'Never');
      assert.equal(pod.containers.length, 1);
      assert.equal(pod.containers[0].image, 'registry.example/vecbench:1');
      assert.match(pod.containers[0].resources.limits.memory, /^\d+Mi$/);
      assert.deepEqual(pod.volumes[0].persistentVolumeClaim, { claimName: 'vecbench-data' });
      assert.equal(pod.containers[0].volumeMounts[0].name, pod.volumes[0].name);
    }
    assert.equal(shards.spec.completionMode, 'Indexed');
    assert.equal(shards.spec.completions, n);
    assert.equal(shards.spec.parallelism, 2);
    const c = shards.spec.template.spec.containers[0];
    assert.deepEqual(c.args.slice(0, 2), ['groundtruth', 'shard']);
    assert.deepEqual(c.args.slice(3), ['--index', '$(JOB_COMPLETION_INDEX)']);
    assert.equal(c.env[0].name, 'JOB_COMPLETION_INDEX');
    assert.equal(c.env[0].valueFrom.fieldRef.fieldPath, "metadata.annotations['batch.kubernetes.io/job-completion-index']");
    assert.deepEqual(merge.spec.template.spec.containers[0].args.slice(0, 2), ['groundtruth', 'merge']);
    assert.equal(merge.spec.completionMode, undefined);
  });
});
