// The vecbench command line. Each command lives in src/commands/ and registers itself; only the
// command being run is loaded (with what it imports), so `vecbench --help` and a one-line error
// start in a fraction of the time loading every command would take. The others are listed by
// name and summary (test/unit/cli-commands.test.ts holds the summaries equal to the commands').
// Every command validates its input first; a UserError becomes one line (the problem and the
// fix) and exit code 2.
import { Command, CommanderError } from 'commander';
import { killAllHosts } from './runner/client.ts';
import { RunStopped, requestStop, stopExitCode } from './runner/stop.ts';
import { VECBENCH_VERSION } from './version.ts';
import { UserError, diskFullError } from './util/errors.ts';
import { redactStandardStreams } from './util/redact.ts';
type Register = (program: Command) => void;

/** Every command: its name, its summary in `vecbench --help` (the start of its description),
 * and how to load it. */
export const COMMANDS: { name: string; summary: string; load: () => Promise<Register> }[] = [
  {
    name: 'prepare',
    summary: 'prepare a dataset (generate or convert it into the prepared layout); a second prepare is a no-op',
    load: async () => (await import('./commands/prepare.ts')).registerPrepare,
  },
  {
    name: 'datasets',
    summary: 'list the datasets vecbench knows and whether they are prepared',
    load: async () => (await import('./commands/datasets.ts')).registerDatasets,
  },
  {
    name: 'participants',
    summary: 'list the participants: engine, the version the engine reports, where it runs, whether the default run measures it, its filter strategy',
    load: async () => (await import('./commands/participants.ts')).registerParticipants,
  },
  {
    name: 'run',
    summary: 'load each participant, sweep its ladders over every query group, store measured points and print the table',
    load: async () => (await import('./commands/run.ts')).registerRun,
  },
  {
    name: 'report',
    summary: 'derive the tables from stored results (terminal table, --json, or the HTML page with --html DIR)',
    load: async () => (await import('./commands/report.ts')).registerReport,
  },
  {
    name: 'import',
    summary: 'import published results of other harnesses (VectorBench result JSON, ann-benchmarks HDF5 result files) beside our own, marked as imported',
    load: async () => (await import('./commands/import.ts')).registerImport,
  },
  {
    name: 'eval',
    summary: 'score a TREC-format run file against qrels: nDCG@10 (as trec_eval ndcg_cut_10), MRR@10, Hit@10, recall@100',
    load: async () => (await import('./commands/quality.ts')).registerQuality,
  },
  {
    name: 'churn',
    summary:
      'live churn: write-to-visible freshness, recall and latency under writes, delete + reinsert without tombstone leaks; stored in each result file as extra.churn',
    load: async () => (await import('./commands/churn.ts')).registerChurn,
  },
  {
    name: 'ceiling',
    summary: "measure the load client's own maximum rate per protocol against null engines",
    load: async () => (await import('./commands/ceiling.ts')).registerCeiling,
  },
  {
    name: 'compare',
    summary: 'compare two results directories cell by cell: B / A with its 95 % interval; a change counts only when the intervals do not overlap',
    load: async () => (await import('./commands/compare.ts')).registerCompare,
  },
  {
    name: 'groundtruth',
    summary: 'exact ground truth in shards, for a cluster: plan, shard, merge, slurm, k8s (docs/cluster.md)',
    load: async () => (await import('./commands/groundtruth.ts')).registerGroundTruth,
  },
  {
    name: 'load-worker',
    summary: "run the load generator's client threads here for a coordinator's `vecbench run --client-hosts` (one TCP connection, JSON lines)",
    load: async () => (await import('./commands/load-worker.ts')).registerLoadWorker,
  },
];

// Credentials never reach the terminal or a log: every line this process prints is masked.
redactStandardStreams();

const program = new Command()
  .name('vecbench')
  .description('An honest, reproducible benchmark for vector search engines')
  .version(VECBENCH_VERSION)
  // A bad option is one line like every other bad input (below), not a page of help: commander
  // throws instead of exiting, and prints nothing of its own for errors.
  .exitOverride()
  .configureOutput({ outputError: () => {} });

function onSignal(sig: NodeJS.Signals) {
  // Exits before any further JS runs: nothing after the last whole write reaches a file.
  requestStop(sig);
  killAllHosts();
  process.stderr.write(`vecbench: stopped by ${sig}; finished points are kept, run the same command again to measure the rest\n`);
  process.exit(stopExitCode(sig));
}
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
process.on('SIGHUP', onSignal);

try {
  // `vecbench NAME ...` and `vecbench help NAME` load NAME; anything else loads no command.
  const args = process.argv.slice(2);
  const asked = args[0] === 'help' ? args[1] : args[0];
  for (const c of COMMANDS) {
    // Registering reads the participants' settings.json declarations (defaults, help examples):
    // a file that does not parse is one line here too.
    if (c.name === asked) (await c.load())(program);
    else program.command(c.name).description(c.summary);
  }
  await program.parseAsync(process.argv);
} catch (thrown) {
  killAllHosts();
  // --help, --version and a bare `vecbench` (help, exit 1) end here too, having printed it.
  if (thrown instanceof CommanderError) {
    if (thrown.exitCode === 0 || thrown.code === 'commander.help') process.exit(thrown.exitCode);
    const sub = process.argv.slice(2).find((a) => program.commands.some((c) => c.name() === a));
    process.stderr.write(`vecbench: ${thrown.message.replace(/^error: /, '')}; vecbench ${sub ? `${sub} ` : ''}--help lists the options\n`);
    process.exit(2);
  }
  // A full disk met outside the writers that name their file is still one line, exit 2.
  const e = diskFullError(thrown) ?? thrown;
  if (e instanceof UserError) {
    process.stderr.write(`vecbench: ${e.message}\n`);
    process.exit(2);
  }
  // An engine (or its server) got the stop signal before this process did, or alone.
  if (e instanceof RunStopped) {
    process.stderr.write(`vecbench: ${e.message}\n`);
    process.exit(stopExitCode(e.signal));
  }
  process.stderr.write(`vecbench: internal error: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
}
