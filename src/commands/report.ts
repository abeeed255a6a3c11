// `vecbench report`: the tables derived from stored results, on the terminal, as JSON, or the
// HTML page.
import type { Command } from 'commander';
import { resolve } from 'node:path';
import { deriveCells, REPORT_VIEWS } from '../report/cells.ts';
import { renderTable } from '../report/table.ts';
import { deriveGeneral, renderGeneral } from '../report/general.ts';
import { writePage } from '../report/html.ts';
import { deriveQuality, renderQuality } from '../report/quality.ts';
import { deriveChurn, renderChurn } from '../report/churn.ts';
import { readAllResults } from '../results/store.ts';
import { UserError } from '../util/errors.ts';
import { dataDir, isWithin, lockOutDir, outDir } from './common.ts';
import { deriveLoad, renderLoad } from '../loadgen/report.ts';

/** The terminal table (or --json) of the results in out; `vecbench run` prints it at its end too. */
export function printReport(out: string, json: boolean): void {
  const results = readAllResults(out);
  if (results.length === 0) throw new UserError(`no result files in ${out}; run vecbench run first (or pass --out DIR)`);
  // Both views in --json; the terminal table prints throughput.
  const cells = deriveCells(results, json ? REPORT_VIEWS : ['throughput']);
  const quality = deriveQuality(results);
  const general = deriveGeneral(results);
  const churn = deriveChurn(results);
  const load = deriveLoad(results);
  if (json) process.stdout.write(`${JSON.stringify({ cells, quality, general, churn, load }, null, 1)}\n`);
  else
    process.stdout.write(
      `${renderTable(cells)}\n${renderQuality(quality, results) ? `\n${renderQuality(quality, results)}` : ''}\n${renderGeneral(general)}\n${churn.length > 0 ? `\n${renderChurn(churn, results)}\n` : ''}${load.length > 0 ? `\n${renderLoad(load)}\n` : ''}`,
    );
}

export function registerReport(program: Command): void {
  program
    .command('report')
    .description('derive the tables from stored results (terminal table, --json, or the HTML page with --html DIR)')
    .option('--out <dir>', 'results directory (default results)')
    .option('--json', 'print the derived cells as JSON')
    .option('--html <dir>', 'write the results page, DIR/index.html (self-contained: curves, tables, resources, participants), and print its path')
    .option('--data <dir>', 'prepared datasets directory, for the dataset manifests the page shows')
    .action(async (o: { out?: string; json?: boolean; html?: string; data?: string }) => {
      if (o.html === undefined) return printReport(outDir(o), o.json === true);
      // A page written into the results directory is a write there; one elsewhere only reads it.
      if (isWithin(resolve(o.html), outDir(o))) lockOutDir(outDir(o));
      process.stdout.write(`page: ${await writePage(outDir(o), resolve(o.html), { dataDir: dataDir(o) })}\n`);
    });
}
