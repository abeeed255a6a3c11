// `vecbench churn`: live churn (docs/method.md §7) on each participant that can write: freshness,
// reads under writes, delete + reinsert, or a runbook of the user's own.
import { resolve } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { BUILT_IN, loadRunbook } from '../churn/runbook.ts';
import { runChurn } from '../churn/run.ts';
import { isPrepared } from '../datasets/layout.ts';
import { DEFAULT_DATASET, sourceFor } from '../prepare/registry.ts';
import { deriveChurn, renderChurn } from '../report/churn.ts';
import { readAllResults } from '../results/store.ts';
import { dataDir, list, lockOutDir, outDir, positiveInt } from './common.ts';
import { defaultRunParticipants } from '../runner/registry.ts';

export function registerChurn(program: Command): void {
  program
    .command('churn')
    .description(
      'live churn: write-to-visible freshness, recall and latency under writes, delete + reinsert without tombstone leaks; stored in each result file as extra.churn',
    )
    .option('--dataset <name>', 'dataset to run on', DEFAULT_DATASET)
    .option('--participants <list>', 'comma-separated participants (those that cannot write are listed as unsupported)', list, defaultRunParticipants())
    .option('--runbook <list>', `comma-separated runbooks: built-in (${Object.keys(BUILT_IN).join(', ')}) or JSON files`, list, Object.keys(BUILT_IN))
    .option('--out <dir>', 'results directory (default results)')
    .option('--data <dir>', 'prepared datasets directory')
    .option(
      '--settings <participant=file>',
      'use another settings file for a participant (repeatable); a changed file runs its runbooks again',
      (v: string, acc: Record<string, string>) => {
        const m = /^([^=]+)=(.+)$/.exec(v);
        if (!m) throw new InvalidArgumentError('write --settings as PARTICIPANT=FILE');
        return { ...acc, [m[1]]: resolve(m[2]) };
      },
      {} as Record<string, string>,
    )
    .option('--fresh', 'run a runbook again even where its result exists for the same runbook, settings and data')
    .option('--load-timeout <s>', 'time limit of one engine start and load in seconds', positiveInt('--load-timeout'), 3600)
    .option(
      '--step-timeout <s>',
      'time limit of one write, search or compaction step in seconds (freshness and mixed get their own length on top)',
      positiveInt('--step-timeout'),
      1800,
    )
    .action(
      async (o: {
        dataset: string;
        participants: string[];
        runbook: string[];
        out?: string;
        data?: string;
        fresh?: boolean;
        loadTimeout: number;
        stepTimeout: number;
        settings: Record<string, string>;
      }) => {
        if (!isPrepared(dataDir(o), o.dataset)) sourceFor(o.dataset);
        const runbooks = o.runbook.map(loadRunbook);
        const out = outDir(o);
        lockOutDir(out);
        await runChurn({
          dataset: o.dataset,
          participants: o.participants,
          runbooks,
          outDir: out,
          dataDir: dataDir(o),
          fresh: o.fresh,
          loadTimeoutS: o.loadTimeout,
          stepTimeoutS: o.stepTimeout,
          settingsFiles: o.settings,
        });
        const results = readAllResults(out).filter((r) => r.dataset.name === o.dataset && o.participants.includes(r.participant));
        process.stdout.write(`${renderChurn(deriveChurn(results), results)}\n`);
        process.stdout.write(`results: ${out}\n`);
      },
    );
}
