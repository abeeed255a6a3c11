// compare: two result directories, cell by cell (src/report/compare.ts has the rules).
import { type Command, InvalidArgumentError } from 'commander';
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { seriesOf } from '../report/cell-series.ts';
import { deriveCells } from '../report/cells.ts';
import { compareCells, DEFAULT_WORST, type HostSpeed, hostSpeedNote, hostSpeedRatio, renderCompare } from '../report/compare.ts';
import type { ResultFile } from '../results/schema.ts';
import { readAllResults } from '../results/store.ts';
import { UserError } from '../util/errors.ts';

function readDir(dir: string, which: 'A' | 'B'): ResultFile[] {
  if (!existsSync(dir)) throw new UserError(`compare: directory ${dir} (${which}) does not exist; pass a results directory vecbench run wrote (its --out DIR)`);
  if (!statSync(dir).isDirectory())
    throw new UserError(`compare: ${dir} (${which}) is not a directory; pass a results directory vecbench run wrote (its --out DIR)`);
  const results = readAllResults(dir);
  if (results.length === 0)
    throw new UserError(
      `compare: no result files in ${dir} (${which}); run vecbench run --out ${dir} first, or pass the directory that holds <dataset>/<participant>.json`,
    );
  return results;
}

/** What a reader must know beside the cells: engine versions and dataset contents that differ. */
function notesOf(a: ResultFile[], b: ResultFile[]): Map<string, string[]> {
  const notes = new Map<string, string[]>();
  const add = (ds: string, line: string) => notes.set(ds, [...(notes.get(ds) ?? []), line]);
  const firstLine = (s: string) => s.split('\n')[0];
  for (const ra of a) {
    const rb = b.find((r) => r.dataset.name === ra.dataset.name && r.participant === ra.participant);
    if (rb && ra.engine_version !== rb.engine_version)
      add(ra.dataset.name, `${ra.participant}: ${ra.engine} ${firstLine(ra.engine_version)} in A, ${rb.engine} ${firstLine(rb.engine_version)} in B`);
  }
  for (const ds of new Set(a.map((r) => r.dataset.name))) {
    const ha = a.find((r) => r.dataset.name === ds)!.dataset.hash;
    const hb = b.find((r) => r.dataset.name === ds)?.dataset.hash;
    if (hb !== undefined && ha !== hb)
      add(ds, `warning: the dataset's contents differ (hash ${ha.slice(0, 12)} in A, ${hb.slice(0, 12)} in B): the cells do not measure the same thing`);
    const host = hostSpeedNote(hostProbes(a, ds), hostProbes(b, ds));
    if (host) add(ds, host);
  }
  return notes;
}

/** The host-speed probes the runs' points stored on one dataset, ms, each once: every pass of
 * a round stores the probe that judged the round (two probes timing equal to the last bit of a
 * double do not happen in practice). */
function hostProbes(results: ResultFile[], ds: string): number[] {
  const out = new Set<number>();
  for (const r of results)
    if (r.dataset.name === ds) for (const g of r.groups) for (const p of g.points) for (const x of p.pass?.host_ms ?? []) if (x !== null) out.add(x);
  return [...out];
}

function nonNegativeInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('--worst must be a whole number >= 0');
  return n;
}

export function registerCompare(program: Command): void {
  program
    .command('compare')
    .description(
      "compare two results directories cell by cell (B / A with its 95 % interval, judged against the hosts' measured speed where both runs probed it) and each row's leads; a change counts only when the interval excludes 1",
    )
    .argument('<a>', 'the first results directory (the baseline)')
    .argument('<b>', 'the second results directory')
    .option('--json', 'print the comparison (pairs and summary) as JSON')
    .option('--worst <n>', 'list the n cells with the largest change', nonNegativeInt, DEFAULT_WORST)
    .option('--fail-on-regression', 'exit 1 when at least one cell is significantly worse in B')
    .action((a: string, b: string, o: { json?: boolean; worst: number; failOnRegression?: boolean }) => {
      const dirA = resolve(a);
      const dirB = resolve(b);
      const resultsA = readDir(dirA, 'A');
      const resultsB = readDir(dirB, 'B');
      const hostSpeed = new Map<string, HostSpeed>();
      for (const ds of new Set(resultsA.map((r) => r.dataset.name))) {
        const h = hostSpeedRatio(hostProbes(resultsA, ds), hostProbes(resultsB, ds));
        if (h) hostSpeed.set(ds, h);
      }
      const views = ['throughput', 'latency'] as const;
      const cmp = compareCells(deriveCells(resultsA, views), deriveCells(resultsB, views), { worst: o.worst, hostSpeed, seriesOf });
      const notes = notesOf(resultsA, resultsB);
      if (o.json) process.stdout.write(`${JSON.stringify({ a: dirA, b: dirB, notes: Object.fromEntries(notes), ...cmp }, null, 1)}\n`);
      else process.stdout.write(renderCompare(cmp, { a: dirA, b: dirB, notes }));
      const worse = cmp.summary.counts.worse;
      if (o.failOnRegression && worse > 0) {
        process.stderr.write(`vecbench: ${worse} cell${worse === 1 ? '' : 's'} significantly worse in B (--fail-on-regression)\n`);
        process.exitCode = 1;
      }
    });
}
