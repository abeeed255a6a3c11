// npm run bench:leads [-- --out DIR --runs 2 -- RUN_ARGS...]
// npm run bench:leads -- --read DIR,DIR   (the same figures from runs already made)
// What a user reads from back-to-back runs of the same command (docs/method.md, "Paired leads"):
// runs `vecbench run --out DIR/run-N RUN_ARGS` N times in turn (the default run unless RUN_ARGS
// say otherwise), each timed, with the load average before, sampled every 10 s during, and after;
// then reads each run's `report --json` and prints, per run: how many leads other than 1 there
// are, how many are paired, the median relative half-width of their 95 % intervals (over all and
// over the paired ones), the five widest, and how many of the ANN participants' throughput cells
// were read above their target (`^`: the lowest-recall point already exceeds it). Across runs:
// the leads `vecbench compare` reads against one reference per row in both runs that are
// significant one way in the first run and the other way in another. A participant counts as ANN
// when its cells' strategy is not an exact scan. Per run, too: how far each two participants'
// speeds drift apart between 30 s windows beyond their passes' noise (src/metrics/window-drift.ts),
// the part of a lead's width that pairing cannot cancel.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, openSync, closeSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { quantileSorted } from '../src/metrics/stats.ts';
import { centredPasses, windowDrift } from '../src/metrics/window-drift.ts';
import { passSamples } from '../src/report/cell-series.ts';
import { readAllResults } from '../src/results/store.ts';

const { values, positionals } = parseArgs({
  options: { out: { type: 'string', default: 'leads-check' }, runs: { type: 'string', default: '2' }, read: { type: 'string' } },
  allowPositionals: true,
});
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) {
  console.error(`bench:leads: --runs must be a positive integer (got ${values.runs})`);
  process.exit(2);
}
const root = path.resolve(values.out!);
const bin = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'vecbench.js');

interface Cell {
  dataset: string;
  participant: string;
  group: string;
  target: number;
  view?: string;
  status: string;
  strategy?: string;
  lead: number | null;
  lead_ci: [number, number] | null;
  lead_method?: 'paired' | 'unpaired';
  tie?: boolean;
}

const one = () => loadavg()[0];
const median = (xs: number[]): number =>
  xs.length === 0
    ? Number.NaN
    : quantileSorted(
        [...xs].sort((a, b) => a - b),
        0.5,
      );
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

/** One run of the command, its output in DIR/run-N.log; the load before, during and after. */
async function timedRun(n: number): Promise<{ dir: string; seconds: number; code: number | null; load: { before: number; during: number[]; after: number } }> {
  const dir = path.join(root, `run-${n}`);
  mkdirSync(root, { recursive: true });
  const log = openSync(path.join(root, `run-${n}.log`), 'w');
  const before = one();
  const during: number[] = [];
  const t0 = performance.now();
  const child = spawn(process.execPath, [bin, 'run', '--out', dir, ...positionals], { stdio: ['ignore', log, log] });
  const sampler = setInterval(() => during.push(one()), 10_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(sampler);
  closeSync(log);
  return { dir, seconds: (performance.now() - t0) / 1000, code, load: { before, during, after: one() } };
}

function cellsOf(dir: string): Cell[] {
  const r = spawnSync(process.execPath, [bin, 'report', '--out', dir, '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`report --out ${dir} --json failed: ${(r.stderr || r.stdout).trim().split('\n')[0]}`);
  return (JSON.parse(r.stdout) as { cells: Cell[] }).cells.filter((c) => (c.view ?? 'throughput') === 'throughput');
}

const halfWidth = (c: Cell) => (c.lead_ci![1] - c.lead_ci![0]) / 2 / c.lead!;
const rowKey = (c: Cell) => `${c.dataset} ${c.group} ${c.target.toFixed(2)}`;

function summary(name: string, cells: Cell[]): void {
  const leads = cells.filter((c) => c.lead !== null && c.lead_ci !== null && c.lead !== 1);
  const paired = leads.filter((c) => c.lead_method === 'paired');
  console.log(
    `${name}: ${leads.length} leads other than 1 (${paired.length} paired, ${leads.filter((c) => !c.tie).length} significant); median half-width ${pct(median(leads.map(halfWidth)))} over all, ${pct(median(paired.map(halfWidth)))} over the paired`,
  );
  for (const c of [...leads].sort((a, b) => halfWidth(b) - halfWidth(a)).slice(0, 5))
    console.log(
      `  ${c.participant} ${rowKey(c)}: x${c.lead!.toFixed(3)} [${c.lead_ci![0].toFixed(3)}, ${c.lead_ci![1].toFixed(3)}] ±${pct(halfWidth(c))} ${c.lead_method ?? ''}`,
    );
  const exactScan = new Set(cells.filter((c) => /^exact scan/.test(c.strategy ?? '')).map((c) => c.participant));
  const ann = cells.filter((c) => !exactScan.has(c.participant) && c.status !== 'missing');
  const above = ann.filter((c) => c.status === 'above');
  console.log(`  ANN participants' cells read above their target (^): ${above.length} of ${ann.length} (${pct(above.length / Math.max(1, ann.length))})`);
}

const DRIFT_WINDOW_S = 30;

/** Each two participants' drift apart over the run's 30 s windows (throughput passes). */
function drift(name: string, dir: string): void {
  const parts = readAllResults(dir).map((r) => ({
    name: r.participant,
    dataset: r.dataset.name,
    // Each stored point is one build's: centred on its own mean.
    passes: centredPasses(r.groups.flatMap((g) => g.points.filter((p) => p.view === 'throughput').map((p) => passSamples(p, 'throughput') ?? []))),
  }));
  const pairs: string[] = [];
  const excess: number[] = [];
  for (const [i, a] of parts.entries())
    for (const b of parts.slice(i + 1)) {
      if (a.dataset !== b.dataset) continue;
      const d = windowDrift(a.passes, b.passes, DRIFT_WINDOW_S);
      if (!d) continue;
      excess.push(d.excess);
      pairs.push(
        `  ${a.name} against ${b.name}: ${d.windows} windows, window means' difference sd ${d.sd.toFixed(3)}, passes explain ${d.se.toFixed(3)}, drift ${d.excess.toFixed(3)}`,
      );
    }
  if (excess.length === 0) return void console.log(`${name}: no two participants share ${DRIFT_WINDOW_S} s windows of passes`);
  console.log(
    `${name}: drift apart between ${DRIFT_WINDOW_S} s windows, beyond the passes' noise (log scale): median ${median(excess).toFixed(3)} over ${excess.length} pairs`,
  );
  for (const line of pairs) console.log(line);
}

/** `vecbench compare A B --json`'s leads (src/report/compare-leads.ts: each row's participants
 * read against one reference in both runs) whose interval excludes 1 one way in A and the other
 * way in B. */
function reversed(a: string, b: string): string[] {
  const r = spawnSync(process.execPath, [bin, 'compare', a, b, '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.stdout.trim() === '') throw new Error(`compare ${a} ${b} --json failed: ${(r.stderr || '').trim().split('\n')[0]}`);
  type Reading = { lead: number; ci: [number, number] };
  const pairs = (
    JSON.parse(r.stdout) as {
      leads: { dataset: string; group: string; target: number; view: string; participant: string; reference: string; a: Reading; b: Reading }[];
    }
  ).leads;
  const side = (x: Reading) => (x.ci[1] < 1 ? -1 : x.ci[0] > 1 ? 1 : 0);
  return pairs
    .filter((l) => side(l.a) !== 0 && side(l.b) === -side(l.a))
    .map(
      (l) =>
        `${l.dataset} ${l.group} ${l.target.toFixed(2)} (${l.view}): ${l.participant} against ${l.reference}, x${l.a.lead.toFixed(3)} in ${a}, x${l.b.lead.toFixed(3)} in ${b}`,
    );
}

const done: { dir: string }[] = (values.read ?? '')
  .split(',')
  .filter(Boolean)
  .map((dir) => ({ dir: path.resolve(dir) }));
// With --read, the runs are those given; else `runs` new ones (the bound fixed before the loop:
// it once read done.length, which the first run sets, and stopped after one run).
const newRuns = done.length > 0 ? 0 : runs;
for (let n = 1; n <= newRuns; n++) {
  console.log(`run ${n} of ${runs}: vecbench run --out ${path.join(root, `run-${n}`)} ${positionals.join(' ')}`);
  const r = await timedRun(n);
  done.push(r);
  const d = r.load.during;
  console.log(
    `  exit ${r.code}, ${r.seconds.toFixed(0)} s; load average ${r.load.before.toFixed(2)} before, ${d.length ? `${Math.min(...d).toFixed(2)}-${Math.max(...d).toFixed(2)} (median ${median(d).toFixed(2)})` : 'not sampled'} during, ${r.load.after.toFixed(2)} after`,
  );
}
const cells = done.map((r) => cellsOf(r.dir));
cells.forEach((c, i) => summary(`run ${i + 1}`, c));
done.forEach((r, i) => drift(`run ${i + 1}`, r.dir));
const flips = done.slice(1).flatMap((r) => reversed(done[0].dir, r.dir));
if (done.length > 1) console.log(flips.length === 0 ? 'no lead is significant one way in the first run and the other way in another' : flips.join('\n'));
