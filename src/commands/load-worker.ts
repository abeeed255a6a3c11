// `vecbench load-worker --listen ADDR:PORT`: runs the load generator's client threads on this
// host for a coordinator's `vecbench run --client-hosts` (docs/client-hosts.md).
import type { Command } from 'commander';
import { availableParallelism } from 'node:os';
import { defaultWorkers } from '../loadgen/pool.ts';
import { parseHostPort } from '../loadgen/remote-wire.ts';
import { startLoadWorker } from '../loadgen/remote-worker.ts';

export function registerLoadWorker(program: Command): void {
  program
    .command('load-worker')
    .description("run the load generator's client threads here for a coordinator's `vecbench run --client-hosts` (one TCP connection, JSON lines)")
    .requiredOption('--listen <addr:port>', 'address and port to listen on, e.g. 10.0.0.2:7100 (port 0: any free port, printed)')
    .action(async (o: { listen: string }) => {
      const { host, port } = parseHostPort(o.listen, '--listen', true);
      const w = await startLoadWorker(host, port, availableParallelism());
      // The line a starter waits for; the default thread count is what a coordinator gets.
      process.stdout.write(`load-worker listening ${host}:${w.port} cores=${availableParallelism()} default_workers=${defaultWorkers()}\n`);
      await new Promise<never>(() => {});
    });
}
