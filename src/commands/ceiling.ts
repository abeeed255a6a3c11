// `vecbench ceiling`: the client's own maximum rate per protocol, against null engines (docs/method.md §5:
// the client must never be the limit): in process, HTTP, and each protocol a participant
// declares (settings.json registry.ceiling: its server, started from its lifecycle, holding k
// rows). Prints one line per protocol and in-flight level and writes <out>/ceiling.json.
import type { Command } from 'commander';
import { join } from 'node:path';
import { defaultWorkers } from '../loadgen/pool.ts';
import { inProcessCeiling, isNetworkProtocol, machineState, networkProtocols, protocolCeilings, type CeilingFigure } from '../loadgen/ceiling.ts';
import { parseLevels } from '../loadgen/cli.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { UserError } from '../util/errors.ts';
import { ceilingProtocols } from '../runner/registry.ts';
import { list, lockOutDir, outDir, positiveInt } from './common.ts';

/** "a, b and c". */
function spoken(items: string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

function formatCeiling(f: CeilingFigure): string {
  const n = (v: number | null, digits = 0) => (v === null ? 'n/a' : v.toFixed(digits));
  return `ceiling ${f.protocol} in_flight=${f.in_flight} workers=${f.workers} rps=${n(f.rps)} client_cpu_cores=${n(f.client_cpu_cores, 2)} null_engine_cpu_cores=${n(f.null_engine_cpu_cores, 2)} client_capacity_rps=${n(f.client_capacity_rps)} bound_by=${f.bound_by.replace(/ /g, '_')}`;
}

export function registerCeiling(program: Command): void {
  // The protocols participants declare (settings.json registry.ceiling) follow the built-in ones.
  const PROTOCOLS = ['in-process', ...networkProtocols()];
  const servers = ceilingProtocols().map((c) => c.name);
  program
    .command('ceiling')
    .description(
      `measure the load client's own maximum rate per protocol against null engines (in process; HTTP with the null HTTP server${servers.length > 0 ? `; ${spoken(servers)} with their servers holding k rows` : ''})`,
    )
    .option('--protocols <list>', `protocols to measure: ${PROTOCOLS.join(', ')}`, list, PROTOCOLS)
    .option('--in-flight <levels>', 'in-flight levels', (v: string) => parseLevels(v, '--in-flight', true), [1, 64])
    .option('--client-workers <n>', 'client worker threads for network protocols', positiveInt('--client-workers'))
    .option('--seconds <s>', 'seconds per run (network protocols: the faster of two runs per level)', positiveInt('--seconds'), 5)
    .option('--out <dir>', 'results directory: ceiling.json goes there (default results)')
    .action(async (o: { protocols: string[]; inFlight: number[]; clientWorkers?: number; seconds: number; out?: string }) => {
      const unknown = o.protocols.filter((p) => !PROTOCOLS.includes(p));
      if (unknown.length > 0) throw new UserError(`unknown protocol "${unknown[0]}"; known protocols: ${PROTOCOLS.join(', ')}`);
      lockOutDir(outDir(o));
      const state = machineState();
      process.stdout.write(`machine: ${state.cores} cores, load average ${state.load_average_1m} (other work on the machine lowers these figures)\n`);
      const figures: CeilingFigure[] = [];
      const say = (f: CeilingFigure) => {
        figures.push(f);
        process.stdout.write(`${formatCeiling(f)}\n`);
      };
      for (const protocol of o.protocols) {
        if (isNetworkProtocol(protocol)) {
          // One null engine per protocol, every level measured against it.
          await protocolCeilings(protocol, { levels: o.inFlight, workers: o.clientWorkers ?? defaultWorkers(), seconds: o.seconds, onFigure: say });
        } else {
          for (const c of o.inFlight) say(await inProcessCeiling(c, 200_000));
        }
      }
      const path = join(outDir(o), 'ceiling.json');
      writeFileAtomic(path, `${JSON.stringify({ format: 'vecbench-ceiling/1', measured: new Date().toISOString(), machine: state, figures }, null, 1)}\n`);
      process.stdout.write(`written: ${path}\n`);
    });
}
