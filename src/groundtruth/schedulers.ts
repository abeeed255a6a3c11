// Scheduler front ends of a ground-truth plan (docs/cluster.md): a Slurm array job with a
// dependent merge job, and a Kubernetes Indexed Job with its merge Job. Both only run the
// shard contract: `vecbench groundtruth shard PLAN --index I` for every I, then `merge PLAN`.
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ROOT } from '../util/code-paths.ts';
import { UserError } from '../util/errors.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { gtMemoryBytes } from './outofcore.ts';
import type { GtPlan } from './plan.ts';

/** The vecbench entry point of this checkout: cluster nodes share the file system. */
const BIN = join(ROOT, 'bin', 'vecbench.js');

/** Bytes the largest shard holds. A shard of all rows loads the dataset's files whole; a shard
 * of a row range holds the queries, one block of the base (VECBENCH_GT_MEMORY at most) and its
 * attribute columns, and the partial lists of every query (nq x depth x 8). Both hold their
 * output lists three times (the arrays, the file body, the file), one exactTopK call's
 * candidates (kk x 12 bytes per query, kk = depth + 8 + depth / 8) and Node's own heap. */
export function shardMemoryBytes(plan: GtPlan, gtMemory = gtMemoryBytes()): number {
  const { n, d, nq } = plan.dataset;
  const kk = plan.depth + 8 + (plan.depth >> 3);
  const inputs = plan.inputs.reduce((a, f) => a + f.bytes, 0);
  const rowFiles = plan.inputs.filter((f) => f.file.startsWith('base.'));
  const perRow = rowFiles.reduce((a, f) => a + f.bytes, 0) / n;
  return Math.max(
    ...plan.shards.map((s) => {
      const queries = s.units.reduce((a, u) => a + u.queries.length, 0);
      const maxUnit = Math.max(...s.units.map((u) => u.queries.length));
      const out = 3 * queries * (plan.depth * 8 + 4);
      const rows = s.rows[1] - s.rows[0];
      if (rows === n) return inputs + out + maxUnit * kk * 12 + n * 4 + 256 * 2 ** 20;
      const blockRows = Math.min(rows, Math.max(256, Math.floor(gtMemory / (d * 4))));
      const perQuery = inputs - rowFiles.reduce((a, f) => a + f.bytes, 0);
      return perQuery + blockRows * perRow + nq * plan.depth * 8 + out + nq * kk * 12 + blockRows * 4 + 256 * 2 ** 20;
    }),
  );
}

const mib = (bytes: number) => Math.ceil(bytes / 2 ** 20);
const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** A value written into an #SBATCH line: sbatch reads it to the line's end, so a line break or
 * another control character would start a line of the script of its own (a shell command). */
function directiveValue(what: string, value: string): string {
  if ([...value].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
    throw new UserError(`${what} ${JSON.stringify(value)} holds a line break or control character; use a plain path or name`);
  return value;
}
/** Slurm partition names: letters, digits and . _ - (a list of them comma-separated). */
const PARTITION = /^[A-Za-z0-9._-]+(,[A-Za-z0-9._-]+)*$/;

/** Writes shards.sbatch (the array, one task per shard) and merge.sbatch into the plan dir. */
export function writeSlurmScripts(
  planDir: string,
  plan: GtPlan,
  opts: { cpus?: number; memMiB?: number; partition?: string } = {},
): { shards: string; merge: string } {
  const dir = directiveValue('the plan directory', resolve(planDir));
  if (opts.partition !== undefined && !PARTITION.test(opts.partition))
    throw new UserError(
      `--partition ${JSON.stringify(opts.partition)} is not a Slurm partition name; use letters, digits, '.', '_' and '-' (comma-separated for several)`,
    );
  // readPlan holds the name to the safe-name rule; checked here too, as this writes a script.
  const name = directiveValue("the plan's dataset name", plan.dataset.name);
  const n = plan.shards.length;
  const mem = opts.memMiB ?? mib(shardMemoryBytes(plan));
  const node = process.execPath;
  const common = [
    `#SBATCH --cpus-per-task=${opts.cpus ?? 1}`,
    `#SBATCH --mem=${mem}M`,
    ...(opts.partition ? [`#SBATCH --partition=${opts.partition}`] : []),
    `#SBATCH --chdir=${dir}`,
  ];
  const shards = join(dir, 'shards.sbatch');
  const merge = join(dir, 'merge.sbatch');
  writeFileAtomic(
    shards,
    [
      '#!/bin/bash',
      `#SBATCH --job-name=vecbench-gt-${name}`,
      `#SBATCH --array=0-${n - 1}`,
      `#SBATCH --output=${dir}/shard-%a.log`,
      ...common,
      '# One task per shard of plan.json; a task run again after a finished one is a no-op.',
      'set -euo pipefail',
      `exec ${sh(node)} ${sh(BIN)} groundtruth shard ${sh(dir)} --index "$SLURM_ARRAY_TASK_ID"`,
      '',
    ].join('\n'),
  );
  writeFileAtomic(
    merge,
    [
      '#!/bin/bash',
      `#SBATCH --job-name=vecbench-gt-merge-${name}`,
      `#SBATCH --output=${dir}/merge.log`,
      ...common,
      '# Submitted with --dependency=afterok:<array job id>: runs once every shard succeeded.',
      'set -euo pipefail',
      `exec ${sh(node)} ${sh(BIN)} groundtruth merge ${sh(dir)}`,
      '',
    ].join('\n'),
  );
  return { shards, merge };
}

function sbatch(args: string[]): string {
  const r = spawnSync('sbatch', ['--parsable', ...args], { encoding: 'utf8' });
  if (r.error)
    throw new UserError(
      `sbatch could not run (${r.error.message}); install Slurm's client (apt-get install slurm-client) or submit the scripts on a login node`,
    );
  if (r.status !== 0) throw new UserError(`sbatch ${args.join(' ')} failed: ${r.stderr.trim().split('\n')[0]}; check the cluster (sinfo) and the script`);
  // --parsable prints "jobid" or "jobid;cluster".
  return r.stdout.trim().split(';')[0];
}

/** Submits the array, then the merge with a dependency on it. */
export function submitSlurm(scripts: { shards: string; merge: string }): { shards: string; merge: string } {
  statSync(scripts.shards);
  const shards = sbatch([scripts.shards]);
  const merge = sbatch([`--dependency=afterok:${shards}`, scripts.merge]);
  return { shards, merge };
}

/** Kubernetes manifests (JSON, which is YAML too) of the plan: an Indexed Job of one pod per
 * shard, and the merge Job to apply once it completed. The data and plan directories live on
 * a volume every pod mounts at the same path. */
export function k8sManifests(
  planDir: string,
  plan: GtPlan,
  opts: { image: string; claim: string; mountPath: string; parallelism?: number; cpus?: number },
): { shards: Record<string, unknown>; merge: Record<string, unknown> } {
  const dir = resolve(planDir);
  const n = plan.shards.length;
  const name = `vecbench-gt-${plan.dataset.name}`.toLowerCase().replace(/[^a-z0-9-]/g, '-');
  const mem = `${mib(shardMemoryBytes(plan))}Mi`;
  const resources = { requests: { cpu: String(opts.cpus ?? 1), memory: mem }, limits: { memory: mem } };
  const volumes = [{ name: 'data', persistentVolumeClaim: { claimName: opts.claim } }];
  const volumeMounts = [{ name: 'data', mountPath: opts.mountPath }];
  const job = (jobName: string, spec: Record<string, unknown>, args: string[], env: unknown[]) => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: jobName, labels: { app: 'vecbench-groundtruth', dataset: name } },
    spec: {
      ...spec,
      template: {
        metadata: { labels: { app: 'vecbench-groundtruth' } },
        spec: {
          restartPolicy: 'Never',
          volumes,
          containers: [{ name: 'vecbench', image: opts.image, command: ['vecbench'], args, env, resources, volumeMounts }],
        },
      },
    },
  });
  // JOB_COMPLETION_INDEX is declared from the pod's annotation so that $(...) in args expands.
  const indexEnv = [
    { name: 'JOB_COMPLETION_INDEX', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']" } } },
  ];
  return {
    shards: job(
      `${name}-shards`,
      { completionMode: 'Indexed', completions: n, parallelism: Math.min(n, opts.parallelism ?? n), backoffLimitPerIndex: 3, maxFailedIndexes: 0 },
      ['groundtruth', 'shard', dir, '--index', '$(JOB_COMPLETION_INDEX)'],
      indexEnv,
    ),
    merge: job(`${name}-merge`, { completions: 1, parallelism: 1, backoffLimit: 2 }, ['groundtruth', 'merge', dir], []),
  };
}
