// The vecbench command line. Each command lives in src/commands/ and registers itself here.
// Every command validates its input first; a UserError becomes one line (the problem and the
// fix) and exit code 2.
import { Command, CommanderError } from 'commander';
import { killAllHosts } from './runner/client.ts';
import { RunStopped, requestStop, stopExitCode } from './runner/stop.ts';
import { VECBENCH_VERSION } from './version.ts';
import { UserError, diskFullError } from './util/errors.ts';
import { redactStandardStreams } from './util/redact.ts';
import { registerPrepare } from './commands/prepare.ts';
import { registerDatasets } from './commands/datasets.ts';
import { registerParticipants } from './commands/participants.ts';
import { registerRun } from './commands/run.ts';
import { registerReport } from './commands/report.ts';
import { registerImport } from './commands/import.ts';
import { registerQuality } from './commands/quality.ts';
import { registerChurn } from './commands/churn.ts';
import { registerCeiling } from './commands/ceiling.ts';
import { registerCompare } from './commands/compare.ts';
import { registerGroundTruth } from './commands/groundtruth.ts';
import { registerLoadWorker } from './commands/load-worker.ts';

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
  // Registering reads the participants' settings.json declarations (defaults, help examples):
  // a file that does not parse is one line here too.
  registerPrepare(program);
  registerDatasets(program);
  registerParticipants(program);
  registerRun(program);
  registerReport(program);
  registerImport(program);
  registerQuality(program);
  registerChurn(program);
  registerCeiling(program);
  registerCompare(program);
  registerGroundTruth(program);
  registerLoadWorker(program);
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
