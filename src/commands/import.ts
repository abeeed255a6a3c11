// `vecbench import FILE...`: results published by other harnesses (VectorBench JSON,
// ann-benchmarks HDF5), stored beside our own and marked as imported (src/report/import.ts).
import type { Command } from 'commander';
import { importResults } from '../report/import.ts';
import { dataDir, lockOutDir, outDir } from './common.ts';

export function registerImport(program: Command): void {
  program
    .command('import')
    .description('import published results of other harnesses (VectorBench result JSON, ann-benchmarks HDF5 result files) beside our own, marked as imported')
    .argument('<files...>', 'result files; the format is told by content')
    .option('--out <dir>', 'results directory to store them in (default results)')
    .option('--data <dir>', 'prepared datasets directory (default .vecbench/data or $VECBENCH_DATA)')
    .option('--dataset <name>', 'the vecbench dataset the results belong to; required for ann-benchmarks files, whose recall is computed from its ground truth')
    .action(async (files: string[], o: { out?: string; data?: string; dataset?: string }) => {
      const out = outDir(o);
      lockOutDir(out);
      for (const file of files) {
        const r = await importResults(file, { outDir: out, dataDir: dataDir(o), dataset: o.dataset });
        const groups = r.groups.map((g) => `${g.key} (${g.points} points)`).join(', ');
        process.stdout.write(`${file}: ${r.harness} -> ${r.participant} on ${r.dataset}: ${groups || 'no groups'}; stored in ${r.path}\n`);
        for (const note of r.notes) process.stdout.write(`${file}: note: ${note}\n`);
      }
      process.stdout.write(`imported ${files.length} file(s); see them with vecbench report --out ${out}\n`);
    });
}
