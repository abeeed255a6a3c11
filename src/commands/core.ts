// prepare, datasets, participants, run, report.
import { Command, InvalidArgumentError } from 'commander';
import { resolve } from 'node:path';
import { isPrepared } from '../datasets/layout.ts';
import { DEFAULT_DATASET, SOURCES, prepareDataset, sourceFor } from '../datasets/registry.ts';
import { parseGroupKey } from '../datasets/groups.ts';
import { deriveCells } from '../report/cells.ts';
import { renderTable } from '../report/table.ts';
import { readAllResults } from '../results/store.ts';
import { listParticipants, loadParticipant } from '../runner/participants.ts';
import { run } from '../runner/run.ts';
import { UserError } from '../util/errors.ts';
import { dataDir, list, outDir, positiveInt } from './common.ts';

/** In-process participants that need no server: the embedded default run. */
export const DEFAULT_PARTICIPANTS = ['exact', 'hnswlib', 'usearch', 'lancedb', 'pgvector-pglite'];

export function printReport(out: string, json: boolean): void {
  const results = readAllResults(out);
  if (results.length === 0) throw new UserError(`no result files in ${out}; run vecbench run first (or pass --out DIR)`);
  const cells = deriveCells(results);
  if (json) process.stdout.write(JSON.stringify({ cells }, null, 1) + '\n');
  else process.stdout.write(renderTable(cells) + '\n');
}

export function registerCore(program: Command): void {
  program
    .command('prepare')
    .description('prepare a dataset (generate or convert it into the prepared layout); a second prepare is a no-op')
    .argument('<name>', 'dataset name, e.g. synthetic-20k (see vecbench datasets)')
    .option('--data <dir>', 'prepared datasets directory (default .vecbench/data or $VECBENCH_DATA)')
    .option('--force', 'prepare again even if prepared')
    .action(async (name: string, o: { data?: string; force?: boolean }) => {
      const ds = await prepareDataset(dataDir(o), name, { force: o.force });
      process.stdout.write(`${ds.name}: ${ds.n} x ${ds.d} ${ds.metric}, ${ds.nq} queries, in ${ds.dir}\n`);
    });

  program
    .command('datasets')
    .description('list the datasets vecbench knows and whether they are prepared')
    .option('--data <dir>', 'prepared datasets directory')
    .action((o: { data?: string }) => {
      for (const s of SOURCES) process.stdout.write(`${s.pattern.padEnd(24)} ${s.describe}\n`);
      process.stdout.write(`\ndefault: ${DEFAULT_DATASET} (${isPrepared(dataDir(o), DEFAULT_DATASET) ? 'prepared' : 'not prepared'})\n`);
    });

  program
    .command('participants')
    .description('list the participants (engines with settings)')
    .action(async () => {
      for (const name of listParticipants()) {
        const p = await loadParticipant(name);
        process.stdout.write(`${name.padEnd(18)} ${p.adapter.engine} — filters: ${p.adapter.filterStrategy}\n`);
      }
    });

  program
    .command('run')
    .description('load each participant, sweep its ladders over every query group, store measured points and print the table')
    .option('--dataset <name>', 'dataset to run on', DEFAULT_DATASET)
    .option('--participants <list>', 'comma-separated participants', list, DEFAULT_PARTICIPANTS)
    .option('--groups <list>', 'only these groups, e.g. none/10,cat100/10', list)
    .option('--out <dir>', 'results directory (default results)')
    .option('--data <dir>', 'prepared datasets directory')
    .option(
      '--settings <participant=file>',
      'use another settings file for a participant (repeatable)',
      (v: string, acc: Record<string, string>) => {
        const m = /^([^=]+)=(.+)$/.exec(v);
        if (!m) throw new InvalidArgumentError('write --settings as PARTICIPANT=FILE');
        return { ...acc, [m[1]]: resolve(m[2]) };
      },
      {} as Record<string, string>,
    )
    .option('--fresh', 'measure again even where a complete result exists (default: resume unfinished results, keep complete ones)')
    .option('--clients <n>', 'in-flight requests in the throughput view', positiveInt('--clients'), 32)
    .option('--point-timeout <s>', 'time limit of one point in seconds', positiveInt('--point-timeout'), 900)
    .option('--load-timeout <s>', 'time limit of one load in seconds', positiveInt('--load-timeout'), 3600)
    .action(
      async (o: { dataset: string; participants: string[]; groups?: string[]; out?: string; data?: string; clients: number; pointTimeout: number; loadTimeout: number; settings: Record<string, string>; fresh?: boolean }) => {
        sourceFor(o.dataset);
        const groups = o.groups?.map(parseGroupKey);
        const out = outDir(o);
        await run({ dataset: o.dataset, participants: o.participants, outDir: out, dataDir: dataDir(o), clients: o.clients, groups, pointTimeoutS: o.pointTimeout, loadTimeoutS: o.loadTimeout, settingsFiles: o.settings, fresh: o.fresh });
        printReport(out, false);
        process.stdout.write(`results: ${out}\n`);
      },
    );

  program
    .command('report')
    .description('derive the tables from stored results (terminal table, or --json)')
    .option('--out <dir>', 'results directory (default results)')
    .option('--json', 'print the derived cells as JSON')
    .action((o: { out?: string; json?: boolean }) => printReport(outDir(o), o.json === true));
}
