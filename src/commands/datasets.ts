// `vecbench datasets`: the datasets vecbench knows, and which are prepared.
import type { Command } from 'commander';
import { isPrepared } from '../datasets/layout.ts';
import { datasetListing } from '../prepare/sources/listing.ts';
import { DEFAULT_DATASET } from '../prepare/registry.ts';
import { dataDir } from './common.ts';

export function registerDatasets(program: Command): void {
  program
    .command('datasets')
    .description('list the datasets vecbench knows and whether they are prepared')
    .option('--data <dir>', 'prepared datasets directory')
    .action((o: { data?: string }) => {
      process.stdout.write(datasetListing(dataDir(o)));
      process.stdout.write(`default: ${DEFAULT_DATASET} (${isPrepared(dataDir(o), DEFAULT_DATASET) ? 'prepared' : 'not prepared'})\n`);
    });
}
