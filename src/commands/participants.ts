// `vecbench participants`: each participant's engine, the version the engine reports, where it
// runs, whether the default run measures it, and its filter strategy.
import type { Command } from 'commander';
import { listParticipants, loadParticipant } from '../runner/participants.ts';
import { defaultRunParticipants } from '../runner/registry.ts';

/** The version an engine reports (read from the engine or its package, not from settings), or
 * why it cannot say (not installed, its library missing), in one line, within a few seconds. */
async function engineVersionOf(adapter: { engineVersion(): Promise<string> }): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      adapter.engineVersion(),
      new Promise<string>((_, reject) => {
        timer = setTimeout(() => reject(new Error('did not answer within 20 s')), 20_000);
      }),
    ]);
  } catch (e) {
    return `unavailable: ${(e as Error).message.split('\n')[0]}`;
  } finally {
    clearTimeout(timer);
  }
}

export function registerParticipants(program: Command): void {
  // What the participants declare (settings.json registry): the embedded default run's members.
  const defaults = defaultRunParticipants();
  program
    .command('participants')
    .description('list the participants: engine, the version the engine reports, where it runs, whether the default run measures it, its filter strategy')
    .option('--json', 'one JSON array instead of lines')
    .action(async (o: { json?: boolean }) => {
      const rows: { participant: string; engine: string; version: string; runs: string; default_run: boolean; filters: string }[] = [];
      for (const name of listParticipants()) {
        const p = await loadParticipant(name);
        rows.push({
          participant: name,
          engine: p.adapter.engine,
          version: await engineVersionOf(p.adapter),
          runs: p.adapter.server ? 'server' : 'in process',
          default_run: defaults.includes(name),
          filters: p.adapter.filterStrategy,
        });
      }
      if (o.json) {
        process.stdout.write(`${JSON.stringify(rows, null, 1)}\n`);
        return;
      }
      const width = (k: 'participant' | 'engine' | 'runs') => Math.max(...rows.map((r) => r[k].length));
      for (const r of rows)
        process.stdout.write(
          `${r.participant.padEnd(width('participant'))}  ${r.engine.padEnd(width('engine'))}  ${r.runs.padEnd(width('runs'))}  ${r.default_run ? 'default run' : '           '}  ${r.version}\n    filters: ${r.filters}\n`,
        );
    });
}
