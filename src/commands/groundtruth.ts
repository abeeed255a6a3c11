// vecbench groundtruth: the exact ground truth of a dataset computed in shards, on one machine
// or a cluster (docs/cluster.md): plan, shard, merge, and the Slurm / Kubernetes front ends.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { UserError } from '../util/errors.ts';
import { mergePlan } from '../groundtruth/plan-merge.ts';
import { readPlan, runPlanShard, writePlan } from '../groundtruth/plan.ts';
import { k8sManifests, shardMemoryBytes, submitSlurm, writeSlurmScripts } from '../groundtruth/schedulers.ts';
import { writeJsonAtomic } from '../util/atomic.ts';
import { dataDir } from './common.ts';

const whole = (flag: string) => (v: string) => {
  if (!/^\d+$/.test(v)) throw new UserError(`${flag} ${v} is not a whole number; give e.g. ${flag} 4`);
  return Number(v);
};

export function registerGroundTruth(program: Command): void {
  const gt = program.command('groundtruth').description('exact ground truth in shards, for a cluster: plan, shard, merge, slurm, k8s (docs/cluster.md)');
  gt.command('plan')
    .description('write a plan of shards for a prepared dataset (vecbench prepare NAME --no-groundtruth)')
    .argument('<name>', 'prepared dataset')
    .requiredOption('--shards <n>', 'number of shards', whole('--shards'))
    .option(
      '--row-ranges <r>',
      'split the rows too, so a shard holds a block of the base, not all of it (--shards must be a multiple)',
      whole('--row-ranges'),
      1,
    )
    .requiredOption('--out <dir>', 'plan directory (shards write their outputs there)')
    .option('--data <dir>', 'prepared datasets directory (default .vecbench/data or $VECBENCH_DATA)')
    .action(async (name: string, o: { shards: number; rowRanges: number; out: string; data?: string }) => {
      mkdirSync(o.out, { recursive: true });
      const plan = await writePlan(dataDir(o), name, o.shards, o.out, o.rowRanges);
      const mib = Math.ceil(shardMemoryBytes(plan) / 2 ** 20);
      process.stdout.write(
        `${join(o.out, 'plan.json')}: ${plan.shards.length} shards of ${name} (${plan.filters.length} filter kinds, ${plan.dataset.nq} queries each), about ${mib} MiB per shard\n`,
      );
    });
  gt.command('shard')
    .description('compute one shard of a plan (a finished shard is a no-op)')
    .argument('<plan_dir>', 'plan directory')
    .requiredOption('--index <i>', 'shard index, 0..shards-1', whole('--index'))
    .option('--data <dir>', 'ignored: the plan names its data directory')
    .action(async (planDir: string, o: { index: number }) => {
      const computed = await runPlanShard(planDir, o.index);
      process.stdout.write(`shard ${o.index}: ${computed ? 'computed' : 'already done'}\n`);
    });
  gt.command('merge')
    .description("check every shard and write the merged ground truth into the dataset's cache")
    .argument('<plan_dir>', 'plan directory')
    .option('--data <dir>', 'ignored: the plan names its data directory')
    .action(async (planDir: string) => {
      const ds = await mergePlan(planDir);
      process.stdout.write(`ground truth of ${ds.name} merged into ${join(ds.dir, 'groundtruth')}\n`);
    });
  gt.command('slurm')
    .description('write an sbatch array script (one task per shard) and a dependent merge script; --submit submits them')
    .argument('<plan_dir>', 'plan directory')
    .option('--submit', 'submit with sbatch (the merge with --dependency=afterok on the array)')
    .option('--cpus <n>', 'CPUs per task', whole('--cpus'), 1)
    .option('--mem-mib <n>', 'memory per task in MiB (default: estimated from the plan)', whole('--mem-mib'))
    .option('--partition <p>', 'Slurm partition')
    .action((planDir: string, o: { submit?: boolean; cpus: number; memMib?: number; partition?: string }) => {
      const plan = readPlan(planDir);
      const scripts = writeSlurmScripts(planDir, plan, { cpus: o.cpus, memMiB: o.memMib, partition: o.partition });
      process.stdout.write(`${scripts.shards}\n${scripts.merge}\n`);
      if (o.submit) {
        const ids = submitSlurm(scripts);
        process.stdout.write(`submitted array job ${ids.shards} (${plan.shards.length} tasks) and merge job ${ids.merge}\n`);
      }
    });
  gt.command('k8s')
    .description('write Kubernetes manifests: an Indexed Job of one pod per shard, and the merge Job')
    .argument('<plan_dir>', 'plan directory')
    .option('--image <image>', 'container image with vecbench on its PATH', 'vecbench:latest')
    .option('--claim <name>', 'PersistentVolumeClaim holding the data and plan directories', 'vecbench-data')
    .option('--mount <path>', 'where pods mount the claim (the plan and data paths must lie under it)', '/data')
    .option('--parallelism <n>', 'pods at once (default: all shards)', whole('--parallelism'))
    .action((planDir: string, o: { image: string; claim: string; mount: string; parallelism?: number }) => {
      const plan = readPlan(planDir);
      const m = k8sManifests(planDir, plan, { image: o.image, claim: o.claim, mountPath: o.mount, parallelism: o.parallelism });
      const shards = join(planDir, 'k8s-shards.yaml');
      const merge = join(planDir, 'k8s-merge.yaml');
      writeJsonAtomic(shards, m.shards);
      writeJsonAtomic(merge, m.merge);
      process.stdout.write(`${shards}\n${merge}\n`);
    });
}
