// `vecbench report`: the tables derived from stored results, on the terminal, as JSON, or the
// HTML page.
import type { Command } from 'commander';
import { resolve } from 'node:path';
import { deriveCells, REPORT_VIEWS } from '../report/cells.ts';
import { renderTable } from '../report/table.ts';
import { deriveGeneral, renderGeneral } from '../report/general.ts';
import { writePage } from '../report/html.ts';
import { REPORT_SECTIONS } from '../report/sections.ts';
import { readAllResults } from '../results/store.ts';
import { UserError } from '../util/errors.ts';
import { dataDir, isWithin, lockOutDir, outDir } from './common.ts';

/** The terminal table (or --json) of the results in out; `vecbench run` prints it at its end too.
 * Besides the cells and the general table, each feature's section (src/report/sections.ts). */
export function printReport(out: string, json: boolean): void {
  const results = readAllResults(out);
  if (results.length === 0) throw new UserError(`no result files in ${out}; run vecbench run first (or pass --out DIR)`);
  // Both views in --json; the terminal table prints throughput.
  const cells = deriveCells(results, json ? REPORT_VIEWS : ['throughput']);
  const general = deriveGeneral(results);
  const sections = REPORT_SECTIONS.map((s) => ({ s, rows: s.derive(results) }));
  const placed = (before: boolean) => sections.filter((x) => x.s.beforeGeneral === before);
  if (json) {
    const doc = {
      cells,
      ...Object.fromEntries(placed(true).map((x) => [x.s.json, x.rows])),
      general,
      ...Object.fromEntries(placed(false).map((x) => [x.s.json, x.rows])),
    };
    process.stdout.write(`${JSON.stringify(doc, null, 1)}\n`);
    return;
  }
  const text = (before: boolean) =>
    placed(before)
      .map((x) => x.s.render(x.rows, results))
      .filter((t) => t !== '')
      .map((t) => (before ? `\n${t}` : `\n${t}\n`))
      .join('');
  process.stdout.write(`${renderTable(cells)}\n${text(true)}\n${renderGeneral(general)}\n${text(false)}`);
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
