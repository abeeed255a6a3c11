// `vecbench load-worker --listen ADDR:PORT`: runs the load generator's client threads on this
// host for a coordinator's `vecbench run --client-hosts` (docs/client-hosts.md).
import type { Command } from 'commander';
import { availableParallelism } from 'node:os';
import { defaultWorkers } from '../loadgen/pool.ts';
import { parseHostPort } from '../loadgen/remote-wire.ts';
import { loadSecret } from '../loadgen/remote-auth.ts';
import { startLoadWorker } from '../loadgen/remote-worker.ts';

export function registerLoadWorker(program: Command): void {
  program
    .command('load-worker')
    .description("run the load generator's client threads here for a coordinator's `vecbench run --client-hosts` (one TCP connection, JSON lines)")
    .option(
      '--listen <addr:port>',
      'address and port to listen on, e.g. 10.0.0.2:7100 (port 0: any free port, printed); coordinators must hold the shared secret (VECBENCH_LOAD_SECRET or VECBENCH_LOAD_SECRET_FILE)',
      '127.0.0.1:7100',
    )
    .action(async (o: { listen: string }) => {
      const { host, port } = parseHostPort(o.listen, '--listen', true);
      // Before listening: a worker without a secret would have to trust whoever connects.
      const secret = loadSecret();
      const w = await startLoadWorker(host, port, availableParallelism(), secret);
      // The line a starter waits for; the default thread count is what a coordinator gets.
      process.stdout.write(`load-worker listening ${host}:${w.port} cores=${availableParallelism()} default_workers=${defaultWorkers()}\n`);
      await new Promise<never>(() => {});
    });
}
